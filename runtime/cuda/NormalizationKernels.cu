//===- NormalizationKernels.cu - Running statistics and LayerNorm ---------===//
//
// The GPU twins of kernels::batchNormUpdateRunningStats, layerNormForward
// and layerNormBackward (cuDNN does the rest of batch normalisation, see
// Library.h). As on the CPU, statistics are taken in double in two passes
// (mean, then squared deviations) and LayerNorm works in double throughout.
//
// Every sum is deterministic: a group of threads (a warp, or a block) owns a
// row or a channel, each lane sums a fixed set of elements in a fixed order,
// and the lanes' sums meet in a fixed tree; launch shapes depend on the
// tensor shape alone. The CPU adds in another order, so the two agree to
// rounding, not bitwise.
//
// LayerNorm's dgamma and dbeta are column sums over rows that need each
// row's mean and 1/std. With no workspace in the signature, dx, whose bytes
// are overwritten last anyway, holds them meanwhile: one kernel writes the
// row statistics into dx, a second sums tiles of columns over chunks of rows
// (partial sums also parked in dx when there are several chunks), a third
// adds the chunks in order, and the last writes dx itself. dx never aliases
// an input (the planner writes only element-wise kernels in place).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"

#include "runtime/cuda/Launch.h"
#include "runtime/cuda/SyncBatchNorm.h"
#include "runtime/kernels/KernelError.h"

#include <cstdint>
#include <type_traits>

namespace cairn::cuda {

namespace {

/// Rows of at most this many columns get a warp each, longer ones a block.
constexpr int64_t kWarpRowCols = 256;
/// Rows of at most this many columns: dgamma's tiles compute the row
/// statistics themselves (the whole row is one warp wide).
constexpr int64_t kWarpCols = 32;
/// dgamma / dbeta: a block is 32 columns by kParamRows rows of threads, and
/// sums at least kMinChunkRows rows (at most kMaxChunks chunks per column).
constexpr int kParamRows = 8;
constexpr int64_t kMinChunkRows = 256;
constexpr int64_t kMaxChunks = 1024;
/// Channels or rows at or beyond which blocks of 256 threads fill the GPU;
/// fewer get 1024 threads each.
constexpr int64_t kManyGroups = 2 * 132;

/// Threads per block for groups of G threads: warps come eight to a block.
template <int G> constexpr int blockThreads() {
  return G < kThreadsPerBlock ? kThreadsPerBlock : G;
}

/// Runs `body(group)` for groups [0, count), one per G threads; uniform over
/// each group, so the group's shuffles and barriers see all its lanes.
template <int G, typename Body>
__device__ __forceinline__ void forEachGroup(int64_t count, Body body) {
  constexpr int kGroupsPerBlock = blockThreads<G>() / G;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * kGroupsPerBlock + threadIdx.x / G;
       g < count; g += static_cast<int64_t>(gridDim.x) * kGroupsPerBlock)
    body(g);
}

struct Moments {
  double mean, var; // biased
};

/// Mean and biased variance of a row of `cols` contiguous elements, in every
/// lane of the group.
template <typename T, int G>
__device__ __forceinline__ Moments rowMoments(int64_t cols, const T *row, int lane,
                                              double *shared) {
  double sum = 0;
  for (int64_t j = lane; j < cols; j += G)
    sum += static_cast<double>(row[j]);
  const double mean = groupSum<G>(sum, shared) / static_cast<double>(cols);
  double sq = 0;
  for (int64_t j = lane; j < cols; j += G) {
    const double d = static_cast<double>(row[j]) - mean;
    sq += d * d;
  }
  return {mean, groupSum<G>(sq, shared) / static_cast<double>(cols)};
}

template <typename T, int G>
__global__ void __launch_bounds__(blockThreads<G>())
    runningStatsKernel(int64_t n, int64_t c, int64_t spatial, const kernels::StoredAs<T> *x,
                       double momentum, kernels::ComputedIn<T> *runningMean,
                       kernels::ComputedIn<T> *runningVar, int64_t *numBatchesTracked) {
  using P = kernels::ComputedIn<T>;
  __shared__ double shared[G / 32];
  const int lane = static_cast<int>(threadIdx.x);
  const int64_t count = n * spatial;
  const double total = static_cast<double>(count);
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    // Element k of channel ch is x[b, ch, i] with k = b * spatial + i.
    auto at = [&](int64_t k) {
      int64_t i;
      const int64_t b = divMod(k, spatial, i);
      return static_cast<double>(kernels::Storage<T>::load(x[(b * c + ch) * spatial + i]));
    };
    double sum = 0;
    for (int64_t k = lane; k < count; k += G)
      sum += at(k);
    const double mean = groupSum<G>(sum, shared) / total;
    double sq = 0;
    for (int64_t k = lane; k < count; k += G) {
      const double d = at(k) - mean;
      sq += d * d;
    }
    const double var = groupSum<G>(sq, shared) / total;
    if (lane == 0) {
      // PyTorch divides by count - 1 unguarded: one element gives NaN.
      const double unbiased = var * total / (total - 1);
      runningMean[ch] = P((1 - momentum) * static_cast<double>(runningMean[ch]) + momentum * mean);
      runningVar[ch] =
          P((1 - momentum) * static_cast<double>(runningVar[ch]) + momentum * unbiased);
    }
  }
  if (numBatchesTracked && blockIdx.x == 0 && threadIdx.x == 0)
    *numBatchesTracked += 1;
}

