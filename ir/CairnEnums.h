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

namespace cairn {

/// input, param, buffer, optimizer and output: at one place in the arena for
/// the whole run, shared by both steps; the other kinds live within a step.
constexpr bool isPersistent(BufferKind kind) {
  return kind == BufferKind::input || kind == BufferKind::param ||
         kind == BufferKind::buffer || kind == BufferKind::optimizer ||
         kind == BufferKind::output;
}

} // namespace cairn

#endif // CAIRN_IR_CAIRNENUMS_H
