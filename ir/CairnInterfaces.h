//===- CairnInterfaces.h - Op interfaces of cairn ---------------*- C++ -*-===//

#ifndef CAIRN_IR_CAIRNINTERFACES_H
#define CAIRN_IR_CAIRNINTERFACES_H

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace cairn {

/// a + b for non-negative costs, saturating at INT64_MAX.
int64_t saturatingAdd(int64_t a, int64_t b);
/// a * b for non-negative costs, saturating at INT64_MAX.
int64_t saturatingMul(int64_t a, int64_t b);

namespace detail {

/// The operands of ODS groups [first, first + count) of a kernel op, one
/// null Value for each empty group (an absent optional operand).
template <typename OpT>
llvm::SmallVector<mlir::Value> getKernelOperands(OpT op, unsigned first,
                                                 unsigned count) {
  llvm::SmallVector<mlir::Value> values;
  for (unsigned group = first; group < first + count; ++group) {
    auto range = op.getODSOperands(group);
    if (range.empty())
      values.push_back(mlir::Value());
    else
      values.append(range.begin(), range.end());
  }
  return values;
}

/// KernelOpInterface::getKernelFlops and getKernelCost (CairnKernelCosts.cpp).
int64_t getKernelFlops(mlir::Operation *op);
int64_t getKernelCost(mlir::Operation *op);

/// What every kernel must satisfy (KernelOpInterface's verifier).
mlir::LogicalResult verifyKernelOp(mlir::Operation *op);

} // namespace detail
} // namespace cairn

#include "ir/CairnInterfaces.h.inc"

#endif // CAIRN_IR_CAIRNINTERFACES_H
