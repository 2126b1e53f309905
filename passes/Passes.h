//===- Passes.h - Cairn passes ----------------------------------*- C++ -*-===//

#ifndef CAIRN_PASSES_PASSES_H
#define CAIRN_PASSES_PASSES_H

#include "ir/CairnEnums.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace cairn {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace cairn

#endif // CAIRN_PASSES_PASSES_H