template <typename T, int G>
__global__ void __launch_bounds__(blockThreads<G>())
    layerNormForwardKernel(int64_t rows, int64_t cols, const T *x, const T *gamma, const T *beta,
                           double eps, T *y) {
  __shared__ double shared[G / 32];
  const int lane = static_cast<int>(threadIdx.x) % G;
  forEachGroup<G>(rows, [&](int64_t r) {
    const T *xr = x + r * cols;
    T *yr = y + r * cols;
    const Moments m = rowMoments<T, G>(cols, xr, lane, shared);
    const double invStd = 1.0 / sqrt(m.var + eps);
    for (int64_t j = lane; j < cols; j += G) {
      double v = (static_cast<double>(xr[j]) - m.mean) * invStd;
      if (gamma)
        v *= static_cast<double>(gamma[j]);
      if (beta)
        v += static_cast<double>(beta[j]);
      yr[j] = T(v);
    }
  });
}

/// stats[2r], stats[2r + 1] = mean and 1/std of row r (for dgamma).
template <typename T, int G>
__global__ void __launch_bounds__(blockThreads<G>())
    rowStatsKernel(int64_t rows, int64_t cols, const T *x, double eps, double *stats) {
  __shared__ double shared[G / 32];
  const int lane = static_cast<int>(threadIdx.x) % G;
  forEachGroup<G>(rows, [&](int64_t r) {
    const Moments m = rowMoments<T, G>(cols, x + r * cols, lane, shared);
    if (lane == 0) {
      stats[2 * r] = m.mean;
      stats[2 * r + 1] = 1.0 / sqrt(m.var + eps);
    }
  });
}

/// Sums dy * xhat (when `withXhat`) and dy over the rows of one chunk for 32
/// columns: a block of 32 x kParamRows threads, thread row y taking rows
/// y, y + kParamRows, ... of the chunk, the thread rows' sums added in order.
/// One chunk: the sums are dgamma and dbeta; several: they go to
/// partials[(chunk * cols + j) * 2 + {0, 1}]. Row statistics come from
/// `stats`, or when it is null (cols <= 32) from the warp holding the row.
template <typename T>
__global__ void __launch_bounds__(32 * kParamRows)
    layerNormParamKernel(int64_t rows, int64_t cols, const T *dy, const T *x,
                         const double *stats, bool withXhat, double eps, int64_t chunkRows,
                         int64_t chunks, int64_t tiles, T *dgamma, T *dbeta, double *partials) {
  __shared__ double sumsG[kParamRows][32], sumsB[kParamRows][32];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  for (int64_t b = blockIdx.x; b < tiles * chunks; b += gridDim.x) {
    const int64_t chunk = b / tiles;
    const int64_t j = (b - chunk * tiles) * 32 + tx;
    const bool in = j < cols;
    const int64_t rowEnd = min(rows, (chunk + 1) * chunkRows);
    double accG = 0, accB = 0;
    // Uniform over a warp (one thread row), as the inline statistics need.
    for (int64_t r = chunk * chunkRows + ty; r < rowEnd; r += kParamRows) {
      const double g = in ? static_cast<double>(dy[r * cols + j]) : 0.0;
      accB += g;
      if (!withXhat)
        continue;
      const double v = in ? static_cast<double>(x[r * cols + j]) : 0.0;
      double mean, invStd;
      if (stats) {
        mean = stats[2 * r];
        invStd = stats[2 * r + 1];
      } else {
        mean = warpSum(v) / static_cast<double>(cols);
        const double d = in ? v - mean : 0.0;
        invStd = 1.0 / sqrt(warpSum(d * d) / static_cast<double>(cols) + eps);
      }
      accG += g * ((v - mean) * invStd);
    }
    sumsG[ty][tx] = accG;
    sumsB[ty][tx] = accB;
    __syncthreads();
    if (ty == 0 && in) {
      double sg = 0, sb = 0;
      for (int y = 0; y < kParamRows; ++y) {
        sg += sumsG[y][tx];
        sb += sumsB[y][tx];
      }
      if (partials) {
        partials[(chunk * cols + j) * 2] = sg;
        partials[(chunk * cols + j) * 2 + 1] = sb;
      } else {
        if (dgamma)
          dgamma[j] = T(sg);
        if (dbeta)
          dbeta[j] = T(sb);
      }
    }
    __syncthreads(); // the sums are free for the next tile
  }
}

