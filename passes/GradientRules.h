//===- GradientRules.h - The backward rule of each cairn op -----*- C++ -*-===//
//
// The reverse sweep of autodiff (Autodiff.cpp) walks the cloned forward ops
// backwards and hands each op that got a gradient to emitGradient, which
// emits that op's backward ops and adds the gradients of its operands to the
// GradientState.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_GRADIENTRULES_H
#define CAIRN_PASSES_GRADIENTRULES_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace cairn {

/// Which values need a gradient, and the gradients accumulated so far.
class GradientState {
public:
  explicit GradientState(mlir::OpBuilder &builder) : builder(builder) {}

  mlir::OpBuilder &getBuilder() { return builder; }

  /// Active values depend on a trainable parameter through floating-point
  /// ops: only they get gradients (not inputs, buffers, constants, nor
  /// integer tensors).
  bool isActive(mlir::Value value) const { return active.contains(value); }
  void markActive(mlir::Value value) { active.insert(value); }

  /// The gradient of `value` accumulated so far, or null.
  mlir::Value gradient(mlir::Value value) const {
    return gradients.lookup(value);
  }

  /// Adds `grad` (of `value`'s type) to `value`'s gradient, with a cairn.add
  /// at `loc` from the second contribution on. Inactive (and null) values are
  /// skipped. The gradient has `value`'s type, but a half copy's of a
  /// float32 value (a narrowing cairn.cast) is summed in float32, as autocast
  /// sums the gradients of its per-use casts.
  void accumulate(mlir::Value value, mlir::Value grad, mlir::Location loc);

private:
  mlir::OpBuilder &builder;
  llvm::DenseSet<mlir::Value> active;
  llvm::DenseMap<mlir::Value, mlir::Value> gradients;
};

/// Emits the backward of `op`, whose single result has the gradient `dy`,
/// at the builder's insertion point and with `op`'s location, and
/// accumulates the gradients of its active operands. Fails with an error at
/// `op` when it has no rule.
mlir::LogicalResult emitGradient(mlir::Operation *op, mlir::Value dy,
                                 GradientState &state);

} // namespace cairn

#endif // CAIRN_PASSES_GRADIENTRULES_H
