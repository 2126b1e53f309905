//===- LossKernels.cu - Softmax, cross-entropy, MSE, dropout --------------===//
//
// The GPU twins of runtime/kernels/{Softmax,Loss,Dropout}.h, in double
// wherever the CPU works in double, with the CPU's formulas term for term.
//
// Softmax and the cross-entropy backward work row by row. A contiguous row
// (inner == 1) belongs to a warp when it has at most kWarpRowMax elements
// and to a whole block otherwise; its lanes take every group-th element and
// meet in a fixed tree, so sums are deterministic (the CPU adds in another
// order: the two agree to rounding). With inner > 1 a thread owns a column
// and walks it exactly as the CPU does.
//
// The scalar losses are reduced by one block: its threads, or its warps one
// row each, sum fixed subsets in a fixed order and meet in a fixed tree. No
// atomics and no workspace, and one block bounds the speed of a very large
// cross-entropy (a long vocabulary times many rows) by one SM.
//
// Labels out of [0, classes), which the CPU rejects with KernelError, cannot
// raise an error from a kernel; their rows give a NaN loss and NaN
// gradients, so the run's metrics show it (the runtime checks labels it
// reads from the host before they reach the device).
//
// Dropout reads the seed and the step from the step scalars on the device,
// so a captured graph draws a new mask every step; the mask is that of
// kernels::dropout (Philox.h, ScalarOps.h) bit for bit.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"

#include "runtime/cuda/Launch.h"
#include "runtime/kernels/ScalarOps.h"

#include <cmath>
#include <limits>

namespace cairn::cuda {

namespace ops = kernels::ops;

namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarp = 32;
/// Longest contiguous row a warp takes alone; longer rows get a block.
constexpr int64_t kWarpRowMax = 1024;
/// Threads of the single block that reduces a scalar loss.
constexpr int kLossThreads = 1024;

__device__ __forceinline__ double quietNaN() { return std::numeric_limits<double>::quiet_NaN(); }

/// std::max's comparison, so a NaN never becomes the maximum (as on the
/// CPU; it still reaches the result through the exponentials).
struct MaxOp {
  __device__ double operator()(double a, double b) const { return a < b ? b : a; }
};
struct SumOp {
  __device__ double operator()(double a, double b) const { return a + b; }
};

/// A butterfly over the warp: every lane ends with the same bits, since
/// each combines the same pair of partials (a + b == b + a).
template <typename Op> __device__ __forceinline__ double warpAllReduce(double v, Op op) {
  for (int mask = kWarp / 2; mask > 0; mask >>= 1)
    v = op(v, __shfl_xor_sync(kFullMask, v, mask));
  return v;
}

/// The block's threads as one group; `scratch` holds a value per warp.
/// Every thread combines the warps' values in warp order, so all get the
/// same bits. Called by every thread of the block.
template <typename Op> __device__ double blockAllReduce(double v, Op op, double *scratch) {
  v = warpAllReduce(v, op);
  const int warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  if (threadIdx.x % kWarp == 0)
    scratch[warp] = v;
  __syncthreads();
  v = scratch[0];
  for (int w = 1; w < warps; ++w)
    v = op(v, scratch[w]);
  __syncthreads(); // scratch is free for the next reduction
  return v;
}

/// The threads that share a row: a warp (Block false) or the block.
template <bool Block> struct RowGroup {
  int lane, size;
  int64_t first, stride; // the group's first row and the step to its next

  __device__ RowGroup() {
    if constexpr (Block) {
      lane = threadIdx.x;
      size = blockDim.x;
      first = blockIdx.x;
      stride = gridDim.x;
    } else {
      lane = threadIdx.x % kWarp;
      size = kWarp;
      const int warps = blockDim.x / kWarp;
      first = static_cast<int64_t>(blockIdx.x) * warps + threadIdx.x / kWarp;
      stride = static_cast<int64_t>(gridDim.x) * warps;
    }
  }
  template <typename Op> __device__ double allReduce(double v, Op op, double *scratch) const {
    if constexpr (Block)
      return blockAllReduce(v, op, scratch);
    else
      return warpAllReduce(v, op);
  }
};

/// Blocks for `rows` rows of a group each.
unsigned rowBlocks(int64_t rows, bool block) {
  const int64_t perBlock = block ? 1 : kThreadsPerBlock / kWarp;
  return static_cast<unsigned>(
      std::max<int64_t>(1, std::min((rows + perBlock - 1) / perBlock, kMaxBlocks)));
}

//===----------------------------------------------------------------------===//
// Softmax.
//===----------------------------------------------------------------------===//

/// Contiguous rows: x and y are [rows, dim].
template <typename T, bool Block>
__global__ void softmaxForwardRows(bool log, int64_t rows, int64_t dim, const T *x, T *y) {
  __shared__ double scratch[kThreadsPerBlock / kWarp];
  const RowGroup<Block> g;
  for (int64_t row = g.first; row < rows; row += g.stride) {
    const T *xr = x + row * dim;
    T *yr = y + row * dim;
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t c = g.lane; c < dim; c += g.size)
      mx = MaxOp()(mx, double(xr[c]));
    mx = g.allReduce(mx, MaxOp(), scratch);
    double sum = 0;
    for (int64_t c = g.lane; c < dim; c += g.size)
      sum += std::exp(double(xr[c]) - mx);
    sum = g.allReduce(sum, SumOp(), scratch);
    if (log) {
      const double shift = mx + std::log(sum);
      for (int64_t c = g.lane; c < dim; c += g.size)
        yr[c] = T(double(xr[c]) - shift);
    } else {
      // The CPU stores the exponential as T before scaling it; so do we.
      const double inv = 1 / sum;
      for (int64_t c = g.lane; c < dim; c += g.size)
        yr[c] = T(double(T(std::exp(double(xr[c]) - mx))) * inv);
    }
  }
}

