//===- cairn.cpp - The Cairn driver ---------------------------------------===//
//
//   cairn check MODEL [--batch N] [--json]
//   cairn build MODEL -o EXE [--batch N] [--target cpu] [--keep-temps]
//   cairn build MODEL --emit=mlir|train-mlir|cpp [--batch N] [-o FILE]
//   cairn plan --buffers FILE.csv [-o OUT.csv] [--time-limit SECONDS]
//
// `cairn build` parses and elaborates the model, runs autodiff
// (cairn-autodiff), lowers @train_step and @forward to kernel lists, prints
// them as C++ and compiles that with the host compiler into a training
// executable (CAIRN_CXX overrides the compiler).
//
// Exit code 0 on success, 1 on any error in the model or the command line.
// Errors are printed as file:line:col with the source line and a caret.
//
//===----------------------------------------------------------------------===//

#include "codegen/CpuEmitter.h"
#include "codegen/HostCompiler.h"
#include "codegen/Lowering.h"
#include "frontend/Diagnostics.h"
#include "frontend/Elaborator.h"
#include "passes/BufferCsv.h"
#include "passes/MemoryPlanner.h"
#include "passes/ModelSummary.h"
#include "passes/Passes.h"
#include "passes/PlanVerifier.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <cstdlib>

using namespace cairn;
namespace cl = llvm::cl;

