//===- VerifierHelpers.h - Small pieces shared by op verifiers ---*- C++ -*-===//
//
// Used by CairnOps.cpp and CairnTrainingOps.cpp only; not part of the
// dialect's interface.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_IR_VERIFIERHELPERS_H
#define CAIRN_IR_VERIFIERHELPERS_H

#include "ir/ProductTypes.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <cstdio>
#include <string>

namespace cairn::verifier {

inline mlir::RankedTensorType tensorOf(mlir::Value value) {
  return mlir::cast<mlir::RankedTensorType>(value.getType());
}

inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value value) {
  return tensorOf(value).getShape();
}

inline mlir::Type elementTypeOf(mlir::Value value) {
  return tensorOf(value).getElementType();
}

/// A double as printf's %g writes it: "0.1", "-1", "1e-08", "nan".
inline std::string str(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

/// Checks that `value`, named `name`, has element type `elementType`.
inline mlir::LogicalResult verifyElementType(mlir::Operation *op,
                                             const llvm::Twine &name,
                                             mlir::Value value,
                                             mlir::Type elementType) {
  if (elementTypeOf(value) != elementType)
    return op->emitOpError() << "expected " << name << " with element type "
                             << elementType << " but got " << value.getType();
  return mlir::success();
}

/// Checks that `value`, named `name`, of a GEMM or a convolution has the
/// element type `product` it computes in (getProductElementType), or is
/// float32 where that is half: rounded to it as it is read or written.
inline mlir::LogicalResult verifyProductElementType(mlir::Operation *op,
                                                    const llvm::Twine &name,
                                                    mlir::Value value,
                                                    mlir::Type product) {
  mlir::Type element = elementTypeOf(value);
  if (element == product || (element.isF32() && isHalfElementType(product)))
    return mlir::success();
  auto diagnostic = op->emitOpError()
                    << "expected " << name << " with element type " << product;
  if (isHalfElementType(product))
    diagnostic << " or 'f32'";
  return diagnostic << " but got " << value.getType();
}

/// The element type of batch norm's parameters and statistics for `input`:
/// float32 for an f16 or bf16 input (it computes in float32, as cuDNN's
/// does, and the running statistics keep float32), else the input's.
inline mlir::Type getNormParamElementType(mlir::Value input) {
  mlir::Type type = elementTypeOf(input);
  if (isHalfElementType(type))
    return mlir::Float32Type::get(type.getContext());
  return type;
}

} // namespace cairn::verifier

#endif // CAIRN_IR_VERIFIERHELPERS_H
