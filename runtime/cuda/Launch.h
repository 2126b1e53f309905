//===- Launch.h - Grid sizes for Cairn's own kernels --------------*- C++ -*-===//
//
// Included by the .cu files only. Element-wise kernels use grid-stride loops
// over int64 indices with a grid capped at a few waves, so any n works and
// the launch configuration is a pure function of n (same bits every run).
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CUDA_LAUNCH_H
#define CAIRN_RUNTIME_CUDA_LAUNCH_H

#include "runtime/cuda/Check.h"

#include <algorithm>
#include <cstdint>

namespace cairn::cuda {

constexpr int kThreadsPerBlock = 256;
/// Enough blocks to fill an H100/H200 several times over.
constexpr int64_t kMaxBlocks = 132 * 32;

inline unsigned blocksFor(int64_t n, int threads = kThreadsPerBlock) {
  int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, kMaxBlocks)));
}

#define CAIRN_GRID_STRIDE_LOOP(i, n)                                                        \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);  \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

} // namespace cairn::cuda

#endif // CAIRN_RUNTIME_CUDA_LAUNCH_H
