//===- Main.cpp - runMain: the executable's commands ----------------------===//
//
// Parses the command line (Cli.h), checks the spec (Model.h), opens the
// spec's executor (Executor.h: the arena, on the host or the GPU), fills the
// host arena from a seed or a checkpoint (Init.h, Checkpoint.h), feeds it
// batches (Dataset.h) and reports (Progress.h, Metrics.h). Every failure --
// an absl::Status from the readers, a KernelError thrown inside a step --
// ends as one "error: ..." line on stderr and exit code 1; output files are
// written atomically and only at the end.
//
// A partitioned model (runPartitionedMain) runs the same commands on every
// rank, each with its device's spec and executor: every rank feeds the
// inputs it has and runs every step; the rank holding a result (the loss,
// the evaluation, predict's outputs, the checkpoint's tensors) hands it to
// the others or to rank 0, which alone prints and writes files. A model on
// one device is the case of one rank (LocalTransport), where all of that
// costs nothing. A failure in a phase every rank runs alone (loading data or
// a checkpoint) is agreed on (Collective.h): every rank exits 1. Any later
// failure may leave the other ranks waiting on the failed one, so it ends
// every rank at once (Transport::abortAll).
//
// Data-parallel replicas (runReplicatedMain) run one spec on every rank:
// each takes its share of every batch (rank r the r-th batch/R examples of
// the order one process would use), the training step sums the gradients,
// and before each step rank 0's buffers (batch norm's running statistics)
// go to every rank, as PyTorch DDP's broadcast_buffers does. Rank 0 prints
// and writes the files; evaluation is shared out by batches.
//
//===----------------------------------------------------------------------===//
#include "runtime/Checkpoint.h"
#include "runtime/Cli.h"
#include "runtime/Collective.h"
#include "runtime/Dataset.h"
#include "runtime/EvalLoss.h"
#include "runtime/Executor.h"
#include "runtime/HostExecutor.h"
#include "runtime/Init.h"
#include "runtime/KernelProfile.h"
#include "runtime/Metrics.h"
#include "runtime/Model.h"
#include "runtime/Npy.h"
#include "runtime/Partition.h"
#include "runtime/Program.h"
#include "runtime/Progress.h"
#include "runtime/Safetensors.h"
#include "runtime/Scalar.h"
#include "runtime/Transport.h"
#include "runtime/kernels/KernelError.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <unistd.h>

namespace cairn::runtime {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string programName(const char *argv0) {
  std::string path = argv0 ? argv0 : "cairn-model";
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Fails before any work when `path`'s directory cannot take a new file, so
/// a long run does not end in an unwritable --save.
absl::Status checkWritable(const char *flag, const std::string &path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, std::max<size_t>(slash, 1));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return absl::PermissionDeniedError(absl::StrFormat(
        "%s: cannot write %s: directory %s does not exist or is not writable", path, flag, dir));
  return absl::OkStatus();
}

/// What every command works on: the checked spec of this rank's device and
/// its executor, whose host arena the runtime reads and writes; the whole
/// model's devices and the transport to them.
struct Session {
  const ProgramSpec &spec;
  const Options &options;
  const PartitionLayout &partition;
  Transport &transport;
  const ModelLayout &layout;
  std::unique_ptr<Executor> executor;

  unsigned char *arena() { return executor->hostArena(); }
  unsigned char *at(const TensorInfo &tensor) { return arena() + tensor.offset; }

  int rank() const { return transport.rank(); }
  bool partitioned() const { return partition.size() > 1; }
  /// Data-parallel replicas: every rank runs this spec.
  bool replicated() const { return spec.replicas > 1; }
  int replicas() const { return spec.replicas; }
  /// The examples of one step, over every replica.
  int64_t globalBatch() const { return spec.batch * spec.replicas; }
  /// Whether this rank prints and writes the run's files.
  bool reports() const { return transport.rank() == 0; }

  /// Optimizer steps the --load checkpoint had taken (0 without one).
  int64_t resumedSteps = 0;
  /// The loss scaler of a training step that scales its loss
  /// (layout.foundInf), else none.
  std::optional<LossScaler> scaler;

