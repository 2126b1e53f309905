//===- OptimizerKernels.cu - Fused SGD and Adam over many tensors ---------===//
//
// The GPU twins of kernels::sgdUpdate and kernels::adamUpdate, applied to a
// whole list of tensors per launch (the multi-tensor apply of apex and of
// PyTorch's foreach optimizers): a model's hundreds of small tensors would
// otherwise cost a launch, and a graph node, each.
//
// The host cuts each tensor into chunks of kChunk elements and numbers
// them across the tensors of a launch; a table of where each tensor's
// chunks start travels by value in the kernel's parameters (hence at most
// kMaxUpdateTensorsPerLaunch tensors a launch), and a block finds its
// tensor by binary search in it. Blocks loop over chunks, so the grid stays
// a few waves however many parameters there are.
//
// Each element is updated by ScalarOps.h's sgdElement / adamElement, the
// bodies of the CPU kernels. The step number and the scheduled lr's factor
// are read on the device from the step scalars (the first SGD step is step 0;
// Adam's bias correction counts from 1), so a captured graph replays
// correctly every step.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"

#include "runtime/cuda/Launch.h"
#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Optimizer.h"
#include "runtime/kernels/ScalarOps.h"

#include <algorithm>
#include <string>

namespace cairn::cuda {

namespace ops = kernels::ops;

namespace {

/// Elements one block updates before it moves on to its next chunk.
constexpr int64_t kChunk = 8192;

/// One launch's tensors, by value in the kernel's parameters.
struct UpdateBatch {
  int count = 0;
  void *param[kMaxUpdateTensorsPerLaunch];
  const void *grad[kMaxUpdateTensorsPerLaunch];
  void *state0[kMaxUpdateTensorsPerLaunch];
  void *state1[kMaxUpdateTensorsPerLaunch];
  int64_t n[kMaxUpdateTensorsPerLaunch];
  /// firstChunk[t]: the number of tensor t's first chunk;
  /// firstChunk[count]: the chunks in all.
  int64_t firstChunk[kMaxUpdateTensorsPerLaunch + 1];
};
// The classic 4 KiB limit on kernel parameters, with room for the rest.
static_assert(sizeof(UpdateBatch) + 128 <= 4096, "an UpdateBatch must fit the kernel parameters");

UpdateBatch makeBatch(const UpdateTensor *tensors, int count) {
  UpdateBatch b;
  b.count = count;
  int64_t chunks = 0;
  for (int t = 0; t < count; ++t) {
    b.param[t] = tensors[t].param;
    b.grad[t] = tensors[t].grad;
    b.state0[t] = tensors[t].state0;
    b.state1[t] = tensors[t].state1;
    b.n[t] = std::max<int64_t>(0, tensors[t].n);
    b.firstChunk[t] = chunks;
    chunks += (b.n[t] + kChunk - 1) / kChunk;
  }
  b.firstChunk[count] = chunks;
  return b;
}

/// The tensor that chunk c belongs to: the last t with firstChunk[t] <= c
/// (empty tensors own no chunk and are skipped over).
__host__ __device__ __forceinline__ int tensorOf(const UpdateBatch &b, int64_t c) {
  int lo = 0, hi = b.count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (b.firstChunk[mid] <= c)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// What an update reads of the step scalars.
struct UpdateScalars {
  int64_t step;
  double lrFactor;
};

/// The step scalars (device memory the executor writes before each step),
/// read once per block. Volatile, so a read is never served from a cache
/// filled by an earlier step. Called by every thread of the block, before
/// any of them returns.
__device__ UpdateScalars loadUpdateScalars(const StepScalars *scalars) {
  __shared__ UpdateScalars loaded;
  if (threadIdx.x == 0) {
    const volatile StepScalars *s = scalars;
    loaded.step = s->step;
    loaded.lrFactor = s->lrFactor;
  }
  __syncthreads();
  return loaded;
}

/// Calls f(tensor, begin, end) for every chunk of the batch this block owns.
template <typename F> __device__ void forEachChunk(const UpdateBatch &b, F f) {
  const int64_t chunks = b.firstChunk[b.count];
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const int t = tensorOf(b, c);
    const int64_t begin = (c - b.firstChunk[t]) * kChunk;
    const int64_t end = min(begin + kChunk, b.n[t]);
    f(t, begin, end);
  }
}

// __grid_constant__: the kernels index the batch's arrays with computed
// indices, which would otherwise copy the whole table into every thread's
// local memory.
template <typename T>
__global__ void sgdKernel(const __grid_constant__ UpdateBatch batch, ops::SgdHyper h,
                          const StepScalars *scalars, const T *skip) {
  // A step the loss scaler skips (an inf or NaN gradient) writes nothing.
  if (skip && *skip != T(0))
    return;
  const UpdateScalars u = loadUpdateScalars(scalars);
  const bool firstStep = u.step == 0;
  h.lr *= u.lrFactor;
  forEachChunk(batch, [&](int t, int64_t begin, int64_t end) {
    T *param = static_cast<T *>(batch.param[t]);
    const T *grad = static_cast<const T *>(batch.grad[t]);
    T *momentumBuffer = static_cast<T *>(batch.state0[t]);
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
      ops::sgdElement(h, firstStep, param, grad, momentumBuffer, i);
  });
}

template <typename T>
__global__ void adamKernel(const __grid_constant__ UpdateBatch batch, ops::AdamHyper h,
                           const StepScalars *scalars, const T *skip) {
  if (skip && *skip != T(0))
    return;
  const UpdateScalars u = loadUpdateScalars(scalars);
  h.lr *= u.lrFactor;
  const ops::AdamBias bias = ops::adamBias(h, u.step + 1);
  forEachChunk(batch, [&](int t, int64_t begin, int64_t end) {
    T *param = static_cast<T *>(batch.param[t]);
    const T *grad = static_cast<const T *>(batch.grad[t]);
    T *expAvg = static_cast<T *>(batch.state0[t]);
    T *expAvgSq = static_cast<T *>(batch.state1[t]);
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
      ops::adamElement(h, bias, param, grad, expAvg, expAvgSq, i);
  });
}

/// Runs launch(batch, blocks) for each chunk of up to
/// kMaxUpdateTensorsPerLaunch tensors that has elements to update.
template <typename Launch>
void forEachBatch(const char *what, int count, const UpdateTensor *tensors, int states,
                  Launch launch) {
  for (int t = 0; t < count; ++t) {
    bool missing = tensors[t].n > 0 &&
                   ((states > 0 && !tensors[t].state0) || (states > 1 && !tensors[t].state1));
    if (missing)
      throw kernels::KernelError(std::string(what) + ": tensor " + std::to_string(t) +
                                 " of the update has no optimizer state");
  }
  for (int first = 0; first < count; first += kMaxUpdateTensorsPerLaunch) {
    const UpdateBatch batch =
        makeBatch(tensors + first, std::min(kMaxUpdateTensorsPerLaunch, count - first));
    const int64_t chunks = batch.firstChunk[batch.count];
    if (chunks == 0)
      continue;
    launch(batch, static_cast<unsigned>(std::min(chunks, kMaxBlocks)));
    CAIRN_CUDA_CHECK_LAUNCH();
  }
}

/// clip_grad_norm_'s gradients in one launch: a chunk of kGradNormChunk
/// elements per block, as kernels::clipCoefficient cuts them.
struct NormBatch {
  int count = 0;
  const void *grad[kMaxUpdateTensorsPerLaunch];
  int64_t n[kMaxUpdateTensorsPerLaunch];
  int64_t firstChunk[kMaxUpdateTensorsPerLaunch + 1];
};
static_assert(sizeof(NormBatch) + 128 <= 4096, "a NormBatch must fit the kernel parameters");

/// The block's threads' values combined in a fixed order (a tree over
/// kThreadsPerBlock), so the result has the same bits on every run. Called
/// by every thread; the result is valid in thread 0.
__device__ double combineInBlock(double v, double normType) {
  __shared__ double shared[kThreadsPerBlock];
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int stride = kThreadsPerBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      shared[threadIdx.x] =
          ops::combineGradNormTerms(shared[threadIdx.x], shared[threadIdx.x + stride], normType);
    __syncthreads();
  }
  return shared[0];
}

template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    gradNormPartialsKernel(const __grid_constant__ NormBatch batch, double normType,
                           double *partials) {
  const int64_t chunks = batch.firstChunk[batch.count];
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    int t = 0;
    while (t + 1 < batch.count && batch.firstChunk[t + 1] <= c)
      ++t;
    const T *g = static_cast<const T *>(batch.grad[t]);
    const int64_t begin = (c - batch.firstChunk[t]) * kernels::kGradNormChunk;
    const int64_t end = min(begin + kernels::kGradNormChunk, batch.n[t]);
    double v = 0;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
      v = ops::combineGradNormTerms(v, ops::gradNormTerm(double(g[i]), normType), normType);
    const double combined = combineInBlock(v, normType);
    if (threadIdx.x == 0)
      partials[c] = combined;
    __syncthreads(); // `shared` is reused by the next chunk
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock)
    clipCoefficientKernel(const double *partials, int64_t chunks, double normType,
                          double maxNorm, T *coefficient) {
  double v = 0;
  for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x)
    v = ops::combineGradNormTerms(v, partials[c], normType);
  const double combined = combineInBlock(v, normType);
  if (threadIdx.x == 0)
    coefficient[0] = ops::clipCoefficientOf<T>(combined, normType, maxNorm);
}

} // namespace

