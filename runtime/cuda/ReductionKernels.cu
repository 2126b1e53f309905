//===- ReductionKernels.cu - Sums over dimensions and their adjoint -------===//
//
// The GPU twins of kernels::reduceSum and kernels::broadcastTo. Dimensions
// are merged as on the CPU (size-1 dimensions dropped, neighbours that are
// both reduced or both kept joined), which leaves alternating runs. The last
// run decides the kernel:
//   - reduced last run (a row sum): a group of threads per output element,
//     its lanes walking the contiguous reduced elements (coalesced);
//   - kept last run (a bias gradient): a block per tile of contiguous output
//     columns, its rows of threads splitting the reduced elements.
// Sums are taken in double and rounded once per output element, as on the
// CPU. Every thread sums a fixed set of elements in a fixed order and the
// partial sums meet in a fixed tree, and the launch shape is a function of
// the tensor shape alone, so every run gives the same bits (the CPU's order
// differs, so the two agree to rounding, not bitwise).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"

#include "runtime/cuda/Launch.h"
#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/ReductionPlan.h"

#include <string>

namespace cairn::cuda {

namespace {

/// As kernels::reduceSum: at most this many merged runs.
constexpr int kMaxRank = kernels::kMaxReduceRank;

/// Row-major dimensions (outermost first) with a stride per dimension in
/// elements of the input; passed to kernels by value.
struct Dims {
  int rank = 0;
  int64_t size[kMaxRank];
  int64_t stride[kMaxRank];