/// dgamma / dbeta from the chunks' partial sums, added in chunk order.
template <typename T>
__global__ void layerNormParamFinishKernel(int64_t cols, int64_t chunks, const double *partials,
                                           T *dgamma, T *dbeta) {
  CAIRN_GRID_STRIDE_LOOP(j, cols) {
    double sg = 0, sb = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      sg += partials[(c * cols + j) * 2];
      sb += partials[(c * cols + j) * 2 + 1];
    }
    if (dgamma)
      dgamma[j] = T(sg);
    if (dbeta)
      dbeta[j] = T(sb);
  }
}

/// With g = dy * gamma: dx = invStd * (g - mean(g) - xhat * mean(g * xhat)).
template <typename T, int G>
__global__ void __launch_bounds__(blockThreads<G>())
    layerNormInputGradKernel(int64_t rows, int64_t cols, const T *dy, const T *x,
                             const T *gamma, double eps, T *dx) {
  __shared__ double shared[G / 32];
  const int lane = static_cast<int>(threadIdx.x) % G;
  forEachGroup<G>(rows, [&](int64_t r) {
    const T *xr = x + r * cols, *gr = dy + r * cols;
    T *dxr = dx + r * cols;
    const Moments m = rowMoments<T, G>(cols, xr, lane, shared);
    const double invStd = 1.0 / sqrt(m.var + eps);
    auto xhatAt = [&](int64_t j) { return (static_cast<double>(xr[j]) - m.mean) * invStd; };
    auto gAt = [&](int64_t j) {
      return static_cast<double>(gr[j]) * (gamma ? static_cast<double>(gamma[j]) : 1.0);
    };
    double sumG = 0, sumGXhat = 0;
    for (int64_t j = lane; j < cols; j += G) {
      const double g = gAt(j);
      sumG += g;
      sumGXhat += g * xhatAt(j);
    }
    const double meanG = groupSum<G>(sumG, shared) / static_cast<double>(cols);
    const double meanGXhat = groupSum<G>(sumGXhat, shared) / static_cast<double>(cols);
    for (int64_t j = lane; j < cols; j += G)
      dxr[j] = T(invStd * (gAt(j) - meanG - xhatAt(j) * meanGXhat));
  });
}

/// Launches `kernel<G>` over `groups` groups: a warp each for short rows, a
/// block of 256 (or, when there are too few groups to fill the GPU, 1024)
/// threads each for long ones.
template <typename Launch> void launchRows(int64_t groups, int64_t cols, Launch launch) {
  if (cols <= kWarpRowCols)
    launch(std::integral_constant<int, 32>(), blocksFor(groups * 32));
  else if (groups >= kManyGroups)
    launch(std::integral_constant<int, 256>(), blocksFor(groups * 256, 256));
  else
    launch(std::integral_constant<int, 1024>(), static_cast<unsigned>(groups));
  CAIRN_CUDA_CHECK_LAUNCH();
}

} // namespace

template <typename T>
void batchNormUpdateRunningStats(Context &cx, int64_t n, int64_t c, int64_t spatial,
                                 const kernels::StoredAs<T> *x, double momentum,
                                 kernels::ComputedIn<T> *runningMean,
                                 kernels::ComputedIn<T> *runningVar, int64_t *numBatchesTracked,
                                 double *workspace, const kernels::RankSum &replicas) {
  if (replicas)
    return syncBatchNormUpdateRunningStats<T>(cx, n, c, spatial, x, momentum, runningMean,
                                              runningVar, numBatchesTracked, workspace, replicas);
  // At least one block, so numBatchesTracked moves even with no channels.
  const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min(c, kMaxBlocks)));
  if (c >= kManyGroups)
    runningStatsKernel<T, 256><<<blocks, 256, 0, cx.stream>>>(n, c, spatial, x, momentum,
                                                              runningMean, runningVar,
                                                              numBatchesTracked);
  else
    runningStatsKernel<T, 1024><<<blocks, 1024, 0, cx.stream>>>(n, c, spatial, x, momentum,
                                                                runningMean, runningVar,
                                                                numBatchesTracked);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void layerNormForward(Context &cx, int64_t rows, int64_t cols, const T *x, const T *gamma,
                      const T *beta, double eps, T *y) {
  if (rows == 0 || cols == 0)
    return;
  launchRows(rows, cols, [&](auto group, unsigned blocks) {
    constexpr int G = decltype(group)::value;
    layerNormForwardKernel<T, G><<<blocks, blockThreads<G>(), 0, cx.stream>>>(rows, cols, x, gamma,
                                                                             beta, eps, y);
  });
}

