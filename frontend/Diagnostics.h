//===- Diagnostics.h - Frontend error reporting -----------------*- C++ -*-===//
//
// The frontend reports through MLIR's diagnostic engine at FileLineColLoc
// locations of the model file, so the same handler prints the caret for
// frontend and verifier errors, and `--verify-diagnostics` checks both.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_FRONTEND_DIAGNOSTICS_H
#define CAIRN_FRONTEND_DIAGNOSTICS_H

#include "frontend/AST.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

namespace cairn {

class DiagnosticReporter {
public:
  /// After this many errors the frontend stops and says so.
  static constexpr unsigned kMaxErrors = 20;

  DiagnosticReporter(mlir::MLIRContext *context, llvm::StringRef filename)
      : context(context),
        filename(mlir::StringAttr::get(context, filename)) {}

  mlir::MLIRContext *getContext() const { return context; }

  mlir::FileLineColLoc loc(ast::Loc l) const {
    return mlir::FileLineColLoc::get(filename, l.line, l.col);
  }

  /// Reports an error at `l`; more text can be streamed into the result.
  mlir::InFlightDiagnostic error(ast::Loc l) {
    ++errors;
    return mlir::emitError(loc(l));
  }

  mlir::InFlightDiagnostic warning(ast::Loc l) {
    return mlir::emitWarning(loc(l));
  }

  unsigned errorCount() const { return errors; }
  bool hadError() const { return errors != 0; }
  bool tooManyErrors() const { return errors >= kMaxErrors; }

private:
  mlir::MLIRContext *context;
  mlir::StringAttr filename;
  unsigned errors = 0;
};

} // namespace cairn

#endif // CAIRN_FRONTEND_DIAGNOSTICS_H
