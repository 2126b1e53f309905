//===- Lowering.h - From the cairn dialect to kernel lists ------*- C++ -*-===//
//
// Lowers `@train_step` (after autodiff) and `@forward` of a module to one
// Program: buffers in one arena and a kernel list per step. Target-neutral
// except for what the target says it supports.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_CODEGEN_LOWERING_H
#define CAIRN_CODEGEN_LOWERING_H

#include "codegen/KernelList.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace cairn::codegen {

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

/// Lowers both steps and computes liveness; planArena (ArenaPlan.h) lays
/// out the arena. Errors are
/// reported at the offending op's location; returns nullopt then.
std::optional<Program> lowerToKernels(mlir::ModuleOp module,
                                      const LoweringTarget &target);

} // namespace cairn::codegen

#endif // CAIRN_CODEGEN_LOWERING_H
