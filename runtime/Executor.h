//===- Executor.h - Where a program's steps run ------------------*- C++ -*-===//
//
// The runtime fills and reads tensors in a host arena laid out by the plan
// (Program.h). An Executor runs the steps on that layout: the CPU executor
// runs them on the host arena itself; the CUDA executor (runtime/cuda/) keeps
// the real arena on the GPU and the host arena is its mirror, copied only at
// the points this interface names, so the training loop never moves more
// than a batch in and a loss out.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_EXECUTOR_H
#define CAIRN_RUNTIME_EXECUTOR_H

#include "runtime/Metrics.h"
#include "runtime/Program.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace cairn::runtime {

/// The runtime flags an executor honours.
struct ExecutorOptions {
  int threads = 0;            // --threads: CPU threads, BLAS and kernels (0: per core)
  bool deterministic = false; // --deterministic: same bits on every run (CUDA)
  bool benchmark = true;      // cuDNN algorithms chosen by timing them (CUDA)
  bool graphs = true;         // replay the step as a CUDA graph (CUDA)
  /// The run's processes (one for a model on one device): a CUDA step of
  /// several opens its NCCL communicator through it (DeviceCollectives.h).
  Transport *transport = nullptr;
};

class Executor {
public:
  virtual ~Executor() = default;

  /// "cpu" or "cuda".
  virtual const char *backend() const = 0;
  /// The layout of spec.arenaBytes the runtime reads and writes.
  virtual unsigned char *hostArena() = 0;

  /// After the runtime wrote the persistent state (params, buffers,
  /// optimizer state) into the host arena: make it the step's.
  virtual absl::Status pushState() = 0;
  /// Before the runtime reads the persistent state from the host arena.
  virtual absl::Status pullState() = 0;
  /// The same for some tensors of the state (the replicas' buffers, which
  /// rank 0 broadcasts before each step); nothing to do where the host
  /// arena is the step's.
  virtual absl::Status pullTensors(const std::vector<const TensorInfo *> &) {
    return absl::OkStatus();
  }
  virtual absl::Status pushTensors(const std::vector<const TensorInfo *> &) {
    return absl::OkStatus();
  }
  /// One step: takes the step's inputs from the host arena, runs, and
  /// leaves its output ("loss" or "output") in the host arena. Gradients
  /// reach ctx.observe as host bytes. Errors inside a kernel become
  /// InternalError with the kernel's message.
  virtual absl::Status run(StepKind step, const StepContext &ctx) = 0;

  /// Fills the report's backend, device and memory fields: the arena's
  /// high-water mark (Arena.h's pattern method, read back from the device
  /// for CUDA), and on CUDA the device bytes of the arena and of everything
  /// else the process holds there (context, libraries, graphs).
  virtual void fillReport(RunReport &report) const = 0;
};

/// What a generated program names as its backend.
struct Backend {
  const char *name; // "cpu", "cuda"
  /// Called first in runMain, before the command line is parsed; may
  /// re-execute the process (the CPU backend does, to fix OpenBLAS's core).
  void (*prepareProcess)(int argc, char **argv) = nullptr;
  /// For --version, without opening anything: "BLAS core SkylakeX", "CUDA".
  std::string (*describeBuild)() = nullptr;
  absl::StatusOr<std::unique_ptr<Executor>> (*open)(const ProgramSpec &spec,
                                                    const ExecutorOptions &options) = nullptr;
};

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_EXECUTOR_H