namespace {
/// Model files larger than this are refused: no real model comes close, and
/// it bounds the work a stray input can cause.
constexpr uint64_t kMaxModelFileBytes = 16u << 20;
constexpr long long kMaxBatch = 1ll << 30;
/// Buffer CSV files larger than this are refused (a million buffers fit).
constexpr uint64_t kMaxBufferFileBytes = 64u << 20;
constexpr double kMaxTimeLimitSeconds = 3600;

cl::OptionCategory cairnCategory("Cairn options");

cl::SubCommand checkCommand(
    "check", "Parse and verify a model; print its parameters, the shape of "
             "every layer's output and the FLOPs of one forward pass");
cl::SubCommand buildCommand(
    "build", "Compile a model into a training executable for the CPU (with "
             "the C++ compiler Cairn was built with; CAIRN_CXX overrides "
             "it), or print its IR or C++ with --emit");
cl::SubCommand planCommand(
    "plan", "Plan arena offsets for buffers with lifetimes, read from a CSV "
            "file `id,lower,upper,size` (live over [lower, upper))");

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

enum class EmitKind { Executable, MLIR, TrainMLIR, Cpp };
cl::opt<EmitKind> emitKind(
    "emit",
    cl::desc("Print an intermediate form instead of building the executable"),
    cl::init(EmitKind::Executable),
    cl::values(clEnumValN(EmitKind::MLIR, "mlir",
                          "the cairn dialect: @forward and @loss"),
               clEnumValN(EmitKind::TrainMLIR, "train-mlir",
                          "the cairn dialect after autodiff, with @train_step"),
               clEnumValN(EmitKind::Cpp, "cpp",
                          "the C++ source of the executable")),
    cl::sub(buildCommand), cl::cat(cairnCategory));
cl::opt<std::string> outputFile(
    "o",
    cl::desc("The executable to build, or the file --emit writes (default: "
             "stdout)"),
    cl::value_desc("FILE"), cl::init("-"), cl::sub(buildCommand),
    cl::cat(cairnCategory));
cl::opt<std::string> targetName(
    "target", cl::desc("The machine the executable runs on: cpu (the only one "
                       "so far)"),
    cl::value_desc("cpu"), cl::init("cpu"), cl::sub(buildCommand),
    cl::cat(cairnCategory));
cl::opt<bool> keepTemps(
    "keep-temps",
    cl::desc("Keep the generated C++ and the compiler's log (says where)"),
    cl::sub(buildCommand), cl::cat(cairnCategory));

cl::opt<std::string> buffersFile(
    "buffers", cl::desc("The buffers: CSV lines `id,lower,upper,size`, header "
                        "line optional"),
    cl::value_desc("FILE.csv"), cl::Required, cl::sub(planCommand),
    cl::cat(cairnCategory));
cl::opt<std::string> planOutputFile(
    "o", cl::desc("Write the plan as CSV `id,lower,upper,size,offset`"),
    cl::value_desc("OUT.csv"), cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<double> timeLimit(
    "time-limit", cl::desc("Seconds the exact search may take when greedy "
                           "is above the lower bound (default 1; 0: greedy only)"),
    cl::value_desc("SECONDS"), cl::init(1.0), cl::sub(planCommand),
    cl::cat(cairnCategory));

/// Runs autodiff by its registered name: @loss -> @train_step. (The pass
/// list is parsed into a module-anchored pass manager: no op anchor.)
llvm::LogicalResult runAutodiff(mlir::ModuleOp module) {
  mlir::PassManager pm(module->getName());
  if (llvm::failed(mlir::parsePassPipeline("cairn-autodiff", pm)))
    return llvm::failure();
  return pm.run(module);
}

/// Compiles one model buffer and does what the subcommand asks; diagnostics
/// go through whatever handler the caller installed on `context`. Building
/// an executable leaves its C++ in `os`.
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
  auto printModule = [&] {
    mlir::OpPrintingFlags flags;
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    module->print(os, flags);
    os << "\n";
    return llvm::success();
  };
  if (emitKind == EmitKind::MLIR)
    return printModule();
  if (llvm::failed(runAutodiff(*module)))
    return llvm::failure();
  if (emitKind == EmitKind::TrainMLIR)
    return printModule();
  std::optional<codegen::Program> program =
      codegen::lowerToKernels(*module, codegen::LoweringTarget{});
  if (!program)
    return llvm::failure();
  codegen::emitCpuProgram(*program, source, os);
  return llvm::success();
}

/// Checks --target: only the CPU backend exists so far.
bool checkTarget() {
  if (targetName == "cpu")
    return true;
  if (targetName == "cuda")
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--target=cuda is not yet supported; this version builds for the "
           "CPU only (--target=cpu)\n";
  else
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "unknown --target '" << targetName << "'; expected cpu\n";
  return false;
}

/// `cairn plan`: reads the buffers, plans them, verifies the plan with the
/// independent checker and prints the arena size next to the lower bound.
int runPlan() {
  if (!(timeLimit >= 0 && timeLimit <= kMaxTimeLimitSeconds)) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--time-limit must be between 0 and " << llvm::format("%g", kMaxTimeLimitSeconds)
        << " but got " << llvm::format("%g", timeLimit.getValue()) << "\n";
    return 1;
  }
  auto fileOrErr = llvm::MemoryBuffer::getFileOrSTDIN(buffersFile, /*IsText=*/false,
                                                      /*RequiresNullTerminator=*/false);
  if (std::error_code ec = fileOrErr.getError()) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "cannot read '" << buffersFile << "': " << ec.message() << "\n";
    return 1;
  }
  llvm::StringRef text = (*fileOrErr)->getBuffer();
  if (text.size() > kMaxBufferFileBytes) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "'" << buffersFile << "' is " << text.size()
        << " bytes; buffer files are limited to " << kMaxBufferFileBytes << "\n";
    return 1;
  }
  std::vector<BufferInterval> buffers;
  CsvError csvError;
  if (!parseBufferCsv(std::string_view(text.data(), text.size()), buffers, csvError)) {
    llvm::errs() << buffersFile << ":" << csvError.line << ": ";
    llvm::WithColor::error(llvm::errs()) << csvError.message << "\n";
    return 1;
  }

  PlannerOptions options;
  options.timeLimitSeconds = timeLimit;
  MemoryPlan plan = planMemory(buffers, options);

  std::vector<PlacedBuffer> placed;
  placed.reserve(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferInterval &b = buffers[i];
    placed.push_back({b.id, b.lower, b.upper, b.size, plan.offsets[i], b.alignment});
  }
  PlanVerdict verdict = verifyPlan(placed, plan.arenaSize);
  if (!verdict.ok) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "internal error: the plan failed verification: " << verdict.message << "\n";
    return 1;
  }

  if (planOutputFile.getNumOccurrences()) {
    std::string errorMessage;
    std::unique_ptr<llvm::ToolOutputFile> output =
        mlir::openOutputFile(planOutputFile, &errorMessage);
    if (!output) {
      llvm::WithColor::error(llvm::errs(), "cairn") << errorMessage << "\n";
      return 1;
    }
    output->os() << formatPlanCsv(buffers, plan.offsets);
    output->keep();
  }

  auto ratio = [&](int64_t arena) {
    return plan.lowerBound ? static_cast<double>(arena) / plan.lowerBound : 1.0;
  };
  llvm::raw_ostream &os = llvm::outs();
  os << "buffers: " << buffers.size() << "\n";
  os << "lower bound: " << plan.lowerBound << "\n";
  os << "greedy arena: " << plan.greedyArenaSize << " ("
     << llvm::format("%.3f", ratio(plan.greedyArenaSize)) << "x)\n";
  os << "arena: " << plan.arenaSize << "\n";
  os << "ratio: " << llvm::format("%.3f", ratio(plan.arenaSize)) << "x\n";
  os << "method: " << getPlanMethodName(plan.method) << "\n";
  os << "optimal: " << (plan.provedOptimal ? "yes" : "not proven") << "\n";
  os << "time: " << llvm::format("%.3f", plan.seconds) << " s\n";
  return 0;
}

