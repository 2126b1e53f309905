//===- ProductTypes.h - The type a product computes in ----------*- C++ -*-===//
//
// A linear, a convolution and their gradients (as tensor ops, and as
// kernels) compute in one element type. Their tensors all have it, or, in
// half precision, some are float32: the product rounds them to the half
// type as it reads or writes them (autocast's casts of a float32 master
// weight or input batch into the product, and of a weight gradient out of
// it, fused by cairn-compute-half-in-float32 on a target whose kernels
// read both: the CPU's, runtime/kernels/HalfOperand.h). The half type is
// the one among its tensors, so a product in half precision keeps at least
// one: with none, it computes in float32.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_IR_PRODUCTTYPES_H
#define CAIRN_IR_PRODUCTTYPES_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"

namespace cairn {

/// Whether `type` is f16 or bf16.
inline bool isHalfElementType(mlir::Type type) {
  return type.isF16() || type.isBF16();
}

/// The element type `op` computes in: the half type among its operands'
/// and results' where there is one, else its first result's (a kernel's,
/// whose tensors are all operands: its first operand's).
inline mlir::Type getProductElementType(mlir::Operation *op) {
  for (mlir::Type type :
       llvm::concat<mlir::Type>(op->getResultTypes(), op->getOperandTypes())) {
    mlir::Type element = mlir::getElementTypeOrSelf(type);
    if (isHalfElementType(element))
      return element;
  }
  return mlir::getElementTypeOrSelf(op->getNumResults() > 0
                                        ? op->getResult(0).getType()
                                        : op->getOperand(0).getType());
}

/// Whether `op` computes in f16 or bf16.
inline bool computesInHalf(mlir::Operation *op) {
  return isHalfElementType(getProductElementType(op));
}

} // namespace cairn

#endif // CAIRN_IR_PRODUCTTYPES_H
