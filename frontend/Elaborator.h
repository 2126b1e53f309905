//===- Elaborator.h - From syntax tree to the cairn dialect -----*- C++ -*-===//
//
// Elaboration runs the compile-time part of a model file (module
// constructors, constants, `if` and `for`), names every parameter as PyTorch's
// state_dict would, checks shapes and dtypes, and emits two functions:
// `@forward` (inference: dropout off, batchnorm on running statistics) and
// `@loss` (one training forward up to the scalar loss).
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_FRONTEND_ELABORATOR_H
#define CAIRN_FRONTEND_ELABORATOR_H

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>

namespace cairn {

struct ElaborateOptions {
  /// Overrides the model's `batch` default (`--batch N`).
  std::optional<int64_t> batch;
  /// Elaboration gives up past these, so no model file can hang the compiler
  /// or exhaust memory; far beyond what real models need.
  uint64_t maxSteps = 20'000'000;
  uint64_t maxOps = 1'000'000;
};

/// Elaborates the one `model` of `program`. Returns null after reporting
/// errors through `diag`.
mlir::OwningOpRef<mlir::ModuleOp> elaborateModelFile(const ast::ModelFile &program,
                                                   DiagnosticReporter &diag,
                                                   const ElaborateOptions &options);

/// Parses and elaborates a model file, then verifies the IR: the whole
/// frontend in one call (used by the driver and the fuzzer).
mlir::OwningOpRef<mlir::ModuleOp> compileModelSource(llvm::StringRef source,
                                                     DiagnosticReporter &diag,
                                                     const ElaborateOptions &options);

} // namespace cairn

#endif // CAIRN_FRONTEND_ELABORATOR_H