  /// Fills the persistent state from --seed or --load and hands it to the
  /// executor.
  absl::Status initializeOrLoad() {
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

  /// Steps taken so far, skipped ones included: where the lr schedule is (a
  /// scheduler steps on every iteration in PyTorch, skipped or not).
  int64_t scheduledSteps(const StepContext &context) const {
    return context.step + (scaler ? scaler->state().skippedSteps : 0);
  }

  /// Whether the training step that just ran skipped its updates.
  bool stepSkipped() {
    return layout.foundInf && loadScalar(DType::F32, at(*layout.foundInf)) != 0;
  }

  /// The checkpoint's record of the run so far.
  TrainingProgress progress(const StepContext &context) const {
    TrainingProgress progress;
    progress.optimizerSteps = context.step;
    if (scaler)
      progress.lossScale = scaler->state();
    return progress;
  }

  /// The training step's loss, from the rank that has it, on every rank; of
  /// replicas, their mean on rank 0, summed in rank order in float32 as one
  /// process summing R micro-batches' does.
  absl::StatusOr<double> sharedLoss() {
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

  /// Writes every device's state (checkpointTensors) in the host arenas to
  /// `path`, from rank 0.
  absl::Status saveState(const std::string &path, bool optimizerState,
                         const TrainingProgress &progress = {}) {
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
};

/// Replicas: rank 0's buffers (batch norm's running statistics, which each
/// replica updates from its own examples) to every rank, before a training
/// step and an evaluation, as DDP's broadcast_buffers does. The host arena
/// is the arena on the CPU, where replicas run.
absl::Status shareBuffers(Session &session) {
  if (!session.replicated())
    return absl::OkStatus();
  for (const TensorInfo *tensor : session.layout.state)
    if (tensor->role == TensorRole::Buffer)
      if (absl::Status status =
              session.transport.broadcast(session.at(*tensor), tensorBytes(*tensor), 0);
          !status.ok())
        return status;
  return absl::OkStatus();
}

/// Sets the context's lr factor and loss scale for its next step.
void prepareStep(const Session &session, StepContext &context) {
  const ProgramSpec &spec = session.spec;
  context.lrFactor = spec.lrSchedule.empty()
                         ? 1
                         : scheduledLr(spec.baseLr, spec.lrSchedule,
                                       session.scheduledSteps(context)) /
                               spec.baseLr;
  context.lossScale = session.scaler ? session.scaler->scale() : 1;
}

/// The context of the run's first step: --seed, --poison, and the
/// optimizer steps the run resumes from.
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

absl::StatusOr<std::unique_ptr<Executor>> openExecutor(const ProgramSpec &spec,
                                                       const Options &options) {
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
  if (spec.backend && spec.backend->open)
    return spec.backend->open(spec, executorOptions);
  return HostExecutor::open(spec, "CPU", std::nullopt, std::nullopt);
}

absl::StatusOr<Session> openSession(const PartitionLayout &partition, Transport &transport,
                                    const Options &options) {
  // Replicas all run the one device's spec.
  const ModelLayout &layout = partition.devices[partition.size() > 1 ? transport.rank() : 0];
  const ProgramSpec &spec = *layout.spec;
  absl::StatusOr<std::unique_ptr<Executor>> executor = openExecutor(spec, options);
  if (!executor.ok())
    return executor.status();
  Session session{spec, options, partition, transport, layout, std::move(*executor)};
  if (session.layout.foundInf)
    session.scaler.emplace(options.lossScale.value_or(LossScaleSetting{}));
  else if (options.lossScale && options.lossScale->mode != LossScaleMode::None)
    return absl::InvalidArgumentError(absl::StrFormat(
        "--loss-scale %s: the training step of model %s does not scale its loss (only "
        "models built with --precision f16 do); it takes --loss-scale none only",
        describeLossScale(*options.lossScale), spec.model));
  return session;
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

/// Where fillBatch writes each of `inputs` (the model's): null for those
/// on another device.
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

struct Evaluation {
  int64_t correct = 0;
  int64_t count = 0;
  double lossSum = 0; // summed per example
  double seconds = 0;
};

/// The model's loss over `test` in batches (and a classifier's accuracy);
/// the last batch is padded with the first examples. Where the runtime
/// knows the loss's form (ProgramSpec::loss), the forward step's output
/// gives it per example and the padding rows are ignored. Otherwise the
/// eval_loss step gives it per batch, each batch weighted by its real
/// examples: the padded last batch's value counts its padding rows too.
/// On a partitioned model every rank runs the steps, the rank holding
/// "output" (or "eval_loss") sums, and every rank gets its sums. Replicas
/// take the batches in turn (rank r batches r, r + R, ...) with rank 0's
/// buffers, and every rank gets the sums of all.
absl::StatusOr<Evaluation> evaluate(Session &session, const Examples &test,
                                    const StepContext &context) {
  const ModelLayout &layout = session.layout;
  const PartitionLayout &partition = session.partition;
  int64_t batch = session.spec.batch, n = test.size();
  const bool perExample = partition.target != nullptr;
  const StepKind step = perExample ? StepKind::Forward : StepKind::EvalLoss;
  if (!perExample && partition.evalLossDevice < 0)
    return absl::FailedPreconditionError(absl::StrFormat(
        "model %s has neither a loss eval computes from the forward step's output nor an "
        "eval_loss step; rebuild it with this cairn",
        session.spec.model));
  const int holder = perExample ? partition.outputDevice : partition.evalLossDevice;
  const bool sums = session.replicated() || session.rank() == holder;
  if (absl::Status status = shareBuffers(session); !status.ok())
    return status;
  std::vector<int64_t> indices(static_cast<size_t>(batch));
  std::vector<unsigned char *> destinations = inputDestinations(session, partition.inputs);
  Evaluation result;
  Clock::time_point start = Clock::now();
  for (int64_t first = 0; first < n; first += batch) {
    if (session.replicated() && (first / batch) % session.replicas() != session.rank())
      continue;
    int64_t real = std::min(batch, n - first);
    for (int64_t r = 0; r < batch; ++r)
      indices[r] = r < real ? first + r : (r - real) % n;
    test.fillBatch(indices.data(), batch, destinations);
    if (absl::Status status = session.executor->run(step, context); !status.ok())
      return absl::InternalError(absl::StrFormat("evaluation of test examples %d to %d: %s",
                                                 first, first + real - 1, status.message()));
    if (!sums)
      continue;
    if (!perExample) {
      double loss = loadScalar(layout.evalLoss->dtype, session.at(*layout.evalLoss));
      result.lossSum += loss * static_cast<double>(real);
      continue;
    }
    const unsigned char *output = session.at(*layout.output);
    const unsigned char *target = session.at(*layout.target);
    for (int64_t r = 0; r < real; ++r) {
      bool correct = false;
      result.lossSum += exampleLoss(layout, output, target, r, correct);
      result.correct += correct;
    }
  }
  result.count = n;
  result.seconds = secondsSince(start);
  if (session.replicated()) {
    struct Sums {
      int64_t correct;
      double lossSum;
    } mine{result.correct, result.lossSum};
    absl::StatusOr<std::vector<std::string>> all = session.transport.gather(
        std::string_view(reinterpret_cast<const char *>(&mine), sizeof(mine)), /*root=*/0);
    if (!all.ok())
      return all.status();
    Sums total{0, 0};
    for (const std::string &part : *all) {
      Sums theirs{0, 0};
      std::memcpy(&theirs, part.data(), std::min(part.size(), sizeof(theirs)));
      total.correct += theirs.correct;
      total.lossSum += theirs.lossSum;
    }
    if (absl::Status status = session.transport.broadcast(&total, sizeof(total), 0);
        !status.ok())
      return status;
    result.correct = total.correct;
    result.lossSum = total.lossSum;
  } else if (session.partitioned()) {
    struct {
      int64_t correct;
      double lossSum;
    } sum{result.correct, result.lossSum};
    if (absl::Status status = session.transport.broadcast(&sum, sizeof(sum), holder);
        !status.ok())
      return status;
    result.correct = sum.correct;
    result.lossSum = sum.lossSum;
  }
  return result;
}

void recordEvaluation(const Session &session, const Evaluation &evaluation, RunReport &report) {
  double n = static_cast<double>(evaluation.count);
  if (session.partition.classes > 0)
    report.testAccuracy = static_cast<double>(evaluation.correct) / n;
  report.testLoss = evaluation.lossSum / n;
  report.testExamples = evaluation.count;
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
  return report;
}

/// Fills the executor's part of the report; on a partitioned model, rank 0's
/// with the largest arena and resident set of all devices.
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

/// --profile: the profile of the training step's kernels, or an error when
/// this executable cannot time them.
absl::StatusOr<std::optional<KernelProfile>> openProfile(const Session &session) {
  const ProgramSpec &spec = session.spec;
  const Options &options = session.options;
  if (options.profile.empty())
    return std::optional<KernelProfile>();
  if (session.partitioned() || session.replicated())
    return absl::UnimplementedError(absl::StrFormat(
        "--profile times the kernels of one process; model %s runs as %d processes, which it "
        "cannot profile yet",
        spec.model, session.transport.size()));
  if (spec.backend && std::string(spec.backend->name) != "cpu")
    return absl::InvalidArgumentError(absl::StrFormat(
        "--profile times the kernels of CPU executables; this one runs on %s, whose kernels "
        "run asynchronously (profile it with Nsight Systems: nsys profile EXE train --no-graph)",
        spec.backend->name));
  return std::optional<KernelProfile>(KernelProfile(spec.trainKernels.size()));
}

absl::Status runTrain(Session &session) {
  const Options &options = session.options;
  // The examples of one step, and this rank's share of them.
  const int64_t batch = session.globalBatch(), share = session.spec.batch;
  std::optional<KernelProfile> profile;
  std::optional<Examples> train, test;
  int64_t stepsPerEpoch = 0;
  TrainingPlan plan;
  // What each rank does alone before the first step.
  absl::Status setup = [&]() -> absl::Status {
    absl::StatusOr<std::optional<KernelProfile>> opened = openProfile(session);
    if (!opened.ok())
      return opened.status();
    profile = std::move(*opened);
    absl::StatusOr<std::optional<Examples>> trainSplit = loadData(session, Split::Train);
    if (!trainSplit.ok())
      return trainSplit.status();
    if (!*trainSplit)
      return noSplitError(session, Split::Train);
    train = std::move(*trainSplit);
    absl::StatusOr<std::optional<Examples>> testSplit = loadData(session, Split::Test);
    if (!testSplit.ok())
      return testSplit.status();
    test = std::move(*testSplit);
    stepsPerEpoch = train->size() / batch;
    if (stepsPerEpoch == 0)
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d training examples are fewer than one batch of %d", options.data,
          train->size(), batch));
    if (absl::Status status = session.initializeOrLoad(); !status.ok())
      return status;
    if (options.steps)
      plan.totalSteps = *options.steps;
    else if (__builtin_mul_overflow(options.epochs, stepsPerEpoch, &plan.totalSteps))
      return absl::InvalidArgumentError(
          absl::StrFormat("--epochs %d is too many to count", options.epochs));
    return absl::OkStatus();
  }();
  if (absl::Status status = agree(session.transport, setup); !status.ok())
    return status;

  plan.epochs = (plan.totalSteps + stepsPerEpoch - 1) / stepsPerEpoch;
  plan.batch = batch;
  plan.logEvery = options.logEvery;
  plan.showLr = !session.spec.lrSchedule.empty();
  plan.showLossScale = session.scaler.has_value();
  Progress progress(session.reports() ? stderr : nullptr, ::isatty(STDERR_FILENO) != 0, plan);
  std::vector<unsigned char *> destinations =
      inputDestinations(session, session.partition.inputs);
  StepContext context = firstStepContext(session);
  int64_t done = 0;    // steps of this run
  int64_t skipped = 0; // of them, skipped for an inf or NaN gradient
  int64_t rssAfterWarmup = 0;
  const double waitedBefore = session.transport.waitSeconds();
  Clock::time_point start = Clock::now();
  for (int64_t epoch = 0; epoch < plan.epochs; ++epoch) {
    std::vector<int64_t> order = epochPermutation(train->size(), options.seed, epoch);
    for (int64_t k = 0; k < stepsPerEpoch && done < plan.totalSteps; ++k) {
      const int64_t mine = session.replicated() ? session.rank() * share : 0;
      train->fillBatch(&order[k * batch + mine], share, destinations);
      if (absl::Status status = shareBuffers(session); !status.ok())
        return status;
      // The first step warms caches and pages up: profiled only when alone.
      context.profile = profile && (done > 0 || plan.totalSteps == 1) ? &*profile : nullptr;
      prepareStep(session, context);
      if (absl::Status status = session.executor->run(StepKind::Train, context); !status.ok())
        return absl::InternalError(absl::StrFormat("training step %d (epoch %d): %s",
                                                   done + 1, epoch + 1, status.message()));
      if (context.profile)
        context.profile->endStep();
      absl::StatusOr<double> loss = session.sharedLoss();
      if (!loss.ok())
        return loss.status();
      const double lr = session.spec.baseLr * context.lrFactor;
      // A skipped step is no optimizer step: Adam's t and SGD's first step
      // stay where they were.
      const bool skip = session.stepSkipped();
      if (session.scaler)
        session.scaler->update(skip);
      skipped += skip;
      if (!skip)
        ++context.step;
      ++done;
      if (done == std::min(kWarmupSteps, plan.totalSteps))
        rssAfterWarmup = currentRssBytes();
      progress.step(epoch, *loss, lr, session.scaler ? session.scaler->scale() : 1, skip);
    }
    progress.endEpoch(epoch);
  }
  context.profile = nullptr;

  RunReport report = startReport(session, "train");
  report.seconds = secondsSince(start);
  if (session.partitioned() || session.replicated())
    report.devicesWaitSeconds =
        std::vector<double>{session.transport.waitSeconds() - waitedBefore};
  report.rssAfterWarmupBytes = rssAfterWarmup;
  report.rssAtEndBytes = currentRssBytes();
  report.epochs = plan.epochs;
  report.steps = done;
  if (session.scaler) {
    report.skippedSteps = skipped;
    report.lossScale = session.scaler->scale();
  }
  report.examplesPerSecond =
      report.seconds > 0 ? static_cast<double>(done * batch) / report.seconds : 0;
  report.finalLoss = progress.lastEpochMeanLoss();
  if (!options.save.empty()) {
    if (absl::Status status = session.executor->pullState(); !status.ok())
      return status;
    if (absl::Status status =
            session.saveState(options.save, /*optimizerState=*/true, session.progress(context));
        !status.ok())
      return status;
  }
  if (profile) {
    if (absl::Status status =
            writeKernelProfile(options.profile, session.spec, *profile, options.threads);
        !status.ok())
      return status;
    absl::FPrintF(stdout, "kernel profile of %d steps written to %s\n", profile->steps(),
                  options.profile);
  }
  if (!test) {
    if (session.reports())
      absl::FPrintF(stdout, "%s has no test split; skipping evaluation\n", options.data);
  } else {
    absl::StatusOr<Evaluation> evaluation = evaluate(session, *test, context);
    if (!evaluation.ok())
      return evaluation.status();
    recordEvaluation(session, *evaluation, report);
  }
  return finishReport(session, report);
}

absl::Status runEval(Session &session) {
  std::optional<Examples> test;
  absl::Status setup = [&]() -> absl::Status {
    absl::StatusOr<std::optional<Examples>> split = loadData(session, Split::Test);
    if (!split.ok())
      return split.status();
    if (!*split)
      return noSplitError(session, Split::Test);
    test = std::move(*split);
    return session.initializeOrLoad();
  }();
  if (absl::Status status = agree(session.transport, setup); !status.ok())
    return status;
  absl::StatusOr<Evaluation> evaluation = evaluate(session, *test, firstStepContext(session));
  if (!evaluation.ok())
    return evaluation.status();
  RunReport report = startReport(session, "eval");
  recordEvaluation(session, *evaluation, report);
  report.seconds = evaluation->seconds;
  report.examplesPerSecond =
      report.seconds > 0 ? static_cast<double>(evaluation->count) / report.seconds : 0;
  return finishReport(session, report);
}

absl::Status runInit(Session &session) {
  initializeState(session.spec, session.options.seed, session.arena());
  if (absl::Status status = session.saveState(session.options.save, /*optimizerState=*/false);
      !status.ok())
    return status;
  if (session.reports())
    absl::FPrintF(stdout, "wrote the initial weights of %s (seed %d) to %s\n",
                  session.spec.model, session.options.seed, session.options.save);
  return absl::OkStatus();
}

/// Loads the inputs of `step` from --batch into the arena.
absl::Status loadBatch(Session &session) {
  const std::string &path = session.options.batch;
  const ModelLayout &layout = session.layout;
  absl::StatusOr<TensorMap> batch = loadSafetensors(path);
  if (!batch.ok())
    return batch.status();
  std::string names;
  for (const TensorInfo *input : layout.inputs)
    names += (names.empty() ? "'" : ", '") + input->name + "'";
  for (const auto &[name, tensor] : *batch)
    if (!layout.input(name))
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: tensor '%s' is not an input of model %s (expected %s)", path,
                          name, session.spec.model, names));
  for (const TensorInfo *input : layout.inputs) {
    if (absl::Status status = checkTensor(*batch, input->name, input->dtype, input->shape, path);
        !status.ok())
      return status;
    writeTensor(*input, batch->at(input->name), session.arena());
  }
  if (layout.classes == 0)
    return absl::OkStatus();
  const TensorInfo &label = *layout.target;
  size_t size = dtypeSize(label.dtype);
  for (int64_t i = 0; i < session.spec.batch; ++i) {
    auto value = static_cast<int64_t>(loadScalar(label.dtype, session.at(label) + i * size));
    if (value < 0 || value >= layout.classes)
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: tensor '%s' at index %d is %d, expected 0 to %d", path,
                          label.name, i, value, layout.classes - 1));
  }
  return absl::OkStatus();
}

