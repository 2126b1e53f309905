//===- Parser.h - Parser of .cairn model files ------------------*- C++ -*-===//
//
// A recursive-descent parser for the grammar in docs/language.md. It reports
// syntax errors, recovers at the next statement, and stops after
// DiagnosticReporter::kMaxErrors errors.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_FRONTEND_PARSER_H
#define CAIRN_FRONTEND_PARSER_H

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"

#include "llvm/ADT/StringRef.h"

#include <memory>

namespace cairn {

/// Parses a whole model file. Errors go to `diag`; the returned program holds
/// what could be parsed (never null). Check diag.hadError().
std::unique_ptr<ast::ModelFile> parseModelFile(llvm::StringRef source,
                                           DiagnosticReporter &diag);

} // namespace cairn

#endif // CAIRN_FRONTEND_PARSER_H
