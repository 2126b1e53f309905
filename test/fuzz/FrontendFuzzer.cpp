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

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <string>

namespace {
// Elaboration budgets. The production limits (20M steps, 1M ops) cost about
// 0.5 s and 1.3 s in a release build but 20-25 s and 0.8 GB under
// ASan+UBSan+coverage, so every `for i in range(10**12)` input would be a
// libFuzzer timeout. Lower budgets reach the same error paths 100x sooner.
constexpr uint64_t kFuzzMaxSteps = 200'000;
constexpr uint64_t kFuzzMaxOps = 20'000;
} // namespace

// LLVM's BumpPtrAllocator (llvm/Support/Allocator.h) poisons fresh slabs with
// ASan's manual-poisoning API when its inline code is compiled with ASan, as
// ours is, and unpoisons each allocation it hands out; the copies inlined into
// the uninstrumented libMLIR.so (or static MLIR) do not unpoison. Storage that
// cairn's attributes allocate in the context's StorageUniquer then makes MLIR's
// own next allocation from the same slab look like a use-after-poison (e.g. in
// StringAttr::get). Manual poisoning is thus meaningless in this mixed build:
// switch it off. Real heap, stack and global errors are still caught. Set here,
// not in the run script, so that reproducing a crash needs no environment.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // One context for the whole run: creating one per input would dominate the
  // time. Dialects are loaded by the elaborator itself.
  static mlir::MLIRContext *context = [] {
    auto *ctx = new mlir::MLIRContext();
    ctx->printOpOnDiagnostic(false);
    return ctx;
  }();

  cairn::ElaborateOptions options;
  options.maxSteps = kFuzzMaxSteps;
  options.maxOps = kFuzzMaxOps;
  if (size > 0 && data[0] >= 0xF0) {
    if (unsigned batch = data[0] & 0x0F)
      options.batch = batch;
    ++data;
    --size;
  }

  // Own, NUL-terminated copy: the lexer may look one past the end.
  std::string source(reinterpret_cast<const char *>(data), size);

  // CAIRN_FUZZ_PRINT_DIAGS=1 prints the diagnostics (to debug an input).
  static const bool printDiags = std::getenv("CAIRN_FUZZ_PRINT_DIAGS") != nullptr;
  mlir::ScopedDiagnosticHandler swallow(context, [](mlir::Diagnostic &d) {
    if (printDiags)
      llvm::errs() << d.getLocation() << ": " << d << "\n";
    return mlir::success();
  });
  cairn::DiagnosticReporter diag(context, "fuzz.cairn");
  mlir::OwningOpRef<mlir::ModuleOp> module =
      cairn::compileModelSource(source, diag, options);
  (void)module;
  return 0;
}