  void add(int64_t n, int64_t s) {
    size[rank] = n;
    stride[rank] = s;
    ++rank;
  }
  __host__ __device__ int64_t count() const {
    int64_t c = 1;
    for (int d = 0; d < rank; ++d)
      c *= size[d];
    return c;
  }
};

/// The offset of the i-th element (row-major) of `dims`.
__device__ __forceinline__ int64_t offsetOf(const Dims &dims, int64_t i) {
  int64_t off = 0;
  for (int d = dims.rank - 1; d > 0; --d) {
    int64_t rem;
    i = divMod(i, dims.size[d], rem);
    off += rem * dims.stride[d];
  }
  // The outermost index is what is left: no division.
  return dims.rank > 0 ? off + i * dims.stride[0] : off;
}

template <typename T> __global__ void zeroKernel(int64_t n, T *out) {
  CAIRN_GRID_STRIDE_LOOP(i, n)
  out[i] = T(0);
}

/// Reduced last run: a group of G threads (a warp, or the whole block) per
/// output element k; lane l sums reduced elements l, l + G, ... in order.
template <typename T, int G>
__global__ void __launch_bounds__(G < kThreadsPerBlock ? kThreadsPerBlock : G)
    rowSumKernel(Dims kept, Dims summed, int64_t outCount, double alpha, const T *in, T *out) {
  __shared__ double shared[G / 32];
  constexpr int kGroupsPerBlock = G < kThreadsPerBlock ? kThreadsPerBlock / G : 1;
  const int lane = static_cast<int>(threadIdx.x) % G;
  const int64_t summedCount = summed.count();
  // Uniform over a group, so groupSum's shuffles and barriers see all lanes.
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * kGroupsPerBlock + threadIdx.x / G;
       k < outCount; k += static_cast<int64_t>(gridDim.x) * kGroupsPerBlock) {
    const T *base = in + offsetOf(kept, k);
    double s = 0;
    for (int64_t r = lane; r < summedCount; r += G)
      s += static_cast<double>(base[offsetOf(summed, r)]);
    s = groupSum<G>(s, shared);
    if (lane == 0)
      out[k] = T(alpha * s);
  }
}

/// Kept last run of `last` contiguous columns: a block (blockDim.x columns by
/// blockDim.y rows of threads) per tile of columns of one outer kept index;
/// thread row y sums reduced elements y, y + blockDim.y, ... of its column,
/// then the rows' sums are added in row order.
template <typename T>
__global__ void __launch_bounds__(1024)
    columnSumKernel(Dims keptOuter, Dims summed, int64_t last, int64_t tiles, double alpha,
                    const T *in, T *out) {
  __shared__ double partial[1024];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int width = static_cast<int>(blockDim.x), height = static_cast<int>(blockDim.y);
  const int64_t summedCount = summed.count();
  const int64_t blocks = keptOuter.count() * tiles;
  for (int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    const int64_t k = b / tiles;
    const int64_t j = (b - k * tiles) * width + tx;
    double s = 0;
    if (j < last) {
      const T *base = in + offsetOf(keptOuter, k) + j;
#pragma unroll 4
      for (int64_t r = ty; r < summedCount; r += height)
        s += static_cast<double>(base[offsetOf(summed, r)]);
    }
    partial[ty * width + tx] = s;
    __syncthreads();
    if (ty == 0 && j < last) {
      double sum = 0;
      for (int y = 0; y < height; ++y)
        sum += partial[y * width + tx];
      out[k * last + j] = T(alpha * sum);
    }
    __syncthreads(); // `partial` is free for the next tile
  }
}

template <typename T>
__global__ void broadcastKernel(Dims dims, int64_t n, T alpha, const T *in, T *out) {
  CAIRN_GRID_STRIDE_LOOP(i, n)
  out[i] = alpha * in[offsetOf(dims, i)];
}

int64_t nextPow2(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

} // namespace

template <typename T>
void reduceSum(Context &cx, int rank, const int64_t *inShape, const bool *reduced, T alpha,
               const T *in, T *out) {
  int64_t outCount = 1;
  bool empty = false;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d])
      outCount *= inShape[d];
    empty |= inShape[d] == 0;
  }
  if (empty) {
    if (outCount > 0) {
      zeroKernel<T><<<blocksFor(outCount), kThreadsPerBlock, 0, cx.stream>>>(outCount, out);
      CAIRN_CUDA_CHECK_LAUNCH();
    }
    return;
  }

  // Runs of reduced / kept dimensions, outermost first, as on the CPU.
  const kernels::ReductionRuns runs = kernels::mergeReductionRuns(rank, inShape, reduced);
  const int m = runs.count;
  const int64_t *size = runs.size, *stride = runs.stride;
  const bool *red = runs.reduced;
  const double a = alpha;

  if (m == 0 || red[m - 1]) {
    Dims kept, summed;
    for (int d = 0; d < m; ++d)
      (red[d] ? summed : kept).add(size[d], stride[d]);
    const int64_t summedCount = summed.count();
    // A warp per output when the sums are short; a block (of 1024 threads
    // when there are too few outputs to fill the GPU) when they are long.
    if (summedCount <= 1024) {
      rowSumKernel<T, 32><<<blocksFor(outCount * 32), kThreadsPerBlock, 0, cx.stream>>>(
          kept, summed, outCount, a, in, out);
    } else if (outCount >= 2 * 132) {
      rowSumKernel<T, 256><<<blocksFor(outCount * 256), 256, 0, cx.stream>>>(kept, summed,
                                                                              outCount, a, in, out);
    } else {
      rowSumKernel<T, 1024><<<static_cast<unsigned>(outCount), 1024, 0, cx.stream>>>(
          kept, summed, outCount, a, in, out);
    }
    CAIRN_CUDA_CHECK_LAUNCH();
    return;
  }

  const int64_t last = size[m - 1];
  Dims keptOuter, summed;
  for (int d = 0; d < m - 1; ++d)
    (red[d] ? summed : keptOuter).add(size[d], stride[d]);
  // Columns as wide as a warp where the run allows; the rest of the block
  // splits the reduced elements. Few tiles get 1024 threads each.
  const int width = static_cast<int>(std::min<int64_t>(32, nextPow2(last)));
  const int64_t tiles = (last + width - 1) / width;
  const int64_t blocks = keptOuter.count() * tiles;
  const int threads = blocks < 2 * 132 ? 1024 : kThreadsPerBlock;
  const dim3 block(width, threads / width);
  columnSumKernel<T><<<static_cast<unsigned>(std::min(blocks, kMaxBlocks)), block, 0,
                       cx.stream>>>(keptOuter, summed, last, tiles, a, in, out);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void broadcastTo(Context &cx, int rank, const int64_t *outShape, const int64_t *inStrides,
                 T alpha, const T *in, T *out) {
  // out is contiguous; dimensions merged as on the CPU.
  const kernels::BroadcastRuns runs = kernels::mergeBroadcastRuns(rank, outShape, inStrides);
  if (runs.empty)
    return;
  Dims dims;
  int64_t n = 1;
  for (int d = 0; d < runs.count; ++d) {
    dims.add(runs.size[d], runs.inStride[d]);
    n *= runs.size[d];
  }
  broadcastKernel<T><<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(dims, n, alpha, in, out);
  CAIRN_CUDA_CHECK_LAUNCH();
}

#define CAIRN_INSTANTIATE(T)                                                                 \
  template void reduceSum<T>(Context &, int, const int64_t *, const bool *, T, const T *,    \
                             T *);                                                           \
  template void broadcastTo<T>(Context &, int, const int64_t *, const int64_t *, T,          \
                               const T *, T *);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
#undef CAIRN_INSTANTIATE

} // namespace cairn::cuda
