//===- Commands.cpp - The commands of a training executable ---------------===//
//
// See Commands.h. Every failure -- an absl::Status from the readers, a
// KernelError thrown inside a step -- is returned (or thrown) to Main.cpp.
// A failure in a phase every rank runs alone (loading data or a
// checkpoint) is agreed on (Collective.h), so every rank returns it.
//
//===----------------------------------------------------------------------===//
#include "runtime/Commands.h"

#include "runtime/Collective.h"
#include "runtime/EvalLoss.h"
#include "runtime/Init.h"
#include "runtime/KernelProfile.h"
#include "runtime/LrSchedule.h"
#include "runtime/Npy.h"
#include "runtime/Progress.h"
#include "runtime/Safetensors.h"
#include "runtime/Scalar.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace cairn::runtime {

namespace {

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

} // namespace

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

} // namespace cairn::runtime