int run() {
  bool buildExecutable = buildCommand && emitKind == EmitKind::Executable;
  if (buildCommand && !checkTarget())
    return 1;
  if (buildExecutable && (outputFile == "-" || outputFile.empty())) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "expected -o EXE: the executable to build (or --emit=mlir, "
           "train-mlir or cpp to print)\n";
    return 1;
  }
  if (buildExecutable && splitInputFile) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--split-input-file works only with --emit\n";
    return 1;
  }
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
  // so a failed build leaves no partial output behind. An executable's C++
  // goes to a string first; compileExecutable renames the executable.
  std::string generatedCpp;
  llvm::raw_string_ostream generatedStream(generatedCpp);
  std::unique_ptr<llvm::ToolOutputFile> output;
  if (!buildExecutable) {
    output = mlir::openOutputFile(buildCommand ? outputFile.getValue() : "-",
                                  &errorMessage);
    if (!output) {
      llvm::WithColor::error(llvm::errs(), "cairn") << errorMessage << "\n";
      return 1;
    }
  }
  llvm::raw_ostream &os =
      output ? static_cast<llvm::raw_ostream &>(output->os()) : generatedStream;

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
        os, "# -----", "// -----");
  } else {
    result = processBuffer(std::move(input), os);
  }
  if (llvm::failed(result))
    return 1;
  // With --verify-diagnostics the expected errors were the point.
  if (buildExecutable && !verifyDiagnostics) {
    codegen::HostCompileOptions options;
    if (const char *compiler = std::getenv("CAIRN_CXX"))
      options.compiler = compiler;
    options.keepTemps = keepTemps;
    return llvm::succeeded(codegen::compileExecutable(
               generatedStream.str(), outputFile, options))
               ? 0
               : 1;
  }
  if (output)
    output->keep();
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerCairnPasses();
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "cairn " << CAIRN_VERSION << " (MLIR " << LLVM_VERSION_STRING << ")\n";
  });
  cl::HideUnrelatedOptions(cairnCategory);
  cl::HideUnrelatedOptions(cairnCategory, checkCommand);
  cl::HideUnrelatedOptions(cairnCategory, buildCommand);
  cl::HideUnrelatedOptions(cairnCategory, planCommand);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Cairn: an ahead-of-time compiler for neural-network training.\n\n"
      "  cairn check MODEL [--batch N] [--json]\n"
      "  cairn build MODEL -o EXE [--batch N] [--target cpu] [--keep-temps]\n"
      "  cairn build MODEL --emit=mlir|train-mlir|cpp [--batch N] [-o FILE]\n"
      "  cairn plan --buffers FILE.csv [-o OUT.csv] [--time-limit SECONDS]\n\n"
      "Run `cairn check --help`, `cairn build --help` or `cairn plan --help` "
      "for a command's options.\n");
  if (planCommand)
    return runPlan();
  if (!checkCommand && !buildCommand) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "expected a command: check, build or plan (see cairn --help)\n";
    return 1;
  }
  return run();
}
