//===- CairnOps.h - Ops of cairn --------------------------------*- C++ -*-===//

#ifndef CAIRN_IR_CAIRNOPS_H
#define CAIRN_IR_CAIRNOPS_H

#include "ir/CairnAttrs.h"
#include "ir/CairnDialect.h"
#include "ir/CairnInterfaces.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace cairn::OpTrait {

/// Verifies that every operand and result is a ranked tensor of static shape
/// with dimensions >= 1 and at most 2^48 elements.
mlir::LogicalResult verifyValidShapes(mlir::Operation *op);

template <typename ConcreteType>
class ValidShapes
    : public mlir::OpTrait::TraitBase<ConcreteType, ValidShapes> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyValidShapes(op);
  }
};

} // namespace cairn::OpTrait

#define GET_OP_CLASSES
#include "ir/CairnOps.h.inc"

#endif // CAIRN_IR_CAIRNOPS_H
