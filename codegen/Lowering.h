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
};

/// Lowers both steps and computes liveness; planArena (ArenaPlan.h) lays
/// out the arena. Errors are
/// reported at the offending op's location; returns nullopt then.
std::optional<Program> lowerToKernels(mlir::ModuleOp module,
                                      const LoweringTarget &target);

} // namespace cairn::codegen

#endif // CAIRN_CODEGEN_LOWERING_H
