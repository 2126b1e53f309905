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
//===----------------------------------------------------------------------===//
#include "runtime/Checkpoint.h"
#include "runtime/Cli.h"
#include "runtime/Dataset.h"
#include "runtime/EvalLoss.h"
#include "runtime/Executor.h"
#include "runtime/HostExecutor.h"
#include "runtime/Init.h"
#include "runtime/KernelProfile.h"
#include "runtime/Metrics.h"
#include "runtime/Model.h"
#include "runtime/Npy.h"
#include "runtime/Program.h"
#include "runtime/Progress.h"
#include "runtime/Safetensors.h"
#include "runtime/Scalar.h"
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

/// What every command works on: the checked spec and its executor, whose
/// host arena the runtime reads and writes.
struct Session {
  const ProgramSpec &spec;
  const Options &options;
  ModelLayout layout;
  std::unique_ptr<Executor> executor;

  unsigned char *arena() { return executor->hostArena(); }
  unsigned char *at(const TensorInfo &tensor) { return arena() + tensor.offset; }

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
      absl::StatusOr<TrainingProgress> progress = loadCheckpoint(layout, options.load, arena());
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
};

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

absl::StatusOr<Session> openSession(const ProgramSpec &spec, const Options &options) {
  absl::StatusOr<ModelLayout> layout = describeModel(spec);
  if (!layout.ok())
    return layout.status();
  absl::StatusOr<std::unique_ptr<Executor>> executor = openExecutor(spec, options);
  if (!executor.ok())
    return executor.status();
  Session session{spec, options, std::move(*layout), std::move(*executor)};
  if (session.layout.foundInf)
    session.scaler.emplace(options.lossScale.value_or(LossScaleSetting{}));
  else if (options.lossScale && options.lossScale->mode != LossScaleMode::None)
    return absl::InvalidArgumentError(absl::StrFormat(
        "--loss-scale %s: the training step of model %s does not scale its loss (only "
        "models built with --precision f16 do); it takes --loss-scale none only",
        describeLossScale(*options.lossScale), spec.model));
  return session;
}

/// What the data feeds: every input of the model, class indices checked
/// where the loss is a cross-entropy.
std::vector<InputFormat> inputFormats(const ModelLayout &layout) {
  std::vector<InputFormat> formats;
  for (const TensorInfo *input : layout.inputs)
    formats.push_back({input->name, input->dtype, input->shape,
                       input == layout.target ? layout.classes : 0});
  return formats;
}

/// Where fillBatch writes each input of inputFormats.
std::vector<unsigned char *> inputDestinations(Session &session) {
  std::vector<unsigned char *> destinations;
  for (const TensorInfo *input : session.layout.inputs)
    destinations.push_back(session.at(*input));
  return destinations;
}

absl::StatusOr<std::optional<Examples>> loadData(const Session &session, Split split) {
  return loadSplit(session.options.data, split, inputFormats(session.layout),
                   session.options.normalization);
}

