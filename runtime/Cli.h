//===- Cli.h - The command line of a generated executable --------*- C++ -*-===//
//
//   EXE train [--data DIR] [--epochs N | --steps N] [--seed S] [--load F]
//             [--save F] [--metrics F] [--normalize MEAN,STD] [--threads N]
//             [--log-every N] [--profile F] [--loss-scale dynamic|none|N]
//   EXE eval  [--data DIR] --load F [--metrics F] [--normalize MEAN,STD]
//             [--threads N]
//   EXE init  [--seed S] --save F
//   EXE step  --load F --batch B.safetensors --out OUT.safetensors [--seed S]
//             [--loss-scale dynamic|none|N]
//   EXE predict --load F --input X.npy|NAME=X.npy,... --out Y.npy
//             [--normalize MEAN,STD] [--threads N] [--poison]
//   EXE --help | -h      EXE --version
// CUDA executables also take --deterministic and --no-graph (train, eval,
// step, predict).
// Flags take their value as the next argument or after '='. usageText is
// the --help text; keep both in step.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CLI_H
#define CAIRN_RUNTIME_CLI_H

#include "runtime/Dataset.h"
#include "runtime/LossScaler.h"
#include "runtime/Program.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <optional>
#include <string>

namespace cairn::runtime {

inline constexpr char kDefaultDataDir[] = "/usr/share/datasets/fashion-mnist";

enum class Command { Train, Eval, Init, Step, Predict, Help, Version };

struct Options {
  Command command = Command::Help;
  std::string data = kDefaultDataDir;
  int64_t epochs = 1;
  std::optional<int64_t> steps; // --steps replaces --epochs
  uint64_t seed = 0;
  std::string load, save, metrics, batch, out; // empty when not given
  std::string input; // predict: FILE, or NAME=FILE,NAME=FILE
  std::string profile; // --profile F: KernelProfile.h (CPU executables)
  Normalization normalization;
  int threads = 0; // 0: one per core (OpenMP's default)
  int64_t logEvery = 100;
  bool poison = false; // --poison: StepContext::poison
  /// --loss-scale (LossScaler.h); unset: dynamic for a step with loss
  /// scaling, none otherwise.
  std::optional<LossScaleSetting> lossScale;
  // CUDA executables only (runMain rejects them on the CPU).
  bool deterministic = false; // --deterministic: ExecutorOptions::deterministic
  bool noGraph = false;       // --no-graph: launch kernels one by one
};

/// The options, or a usage error (an unknown command or flag, a missing or
/// malformed value, conflicting or missing flags) worded for one line.
absl::StatusOr<Options> parseCommandLine(int argc, char **argv);

/// The --help text of executable `exe` compiled from `spec`; `cuda` adds
/// the CUDA backend's flags.
std::string usageText(const std::string &exe, const ProgramSpec &spec, bool cuda = false);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_CLI_H