absl::Status runStep(Session &session) {
  const ModelLayout &layout = session.layout;
  if (absl::Status status = session.initializeOrLoad(); !status.ok())
    return status;
  if (absl::Status status = loadBatch(session); !status.ok())
    return status;
  StepContext context = firstStepContext(session);
  TensorMap results;
  // Gradients are valid only right after the kernel computing them.
  struct Observer {
    const ProgramSpec &spec;
    TensorMap &results;
  } observer{session.spec, results};
  context.observer = &observer;
  context.observe = [](void *state, size_t tensor, const unsigned char *arena) {
    auto &self = *static_cast<Observer *>(state);
    const TensorInfo &info = self.spec.tensors.at(tensor);
    self.results.insert_or_assign(info.name, readTensor(info, arena));
  };
  if (absl::Status status = session.executor->run(StepKind::Forward, context); !status.ok())
    return absl::InternalError(absl::StrFormat("forward: %s", status.message()));
  // The training step may reuse the output's bytes; keep the eval output.
  results.emplace("output", readTensor(*layout.output, session.arena()));
  if (absl::Status status = session.executor->run(StepKind::Train, context); !status.ok())
    return absl::InternalError(absl::StrFormat("training step: %s", status.message()));
  results.emplace("loss", readTensor(*layout.loss, session.arena()));
  if (layout.foundInf)
    results.emplace("found_inf", readTensor(*layout.foundInf, session.arena()));
  for (const TensorInfo *tensor : layout.gradients)
    if (!results.count(tensor->name))
      return absl::InternalError(absl::StrFormat(
          "training step: gradient '%s' was never reported to the runtime", tensor->name));
  if (absl::Status status = session.executor->pullState(); !status.ok())
    return status;
  for (const TensorInfo *tensor : layout.state)
    results.emplace(tensor->name, readTensor(*tensor, session.arena()));
  if (absl::Status status = saveSafetensors(session.options.out, results); !status.ok())
    return status;
  absl::FPrintF(stdout, "wrote loss, output, %d gradients and %d state tensors to %s\n",
                layout.gradients.size(), layout.state.size(), session.options.out);
  return absl::OkStatus();
}