absl::Status noSplitError(const Session &session, Split split) {
  const std::string &dir = session.options.data;
  std::string named;
  for (const TensorInfo *input : session.layout.inputs)
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
absl::StatusOr<Evaluation> evaluate(Session &session, const Examples &test,
                                    const StepContext &context) {
  const ModelLayout &layout = session.layout;
  int64_t batch = session.spec.batch, n = test.size();
  const bool perExample = layout.target != nullptr;
  const StepKind step = perExample ? StepKind::Forward : StepKind::EvalLoss;
  if (!perExample && !layout.evalLoss)
    return absl::FailedPreconditionError(absl::StrFormat(
        "model %s has neither a loss eval computes from the forward step's output nor an "
        "eval_loss step; rebuild it with this cairn",
        session.spec.model));
  std::vector<int64_t> indices(static_cast<size_t>(batch));
  std::vector<unsigned char *> destinations = inputDestinations(session);
  Evaluation result;
  Clock::time_point start = Clock::now();
  for (int64_t first = 0; first < n; first += batch) {
    int64_t real = std::min(batch, n - first);
    for (int64_t r = 0; r < batch; ++r)
      indices[r] = r < real ? first + r : (r - real) % n;
    test.fillBatch(indices.data(), batch, destinations);
    if (absl::Status status = session.executor->run(step, context); !status.ok())
      return absl::InternalError(absl::StrFormat("evaluation of test examples %d to %d: %s",
                                                 first, first + real - 1, status.message()));
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
  return result;
}

void recordEvaluation(const Session &session, const Evaluation &evaluation, RunReport &report) {
  double n = static_cast<double>(evaluation.count);
  if (session.layout.classes > 0)
    report.testAccuracy = static_cast<double>(evaluation.correct) / n;
  report.testLoss = evaluation.lossSum / n;
  report.testExamples = evaluation.count;
}

RunReport startReport(const Session &session, const char *command) {
  RunReport report;
  report.model = session.spec.model;
  report.command = command;
  report.plannedArenaBytes = session.spec.arenaBytes;
  report.seed = session.options.seed;
  return report;
}

absl::Status finishReport(const Session &session, RunReport &report) {
  session.executor->fillReport(report);
  report.peakRssBytes = peakRssBytes();
  printSummary(stdout, report);
  std::fflush(stdout);
  if (session.options.metrics.empty())
    return absl::OkStatus();
  return writeMetrics(session.options.metrics, report);
}

/// --profile: the profile of the training step's kernels, or an error when
/// this executable cannot time them.
absl::StatusOr<std::optional<KernelProfile>> openProfile(const ProgramSpec &spec,
                                                         const Options &options) {
  if (options.profile.empty())
    return std::optional<KernelProfile>();
  if (spec.backend && std::string(spec.backend->name) != "cpu")
    return absl::InvalidArgumentError(absl::StrFormat(
        "--profile times the kernels of CPU executables; this one runs on %s, whose kernels "
        "run asynchronously (profile it with Nsight Systems: nsys profile EXE train --no-graph)",
        spec.backend->name));
  return std::optional<KernelProfile>(KernelProfile(spec.trainKernels.size()));
}

absl::Status runTrain(Session &session) {
  const Options &options = session.options;
  absl::StatusOr<std::optional<KernelProfile>> profile =
      openProfile(session.spec, options);
  if (!profile.ok())
    return profile.status();
  const ModelLayout &layout = session.layout;
  absl::StatusOr<std::optional<Examples>> train = loadData(session, Split::Train);
  if (!train.ok())
    return train.status();
  if (!*train)
    return noSplitError(session, Split::Train);
  absl::StatusOr<std::optional<Examples>> test = loadData(session, Split::Test);
  if (!test.ok())
    return test.status();
  int64_t batch = session.spec.batch;
  int64_t stepsPerEpoch = (*train)->size() / batch;
  if (stepsPerEpoch == 0)
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d training examples are fewer than one batch of %d", options.data,
        (*train)->size(), batch));
  if (absl::Status status = session.initializeOrLoad(); !status.ok())
    return status;

  TrainingPlan plan;
  if (options.steps)
    plan.totalSteps = *options.steps;
  else if (__builtin_mul_overflow(options.epochs, stepsPerEpoch, &plan.totalSteps))
    return absl::InvalidArgumentError(
        absl::StrFormat("--epochs %d is too many to count", options.epochs));
  plan.epochs = (plan.totalSteps + stepsPerEpoch - 1) / stepsPerEpoch;
  plan.batch = batch;
  plan.logEvery = options.logEvery;
  plan.showLr = !session.spec.lrSchedule.empty();
  plan.showLossScale = session.scaler.has_value();
  Progress progress(stderr, ::isatty(STDERR_FILENO) != 0, plan);
  std::vector<unsigned char *> destinations = inputDestinations(session);
  const unsigned char *loss = session.at(*layout.loss);
  StepContext context = firstStepContext(session);
  int64_t done = 0;    // steps of this run
  int64_t skipped = 0; // of them, skipped for an inf or NaN gradient
  int64_t rssAfterWarmup = 0;
  Clock::time_point start = Clock::now();
  for (int64_t epoch = 0; epoch < plan.epochs; ++epoch) {
    std::vector<int64_t> order = epochPermutation((*train)->size(), options.seed, epoch);
    for (int64_t k = 0; k < stepsPerEpoch && done < plan.totalSteps; ++k) {
      (*train)->fillBatch(&order[k * batch], batch, destinations);
      // The first step warms caches and pages up: profiled only when alone.
      context.profile = *profile && (done > 0 || plan.totalSteps == 1) ? &**profile : nullptr;
      prepareStep(session, context);
      if (absl::Status status = session.executor->run(StepKind::Train, context); !status.ok())
        return absl::InternalError(absl::StrFormat("training step %d (epoch %d): %s",
                                                   done + 1, epoch + 1, status.message()));
      if (context.profile)
        context.profile->endStep();
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
      progress.step(epoch, loadScalar(layout.loss->dtype, loss), lr,
                    session.scaler ? session.scaler->scale() : 1, skip);
    }
    progress.endEpoch(epoch);
  }
  context.profile = nullptr;

  RunReport report = startReport(session, "train");
  report.seconds = secondsSince(start);
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
    if (absl::Status status = saveCheckpoint(layout, session.arena(), options.save,
                                             /*optimizerState=*/true, session.progress(context));
        !status.ok())
      return status;
  }
  if (*profile) {
    if (absl::Status status =
            writeKernelProfile(options.profile, session.spec, **profile, options.threads);
        !status.ok())
      return status;
    absl::FPrintF(stdout, "kernel profile of %d steps written to %s\n",
                  (*profile)->steps(), options.profile);
  }
  if (!*test) {
    absl::FPrintF(stdout, "%s has no test split; skipping evaluation\n", options.data);
  } else {
    absl::StatusOr<Evaluation> evaluation = evaluate(session, **test, context);
    if (!evaluation.ok())
      return evaluation.status();
    recordEvaluation(session, *evaluation, report);
  }
  return finishReport(session, report);
}

