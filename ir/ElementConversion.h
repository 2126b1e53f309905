//===- ElementConversion.h - Float constants in another type ----*- C++ -*-===//
//
// The passes that retype the step (cairn-autocast, cairn-compute-half-in-
// float32) make float constants again in another element type rather than
// cast them at run time: each value rounded to nearest even, as a cast
// kernel would.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_IR_ELEMENTCONVERSION_H
#define CAIRN_IR_ELEMENTCONVERSION_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallVector.h"

namespace cairn {

/// `values` (float elements) in element type `to`, same shape.
inline mlir::DenseElementsAttr
convertFloatElements(mlir::DenseElementsAttr values, mlir::FloatType to) {
  auto type = mlir::cast<mlir::ShapedType>(values.getType()).clone(to);
  llvm::SmallVector<llvm::APFloat> converted;
  for (llvm::APFloat value : values.getValues<llvm::APFloat>()) {
    bool lost = false;
    value.convert(to.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
                  &lost);
    converted.push_back(value);
  }
  return mlir::DenseElementsAttr::get(type, converted);
}

} // namespace cairn

#endif // CAIRN_IR_ELEMENTCONVERSION_H