/// Strided rows (inner > 1): a thread per column, walked as on the CPU.
template <typename T>
__global__ void softmaxForwardColumns(bool log, int64_t outer, int64_t dim, int64_t inner,
                                      const T *x, T *y) {
  CAIRN_GRID_STRIDE_LOOP(j, outer * inner) {
    const int64_t o = j / inner, c = j - o * inner;
    const T *xc = x + o * dim * inner + c;
    T *yc = y + o * dim * inner + c;
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t r = 0; r < dim; ++r)
      mx = MaxOp()(mx, double(xc[r * inner]));
    double sum = 0;
    if (log) {
      for (int64_t r = 0; r < dim; ++r)
        sum += std::exp(double(xc[r * inner]) - mx);
      const double shift = mx + std::log(sum);
      for (int64_t r = 0; r < dim; ++r)
        yc[r * inner] = T(double(xc[r * inner]) - shift);
      continue;
    }
    for (int64_t r = 0; r < dim; ++r) {
      const double e = std::exp(double(xc[r * inner]) - mx);
      sum += e;
      yc[r * inner] = T(e);
    }
    const double inv = 1 / sum;
    for (int64_t r = 0; r < dim; ++r)
      yc[r * inner] = T(double(yc[r * inner]) * inv);
  }
}

template <typename T, bool Block>
__global__ void softmaxBackwardRows(bool log, int64_t rows, int64_t dim, const T *dy, const T *y,
                                    T *dx) {
  __shared__ double scratch[kThreadsPerBlock / kWarp];
  const RowGroup<Block> g;
  for (int64_t row = g.first; row < rows; row += g.stride) {
    const T *dyr = dy + row * dim, *yr = y + row * dim;
    T *dxr = dx + row * dim;
    double sum = 0;
    for (int64_t c = g.lane; c < dim; c += g.size)
      sum += log ? double(dyr[c]) : double(dyr[c]) * double(yr[c]);
    sum = g.allReduce(sum, SumOp(), scratch);
    for (int64_t c = g.lane; c < dim; c += g.size)
      dxr[c] = log ? T(double(dyr[c]) - std::exp(double(yr[c])) * sum)
                   : T(double(yr[c]) * (double(dyr[c]) - sum));
  }
}

