//===- FrontendFuzzer.cpp - libFuzzer target over the whole frontend ------===//
//
// Feeds arbitrary bytes to cairn::compileModelSource (lexer, parser,
// elaborator, verifier). Diagnostics are swallowed; only crashes, sanitizer
// reports, timeouts and out-of-memory count as findings.
//
// Batch override: an input whose first byte is >= 0xF0 (never the start of a
// text model, so seed files stay plain models) uses the low four bits of that
// byte as ElaborateOptions::batch (0 means no override, 1..15 the batch) and
// the rest of the input as the source.
//
//===----------------------------------------------------------------------===//

#include "frontend/Diagnostics.h"
#include "frontend/Elaborator.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // One context for the whole run: creating one per input would dominate the
  // time. Dialects are loaded by the elaborator itself.
  static mlir::MLIRContext *context = [] {
    auto *ctx = new mlir::MLIRContext();
    ctx->printOpOnDiagnostic(false);
    return ctx;
  }();

  cairn::ElaborateOptions options;
  if (size > 0 && data[0] >= 0xF0) {
    if (unsigned batch = data[0] & 0x0F)
      options.batch = batch;
    ++data;
    --size;
  }

  // Own, NUL-terminated copy: the lexer may look one past the end.
  std::string source(reinterpret_cast<const char *>(data), size);

  mlir::ScopedDiagnosticHandler swallow(
      context, [](mlir::Diagnostic &) { return mlir::success(); });
  cairn::DiagnosticReporter diag(context, "fuzz.cairn");
  mlir::OwningOpRef<mlir::ModuleOp> module =
      cairn::compileModelSource(source, diag, options);
  (void)module;
  return 0;
}
