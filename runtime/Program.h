//===- Program.h - What a generated executable hands the runtime -*- C++ -*-===//
//
// The generated code of a model (codegen/) defines one ProgramSpec and calls
// runMain(spec, argc, argv); everything else -- the CLI, data, parameter
// initialisation, checkpoints, progress and metrics -- lives in the runtime.
// A model partitioned across N devices defines one ProgramSpec per device
// and calls runPartitionedMain; each process (rank) runs one of them, and
// the steps exchange the values that cross devices (Transport.h).
//
// Memory: one arena of `arenaBytes`, allocated once by the executor
// (Executor.h: in host memory, or on the GPU) before any step; every tensor named here lives at its
// `offset` in it for the whole run, except gradients, whose bytes the plan
// reuses (StepContext::observe). The step functions allocate nothing.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_PROGRAM_H
#define CAIRN_RUNTIME_PROGRAM_H

#include "runtime/KernelProfile.h"
#include "runtime/LossForm.h"
#include "runtime/LrSchedule.h"
#include "runtime/Tensor.h"
#include "runtime/Transport.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cairn::runtime {

enum class TensorRole {
  Input,          // fed by the runtime before each step ("image", "label")
  Param,          // state_dict parameter; trained in place by trainStep
  Buffer,         // state_dict buffer (BatchNorm running stats, counters)
  OptimizerState, // "<param>.momentum_buffer", "<param>.exp_avg", ...
  Gradient,       // "grad.<param>": per-step, handed to StepContext::observe
  Output,         // "loss" (trainStep, f32 scalar), "output" (forward)
};

/// Matches #cairn.init: uniform draws U(-scale, scale), normal N(0, scale^2).
enum class InitKind { None, Zeros, Ones, Uniform, Normal };

struct TensorInfo {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  TensorRole role = TensorRole::Input;
  InitKind init = InitKind::None;
  double initScale = 0;
  int64_t initZeroRow = -1; // zeroed after the draw (Embedding's padding_idx)
  size_t offset = 0; // bytes from the arena's start
  std::string loc;   // "model.cairn:12:3", where the model declares it
};

/// Passed to every step: the dropout key and the optimizer's step count, and
/// two hooks for checking the memory plan.
struct StepContext {
  uint64_t seed = 0;
  /// Optimizer steps taken before this one, those of the checkpoint the run
  /// resumed from included (0 on the first; SGD's momentum starts from the
  /// gradient then, Adam uses step + 1).
  int64_t step = 0;
  /// The optimizer's lr this step over its declared lr (ProgramSpec::lrSchedule
  /// at `step`; 1 without a schedule). The updates multiply their lr by it.
  double lrFactor = 1;
  /// The loss scaler's scale this step (a step built with loss scaling seeds
  /// its backward with it and divides the gradients by it; 1 otherwise).
  double lossScale = 1;
  /// --poison: after each kernel, the step overwrites the bytes of every
  /// buffer whose lifetime ends there with 0xFF (NaN in floats, -1 in
  /// integers). A plan that let a live buffer share those bytes, or a kernel
  /// that reads before it writes, then changes the results.
  bool poison = false;
  /// Gradients live only from the kernel computing them to the optimizer
  /// update; when set, the step calls observe(observer, i, arena) right
  /// after the kernel that computes tensors[i] of role Gradient, which is
  /// then valid at tensors[i].offset (the `step` command reads them so).
  void (*observe)(void *observer, size_t tensor, const unsigned char *arena) = nullptr;
  void *observer = nullptr;
  /// The executor's per-run state for the step (cairn::cuda::Context on
  /// CUDA, kernels::ConvLibrary on the CPU).
  void *device = nullptr;
  /// --profile: the CPU training step calls profile->enter(k) before its
  /// kernel k (KernelProfile.h); null otherwise.
  KernelProfile *profile = nullptr;
  /// The other devices of a partitioned model, for the step's sendBytes and
  /// receiveBytes (Transport.h), or the replicas for allReduceStart and
  /// allReduceWait; a one-device run's LocalTransport, or null.
  Transport *transport = nullptr;
  /// Data parallelism: this process's replica, whose dropouts draw their own
  /// streams (0 otherwise).
  int replica = 0;
};

