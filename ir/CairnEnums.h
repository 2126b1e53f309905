//===- CairnEnums.h - The enums of the cairn dialect ------------*- C++ -*-===//
//
// BufferKind, StepKind, InitKind, Role, Precision and their string forms,
// the arena's alignment and a fused chain's limits, for code that needs the
// vocabulary without the rest of the IR.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_IR_CAIRNENUMS_H
#define CAIRN_IR_CAIRNENUMS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

#include "ir/CairnEnums.h.inc"

namespace cairn {

/// input, param, buffer, optimizer and output: at one place in the arena for
/// the whole run, shared by both steps; the other kinds live within a step.
constexpr bool isPersistent(BufferKind kind) {
  return kind == BufferKind::input || kind == BufferKind::param ||
         kind == BufferKind::buffer || kind == BufferKind::optimizer ||
         kind == BufferKind::output;
}

/// Every step kind, in the order a program holds (and the arena plan
/// schedules) them. A program without an eval_loss step has the runtime
/// compute its test loss from the forward step's output.
constexpr StepKind kAllSteps[] = {StepKind::train_step, StepKind::forward,
                                  StepKind::eval_loss};

/// Every buffer's offset in the arena is a multiple of this (what CUDA's
/// allocators and vector loads want); cairn.buffer's verifier checks it.
constexpr int64_t kArenaAlignment = 256;

/// The most distinct inputs and ops of one cairn.kernel.elementwise_chain:
/// the CUDA runtime's Chain (cairn::cuda::kMaxChainInputs, kMaxChainOps in
/// runtime/cuda/Kernels.h, which the generated CUDA code static_asserts),
/// held on both targets so that their plans agree.
constexpr unsigned kMaxChainInputs = 4;
constexpr unsigned kMaxChainOps = 8;

} // namespace cairn

#endif // CAIRN_IR_CAIRNENUMS_H
