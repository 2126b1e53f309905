//===- Launch.h - Grid sizes for Cairn's own kernels --------------*- C++ -*-===//
//
// Included by the .cu files only: index arithmetic and the fixed-order
// group sums that every reduction kernel uses. Element-wise kernels use grid-stride loops
// over int64 indices with a grid capped at a few waves, so any n works and
// the launch configuration is a pure function of n (same bits every run).
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CUDA_LAUNCH_H
#define CAIRN_RUNTIME_CUDA_LAUNCH_H

#include "runtime/cuda/Check.h"

#include <algorithm>
#include <cstdint>
#include <cuda_runtime.h>

namespace cairn::cuda {

constexpr int kThreadsPerBlock = 256;
/// Enough blocks to fill an H100/H200 several times over.
constexpr int64_t kMaxBlocks = 132 * 32;

inline unsigned blocksFor(int64_t n, int threads = kThreadsPerBlock) {
  int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, kMaxBlocks)));
}

/// i / n and i % n, in 32 bits when both fit (several times cheaper than
/// the 64-bit division, and nearly every tensor fits).
__host__ __device__ __forceinline__ int64_t divMod(int64_t i, int64_t n, int64_t &rem) {
  if (((i | n) >> 32) == 0) {
    const uint32_t q = static_cast<uint32_t>(i) / static_cast<uint32_t>(n);
    rem = i - static_cast<int64_t>(q) * n;
    return q;
  }
  const int64_t q = i / n;
  rem = i - q * n;
  return q;
}

/// Butterfly sum over a warp: both lanes of a pair add the same two values,
/// so every lane ends with the same bits.
__device__ __forceinline__ double warpSum(double v) {
  for (int mask = 16; mask >= 1; mask >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, mask);
  return v;
}

/// The sum of `v` over a group of G threads (a warp, or the whole block of
/// G threads), the same bits in every lane: warp sums, then those in warp
/// order. `shared` holds G / 32 doubles.
template <int G> __device__ __forceinline__ double groupSum(double v, double *shared) {
  v = warpSum(v);
  if constexpr (G == 32) {
    return v;
  } else {
    const int warp = static_cast<int>(threadIdx.x) / 32;
    if (threadIdx.x % 32 == 0)
      shared[warp] = v;
    __syncthreads();
    double sum = 0;
    for (int w = 0; w < G / 32; ++w)
      sum += shared[w];
    __syncthreads(); // `shared` is free for the next call
    return sum;
  }
}

#define CAIRN_GRID_STRIDE_LOOP(i, n)                                                        \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);  \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

} // namespace cairn::cuda

#endif // CAIRN_RUNTIME_CUDA_LAUNCH_H