template <typename T>
__global__ void softmaxBackwardColumns(bool log, int64_t outer, int64_t dim, int64_t inner,
                                       const T *dy, const T *y, T *dx) {
  CAIRN_GRID_STRIDE_LOOP(j, outer * inner) {
    const int64_t o = j / inner, c = j - o * inner, base = o * dim * inner + c;
    double sum = 0;
    for (int64_t r = 0; r < dim; ++r) {
      const int64_t i = base + r * inner;
      sum += log ? double(dy[i]) : double(dy[i]) * double(y[i]);
    }
    for (int64_t r = 0; r < dim; ++r) {
      const int64_t i = base + r * inner;
      dx[i] = log ? T(double(dy[i]) - std::exp(double(y[i])) * sum)
                  : T(double(y[i]) * (double(dy[i]) - sum));
    }
  }
}

//===----------------------------------------------------------------------===//
// Cross-entropy.
//===----------------------------------------------------------------------===//

/// A row's max and log(sum(exp(x - max))), reduced over the group.
template <bool Block, typename T>
__device__ void rowStats(const RowGroup<Block> &g, int64_t classes, const T *x, double *scratch,
                         double &mx, double &logSum) {
  mx = -std::numeric_limits<double>::infinity();
  for (int64_t c = g.lane; c < classes; c += g.size)
    mx = MaxOp()(mx, double(x[c]));
  mx = g.allReduce(mx, MaxOp(), scratch);
  double s = 0;
  for (int64_t c = g.lane; c < classes; c += g.size)
    s += std::exp(double(x[c]) - mx);
  logSum = std::log(g.allReduce(s, SumOp(), scratch));
}

/// One block; warp w takes rows w, w + warps, ... and keeps their sum (the
/// same in every lane); the warps' sums are then added in warp order.
template <typename T, typename I>
__global__ void __launch_bounds__(kLossThreads)
    crossEntropyForwardKernel(int64_t rows, int64_t classes, const T *logits, const I *labels,
                              double eps, T *loss) {
  __shared__ double warpTotals[kLossThreads / kWarp];
  const RowGroup<false> g;
  double total = 0;
  for (int64_t r = g.first; r < rows; r += g.stride) {
    const T *x = logits + r * classes;
    double mx, logSum;
    rowStats(g, classes, x, nullptr, mx, logSum);
    const int64_t label = static_cast<int64_t>(labels[r]);
    if (label < 0 || label >= classes) {
      total += quietNaN();
      continue;
    }
    const double nll = logSum - (double(x[label]) - mx);
    if (eps == 0) {
      total += nll;
      continue;
    }
    double sumLogp = 0;
    for (int64_t c = g.lane; c < classes; c += g.size)
      sumLogp += double(x[c]) - mx - logSum;
    sumLogp = warpAllReduce(sumLogp, SumOp());
    total += (1 - eps) * nll - eps / double(classes) * sumLogp;
  }
  if (g.lane == 0)
    warpTotals[threadIdx.x / kWarp] = total;
  __syncthreads();
  if (threadIdx.x == 0) {
    double sum = 0;
    for (int w = 0; w < static_cast<int>(blockDim.x) / kWarp; ++w)
      sum += warpTotals[w];
    *loss = T(sum / double(rows));
  }
}

template <typename T, typename I, bool Block>
__global__ void crossEntropyBackwardKernel(int64_t rows, int64_t classes, const T *dloss,
                                           const T *logits, const I *labels, double eps,
                                           T *dlogits) {
  __shared__ double scratch[kThreadsPerBlock / kWarp];
  const RowGroup<Block> g;
  const double grad = double(*dloss) / double(rows);
  const double offTarget = eps / double(classes);
  for (int64_t r = g.first; r < rows; r += g.stride) {
    const T *x = logits + r * classes;
    T *dx = dlogits + r * classes;
    double mx, logSum;
    rowStats(g, classes, x, scratch, mx, logSum);
    const int64_t label = static_cast<int64_t>(labels[r]);
    const bool valid = label >= 0 && label < classes;
    for (int64_t c = g.lane; c < classes; c += g.size) {
      const double p = std::exp(double(x[c]) - mx - logSum);
      const double target = offTarget + (c == label ? 1 - eps : 0.0);
      dx[c] = valid ? T(grad * (p - target)) : T(quietNaN());
    }
  }
}