/// Which of ProgramSpec's step functions to run.
enum class StepKind { Train, Forward, EvalLoss };
constexpr int kStepKinds = 3;

struct Backend; // Executor.h

/// Overwrites `bytes` bytes at `data` with the poison pattern 0xFF.
void poisonBytes(unsigned char *data, size_t bytes);

struct ProgramSpec {
  std::string model;      // model name in the source
  std::string sourceFile; // the .cairn file it was compiled from
  int64_t batch = 0;
  size_t arenaBytes = 0;
  std::vector<TensorInfo> tensors;
  /// The training step's kernels in order, as `--profile` names them.
  std::vector<KernelInfo> trainKernels;
  std::string optimizer;  // for humans: "SGD(lr=0.05, momentum=0.9)"
  /// The optimizer's declared lr and its schedule (empty: constant).
  double baseLr = 0;
  std::vector<LrScheduler> lrSchedule;
  /// How eval computes the test loss from "output" (kind Unknown: it
  /// cannot, the loss being of another form, and runs evalLoss instead).
  LossForm loss;
  /// The inputs the forward step reads (what `predict` feeds).
  std::vector<std::string> forwardInputs;
  /// Forward, loss, backward and optimizer update: reads the inputs, writes
  /// "loss", updates params, buffers and optimizer state (the gradients are
  /// visible through StepContext::observe only).
  void (*trainStep)(unsigned char *arena, const StepContext &ctx) = nullptr;
  /// Eval-mode forward: reads forwardInputs, params and buffers, writes
  /// "output".
  void (*forward)(unsigned char *arena, const StepContext &ctx) = nullptr;
  /// The model's loss in eval mode, where `loss` is Unknown: reads the
  /// inputs, params and buffers, writes "eval_loss" (null otherwise).
  void (*evalLoss)(unsigned char *arena, const StepContext &ctx) = nullptr;
  /// Where the steps run: the CPU (arena in host memory) or CUDA (arena on
  /// the device; the step functions then take device pointers).
  const Backend *backend = nullptr;
  /// A partitioned model: this spec is device `device` of `devices`, and its
  /// tensors are the ones that device's kernels use (an input may be on
  /// several devices; any other name on one). 0 of 1 otherwise.
  int device = 0;
  int devices = 1;
  /// Data parallelism: the executable runs as this many processes, each on
  /// `batch` examples of every batch of batch * replicas, and the training
  /// step sums the gradients of all of them (allReduceStart and
  /// allReduceWait, Transport.h). 1 otherwise.
  int replicas = 1;
  /// With replicas: batch norm normalises by every replica's examples'
  /// statistics (cairn build --sync-batchnorm).
  bool syncBatchNorm = false;
};

/// The executable's main: parses the CLI, runs, reports; returns the exit
/// code (0, or 1 with a message on stderr for any error).
int runMain(const ProgramSpec &spec, int argc, char **argv);

/// The main of a model partitioned across `devices` devices, specs[d] being
/// device d's: `open` gives the process its transport (MpiTransport.h's
/// openMpiTransport under `mpirun -np DEVICES EXE ...`), and rank r runs
/// specs[r]. The commands are runMain's, with one set of files and one
/// report, written by rank 0 (step and half-precision loss scaling
/// excepted). Any rank's error makes every rank exit non-zero.
int runPartitionedMain(const ProgramSpec *const *specs, int devices, OpenTransport open,
                       int argc, char **argv);

/// The main of a model trained by spec.replicas data-parallel replicas, one
/// process each under `mpirun -np REPLICAS EXE ...` (`open`: as above):
/// every rank runs `spec` on its share of each batch. Rank 0 prints and
/// writes the files; any rank's error makes every rank exit non-zero.
int runReplicatedMain(const ProgramSpec &spec, OpenTransport open, int argc, char **argv);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_PROGRAM_H
