//===- Session.cpp - What every command of an executable works on ---------===//
//
// See Session.h.
//
//===----------------------------------------------------------------------===//
#include "runtime/Session.h"

#include "runtime/Collective.h"
#include "runtime/HostExecutor.h"
#include "runtime/Init.h"
#include "runtime/LrSchedule.h"
#include "runtime/Scalar.h"

#include "absl/strings/str_format.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace cairn::runtime {

namespace {

absl::StatusOr<std::unique_ptr<Executor>> openExecutor(const ProgramSpec &spec,
                                                       const Options &options,
                                                       Transport &transport) {
  bool cuda = spec.backend && std::string(spec.backend->name) == "cuda";
  for (auto [flag, given] : {std::pair{"--deterministic", options.deterministic},
                             std::pair{"--no-graph", options.noGraph}})
    if (given && !cuda)
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s is a flag of CUDA executables; this one runs on the CPU, whose steps are "
          "deterministic and launch nothing",
          flag));
  ExecutorOptions executorOptions;
  executorOptions.threads = options.threads;
  executorOptions.deterministic = options.deterministic;
  executorOptions.benchmark = !options.deterministic;
  executorOptions.graphs = !options.noGraph;
  executorOptions.transport = &transport;
  if (spec.backend && spec.backend->open)
    return spec.backend->open(spec, executorOptions);
  return HostExecutor::open(spec, "CPU", std::nullopt, std::nullopt);
}

/// What the data feeds: every input of the model (every device's), class
/// indices checked where the loss is a cross-entropy.
std::vector<InputFormat> inputFormats(const PartitionLayout &partition) {
  std::vector<InputFormat> formats;
  for (const TensorInfo *input : partition.inputs)
    formats.push_back(
        {input->name, input->dtype, input->shape,
         partition.target && input->name == partition.target->name ? partition.classes : 0});
  return formats;
}

} // namespace

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

absl::Status Session::initializeOrLoad() {
  if (options.load.empty()) {
    initializeState(spec, options.seed, arena());
  } else {
    absl::StatusOr<TrainingProgress> progress =
        loadCheckpoint(layout, options.load, arena(), partition.stateNames);
    if (!progress.ok())
      return progress.status();
    resumedSteps = progress->optimizerSteps;
    if (scaler && progress->lossScale)
      scaler->resume(*progress->lossScale);
  }
  return executor->pushState();
}

absl::StatusOr<double> Session::sharedLoss() {
  double loss = layout.loss ? loadScalar(layout.loss->dtype, at(*layout.loss)) : 0;
  if (replicated()) {
    float mine = static_cast<float>(loss);
    absl::StatusOr<std::vector<std::string>> all = transport.gather(
        std::string_view(reinterpret_cast<const char *>(&mine), sizeof(mine)), /*root=*/0);
    if (!all.ok())
      return all.status();
    if (!reports())
      return loss;
    float sum = 0;
    for (size_t r = 0; r < all->size(); ++r) {
      float theirs = 0;
      std::memcpy(&theirs, (*all)[r].data(), std::min((*all)[r].size(), sizeof(theirs)));
      sum = r == 0 ? theirs : sum + theirs;
    }
    return static_cast<double>(sum * static_cast<float>(1.0 / replicas()));
  }
  if (partitioned())
    if (absl::Status status = transport.broadcast(&loss, sizeof(loss), partition.lossDevice);
        !status.ok())
      return status;
  return loss;
}

absl::Status Session::saveState(const std::string &path, bool optimizerState,
                                const TrainingProgress &progress) {
  // Replicas hold the same state (rank 0's buffers: shareBuffers).
  if (replicated())
    return reports() ? writeCheckpoint(path,
                                       checkpointTensors(layout, arena(), optimizerState),
                                       optimizerState, progress)
                     : absl::OkStatus();
  absl::StatusOr<TensorMap> tensors =
      gatherTensors(transport, checkpointTensors(layout, arena(), optimizerState), 0);
  if (!tensors.ok())
    return tensors.status();
  if (!reports())
    return absl::OkStatus();
  return writeCheckpoint(path, *tensors, optimizerState, progress);
}

absl::Status shareBuffers(Session &session) {
  if (!session.replicated())
    return absl::OkStatus();
  // On a GPU the buffers live in the device arena: rank 0's come out, and
  // every rank's go back in, each way in one synchronisation.
  std::vector<const TensorInfo *> buffers;
  for (const TensorInfo *tensor : session.layout.state)
    if (tensor->role == TensorRole::Buffer)
      buffers.push_back(tensor);
  if (buffers.empty())
    return absl::OkStatus();
  if (session.rank() == 0)
    if (absl::Status status = session.executor->pullTensors(buffers); !status.ok())
      return status;
  for (const TensorInfo *tensor : buffers)
    if (absl::Status status =
            session.transport.broadcast(session.at(*tensor), tensorBytes(*tensor), 0);
        !status.ok())
      return status;
  if (absl::Status status = session.executor->pushTensors(buffers); !status.ok())
    return status;
  return absl::OkStatus();
}

void prepareStep(const Session &session, StepContext &context) {
  const ProgramSpec &spec = session.spec;
  context.lrFactor = spec.lrSchedule.empty()
                         ? 1
                         : scheduledLr(spec.baseLr, spec.lrSchedule,
                                       session.scheduledSteps(context)) /
                               spec.baseLr;
  context.lossScale = session.scaler ? session.scaler->scale() : 1;
}