//===----------------------------------------------------------------------===//
// Mean squared error.
//===----------------------------------------------------------------------===//

/// One block: thread k sums elements k, k + threads, ... in order.
template <typename T>
__global__ void __launch_bounds__(kLossThreads)
    mseForwardKernel(int64_t n, const T *x, const T *t, T *loss) {
  __shared__ double scratch[kLossThreads / kWarp];
  double s = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const double d = double(x[i]) - double(t[i]);
    s += d * d;
  }
  s = blockAllReduce(s, SumOp(), scratch);
  if (threadIdx.x == 0)
    *loss = T(s / double(n));
}

template <typename T>
__global__ void mseBackwardKernel(int64_t n, const T *dloss, const T *x, const T *t, T *dx) {
  const double g = 2 * double(*dloss) / double(n);
  CAIRN_GRID_STRIDE_LOOP(i, n)
  dx[i] = T(g * (double(x[i]) - double(t[i])));
}

//===----------------------------------------------------------------------===//
// Dropout.
//===----------------------------------------------------------------------===//

/// The step scalars (device memory the executor writes before each step),
/// read once per block. Volatile, so a read is never served from a cache
/// filled by an earlier step. Called by every thread of the block, before
/// any of them returns.
__device__ StepScalars loadStepScalars(const StepScalars *scalars) {
  __shared__ uint64_t seed;
  __shared__ int64_t step;
  if (threadIdx.x == 0) {
    const volatile StepScalars *s = scalars;
    seed = s->seed;
    step = s->step;
  }
  __syncthreads();
  StepScalars out;
  out.seed = seed;
  out.step = step;
  return out;
}

/// A thread per group of four elements: one Philox call gives their words.
/// T as in dropout (Kernels.h): half elements widened, then rounded.
template <typename T>
__global__ void dropoutKernel(int64_t n, double p, uint64_t stream, const StepScalars *scalars,
                              const kernels::StoredAs<T> *x, kernels::StoredAs<T> *y) {
  using S = kernels::Storage<T>;
  using C = kernels::ComputedIn<T>;
  const StepScalars s = loadStepScalars(scalars);
  const kernels::PhiloxKey key = ops::dropoutKey(s.seed, stream);
  const uint64_t step = static_cast<uint64_t>(s.step);
  const C keepScale = ops::dropoutScale<C>(p);
  CAIRN_GRID_STRIDE_LOOP(group, (n + 3) / 4) {
    const kernels::PhiloxWords words = ops::dropoutWords(key, step, uint64_t(group));
    const int64_t base = group * 4;
    const int count = n - base < 4 ? static_cast<int>(n - base) : 4;
    for (int k = 0; k < count; ++k)
      y[base + k] = S::store(ops::dropoutElement(words.w[k], p, S::load(x[base + k]), keepScale));
  }
}

} // namespace

