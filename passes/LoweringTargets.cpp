//===- LoweringTargets.cpp - What the CPU and CUDA kernels need -----------===//
//
// The workspace rules of each target, in the compiler: the plan holds every
// byte a kernel or a library writes besides its outputs, so the compiler
// must know how much each one takes before anything runs.
//
//===----------------------------------------------------------------------===//

#include "passes/ArenaPlan.h"
#include "passes/Lowering.h"

#include <algorithm>

using namespace cairn;

namespace {

/// im2col + GEMM: one image's column matrix for one group, (c / groups)
/// kh kw rows by ho wo columns.
int64_t getIm2colElements(llvm::ArrayRef<int64_t> s) {
  int64_t c = s[1], kh = s[5], kw = s[6], groups = s[13], ho = s[14],
          wo = s[15];
  return (c / groups) * kh * kw * ho * wo;
}

/// cuBLASLt's split-K keeps partial sums of the output (m x n in the compute
/// type) in its workspace, and pays only when K is longer than both output
/// sides (few output tiles, a long reduction each): those GEMMs get about the
/// output's bytes, at most kCudaGemmWorkspaceBytes, the others none. A
/// workspace no algorithm would use still takes arena bytes when its kernel
/// is at the peak (an MLP's weight gradient, K = the batch, would grow the
/// plan by a quarter). Rounded up to the arena's granule.
int64_t getSplitKWorkspaceBytes(int64_t m, int64_t n, int64_t k,
                                int64_t outputBytes) {
  if (k <= std::max(m, n))
    return 0;
  return std::min(kCudaGemmWorkspaceBytes,
                  std::max(kArenaAlignment, alignToArena(outputBytes)));
}

} // namespace

LoweringTarget cairn::getCpuTarget() {
  LoweringTarget target;
  target.name = "CPU";
  target.convWorkspaceElements = getIm2colElements;
  return target;
}

std::optional<LoweringTarget> cairn::getLoweringTarget(llvm::StringRef name) {
  if (name == "cpu")
    return getCpuTarget();
  if (name == "cuda")
    return getCudaTarget();
  return std::nullopt;
}

LoweringTarget cairn::getCudaTarget() {
  LoweringTarget target;
  target.name = "CUDA";
  target.halfPrecision = false;
  target.gemmWorkspaceBytes = getSplitKWorkspaceBytes;
  // cuDNN's budget: the CPU's im2col size, so that both arenas agree; the
  // algorithms are chosen among those that fit it.
  target.convWorkspaceElements = getIm2colElements;
  return target;
}
