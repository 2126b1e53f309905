//===- Lowering.h - From the cairn dialect to kernel lists ------*- C++ -*-===//
//
// Lowers `@train_step` (after autodiff) and `@forward` of a module to one
// KernelGraph: buffers in one arena and a kernel list per step. Target-neutral
// except for what the target says it supports.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_LOWERING_H
#define CAIRN_PASSES_LOWERING_H

#include "passes/KernelGraph.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace cairn {

struct LoweringTarget {
  /// For messages: "cannot lower 'cairn.xyz' to the CPU backend".
  llvm::StringRef name = "CPU";
  /// Whether the target's kernels take f16 and bf16 tensors.
  bool halfPrecision = false;
  /// When > 0, a GEMM kernel (Linear, LinearGradInput, LinearGradWeight,
  /// Matmul) whose K is longer than both sides of its output gets a
  /// Workspace buffer of at most this many bytes for the GEMM library
  /// (cuBLASLt's split-K partial sums), so that scratch memory is part of
  /// the plan like im2col's. The CPU's GEMMs need none.
  int64_t gemmWorkspaceBytes = 0;
};

/// The most bytes of cuBLASLt workspace one GEMM gets in a CUDA plan.
constexpr int64_t kCudaGemmWorkspaceBytes = int64_t(4) << 20;

/// What the CPU backend takes: f32 and f64, no GEMM workspace.
LoweringTarget getCpuTarget();
/// What the CUDA backend takes: named "CUDA" in messages, f32 and f64 (no
/// half precision yet), and a planned cuBLASLt workspace for the GEMMs
/// split-K can help (LowerOps.cpp, gemmWorkspaceBytes).
LoweringTarget getCudaTarget();

/// Lowers both steps and computes liveness; planArena (ArenaPlan.h) lays
/// out the arena. Errors are
/// reported at the offending op's location; returns nullopt then.
std::optional<KernelGraph> lowerToKernels(mlir::ModuleOp module,
                                      const LoweringTarget &target);

} // namespace cairn

#endif // CAIRN_PASSES_LOWERING_H
