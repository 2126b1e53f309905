//===- cairn.cpp - The Cairn driver ---------------------------------------===//
//
//   cairn check MODEL [--batch N] [--json]
//   cairn build MODEL --emit=mlir [--batch N] [-o FILE]
//
// Exit code 0 on success, 1 on any error in the model or the command line.
// Errors are printed as file:line:col with the source line and a caret.
//
//===----------------------------------------------------------------------===//

#include "frontend/Diagnostics.h"
#include "frontend/Elaborator.h"
#include "passes/ModelSummary.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace cairn;
namespace cl = llvm::cl;

namespace {
/// Model files larger than this are refused: no real model comes close, and
/// it bounds the work a stray input can cause.
constexpr uint64_t kMaxModelFileBytes = 16u << 20;
constexpr long long kMaxBatch = 1ll << 30;

cl::OptionCategory cairnCategory("Cairn options");

cl::SubCommand checkCommand(
    "check", "Parse and verify a model; print its parameters, the shape of "
             "every layer's output and the FLOPs of one forward pass");
cl::SubCommand buildCommand("build", "Compile a model (this version: to MLIR, "
                                     "with --emit=mlir)");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("MODEL.cairn"),
                               cl::Required, cl::sub(checkCommand),
                               cl::sub(buildCommand), cl::cat(cairnCategory));
cl::opt<long long> batchSize(
    "batch", cl::desc("Batch size: binds the model's batch dimension (default: "
                      "the model's `batch` statement)"),
    cl::value_desc("N"), cl::sub(checkCommand),
    cl::sub(buildCommand), cl::cat(cairnCategory));
cl::opt<bool> jsonOutput("json", cl::desc("Print the summary as JSON"),
                         cl::sub(checkCommand), cl::cat(cairnCategory));
cl::opt<bool> verifyDiagnostics(
    "verify-diagnostics",
    cl::desc("Check that the errors match `expected-error {{...}}` comments in "
             "the model file (for tests)"),
    cl::sub(checkCommand), cl::sub(buildCommand), cl::cat(cairnCategory));
cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Treat each part between `# -----` lines as its own model file "
             "(for tests)"),
    cl::sub(checkCommand), cl::sub(buildCommand), cl::cat(cairnCategory));

enum class EmitKind { MLIR };
cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to produce"), cl::Required,
    cl::values(clEnumValN(EmitKind::MLIR, "mlir",
                          "the cairn dialect: @forward and @loss")),
    cl::sub(buildCommand), cl::cat(cairnCategory));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("FILE"), cl::init("-"),
                                cl::sub(buildCommand), cl::cat(cairnCategory));

/// Compiles one model buffer and does what the subcommand asks; diagnostics
/// go through whatever handler the caller installed on `context`.
llvm::LogicalResult processModel(llvm::StringRef source, llvm::StringRef filename,
                                 mlir::MLIRContext &context, llvm::raw_ostream &os) {
  DiagnosticReporter diag(&context, filename);
  ElaborateOptions options;
  if (batchSize.getNumOccurrences())
    options.batch = batchSize;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      compileModelSource(source, diag, options);
  if (!module)
    return llvm::failure();
  if (checkCommand) {
    std::optional<ModelSummary> summary = summarizeModel(*module);
    if (!summary)
      return llvm::failure();
    if (jsonOutput)
      printSummaryJson(*summary, os);
    else
      printSummaryText(*summary, os);
    return llvm::success();
  }
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module->print(os, flags);
  os << "\n";
  return llvm::success();
}

int run() {
  if (batchSize.getNumOccurrences() && (batchSize < 1 || batchSize > kMaxBatch)) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--batch must be between 1 and " << kMaxBatch << " but got "
        << batchSize << "\n";
    return 1;
  }

  std::string errorMessage;
  auto fileOrErr = llvm::MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/false,
                                                      /*RequiresNullTerminator=*/false);
  if (std::error_code ec = fileOrErr.getError()) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "cannot read '" << inputFile << "': " << ec.message() << "\n";
    return 1;
  }
  std::unique_ptr<llvm::MemoryBuffer> input = std::move(*fileOrErr);
  if (input->getBufferSize() > kMaxModelFileBytes) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "'" << inputFile << "' is " << input->getBufferSize()
        << " bytes; model files are limited to " << kMaxModelFileBytes << "\n";
    return 1;
  }

  // Write to a temporary file that is renamed into place only on success,
  // so a failed build leaves no partial output behind.
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(buildCommand ? outputFile.getValue() : "-", &errorMessage);
  if (!output) {
    llvm::WithColor::error(llvm::errs(), "cairn") << errorMessage << "\n";
    return 1;
  }

  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  context.printStackTraceOnDiagnostic(false);

  auto processBuffer = [&](std::unique_ptr<llvm::MemoryBuffer> buffer,
                           llvm::raw_ostream &os) -> llvm::LogicalResult {
    llvm::SourceMgr sourceMgr;
    llvm::StringRef source = buffer->getBuffer();
    std::string name = buffer->getBufferIdentifier().str();
    sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    if (verifyDiagnostics) {
      mlir::SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &context);
      (void)processModel(source, name, context, os);
      return handler.verify();
    }
    mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    return processModel(source, name, context, os);
  };

  llvm::LogicalResult result = llvm::success();
  if (splitInputFile) {
    result = mlir::splitAndProcessBuffer(
        std::move(input),
        [&](std::unique_ptr<llvm::MemoryBuffer> chunk, llvm::raw_ostream &os) {
          return processBuffer(std::move(chunk), os);
        },
        output->os(), "# -----", "// -----");
  } else {
    result = processBuffer(std::move(input), output->os());
  }
  if (llvm::failed(result))
    return 1;
  output->keep();
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "cairn " << CAIRN_VERSION << " (MLIR " << LLVM_VERSION_STRING << ")\n";
  });
  cl::HideUnrelatedOptions(cairnCategory);
  cl::HideUnrelatedOptions(cairnCategory, checkCommand);
  cl::HideUnrelatedOptions(cairnCategory, buildCommand);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Cairn: an ahead-of-time compiler for neural-network training.\n\n"
      "  cairn check MODEL [--batch N] [--json]\n"
      "  cairn build MODEL --emit=mlir [--batch N] [-o FILE]\n\n"
      "Run `cairn check --help` or `cairn build --help` for a command's "
      "options.\n");
  if (!checkCommand && !buildCommand) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "expected a command: check or build (see cairn --help)\n";
    return 1;
  }
  return run();
}
