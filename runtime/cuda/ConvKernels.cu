//===- ConvKernels.cu - Cairn's own convolution weight gradient -----------===//
//
// conv2dBackwardWeightDirect: the weight gradient without cuDNN, for the
// sites where cuDNN offers no algorithm within the planned workspace (under
// --deterministic cuDNN's deterministic weight-gradient algorithms want more
// than the plan's im2col-sized workspace on common shapes: cnn's 3x3 over
// 32 channels, most of ResNet-18's).
//
// dw[o, q] = sum over (image, output pixel) r of dy[r, o] * col[q, r], q
// running over (input channel of the group, kernel row, kernel column): a
// GEMM whose second operand is im2col gathered on the fly, 32 x 32 output
// tiles, each summing r in 32-wide chunks staged in shared memory. The sum
// runs in a fixed order in double, so every run gives the same bits. When the
// workspace holds `splits` copies of dw, r is cut into that many contiguous
// ranges summed by separate blocks (a layer with few filters over a large
// image would otherwise occupy two SMs), and a second kernel adds the
// ranges in order.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"

#include "runtime/cuda/Launch.h"

namespace cairn::cuda {

namespace {

using kernels::Conv2dShape;

constexpr int kTile = 32;
constexpr int kRowsPerThread = 4; // output channels per thread
constexpr int kBlockRows = kTile / kRowsPerThread;

/// Partial sums of split blockIdx.z % splits for group blockIdx.z / splits
/// into out + split * (o * k2) (or straight into dw when splits == 1).
template <typename T>
__global__ void __launch_bounds__(kTile *kBlockRows)
    weightGradTiles(Conv2dShape s, int64_t splits, int64_t chunk, const T *dy, const T *x,
                    T *out) {
  __shared__ T dyTile[kTile][kTile + 1];  // [output channel][r]
  __shared__ T colTile[kTile][kTile + 1]; // [q][r]
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int64_t group = blockIdx.z / splits, split = blockIdx.z % splits;
  const int64_t cg = s.c / s.groups, og = s.o / s.groups;
  const int64_t kernelArea = s.kh * s.kw, k2 = cg * kernelArea, pixels = s.ho * s.wo;
  const int64_t total = s.n * pixels;
  const int64_t rBegin = split * chunk, rEnd = min(total, rBegin + chunk);
  const int64_t q0 = static_cast<int64_t>(blockIdx.x) * kTile;
  const int64_t o0 = static_cast<int64_t>(blockIdx.y) * kTile;

  double acc[kRowsPerThread] = {};
  for (int64_t r0 = rBegin; r0 < rEnd; r0 += kTile) {
    // Thread (tx, ty) stages r = r0 + tx for rows ty, ty + 8, ...
    const int64_t r = r0 + tx;
    int64_t pixel = 0;
    const int64_t image = r < rEnd ? divMod(r, pixels, pixel) : 0;
    int64_t oxIndex = 0;
    const int64_t oy = divMod(pixel, s.wo, oxIndex);
    for (int k = ty; k < kTile; k += kBlockRows) {
      const int64_t o = o0 + k;
      dyTile[k][tx] = r < rEnd && o < og
                          ? dy[(image * s.o + group * og + o) * pixels + pixel]
                          : T(0);
      const int64_t q = q0 + k;
      T value = T(0);
      if (r < rEnd && q < k2) {
        int64_t tap = 0;
        const int64_t channel = divMod(q, kernelArea, tap);
        int64_t kx = 0;
        const int64_t ky = divMod(tap, s.kw, kx);
        const int64_t iy = oy * s.sh - s.ph + ky * s.dh, ix = oxIndex * s.sw - s.pw + kx * s.dw;
        if (iy >= 0 && iy < s.h && ix >= 0 && ix < s.w)
          value = x[((image * s.c + group * cg + channel) * s.h + iy) * s.w + ix];
      }
      colTile[k][tx] = value;
    }
    __syncthreads();
#pragma unroll 8
    for (int k = 0; k < kTile; ++k) {
      const double col = static_cast<double>(colTile[tx][k]);
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i)
        acc[i] += static_cast<double>(dyTile[ty + i * kBlockRows][k]) * col;
    }
    __syncthreads();
  }
  const int64_t q = q0 + tx;
  if (q >= k2)
    return;
  T *dst = out + split * (s.o * k2);
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int64_t o = o0 + ty + i * kBlockRows;
    if (o < og)
      dst[(group * og + o) * k2 + q] = T(acc[i]);
  }
}

/// dw[i] = the splits' partial sums of element i, added in split order.
template <typename T>
__global__ void addSplits(int64_t n, int64_t splits, const T *partial, T *dw) {
  CAIRN_GRID_STRIDE_LOOP(i, n) {
    double sum = 0;
    for (int64_t k = 0; k < splits; ++k)
      sum += static_cast<double>(partial[k * n + i]);
    dw[i] = T(sum);
  }
}

} // namespace

template <typename T>
void conv2dBackwardWeightDirect(Context &cx, const Conv2dShape &s, const T *dy, const T *x,
                                T *dw, void *workspace, size_t workspaceBytes) {
  const int64_t cg = s.c / s.groups, og = s.o / s.groups;
  const int64_t k2 = cg * s.kh * s.kw, weights = s.o * k2, total = s.n * s.ho * s.wo;
  if (weights == 0)
    return;
  const int64_t tiles = ((k2 + kTile - 1) / kTile) * ((og + kTile - 1) / kTile) * s.groups;
  // Enough blocks for two waves of an H100, as many as the workspace holds
  // partial copies of dw, and no range shorter than 8 chunks.
  constexpr int64_t kWantedBlocks = 2 * 132;
  int64_t splits = std::max<int64_t>(1, (kWantedBlocks + tiles - 1) / tiles);
  splits = std::min(splits, static_cast<int64_t>(workspaceBytes / sizeof(T)) / weights);
  splits = std::min(splits, total / (8 * kTile));
  if (splits < 2)
    splits = 1;
  const int64_t chunk = splits == 1 ? std::max<int64_t>(total, 1)
                                    : ((total + splits - 1) / splits + kTile - 1) / kTile * kTile;
  const dim3 grid(static_cast<unsigned>((k2 + kTile - 1) / kTile),
                  static_cast<unsigned>((og + kTile - 1) / kTile),
                  static_cast<unsigned>(s.groups * splits));
  T *partial = splits == 1 ? dw : static_cast<T *>(workspace);
  weightGradTiles<T><<<grid, dim3(kTile, kBlockRows), 0, cx.stream>>>(s, splits, chunk, dy, x,
                                                                       partial);
  CAIRN_CUDA_CHECK_LAUNCH();
  if (splits > 1) {
    addSplits<T><<<blocksFor(weights), kThreadsPerBlock, 0, cx.stream>>>(weights, splits,
                                                                          partial, dw);
    CAIRN_CUDA_CHECK_LAUNCH();
  }
}

#define CAIRN_INSTANTIATE(T)                                                                      \
  template void conv2dBackwardWeightDirect<T>(Context &, const Conv2dShape &, const T *,         \
                                              const T *, T *, void *, size_t);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
#undef CAIRN_INSTANTIATE

} // namespace cairn::cuda
