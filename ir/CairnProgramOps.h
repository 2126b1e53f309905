//===- CairnProgramOps.h - The planned step's structure ---------*- C++ -*-===//

#ifndef CAIRN_IR_CAIRNPROGRAMOPS_H
#define CAIRN_IR_CAIRNPROGRAMOPS_H

#include "ir/CairnAttrs.h"
#include "ir/CairnDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "ir/CairnProgramOps.h.inc"

namespace cairn {
/// The value whose bytes `value` is: itself, or the source under a chain of
/// cairn.view ops.
mlir::Value getViewRoot(mlir::Value value);
} // namespace cairn

#endif // CAIRN_IR_CAIRNPROGRAMOPS_H