StepContext firstStepContext(const Session &session) {
  StepContext context;
  context.seed = session.options.seed;
  context.poison = session.options.poison;
  context.step = session.resumedSteps;
  context.transport = &session.transport;
  context.replica = session.replicated() ? session.rank() : 0;
  prepareStep(session, context);
  return context;
}

absl::StatusOr<Session> openSession(const PartitionLayout &partition, Transport &transport,
                                    const Options &options) {
  // Replicas all run the one device's spec.
  const ModelLayout &layout = partition.devices[partition.size() > 1 ? transport.rank() : 0];
  const ProgramSpec &spec = *layout.spec;
  absl::StatusOr<std::unique_ptr<Executor>> executor = openExecutor(spec, options, transport);
  if (!executor.ok())
    return executor.status();
  Session session{spec, options, partition, transport, layout, std::move(*executor)};
  if (session.layout.foundInf)
    session.scaler.emplace(options.lossScale.value_or(LossScaleSetting{}));
  else if (options.lossScale && options.lossScale->mode != LossScaleMode::None)
    return absl::InvalidArgumentError(absl::StrFormat(
        "--loss-scale %s: the training step of model %s does not scale its loss (models "
        "built with --precision f16 or with cairn build --loss-scaling do); it takes "
        "--loss-scale none only",
        describeLossScale(*options.lossScale), spec.model));
  return session;
}

std::vector<unsigned char *> inputDestinations(Session &session,
                                               const std::vector<const TensorInfo *> &inputs) {
  std::vector<unsigned char *> destinations;
  for (const TensorInfo *input : inputs) {
    const TensorInfo *mine = session.layout.input(input->name);
    destinations.push_back(mine ? session.at(*mine) : nullptr);
  }
  return destinations;
}

absl::StatusOr<std::optional<Examples>> loadData(const Session &session, Split split) {
  return loadSplit(session.options.data, split, inputFormats(session.partition),
                   session.options.normalization);
}

absl::Status noSplitError(const Session &session, Split split) {
  const std::string &dir = session.options.data;
  std::string named;
  for (const TensorInfo *input : session.partition.inputs)
    named += absl::StrFormat("%s%s%s.npy", named.empty() ? "" : ", ",
                             split == Split::Train ? "train_" : "test_", input->name);
  return absl::NotFoundError(
      split == Split::Train
          ? absl::StrFormat("%s: no training data: expected %s, or train-images-idx3-ubyte[.gz] "
                            "and train-labels-idx1-ubyte[.gz], or train_images.npy and "
                            "train_labels.npy",
                            dir, named)
          : absl::StrFormat("%s: no test data: expected %s, or t10k-images-idx3-ubyte[.gz] and "
                            "t10k-labels-idx1-ubyte[.gz], or test_images.npy and "
                            "test_labels.npy",
                            dir, named));
}

RunReport startReport(const Session &session, const char *command) {
  RunReport report;
  report.model = session.spec.model;
  report.command = command;
  // A partitioned model's: the largest device's.
  for (const ModelLayout &device : session.partition.devices)
    report.plannedArenaBytes = std::max(report.plannedArenaBytes, device.spec->arenaBytes);
  report.seed = session.options.seed;
  report.replicas = session.spec.replicas;
  report.syncBatchNorm = session.spec.syncBatchNorm;
  return report;
}

absl::Status finishReport(const Session &session, RunReport &report) {
  session.executor->fillReport(report);
  report.peakRssBytes = peakRssBytes();
  if (session.partitioned() || session.replicated()) {
    // Each device's peak, resident set and (train) nanoseconds waited.
    int64_t mine[3] = {static_cast<int64_t>(report.measuredPeakBytes), report.peakRssBytes,
                       report.devicesWaitSeconds
                           ? static_cast<int64_t>(report.devicesWaitSeconds->front() * 1e9)
                           : 0};
    absl::StatusOr<std::vector<std::string>> all =
        session.transport.gather(std::string_view(reinterpret_cast<char *>(mine), sizeof(mine)),
                                 /*root=*/0);
    if (!all.ok())
      return all.status();
    if (!session.reports())
      return absl::OkStatus();
    if (report.devicesWaitSeconds)
      report.devicesWaitSeconds->clear();
    for (const std::string &part : *all) {
      int64_t theirs[3] = {0, 0, 0};
      std::memcpy(theirs, part.data(), std::min(part.size(), sizeof(theirs)));
      report.measuredPeakBytes = std::max(report.measuredPeakBytes, size_t(theirs[0]));
      report.peakRssBytes = std::max(report.peakRssBytes, theirs[1]);
      if (report.devicesWaitSeconds)
        report.devicesWaitSeconds->push_back(static_cast<double>(theirs[2]) * 1e-9);
    }
    report.device += session.replicated()
                         ? absl::StrFormat(" (replica 0 of %d)", session.replicas())
                         : absl::StrFormat(" (device 0 of %d)", session.partition.size());
  }
  printSummary(stdout, report);
  std::fflush(stdout);
  if (session.options.metrics.empty())
    return absl::OkStatus();
  return writeMetrics(session.options.metrics, report);
}

} // namespace cairn::runtime
