//===- CairnDialect.h - The cairn dialect -----------------------*- C++ -*-===//

#ifndef CAIRN_IR_CAIRNDIALECT_H
#define CAIRN_IR_CAIRNDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "ir/CairnDialect.h.inc"

namespace cairn {

/// Gives `to` the checkpoint region and device of `from`: an op a pass adds
/// for another (a cast of its operand or of its result) belongs where that
/// one is, and a region's casts are computed again with it.
inline void copyRegionAndDevice(mlir::Operation *from, mlir::Operation *to) {
  for (llvm::StringRef name :
       {CairnDialect::kCheckpointAttrName, CairnDialect::kDeviceAttrName})
    if (mlir::Attribute value = from->getAttr(name))
      to->setAttr(name, value);
}

} // namespace cairn

#endif // CAIRN_IR_CAIRNDIALECT_H