template <typename T>
void layerNormBackward(Context &cx, int64_t rows, int64_t cols, const T *dy, const T *x,
                       const T *gamma, double eps, T *dx, T *dgamma, T *dbeta) {
  if (cols == 0)
    return;
  if (dgamma || dbeta) {
    // dx's bytes, from its first 8-byte boundary, hold the row statistics
    // and the chunks' partial sums until the last kernel overwrites them.
    const uintptr_t dxAddress = reinterpret_cast<uintptr_t>(dx);
    const uintptr_t scratchAddress = (dxAddress + 7) & ~uintptr_t(7);
    const int64_t capacity = std::max<int64_t>(
        0, (rows * cols * static_cast<int64_t>(sizeof(T)) -
            static_cast<int64_t>(scratchAddress - dxAddress)) /
               8);
    double *scratch = reinterpret_cast<double *>(scratchAddress);
    const bool withXhat = dgamma != nullptr;
    const int64_t statsDoubles = withXhat && cols > kWarpCols ? 2 * rows : 0;
    int64_t chunkRows = kMinChunkRows;
    auto chunksFor = [&](int64_t perChunk) {
      return std::max<int64_t>(1, (rows + perChunk - 1) / perChunk);
    };
    while (chunksFor(chunkRows) > kMaxChunks)
      chunkRows *= 2;
    // Fewer, longer chunks until their partial sums fit beside the stats
    // (they always do for cols > 4: the check is a guard, not a limit).
    while (chunksFor(chunkRows) > 1 && statsDoubles + 2 * cols * chunksFor(chunkRows) > capacity)
      chunkRows *= 2;
    const int64_t chunks = chunksFor(chunkRows);
    if (statsDoubles > capacity)
      throw kernels::KernelError("layerNormBackward: dx is too small to hold the row statistics");
    double *stats = statsDoubles > 0 ? scratch : nullptr;
    double *partials = chunks > 1 ? scratch + statsDoubles : nullptr;

    if (stats)
      launchRows(rows, cols, [&](auto group, unsigned blocks) {
        constexpr int G = decltype(group)::value;
        rowStatsKernel<T, G><<<blocks, blockThreads<G>(), 0, cx.stream>>>(rows, cols, x, eps,
                                                                         stats);
      });
    const int64_t tiles = (cols + 31) / 32;
    layerNormParamKernel<T><<<static_cast<unsigned>(std::min(tiles * chunks, kMaxBlocks)),
                              dim3(32, kParamRows), 0, cx.stream>>>(
        rows, cols, dy, x, stats, withXhat, eps, chunkRows, chunks, tiles, dgamma, dbeta,
        partials);
    CAIRN_CUDA_CHECK_LAUNCH();
    if (partials) {
      layerNormParamFinishKernel<T><<<blocksFor(cols), kThreadsPerBlock, 0, cx.stream>>>(
          cols, chunks, partials, dgamma, dbeta);
      CAIRN_CUDA_CHECK_LAUNCH();
    }
  }
  if (rows == 0)
    return;
  launchRows(rows, cols, [&](auto group, unsigned blocks) {
    constexpr int G = decltype(group)::value;
    layerNormInputGradKernel<T, G><<<blocks, blockThreads<G>(), 0, cx.stream>>>(rows, cols, dy, x,
                                                                               gamma, eps, dx);
  });
}

#define CAIRN_INSTANTIATE(T)                                                                 \
  template void batchNormUpdateRunningStats<T>(Context &, int64_t, int64_t, int64_t,         \
                                               const T *, double, T *, T *, int64_t *,       \
                                               double *, const kernels::RankSum &);          \
  template void layerNormForward<T>(Context &, int64_t, int64_t, const T *, const T *,       \
                                    const T *, double, T *);                                 \
  template void layerNormBackward<T>(Context &, int64_t, int64_t, const T *, const T *,      \
                                     const T *, double, T *, T *, T *);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
#undef CAIRN_INSTANTIATE
// Batch norm's running statistics from f16 or bf16 data, float32 statistics.
template void batchNormUpdateRunningStats<kernels::F16>(Context &, int64_t, int64_t, int64_t,
                                                        const uint16_t *, double, float *, float *,
                                                        int64_t *, double *,
                                                        const kernels::RankSum &);
template void batchNormUpdateRunningStats<kernels::Bf16>(Context &, int64_t, int64_t, int64_t,
                                                         const uint16_t *, double, float *, float *,
                                                         int64_t *, double *,
                                                         const kernels::RankSum &);

} // namespace cairn::cuda