absl::Status runEval(Session &session) {
  absl::StatusOr<std::optional<Examples>> test = loadData(session, Split::Test);
  if (!test.ok())
    return test.status();
  if (!*test)
    return noSplitError(session, Split::Test);
  if (absl::Status status = session.initializeOrLoad(); !status.ok())
    return status;
  absl::StatusOr<Evaluation> evaluation =
      evaluate(session, **test, firstStepContext(session));
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
  if (absl::Status status =
          saveCheckpoint(session.layout, session.arena(), session.options.save,
                         /*optimizerState=*/false);
      !status.ok())
    return status;
  absl::FPrintF(stdout, "wrote the initial weights of %s (seed %d) to %s\n", session.spec.model,
                session.options.seed, session.options.save);
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
absl::StatusOr<std::vector<std::string>> predictInputFiles(const ModelLayout &layout,
                                                           const std::string &value) {
  const std::vector<const TensorInfo *> &inputs = layout.forwardInputs;
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
/// last padded with the first examples), its outputs to --out.
absl::Status runPredict(Session &session) {
  const ModelLayout &layout = session.layout;
  absl::StatusOr<std::vector<std::string>> paths =
      predictInputFiles(layout, session.options.input);
  if (!paths.ok())
    return paths.status();
  std::vector<InputFormat> formats;
  std::vector<unsigned char *> destinations;
  for (const TensorInfo *input : layout.forwardInputs) {
    formats.push_back({input->name, input->dtype, input->shape, 0});
    destinations.push_back(session.at(*input));
  }
  absl::StatusOr<Examples> examples =
      loadArrays(formats, *paths, session.options.normalization);
  if (!examples.ok())
    return examples.status();
  if (absl::Status status = session.initializeOrLoad(); !status.ok())
    return status;
  const int64_t batch = session.spec.batch, n = examples->size();
  const size_t rowBytes = tensorBytes(*layout.output) / static_cast<size_t>(batch);
  HostTensor outputs;
  outputs.dtype = layout.output->dtype;
  outputs.shape = layout.output->shape;
  outputs.shape[0] = n;
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
    std::memcpy(outputs.bytes.data() + first * rowBytes, session.at(*layout.output),
                rowBytes * static_cast<size_t>(real));
  }
  double seconds = secondsSince(start);
  if (absl::Status status = writeNpy(session.options.out, outputs); !status.ok())
    return status;
  absl::FPrintF(stdout, "wrote the outputs %s of %d examples to %s in %.1f s, %.0f examples/s\n",
                formatShape(outputs.shape), n, session.options.out, seconds,
                seconds > 0 ? static_cast<double>(n) / seconds : 0);
  return absl::OkStatus();
}

absl::Status runCommand(const ProgramSpec &spec, const Options &options) {
  for (auto [flag, path] : {std::pair{"--save", &options.save},
                            std::pair{"--metrics", &options.metrics},
                            std::pair{"--out", &options.out}})
    if (!path->empty())
      if (absl::Status status = checkWritable(flag, *path); !status.ok())
        return status;
  absl::StatusOr<Session> session = openSession(spec, options);
  if (!session.ok())
    return session.status();
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

} // namespace

int runMain(const ProgramSpec &spec, int argc, char **argv) {
  if (spec.backend && spec.backend->prepareProcess)
    spec.backend->prepareProcess(argc, argv);
  std::string exe = programName(argc > 0 ? argv[0] : nullptr);
  absl::StatusOr<Options> options = parseCommandLine(argc, argv);
  if (!options.ok()) {
    absl::FPrintF(stderr, "error: %s (run '%s --help' for usage)\n", options.status().message(),
                  exe);
    return 1;
  }
  if (options->command == Command::Help) {
    absl::FPrintF(stdout, "%s",
                  usageText(exe, spec,
                            spec.backend && std::string(spec.backend->name) == "cuda"));
    return 0;
  }
  if (options->command == Command::Version) {
    absl::FPrintF(stdout, "%s: model %s from %s, Cairn %s, %s\n", exe, spec.model,
                  spec.sourceFile, CAIRN_VERSION,
                  spec.backend && spec.backend->describeBuild ? spec.backend->describeBuild()
                                                              : std::string("CPU"));
    return 0;
  }
  absl::Status status;
  try {
    status = runCommand(spec, *options);
  } catch (const kernels::KernelError &e) {
    status = absl::InternalError(e.what());
  } catch (const std::bad_alloc &) {
    status = absl::ResourceExhaustedError("out of memory");
  } catch (const std::exception &e) {
    status = absl::InternalError(absl::StrFormat("unexpected failure: %s", e.what()));
  }
  std::fflush(stdout);
  if (!status.ok()) {
    absl::FPrintF(stderr, "error: %s\n", status.message());
    return 1;
  }
  return 0;
}

} // namespace cairn::runtime
