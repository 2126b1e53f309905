//===- CairnDialect.h - The cairn dialect -----------------------*- C++ -*-===//

#ifndef CAIRN_IR_CAIRNDIALECT_H
#define CAIRN_IR_CAIRNDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "ir/CairnDialect.h.inc"

#endif // CAIRN_IR_CAIRNDIALECT_H
