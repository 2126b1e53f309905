//===- CairnAttrs.h - Attributes of cairn -----------------------*- C++ -*-===//

#ifndef CAIRN_IR_CAIRNATTRS_H
#define CAIRN_IR_CAIRNATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

#include "ir/CairnEnums.h"

namespace cairn::detail {
/// Parsers of the `double` and `bool` attribute parameters.
mlir::FailureOr<double> parseDoubleParameter(mlir::AsmParser &parser);
mlir::FailureOr<bool> parseBoolParameter(mlir::AsmParser &parser);
/// Prints the shortest float literal that parses back to `value`.
void printDoubleParameter(mlir::AsmPrinter &printer, double value);

/// Storages written by hand (CairnAttrs.cpp): LLVM cannot hash a double.
struct InitAttrStorage;
struct SGDAttrStorage;
struct AdamAttrStorage;
} // namespace cairn::detail

#define GET_ATTRDEF_CLASSES
#include "ir/CairnAttrs.h.inc"

#endif // CAIRN_IR_CAIRNATTRS_H