template <typename T>
void softmaxForward(Context &cx, bool log, int64_t outer, int64_t dim, int64_t inner, const T *x,
                    T *y) {
  if (outer <= 0 || dim <= 0 || inner <= 0)
    return;
  if (inner == 1 && dim <= kWarpRowMax)
    softmaxForwardRows<T, false>
        <<<rowBlocks(outer, false), kThreadsPerBlock, 0, cx.stream>>>(log, outer, dim, x, y);
  else if (inner == 1)
    softmaxForwardRows<T, true>
        <<<rowBlocks(outer, true), kThreadsPerBlock, 0, cx.stream>>>(log, outer, dim, x, y);
  else
    softmaxForwardColumns<T><<<blocksFor(outer * inner), kThreadsPerBlock, 0, cx.stream>>>(
        log, outer, dim, inner, x, y);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void softmaxBackward(Context &cx, bool log, int64_t outer, int64_t dim, int64_t inner, const T *dy,
                     const T *y, T *dx) {
  if (outer <= 0 || dim <= 0 || inner <= 0)
    return;
  if (inner == 1 && dim <= kWarpRowMax)
    softmaxBackwardRows<T, false>
        <<<rowBlocks(outer, false), kThreadsPerBlock, 0, cx.stream>>>(log, outer, dim, dy, y, dx);
  else if (inner == 1)
    softmaxBackwardRows<T, true>
        <<<rowBlocks(outer, true), kThreadsPerBlock, 0, cx.stream>>>(log, outer, dim, dy, y, dx);
  else
    softmaxBackwardColumns<T><<<blocksFor(outer * inner), kThreadsPerBlock, 0, cx.stream>>>(
        log, outer, dim, inner, dy, y, dx);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T, typename I>
void crossEntropyForward(Context &cx, int64_t rows, int64_t classes, const T *logits,
                         const I *labels, double labelSmoothing, T *loss) {
  // rows == 0 gives 0 / 0 = NaN, as on the CPU.
  crossEntropyForwardKernel<T, I>
      <<<1, kLossThreads, 0, cx.stream>>>(rows, classes, logits, labels, labelSmoothing, loss);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T, typename I>
void crossEntropyBackward(Context &cx, int64_t rows, int64_t classes, const T *dloss,
                          const T *logits, const I *labels, double labelSmoothing, T *dlogits) {
  if (rows <= 0 || classes <= 0)
    return;
  if (classes <= kWarpRowMax)
    crossEntropyBackwardKernel<T, I, false>
        <<<rowBlocks(rows, false), kThreadsPerBlock, 0, cx.stream>>>(
            rows, classes, dloss, logits, labels, labelSmoothing, dlogits);
  else
    crossEntropyBackwardKernel<T, I, true>
        <<<rowBlocks(rows, true), kThreadsPerBlock, 0, cx.stream>>>(
            rows, classes, dloss, logits, labels, labelSmoothing, dlogits);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T> void mseForward(Context &cx, int64_t n, const T *x, const T *t, T *loss) {
  // n == 0 gives 0 / 0 = NaN, as on the CPU.
  mseForwardKernel<T><<<1, kLossThreads, 0, cx.stream>>>(n, x, t, loss);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void mseBackward(Context &cx, int64_t n, const T *dloss, const T *x, const T *t, T *dx) {
  if (n <= 0)
    return;
  mseBackwardKernel<T><<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(n, dloss, x, t, dx);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void dropout(Context &cx, int64_t n, double p, uint64_t stream, const kernels::StoredAs<T> *x,
             kernels::StoredAs<T> *y) {
  if (n <= 0)
    return;
  dropoutKernel<T>
      <<<blocksFor((n + 3) / 4), kThreadsPerBlock, 0, cx.stream>>>(n, p, stream, cx.scalars, x, y);
  CAIRN_CUDA_CHECK_LAUNCH();
}

#define CAIRN_INSTANTIATE_CE(T, I)                                                                 \
  template void crossEntropyForward<T, I>(Context &, int64_t, int64_t, const T *, const I *,       \
                                          double, T *);                                            \
  template void crossEntropyBackward<T, I>(Context &, int64_t, int64_t, const T *, const T *,      \
                                           const I *, double, T *);
#define CAIRN_INSTANTIATE(T)                                                                       \
  template void softmaxForward<T>(Context &, bool, int64_t, int64_t, int64_t, const T *, T *);     \
  template void softmaxBackward<T>(Context &, bool, int64_t, int64_t, int64_t, const T *,          \
                                   const T *, T *);                                                \
  CAIRN_INSTANTIATE_CE(T, int32_t)                                                                 \
  CAIRN_INSTANTIATE_CE(T, int64_t)                                                                 \
  template void mseForward<T>(Context &, int64_t, const T *, const T *, T *);                      \
  template void mseBackward<T>(Context &, int64_t, const T *, const T *, const T *, T *);          \
  template void dropout<T>(Context &, int64_t, double, uint64_t, const T *, T *);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
template void dropout<kernels::F16>(Context &, int64_t, double, uint64_t, const uint16_t *,
                                    uint16_t *);
template void dropout<kernels::Bf16>(Context &, int64_t, double, uint64_t, const uint16_t *,
                                     uint16_t *);
#undef CAIRN_INSTANTIATE
#undef CAIRN_INSTANTIATE_CE

} // namespace cairn::cuda