template <typename T>
void clipCoefficient(Context &cx, int count, const T *const *grads, const int64_t *sizes,
                     double maxNorm, double normType, double *workspace, T *coefficient,
                     const int64_t *deviceChunks, const kernels::RankSum &devices) {
  // Every device's partials: 0 but where this device writes its own.
  if (deviceChunks && deviceChunks[count] > 0)
    CAIRN_CUDA_CHECK(cudaMemsetAsync(
        workspace, 0, static_cast<size_t>(deviceChunks[count]) * sizeof(double), cx.stream));
  // A launch takes gradients whose partials follow each other in the
  // workspace (all of them on one device; a split model's own runs).
  int64_t next = 0; // where gradient `first`'s partials go
  for (int first = 0; first < count;) {
    NormBatch batch;
    const int64_t at = deviceChunks ? deviceChunks[first] : next;
    int64_t chunks = 0;
    while (batch.count < kMaxUpdateTensorsPerLaunch && first + batch.count < count) {
      const int t = first + batch.count;
      if (batch.count > 0 && deviceChunks && deviceChunks[t] != at + chunks)
        break;
      const int64_t n = std::max<int64_t>(0, sizes[t]);
      batch.grad[batch.count] = grads[t];
      batch.n[batch.count] = n;
      batch.firstChunk[batch.count] = chunks;
      chunks += kernels::clipCoefficientWorkspaceElements(&n, 1);
      ++batch.count;
    }
    batch.firstChunk[batch.count] = chunks;
    first += batch.count;
    next = at + chunks;
    if (chunks == 0)
      continue;
    gradNormPartialsKernel<T>
        <<<static_cast<unsigned>(std::min(chunks, kMaxBlocks)), kThreadsPerBlock, 0, cx.stream>>>(
            batch, normType, workspace + at);
    CAIRN_CUDA_CHECK_LAUNCH();
  }
  const int64_t partials = deviceChunks ? deviceChunks[count] : next;
  if (devices && partials > 0)
    devices(workspace, partials);
  clipCoefficientKernel<T>
      <<<1, kThreadsPerBlock, 0, cx.stream>>>(workspace, partials, normType, maxNorm, coefficient);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template void clipCoefficient<float>(Context &, int, const float *const *, const int64_t *, double,
                                     double, double *, float *, const int64_t *,
                                     const kernels::RankSum &);
template void clipCoefficient<double>(Context &, int, const double *const *, const int64_t *,
                                      double, double, double *, double *, const int64_t *,
                                      const kernels::RankSum &);

template <typename T>
void sgdUpdate(Context &cx, int count, const UpdateTensor *tensors, double lr, double momentum,
               double dampening, double weightDecay, bool nesterov, const T *skip) {
  const ops::SgdHyper h = {lr, momentum, dampening, weightDecay, nesterov};
  forEachBatch("SGD", count, tensors, momentum != 0 ? 1 : 0,
               [&](const UpdateBatch &batch, unsigned blocks) {
                 sgdKernel<T><<<blocks, kThreadsPerBlock, 0, cx.stream>>>(batch, h, cx.scalars,
                                                                          skip);
               });
}

template <typename T>
void adamUpdate(Context &cx, int count, const UpdateTensor *tensors, double lr, double beta1,
                double beta2, double eps, double weightDecay, bool decoupledWeightDecay,
                const T *skip) {
  const ops::AdamHyper h = {lr, beta1, beta2, eps, weightDecay, decoupledWeightDecay};
  forEachBatch("Adam", count, tensors, 2, [&](const UpdateBatch &batch, unsigned blocks) {
    adamKernel<T><<<blocks, kThreadsPerBlock, 0, cx.stream>>>(batch, h, cx.scalars, skip);
  });
}

template void sgdUpdate<float>(Context &, int, const UpdateTensor *, double, double, double, double,
                               bool, const float *);
template void sgdUpdate<double>(Context &, int, const UpdateTensor *, double, double, double,
                                double, bool, const double *);
template void adamUpdate<float>(Context &, int, const UpdateTensor *, double, double, double,
                                double, double, bool, const float *);
template void adamUpdate<double>(Context &, int, const UpdateTensor *, double, double, double,
                                 double, double, bool, const double *);

} // namespace cairn::cuda
