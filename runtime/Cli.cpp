//===- Cli.cpp - The command line of a generated executable ---------------===//
#include "runtime/Cli.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

#include <cmath>
#include <set>
#include <vector>

namespace cairn::runtime {

namespace {

constexpr unsigned kTrain = 1, kEval = 2, kInit = 4, kStep = 8, kPredict = 16;

struct Flag {
  const char *name;
  unsigned commands; // where it is accepted
  bool takesValue = true;
};

constexpr Flag kFlags[] = {
    {"data", kTrain | kEval},   {"epochs", kTrain},
    {"steps", kTrain},          {"seed", kTrain | kInit | kStep},
    {"load", kTrain | kEval | kStep | kPredict}, {"save", kTrain | kInit},
    {"metrics", kTrain | kEval}, {"normalize", kTrain | kEval | kPredict},
    {"threads", kTrain | kEval | kPredict}, {"log-every", kTrain},
    {"profile", kTrain},        {"loss-scale", kTrain | kStep},
    {"batch", kStep},           {"out", kStep | kPredict},
    {"input", kPredict},
    {"poison", kTrain | kEval | kStep | kPredict, /*takesValue=*/false},
    {"deterministic", kTrain | kEval | kStep | kPredict, /*takesValue=*/false},
    {"no-graph", kTrain | kEval | kStep | kPredict, /*takesValue=*/false},
};

struct CommandName {
  const char *name;
  Command command;
  unsigned bit;
};
constexpr CommandName kCommands[] = {
    {"train", Command::Train, kTrain},
    {"eval", Command::Eval, kEval},
    {"init", Command::Init, kInit},
    {"step", Command::Step, kStep},
    {"predict", Command::Predict, kPredict},
};

absl::Status usageError(const std::string &message) {
  return absl::InvalidArgumentError(message);
}

absl::StatusOr<int64_t> parseCount(const std::string &flag, const std::string &value,
                                   int64_t minimum) {
  int64_t number;
  if (!absl::SimpleAtoi(value, &number) || number < minimum)
    return usageError(absl::StrFormat("--%s expects an integer of at least %d, got '%s'", flag,
                                      minimum, value));
  return number;
}

absl::Status parseNormalization(const std::string &value, Normalization &normalization) {
  std::vector<std::string> parts = absl::StrSplit(value, ',');
  float mean, std;
  if (parts.size() != 2 || !absl::SimpleAtof(parts[0], &mean) ||
      !absl::SimpleAtof(parts[1], &std) || !std::isfinite(mean) || !std::isfinite(std) ||
      std <= 0)
    return usageError(absl::StrFormat(
        "--normalize expects MEAN,STD (two numbers, STD above 0), got '%s'", value));
  normalization = {mean, std};
  return absl::OkStatus();
}

/// Stores `value` of flag `name` into `options`.
absl::Status setFlag(const std::string &name, const std::string &value, Options &options) {
  auto count = [&](int64_t minimum, int64_t &field) -> absl::Status {
    absl::StatusOr<int64_t> number = parseCount(name, value, minimum);
    if (!number.ok())
      return number.status();
    field = *number;
    return absl::OkStatus();
  };
  if (name == "data")
    options.data = value;
  else if (name == "epochs")
    return count(1, options.epochs);
  else if (name == "steps") {
    int64_t steps = 0;
    if (absl::Status status = count(1, steps); !status.ok())
      return status;
    options.steps = steps;
  } else if (name == "seed") {
    if (!absl::SimpleAtoi(value, &options.seed))
      return usageError(absl::StrFormat(
          "--seed expects an integer from 0 to 18446744073709551615, got '%s'", value));
  } else if (name == "load")
    options.load = value;
  else if (name == "save")
    options.save = value;
  else if (name == "metrics")
    options.metrics = value;
  else if (name == "profile")
    options.profile = value;
  else if (name == "batch")
    options.batch = value;
  else if (name == "out")
    options.out = value;
  else if (name == "input")
    options.input = value;
  else if (name == "normalize")
    return parseNormalization(value, options.normalization);
  else if (name == "threads") {
    absl::StatusOr<int64_t> threads = parseCount(name, value, 0);
    if (!threads.ok())
      return threads.status();
    if (*threads > 4096)
      return usageError(absl::StrFormat("--threads %d is more than 4096", *threads));
    options.threads = static_cast<int>(*threads);
  } else if (name == "log-every")
    return count(1, options.logEvery);
  else if (name == "loss-scale") {
    absl::StatusOr<LossScaleSetting> setting = parseLossScale(value);
    if (!setting.ok())
      return setting.status();
    options.lossScale = *setting;
  }
  if (value.empty())
    return usageError(absl::StrFormat("--%s needs a non-empty value", name));
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<Options> parseCommandLine(int argc, char **argv) {
  Options options;
  if (argc < 2)
    return usageError("no command given; expected train, eval, init, step or predict");
  std::string first = argv[1];
  if (first == "--help" || first == "-h")
    return options;
  if (first == "--version") {
    options.command = Command::Version;
    return options;
  }
  const CommandName *command = nullptr;
  for (const CommandName &candidate : kCommands)
    if (first == candidate.name)
      command = &candidate;
  if (!command)
    return usageError(absl::StrFormat(
        "unknown command '%s'; expected train, eval, init, step or predict", first));
  // "EXE train ... --help" asks for help whatever else is on the line.
  for (int i = 2; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h")
      return options;
  options.command = command->command;

  std::set<std::string> seen;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (!absl::StartsWith(arg, "--"))
      return usageError(absl::StrFormat("%s: unexpected argument '%s'", command->name, arg));
    std::string name = arg.substr(2), value;
    size_t equals = name.find('=');
    bool inlineValue = equals != std::string::npos;
    if (inlineValue) {
      value = name.substr(equals + 1);
      name = name.substr(0, equals);
    }
    const Flag *flag = nullptr;
    for (const Flag &candidate : kFlags)
      if (name == candidate.name && (candidate.commands & command->bit))
        flag = &candidate;
    if (!flag)
      return usageError(absl::StrFormat("%s: unknown flag '--%s'", command->name, name));
    if (!flag->takesValue) {
      if (inlineValue)
        return usageError(
            absl::StrFormat("%s: --%s takes no value", command->name, name));
      if (!seen.insert(name).second)
        return usageError(
            absl::StrFormat("%s: --%s is given twice", command->name, name));
      if (name == "poison")
        options.poison = true;
      else if (name == "deterministic")
        options.deterministic = true;
      else if (name == "no-graph")
        options.noGraph = true;
      continue;
    }
    if (!inlineValue) {
      if (i + 1 >= argc || absl::StartsWith(argv[i + 1], "--"))
        return usageError(absl::StrFormat("%s: --%s needs a value", command->name, name));
      value = argv[++i];
    }
    if (!seen.insert(name).second)
      return usageError(absl::StrFormat("%s: --%s is given twice", command->name, name));
    if (absl::Status status = setFlag(name, value, options); !status.ok())
      return usageError(absl::StrFormat("%s: %s", command->name, status.message()));
  }

  if (seen.count("epochs") && seen.count("steps"))
    return usageError(absl::StrFormat(
        "%s: --epochs and --steps exclude each other; give one", command->name));
  std::vector<const char *> required;
  if (options.command == Command::Eval)
    required = {"load"};
  else if (options.command == Command::Init)
    required = {"save"};
  else if (options.command == Command::Step)
    required = {"load", "batch", "out"};
  else if (options.command == Command::Predict)
    required = {"load", "input", "out"};
  for (const char *name : required)
    if (!seen.count(name))
      return usageError(absl::StrFormat("%s: --%s is required", command->name, name));
  return options;
}

std::string usageText(const std::string &exe, const ProgramSpec &spec, bool cuda) {
  std::string text = absl::StrFormat(
      R"(%1$s: trains and evaluates model %2$s (from %3$s, batch %4$d), compiled by Cairn.

usage:
  %1$s train [--data DIR] [--epochs N | --steps N] [--seed S] [--load F] [--save F]
        [--metrics F] [--normalize MEAN,STD] [--threads N] [--log-every N] [--poison]
        [--profile F] [--loss-scale dynamic|none|N]
      Trains on DIR's training split, then reports accuracy and loss on its
      test split when it has one.
  %1$s eval [--data DIR] --load F [--metrics F] [--normalize MEAN,STD] [--threads N]
        [--poison]
      Reports accuracy and loss of the weights in F on DIR's test split.
  %1$s init [--seed S] --save F
      Writes freshly initialised weights to F.
  %1$s step --load F --batch B --out OUT [--seed S] [--poison]
        [--loss-scale dynamic|none|N]
      Loads the weights in F and the inputs in B (safetensors, tensors named
      like the model's inputs), runs the forward pass and one training step
      and writes loss, output, gradients and updated state to OUT.
  %1$s predict --load F --input X.npy --out Y.npy [--normalize MEAN,STD]
        [--threads N] [--poison]
      Runs the eval-mode forward pass with the weights in F on every example
      of X ([N, ...], as the data directory's arrays) and writes the outputs
      to Y ([N, ...] NumPy); a model whose forward reads several inputs
      takes --input NAME=X.npy,NAME=Z.npy.
  %1$s --help | -h      this text
  %1$s --version        versions of the executable and its backend

flags (FLAG VALUE or FLAG=VALUE):
  --data DIR            data directory (default %5$s)
                        holding one NumPy file per input of the model and
                        split, train_<input>.npy and test_<input>.npy, or (for
                        one floating-point input and at most one integer one)
                        IDX files train-images-idx3-ubyte,
                        train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
                        t10k-labels-idx1-ubyte (each plain or .gz) or NumPy files
                        train_images.npy, train_labels.npy, test_images.npy,
                        test_labels.npy; floating-point inputs take uint8
                        (scaled by 1/255) or float arrays, integer ones integers
  --epochs N            passes over the training set (default 1)
  --steps N             train for exactly N optimizer steps instead of whole epochs
  --seed S              seeds initialisation, shuffling and dropout (default 0)
  --load F              start from the weights in safetensors file F (state_dict
                        names; optimizer state and the count of optimizer steps
                        taken, which the lr schedule and Adam go on from, too
                        when F has them)
  --save F              write weights, optimizer state and the step count to F
                        (safetensors)
  --metrics F           write the run's metrics to F as JSON
  --normalize MEAN,STD  feed (x - MEAN) / STD, x the pixel scaled to [0, 1]
                        (images and uint8 arrays; default: x unchanged)
  --threads N           CPU threads of BLAS and the kernels (default 0: one
                        per core)
  --log-every N         without a terminal, print progress every N steps
                        (default 100)
  --batch B             step: safetensors file with the input tensors
  --out OUT             step: where step writes its results; predict: the
                        outputs' .npy file
  --input X             predict: the .npy file of the forward pass's input,
                        or NAME=FILE,... for each of its inputs
  --profile F           train on the CPU: time every kernel of the training step
                        (each step but the first) and write each one's median
                        seconds to F as JSON, for `cairn plan|build
                        --kernel-times F` and for reading where the step goes
  --loss-scale MODE     a model built with --precision f16 or --loss-scaling
                        (whose step scales its loss, as torch.amp.GradScaler):
                        dynamic (the default: from 65536, halved on a step
                        with an inf or NaN gradient, doubled after 2000 steps
                        without one),
                        dynamic:S (from S), a fixed scale N, or none (1). A
                        step with an inf or NaN gradient is skipped in every
                        mode (weights, optimizer state and running statistics
                        unchanged), counted in the log and the metrics; the
                        scaler's state goes into --save's checkpoint. Other
                        models take none only
  --poison              check the memory plan: overwrite each buffer with 0xFF
                        (NaN) as soon as its lifetime ends; results must be
                        bit-identical to a run without it
)",
      exe, spec.model, spec.sourceFile, spec.batch, kDefaultDataDir);
  if (cuda)
    text += R"(
CUDA (train, eval, step):
  --deterministic       the same bits on every run: cuDNN algorithms chosen by
                        its heuristics among deterministic ones, not by timing
  --no-graph            launch the kernels one by one instead of replaying the
                        step as a CUDA graph (for compute-sanitizer, profilers)
  The executable needs an NVIDIA GPU (sm_80 or newer) and its driver, and
  finds libcublasLt.so.13 and libcudnn.so.9 in the usual places
  (LD_LIBRARY_PATH, ldconfig, /usr/local/cuda/lib64).
)";
  text += "\nErrors are reported on stderr with exit code 1.\n";
  return text;
}

} // namespace cairn::runtime
