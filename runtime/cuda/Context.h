//===- Context.h - What a generated CUDA step runs with ----------*- C++
//-*-===//
//
// One Context per run, owned by the CUDA executor and handed to the step
// functions through StepContext::device. It holds the stream every kernel is
// launched on, the library handles, and per call site state that is decided
// once and then replayed: the cuDNN algorithm of each convolution, the
// cuBLASLt plan of each GEMM.
//
// Step scalars. A CUDA graph bakes kernel arguments in when it is captured,
// so what changes from step to step (the optimizer's step count and lr, the
// dropout key, the loss scale) is read by the kernels from `scalars`: device memory just past the
// planned arena (in the same cudaMalloc, outside the plan's bytes), copied
// from pinned host memory on the step's stream before each step. (Mapped
// host memory, read once per block, crossed the bus once per block: 5 ms
// for one dropout on an H100.)
//
// Nothing here allocates device memory: workspaces are buffers of the plan,
// passed in by the generated code.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CUDA_CONTEXT_H
#define CAIRN_RUNTIME_CUDA_CONTEXT_H

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace cairn::cuda {

/// Read by kernels through Context::scalars (device-visible pointer).
struct StepScalars {
  uint64_t seed = 0; // --seed: the dropout key
  int64_t step = 0;  // optimizer steps before this one (StepContext::step)
  double lrFactor = 1; // the scheduled lr over the declared one (StepContext::lrFactor)
  double lossScale = 1; // the loss scaler's scale (StepContext::lossScale)
};

/// The NCCL side of a step run by several processes (DeviceCollectives.h).
class Collectives;

/// Per call-site state a library wrapper keeps between steps (an algorithm,
/// descriptors); Gemm.cu, Convolution.cu, BatchNorm.cu and Pooling.cu define
/// the concrete kinds.
class SiteState {
public:
  virtual ~SiteState() = default;
};

class Context {
public:
  cudaStream_t stream = nullptr;
  cublasLtHandle_t blasLt = nullptr;
  cudnnHandle_t dnn = nullptr;
  /// Device-visible; valid for the whole run.
  const StepScalars *scalars = nullptr;
  /// --deterministic: only algorithms that give the same bits on every
  /// run, chosen by the libraries' heuristics rather than by timing.
  bool deterministic = false;
  /// cudnn.benchmark: time the algorithms that fit the planned workspace
  /// and keep the fastest (the first call of each site does it). Off: the
  /// first that cuDNN's heuristics rank and that fits.
  bool benchmark = true;
  /// True while the step is being captured into a graph: nothing may
  /// synchronise or choose an algorithm then (the executor runs one step
  /// eagerly first, so every site has decided).
  bool capturing = false;
  /// A step run by several processes (a model split across GPUs, or
  /// data-parallel replicas): its NCCL communicator, opened and owned by
  /// the executor; null for a model on one GPU.
  Collectives *collectives = nullptr;

  /// The state of call site `site` (a number the emitter gives every
  /// library call, unique in the program); null until set.
  SiteState *site(int id) const {
    return id >= 0 && static_cast<size_t>(id) < sites.size() ? sites[id].get() : nullptr;
  }
  void setSite(int id, std::unique_ptr<SiteState> state) {
    if (static_cast<size_t>(id) >= sites.size())
      sites.resize(id + 1);
    sites[id] = std::move(state);
  }

private:
  std::vector<std::unique_ptr<SiteState>> sites;
};

} // namespace cairn::cuda

#endif // CAIRN_RUNTIME_CUDA_CONTEXT_H
