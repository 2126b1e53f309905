//===- ExecutableContract.h - What a generated executable can run -*- C++
//-*-===//
//
// The runtime (runtime/Main.cpp) trains a model by feeding every input one
// batch of examples at a time from a data directory, reads the forward
// pass's output a row per example (eval's loss, `predict`), and needs a loss
// and an optimizer to train. A model that breaks this compiles to a plan
// and C++ but could only fail at run time; `cairn build` refuses it instead,
// with an error at the input or the statement that breaks it.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_PASSES_EXECUTABLECONTRACT_H
#define CAIRN_PASSES_EXECUTABLECONTRACT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace cairn {

/// Checks the elaborated `module` (before autodiff): a loss and an
/// optimizer, every input [batch, ...], and a floating-point forward result
/// [batch, ...].
mlir::LogicalResult checkExecutableContract(mlir::ModuleOp module);

} // namespace cairn

#endif // CAIRN_PASSES_EXECUTABLECONTRACT_H