/// The .npy file of each input the forward step reads, from --input: a
/// file, or NAME=FILE,... (every forward input once).
absl::StatusOr<std::vector<std::string>>
predictInputFiles(const std::vector<const TensorInfo *> &inputs, const std::string &value) {
  std::string names;
  for (const TensorInfo *input : inputs)
    names += (names.empty() ? "" : ", ") + input->name;
  std::vector<std::string> paths(inputs.size());
  if (value.find('=') == std::string::npos) {
    if (inputs.size() != 1)
      return absl::InvalidArgumentError(absl::StrFormat(
          "predict: the forward pass reads %d inputs (%s); give --input NAME=FILE,... for each",
          inputs.size(), names));
    paths[0] = value;
    return paths;
  }
  for (absl::string_view part : absl::StrSplit(value, ',')) {
    std::vector<std::string> pair = absl::StrSplit(part, absl::MaxSplits('=', 1));
    size_t index = inputs.size();
    for (size_t i = 0; i < inputs.size(); ++i)
      if (pair.size() == 2 && inputs[i]->name == pair[0])
        index = i;
    if (index == inputs.size() || pair[1].empty())
      return absl::InvalidArgumentError(absl::StrFormat(
          "predict: --input '%s' is not NAME=FILE with NAME an input of the forward pass (%s)",
          std::string(part), names));
    if (!paths[index].empty())
      return absl::InvalidArgumentError(
          absl::StrFormat("predict: --input names '%s' twice", pair[0]));
    paths[index] = pair[1];
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    if (paths[i].empty())
      return absl::InvalidArgumentError(
          absl::StrFormat("predict: --input lacks the forward pass's input '%s'", inputs[i]->name));
  return paths;
}

/// The eval-mode forward over every example of --input, in batches (the
/// last padded with the first examples), its outputs to --out. Every rank
/// reads the files and feeds the inputs it has; the rank holding "output"
/// keeps the outputs, which rank 0 writes.
absl::Status runPredict(Session &session) {
  const ModelLayout &layout = session.layout;
  const PartitionLayout &partition = session.partition;
  const TensorInfo &output = *partition.devices[partition.outputDevice].output;
  const bool keeps = session.rank() == partition.outputDevice;
  std::optional<Examples> examples;
  absl::Status setup = [&]() -> absl::Status {
    absl::StatusOr<std::vector<std::string>> paths =
        predictInputFiles(partition.forwardInputs, session.options.input);
    if (!paths.ok())
      return paths.status();
    std::vector<InputFormat> formats;
    for (const TensorInfo *input : partition.forwardInputs)
      formats.push_back({input->name, input->dtype, input->shape, 0});
    absl::StatusOr<Examples> arrays = loadArrays(formats, *paths, session.options.normalization);
    if (!arrays.ok())
      return arrays.status();
    examples = std::move(*arrays);
    return session.initializeOrLoad();
  }();
  if (absl::Status status = agree(session.transport, setup); !status.ok())
    return status;
  // Replicas hold the same model: rank 0 predicts alone.
  if (session.replicated() && !session.reports())
    return absl::OkStatus();
  std::vector<unsigned char *> destinations =
      inputDestinations(session, partition.forwardInputs);
  const int64_t batch = session.spec.batch, n = examples->size();
  const size_t rowBytes = tensorBytes(output) / static_cast<size_t>(batch);
  HostTensor outputs;
  outputs.dtype = output.dtype;
  outputs.shape = output.shape;
  outputs.shape[0] = n;
  if (keeps)
    outputs.bytes.resize(rowBytes * static_cast<size_t>(n));
  std::vector<int64_t> indices(static_cast<size_t>(batch));
  StepContext context = firstStepContext(session);
  Clock::time_point start = Clock::now();
  for (int64_t first = 0; first < n; first += batch) {
    int64_t real = std::min(batch, n - first);
    for (int64_t r = 0; r < batch; ++r)
      indices[r] = r < real ? first + r : (r - real) % n;
    examples->fillBatch(indices.data(), batch, destinations);
    if (absl::Status status = session.executor->run(StepKind::Forward, context); !status.ok())
      return absl::InternalError(absl::StrFormat("prediction of examples %d to %d: %s", first,
                                                 first + real - 1, status.message()));
    if (keeps)
      std::memcpy(outputs.bytes.data() + first * rowBytes, session.at(*layout.output),
                  rowBytes * static_cast<size_t>(real));
  }
  if (session.partitioned()) {
    absl::StatusOr<std::vector<std::string>> parts = session.transport.gather(
        keeps ? std::string_view(reinterpret_cast<const char *>(outputs.bytes.data()),
                                 outputs.bytes.size())
              : std::string_view(),
        /*root=*/0);
    if (!parts.ok())
      return parts.status();
    if (!session.reports())
      return absl::OkStatus();
    const std::string &kept = (*parts)[partition.outputDevice];
    outputs.bytes.assign(kept.begin(), kept.end());
  }
  double seconds = secondsSince(start);
  if (absl::Status status = writeNpy(session.options.out, outputs); !status.ok())
    return status;
  absl::FPrintF(stdout, "wrote the outputs %s of %d examples to %s in %.1f s, %.0f examples/s\n",
                formatShape(outputs.shape), n, session.options.out, seconds,
                seconds > 0 ? static_cast<double>(n) / seconds : 0);
  return absl::OkStatus();
}

absl::Status runCommand(const ProgramSpec *const *specs, int devices, Transport &transport,
                        const Options &options) {
  std::optional<PartitionLayout> partition; // outlives the session, which points into it
  std::optional<Session> session;
  absl::Status ready = [&]() -> absl::Status {
    // The run's files are rank 0's to write.
    if (transport.rank() == 0)
      for (auto [flag, path] : {std::pair{"--save", &options.save},
                                std::pair{"--metrics", &options.metrics},
                                std::pair{"--out", &options.out}})
        if (!path->empty())
          if (absl::Status status = checkWritable(flag, *path); !status.ok())
            return status;
    absl::StatusOr<PartitionLayout> described = describePartition(specs, devices);
    if (!described.ok())
      return described.status();
    partition.emplace(std::move(*described));
    if (specs[0]->replicas > 1 && options.command == Command::Step)
      return absl::UnimplementedError(absl::StrFormat(
          "step: model %s trains as %d replicas, and step cannot yet gather their gradients; "
          "train, eval, init and predict can",
          specs[0]->model, specs[0]->replicas));
    if (partition->size() > 1 && options.command == Command::Step)
      return absl::UnimplementedError(absl::StrFormat(
          "step: model %s runs on %d devices, and step cannot yet gather every device's "
          "gradients; train, eval, init and predict can",
          specs[0]->model, devices));
    absl::StatusOr<Session> opened = openSession(*partition, transport, options);
    if (!opened.ok())
      return opened.status();
    session.emplace(std::move(*opened));
    return absl::OkStatus();
  }();
  if (absl::Status status = agree(transport, ready); !status.ok())
    return status;
  switch (options.command) {
  case Command::Train:
    return runTrain(*session);
  case Command::Eval:
    return runEval(*session);
  case Command::Init:
    return runInit(*session);
  case Command::Step:
    return runStep(*session);
  case Command::Predict:
    return runPredict(*session);
  case Command::Help:
  case Command::Version:
    break;
  }
  return absl::OkStatus();
}

/// runMain, runPartitionedMain and runReplicatedMain: `open` is null for a
/// model on one device, which runs alone (LocalTransport); otherwise the
/// run takes a process per device, or per replica.
int runProgram(const ProgramSpec *const *specs, int devices, OpenTransport open, int argc,
               char **argv) {
  if (!specs || devices < 1 || !specs[0]) {
    absl::FPrintF(stderr, "error: model spec: %d devices without specs\n", devices);
    return 1;
  }
  const ProgramSpec &spec = *specs[0];
  if (spec.backend && spec.backend->prepareProcess)
    spec.backend->prepareProcess(argc, argv);
  std::string exe = programName(argc > 0 ? argv[0] : nullptr);
  const bool partitioned = open != nullptr && devices > 1;
  const bool replicated = open != nullptr && spec.replicas > 1;
  const int processes = replicated ? spec.replicas : devices;
  absl::StatusOr<Options> options = parseCommandLine(argc, argv);
  if (options.ok() && options->command == Command::Help) {
    std::string text =
        usageText(exe, spec, spec.backend && std::string(spec.backend->name) == "cuda");
    if (partitioned)
      text += absl::StrFormat(
          "\nThe model runs on %1$d devices, one process each: launch every command but\n"
          "--help and --version as `mpirun -np %1$d %2$s COMMAND ...`. Rank 0 prints and\n"
          "writes the files; any rank's error ends every rank with a non-zero exit code.\n",
          devices, exe);
    if (replicated)
      text += absl::StrFormat(
          "\nThe model trains as %1$d data-parallel replicas, one process each, each on\n"
          "%2$d examples of every batch of %3$d: launch every command but --help and\n"
          "--version as `mpirun -np %1$d %4$s COMMAND ...`. Rank 0 prints and writes the\n"
          "files; any rank's error ends every rank with a non-zero exit code.\n",
          spec.replicas, spec.batch, spec.batch * spec.replicas, exe);
    absl::FPrintF(stdout, "%s", text);
    return 0;
  }
  if (options.ok() && options->command == Command::Version) {
    absl::FPrintF(stdout, "%s: model %s from %s%s, Cairn %s, %s\n", exe, spec.model,
                  spec.sourceFile,
                  partitioned  ? absl::StrFormat(" on %d devices", devices)
                  : replicated ? absl::StrFormat(" as %d replicas", spec.replicas)
                               : std::string(),
                  CAIRN_VERSION,
                  spec.backend && spec.backend->describeBuild ? spec.backend->describeBuild()
                                                              : std::string("CPU"));
    return 0;
  }

  std::unique_ptr<Transport> transport;
  if (open) {
    absl::StatusOr<std::unique_ptr<Transport>> opened = open(&argc, &argv);
    if (!opened.ok()) {
      absl::FPrintF(stderr, "error: %s\n", opened.status().message());
      return 1;
    }
    transport = std::move(*opened);
  } else {
    transport = std::make_unique<LocalTransport>();
  }
  // Said once, by rank 0.
  const bool speaks = transport->rank() == 0;
  if (!options.ok()) {
    if (speaks)
      absl::FPrintF(stderr, "error: %s (run '%s --help' for usage)\n",
                    options.status().message(), exe);
    return 1;
  }
  if (transport->size() != processes) {
    if (speaks)
      absl::FPrintF(stderr,
                    "error: this executable runs model %s %s, one process each%s: "
                    "launch it as `mpirun -np %d %s ...`\n",
                    spec.model,
                    replicated ? absl::StrFormat("as %d replicas", processes)
                               : absl::StrFormat("on %d devices", processes),
                    transport->size() > 1
                        ? absl::StrFormat(" (not %d)", transport->size())
                        : std::string(),
                    processes, exe);
    return 1;
  }

  absl::Status status;
  try {
    status = runCommand(specs, devices, *transport, *options);
  } catch (const kernels::KernelError &e) {
    status = absl::InternalError(e.what());
  } catch (const std::bad_alloc &) {
    status = absl::ResourceExhaustedError("out of memory");
  } catch (const std::exception &e) {
    status = absl::InternalError(absl::StrFormat("unexpected failure: %s", e.what()));
  }
  std::fflush(stdout);
  if (status.ok())
    return 0;
  if (isPeerFailure(status))
    return 1; // rank 0 said what failed
  if (transport->size() == 1) {
    absl::FPrintF(stderr, "error: %s\n", status.message());
    return 1;
  }
  // The other ranks may be waiting for this one, in a step or a collective.
  absl::FPrintF(stderr, "error: %s %d: %s\n", replicated ? "replica" : "device",
                transport->rank(), status.message());
  std::fflush(stderr);
  transport->abortAll(1);
  return 1; // not reached
}

} // namespace

int runMain(const ProgramSpec &spec, int argc, char **argv) {
  const ProgramSpec *const specs[] = {&spec};
  return runProgram(specs, 1, /*open=*/nullptr, argc, argv);
}

int runPartitionedMain(const ProgramSpec *const *specs, int devices, OpenTransport open,
                       int argc, char **argv) {
  if (!open) {
    absl::FPrintF(stderr, "error: model spec: a partitioned model without a transport\n");
    return 1;
  }
  return runProgram(specs, devices, open, argc, argv);
}

int runReplicatedMain(const ProgramSpec &spec, OpenTransport open, int argc, char **argv) {
  if (!open || spec.replicas < 2) {
    absl::FPrintF(stderr, "error: model spec: replicas without a transport\n");
    return 1;
  }
  const ProgramSpec *const specs[] = {&spec};
  return runProgram(specs, 1, open, argc, argv);
}

} // namespace cairn::runtime
