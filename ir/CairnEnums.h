//===- CairnEnums.h - The enums of the cairn dialect ------------*- C++ -*-===//
//
// BufferKind, StepKind, InitKind, Role, Precision and their string forms,
// for code that needs the vocabulary without the rest of the IR.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_IR_CAIRNENUMS_H
#define CAIRN_IR_CAIRNENUMS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

#include "ir/CairnEnums.h.inc"

#endif // CAIRN_IR_CAIRNENUMS_H
