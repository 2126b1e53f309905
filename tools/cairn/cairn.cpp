//===- cairn.cpp - The Cairn driver ---------------------------------------===//
//
//   cairn check MODEL [--batch N] [--json]
//   cairn build MODEL -o EXE [--batch N] [--target cpu|cuda] [--keep-temps]
//              [--memory-report FILE] [--no-reuse] [--no-reorder]
//              [--no-fuse] [--no-recompute] [--memory-budget SIZE
//              [--kernel-times FILE]] [--verify-plan] [--precision P]
//              [--loss-scaling] [--devices N [--device-memory SIZE]]
//              [--micro-batches M [--pipeline 1f1b|gpipe]]
//              [--replicas R [--bucket SIZE] [--sync-batchnorm]]
//   cairn build MODEL --emit=mlir|train-mlir|cpp|cuda [--stop-after STAGE]
//              [--batch N] [-o FILE] [--target cpu|cuda] [--no-reuse]
//              [--no-reorder] [--no-fuse] [--no-recompute]
//              [--memory-budget SIZE [--kernel-times FILE]] [--precision P]
//              [--loss-scaling] [--devices N]
//   cairn plan MODEL [--batch N] [--target cpu|cuda]
//              [--step both|train|forward] [--fit SIZE]
//              [--memory-report FILE] [--no-reuse] [--no-reorder]
//              [--no-fuse] [--no-recompute] [--memory-budget SIZE
//              [--kernel-times FILE]] [--verify-plan] [--time-limit SECONDS]
//              [--precision P] [--loss-scaling]
//              [--devices N [--device-memory SIZE]] [--micro-batches M]
//              [--replicas R [--bucket SIZE] [--sync-batchnorm]]
//   cairn plan --buffers FILE.csv [-o OUT.csv] [--capacity BYTES]
//              [--time-limit SECONDS]
//
// The driver drives: it parses the flags, elaborates the model (frontend/),
// runs the training pipeline once (passes/Pipeline.h: autodiff, lowering to
// kernels, recomputation of checkpoint regions, fusion, the memory-aware
// schedule, in-place decisions, the arena plan and its independent
// verification), and writes what was asked: the IR after a stage, the C++ or
// CUDA C++ the emitters print from the planned program (codegen/), an
// executable (the host compiler or nvcc; CAIRN_CXX and CAIRN_NVCC override
// them), the plan's report.
//
// Exit code 0 on success, 1 on any error in the model or the command line,
// 2 when the plan does not fit --fit's size or --memory-budget.
// Errors are printed as file:line:col with the source line and a caret.
//
//===----------------------------------------------------------------------===//

#include "codegen/CpuEmitter.h"
#include "codegen/CudaEmitter.h"
#include "codegen/HostCompiler.h"
#include "codegen/PlanReport.h"
#include "codegen/PlanReportHtml.h"
#include "frontend/Diagnostics.h"
#include "frontend/Elaborator.h"
#include "passes/ArenaLiveness.h"
#include "passes/ArenaVerifier.h"
#include "passes/BatchFit.h"
#include "passes/BufferCsv.h"
#include "passes/ByteSize.h"
#include "passes/IntervalPlanner.h"
#include "passes/ModelSummary.h"
#include "passes/Passes.h"
#include "passes/Pipeline.h"
#include "passes/PlanVerifier.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

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
/// The exact search's budget when a model is built; most plans reach the
/// lower bound long before.
constexpr double kDefaultPlanSeconds = 1.0;

cl::OptionCategory cairnCategory("Cairn options");

cl::SubCommand checkCommand(
    "check", "Parse and verify a model; print its parameters, the shape of "
             "every layer's output and the FLOPs of one forward pass");
cl::SubCommand buildCommand(
    "build", "Compile a model into a training executable for the CPU (with "
             "the C++ compiler Cairn was built with; CAIRN_CXX overrides "
             "it) or, with --target cuda, for NVIDIA GPUs (with nvcc; "
             "CAIRN_NVCC overrides it), or print its IR, C++ or CUDA C++ "
             "with --emit");
cl::SubCommand planCommand(
    "plan", "Print the memory plan of a model's training step (or, with "
            "--fit, whether it fits a memory size and the largest batch that "
            "does), without building; or plan arena offsets for buffers read "
            "from a CSV file `id,lower,upper,size` (--buffers)");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("MODEL.cairn"),
                               cl::Required, cl::sub(checkCommand),
                               cl::sub(buildCommand), cl::cat(cairnCategory));
cl::opt<std::string> planModelFile(cl::Positional, cl::desc("[MODEL.cairn]"),
                                   cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<long long> batchSize(
    "batch", cl::desc("Batch size: binds the model's batch dimension (default: "
                      "the model's `batch` statement)"),
    cl::value_desc("N"), cl::sub(checkCommand), cl::sub(buildCommand),
    cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<std::string> memoryReportFile(
    "memory-report",
    cl::desc("Write the memory plan to FILE: .json (for tools), .txt (for "
             "people) or .html (a page to look at), by FILE's extension"),
    cl::value_desc("FILE"), cl::sub(buildCommand), cl::sub(planCommand),
    cl::cat(cairnCategory));
cl::opt<bool> noReuse(
    "no-reuse",
    cl::desc("Give every buffer bytes of its own (no liveness-based reuse, "
             "nothing in place, a loss scaler's gradients checked in "
             "float32): the reference layout plans are checked against"),
    cl::sub(buildCommand), cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<bool> noReorder(
    "no-reorder",
    cl::desc("Run the kernels in the order they were lowered in, not in the "
             "memory-aware order that lowers the peak (--no-reuse implies "
             "it)"),
    cl::sub(buildCommand), cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<bool> noFuse(
    "no-fuse",
    cl::desc("Run every element-wise kernel alone: no chains fused into one "
             "kernel, no relu folded into its linear (cairn-fuse-elementwise)"),
    cl::sub(buildCommand), cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<bool> noRecompute(
    "no-recompute",
    cl::desc("Keep every value the backward reads, `checkpoint { }` regions "
             "included (cairn-recompute-checkpoints skipped): the reference "
             "a recomputing build is checked against"),
    cl::sub(buildCommand), cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<unsigned> devicesFlag(
    "devices",
    cl::desc("Split a model without `on device` regions across N devices (one "
             "process each, launched by `mpirun -np N EXE ...`): its ops in "
             "program order are cut into N stages whose slowest, in modelled "
             "compute and transfers, is fastest; each device gets its own "
             "plan. --devices 1 runs a model's `on device` regions on one "
             "device (the reference a split is checked against)"),
    cl::value_desc("N"), cl::init(0), cl::sub(buildCommand),
    cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<unsigned> microBatchesFlag(
    "micro-batches",
    cl::desc("Run each batch as M micro-batches of batch/M examples inside "
             "one step: on one device gradient accumulation (the memory of "
             "one micro-batch, the update of the whole batch), across devices "
             "a pipeline (--pipeline); batch norm uses each micro-batch's "
             "statistics"),
    cl::value_desc("M"), cl::init(1), cl::sub(buildCommand),
    cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<std::string> pipelineFlag(
    "pipeline",
    cl::desc("With --micro-batches across devices, the schedule: 1f1b (the "
             "default: stage s of N runs N - s - 1 forwards ahead, then one "
             "forward and one backward in turn, holding at most N - s "
             "micro-batches) or gpipe (every forward, then every backward: "
             "each stage holds all M); the same bubble, the same results"),
    cl::value_desc("1f1b|gpipe"), cl::init("1f1b"), cl::sub(buildCommand),
    cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<unsigned> replicasFlag(
    "replicas",
    cl::desc("Train with R data-parallel replicas, one process each "
             "(`mpirun -np R EXE train ...`): each takes batch/R examples of "
             "every batch, and the step sums the gradients of all R in "
             "buckets (--bucket) while its backward runs, so every replica "
             "applies the update of the whole batch. On --target cuda, one "
             "process per GPU, the sums NCCL's; batch norm uses each "
             "replica's statistics (see --sync-batchnorm)"),
    cl::value_desc("R"), cl::init(1), cl::sub(buildCommand),
    cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<bool> syncBatchNormFlag(
    "sync-batchnorm",
    cl::desc("With --replicas, batch norm normalises by the statistics of "
             "the whole batch, every replica's examples (PyTorch's "
             "SyncBatchNorm), and updates the running statistics with them: "
             "the replicas sum a few numbers per channel as each batch norm "
             "runs, forward and backward (MPI's sums on the CPU, NCCL's on "
             "GPUs). Without it, each replica uses its own examples' "
             "statistics, as PyTorch DDP does"),
    cl::sub(buildCommand), cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<std::string> bucketSize(
    "bucket",
    cl::desc("With --replicas, the gradients summed at once: a bucket closes "
             "once its gradients, in the order the backward completes them, "
             "take this much (default 25MiB, as PyTorch DDP's)"),
    cl::value_desc("SIZE"), cl::init("25MiB"), cl::sub(buildCommand),
    cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<std::string> deviceMemorySize(
    "device-memory",
    cl::desc("The memory of each device (e.g. 16GiB): with --devices, the "
             "fastest split whose every device's arena fits, chosen with the "
             "plans in the loop; exit code 2, with what each device of the "
             "closest split needs, when none fits"),
    cl::value_desc("SIZE"), cl::sub(buildCommand), cl::sub(planCommand),
    cl::cat(cairnCategory));
cl::opt<bool> verifyPlanFlag(
    "verify-plan",
    cl::desc("Report the independent check of the memory plan (it always "
             "runs; a plan that fails it is never used)"),
    cl::sub(buildCommand), cl::sub(planCommand), cl::cat(cairnCategory));
enum class PlanStep { Both, Train, Forward };
cl::opt<PlanStep> planStep(
    "step",
    cl::desc("Which steps to plan (default both: the executable's "
             "arena)"),
    cl::init(PlanStep::Both),
    cl::values(clEnumValN(PlanStep::Both, "both",
                          "every step of the executable (training, forward "
                          "and an eval-mode loss where the model has one), "
                          "sharing one arena"),
               clEnumValN(PlanStep::Train, "train", "the training step alone"),
               clEnumValN(PlanStep::Forward, "forward",
                          "the forward pass alone (inference)")),
    cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<std::string> fitSize(
    "fit",
    cl::desc("Say whether the plan fits SIZE bytes per device (e.g. 16GiB, "
             "512MiB, 8GB, 1000000) and the largest batch size that does, "
             "without and with recomputation (--memory-budget SIZE); with "
             "--devices, each batch split as --device-memory SIZE splits it; "
             "exit code 0 when it fits at the model's batch size either way, "
             "2 when not"),
    cl::value_desc("SIZE"), cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<std::string> memoryBudgetSize(
    "memory-budget",
    cl::desc("Recompute forward values in the backward, at the least extra "
             "modelled (or, with --kernel-times, measured) time and never more "
             "than the step's own, so that the "
             "arena fits SIZE (e.g. 512MiB, 16GiB, 1000000); exit code 2, with "
             "the smallest arena recomputation reaches, when no choice fits"),
    cl::value_desc("SIZE"), cl::sub(buildCommand), cl::sub(planCommand),
    cl::cat(cairnCategory));
cl::opt<std::string> precisionName(
    "precision",
    cl::desc("The type of the step's matmuls and convolutions and of the "
             "values between them: f32 (the default), bf16 or f16, as "
             "PyTorch's autocast (cairn-autocast): batch norm with float32 "
             "statistics, softmax, the losses, sums and means in float32, "
             "float32 master weights and optimizer state; half tensors are "
             "stored in half and computed in float32, except on CUDA the "
             "matmuls and convolutions (not their weight gradients), which "
             "run on the tensor cores with float32 accumulation. "
             "f16 steps scale the loss as torch.amp.GradScaler (the "
             "executables' --loss-scale); this wins over the model's own "
             "`precision`"),
    cl::value_desc("f32|bf16|f16"), cl::sub(buildCommand), cl::sub(planCommand),
    cl::cat(cairnCategory));
cl::opt<bool> lossScalingFlag(
    "loss-scaling",
    cl::desc("Give the training step a loss scaler whatever its precision "
             "(an f16 step always has one): the executable's --loss-scale "
             "(dynamic by default) scales the loss and skips a step whose "
             "gradients are infinite or NaN, leaving weights, optimizer state "
             "and running statistics as they were. It costs memory: every "
             "gradient is held until the check (on the CPU, where that plans "
             "smaller, as the backward computed it: in half for a half "
             "product's weight gradient)"),
    cl::sub(buildCommand), cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<std::string> kernelTimesFile(
    "kernel-times",
    cl::desc("With --memory-budget: price each kernel by the time FILE "
             "measured (`EXE train --profile FILE` of this model at this "
             "batch, built without --memory-budget) instead of the roofline "
             "model"),
    cl::value_desc("FILE"), cl::sub(buildCommand), cl::sub(planCommand),
    cl::cat(cairnCategory));
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

enum class EmitKind { Executable, MLIR, TrainMLIR, Cpp, Cuda };
cl::opt<EmitKind> emitKind(
    "emit",
    cl::desc("Print an intermediate form instead of building the executable"),
    cl::init(EmitKind::Executable),
    cl::values(clEnumValN(EmitKind::MLIR, "mlir",
                          "the cairn dialect: @forward and @loss"),
               clEnumValN(EmitKind::TrainMLIR, "train-mlir",
                          "the cairn dialect after autodiff, with @train_step"),
               clEnumValN(EmitKind::Cpp, "cpp",
                          "the C++ source of the CPU executable"),
               clEnumValN(EmitKind::Cuda, "cuda",
                          "the CUDA C++ source of the --target cuda "
                          "executable")),
    cl::sub(buildCommand), cl::cat(cairnCategory));
cl::opt<std::string> stopAfter(
    "stop-after",
    cl::desc(
        "With --emit=mlir: print the IR after this stage of the "
        "pipeline (elaborate, autodiff, lower, recompute, partition, fuse, "
        "schedule, in-place, plan, verify; default elaborate, the frontend's "
        "output)"),
    cl::value_desc("STAGE"), cl::init("elaborate"), cl::sub(buildCommand),
    cl::cat(cairnCategory));
cl::opt<std::string> outputFile(
    "o",
    cl::desc("The executable to build, or the file --emit writes (default: "
             "stdout)"),
    cl::value_desc("FILE"), cl::init("-"), cl::sub(buildCommand),
    cl::cat(cairnCategory));
cl::opt<std::string> targetName(
    "target",
    cl::desc("The machine the executable runs on: cpu (default) or cuda (an "
             "NVIDIA GPU, sm_80 or newer; the build needs a Cairn built with "
             "CAIRN_ENABLE_CUDA). For plan: the program whose memory is "
             "planned"),
    cl::value_desc("cpu|cuda"), cl::init("cpu"), cl::sub(buildCommand),
    cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<bool> keepTemps(
    "keep-temps",
    cl::desc("Keep the generated C++ (or CUDA C++) and the compiler's log "
             "(says where)"),
    cl::sub(buildCommand), cl::cat(cairnCategory));

cl::opt<std::string> buffersFile(
    "buffers", cl::desc("The buffers: CSV lines `id,lower,upper,size`, header "
                        "line optional"),
    cl::value_desc("FILE.csv"), cl::sub(planCommand),
    cl::cat(cairnCategory));
cl::opt<std::string> planOutputFile(
    "o", cl::desc("Write the plan as CSV `id,lower,upper,size,offset`"),
    cl::value_desc("OUT.csv"), cl::sub(planCommand), cl::cat(cairnCategory));
cl::opt<double> timeLimit(
    "time-limit",
    cl::desc("Seconds the exact search may take when greedy is above the "
             "lower bound (default 1; 0: greedy only); for a model, counted "
             "as search work at a fixed rate, so that its plan is the same on "
             "every machine and run; with --buffers, wall-clock time"),
    cl::value_desc("SECONDS"), cl::init(1.0), cl::sub(planCommand),
    cl::cat(cairnCategory));
cl::opt<long long> planCapacity(
    "capacity", cl::desc("With --buffers: find any plan whose arena fits in "
                         "BYTES, as MiniMalloc does, and print whether it "
                         "fits (default: minimize the arena)"),
    cl::value_desc("BYTES"), cl::sub(planCommand), cl::cat(cairnCategory));

/// Reads a model file (or stdin for "-"), refusing files over
/// kMaxModelFileBytes; prints the error and returns null on failure.
std::unique_ptr<llvm::MemoryBuffer> readModelFile(llvm::StringRef path) {
  auto fileOrErr = llvm::MemoryBuffer::getFileOrSTDIN(
      path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (std::error_code ec = fileOrErr.getError()) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "cannot read '" << path << "': " << ec.message() << "\n";
    return nullptr;
  }
  if ((*fileOrErr)->getBufferSize() > kMaxModelFileBytes) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "'" << path << "' is " << (*fileOrErr)->getBufferSize()
        << " bytes; model files are limited to " << kMaxModelFileBytes << "\n";
    return nullptr;
  }
  return std::move(*fileOrErr);
}

/// --batch, when given, is within [1, kMaxBatch]; prints the error if not.
bool checkBatchFlag() {
  if (!batchSize.getNumOccurrences() ||
      (batchSize >= 1 && batchSize <= kMaxBatch))
    return true;
  llvm::WithColor::error(llvm::errs(), "cairn")
      << "--batch must be between 1 and " << kMaxBatch << " but got "
      << batchSize << "\n";
  return false;
}

/// --memory-report, when given, names a format; prints the error if not.
bool checkMemoryReportFlag() {
  if (!memoryReportFile.getNumOccurrences() || codegen::getReportFormat(memoryReportFile))
    return true;
  llvm::WithColor::error(llvm::errs(), "cairn")
      << codegen::formatReportPathError(memoryReportFile) << "\n";
  return false;
}

/// Prints the independent verifier's verdict on the plan the pipeline made
/// (cairn-verify-arena has checked it already; --verify-plan shows it).
void printPlanVerdict(const KernelGraph &graph, llvm::raw_ostream &os) {
  ArenaVerdict verdict = verifyArena(graph);
  if (graph.devices > 1)
    os << "device " << graph.device << ": ";
  os << "plan verified: " << verdict.buffers << " buffers inside the "
     << graph.arenaBytes << "-byte arena, " << kArenaAlignment
     << "-byte aligned, no two live at once share a byte\n";
}

/// The reports' view of `plans`, in device order.
std::vector<codegen::DevicePlan>
getDevicePlans(const std::vector<ArenaLiveness> &plans) {
  std::vector<codegen::DevicePlan> devices;
  for (const ArenaLiveness &plan : plans)
    devices.push_back({&plan.getProgramGraph().graph, &plan.getPlan()});
  return devices;
}

/// Writes the memory report to --memory-report; prints the error if it
/// cannot.
llvm::LogicalResult
writeMemoryReport(llvm::ArrayRef<codegen::DevicePlan> devices) {
  std::string error;
  if (llvm::succeeded(
          codegen::writePlanReportFile(devices, memoryReportFile, error)))
    return llvm::success();
  llvm::WithColor::error(llvm::errs(), "cairn") << error << "\n";
  return llvm::failure();
}

/// Whether the program is for CUDA: --target cuda, or --emit=cuda.
bool isCudaTarget() {
  return targetName == "cuda" || (buildCommand && emitKind == EmitKind::Cuda);
}

/// Checks --precision: f32, bf16 or f16.
bool checkPrecision() {
  if (!precisionName.getNumOccurrences())
    return true;
  auto fail = [](const llvm::Twine &message) {
    llvm::WithColor::error(llvm::errs(), "cairn") << message << "\n";
    return false;
  };
  if (precisionName != "f32" && precisionName != "bf16" &&
      precisionName != "f16")
    return fail("--precision expects f32, bf16 or f16, got '" + precisionName +
                "'");
  return true;
}

/// The largest arena of the module's programs (one per device).
int64_t getLargestArena(mlir::ModuleOp module) {
  int64_t largest = 0;
  for (ProgramOp program : module.getOps<ProgramOp>())
    largest = std::max(largest, int64_t(program.getArenaBytes().value_or(0)));
  return largest;
}

/// --memory-budget in bytes (0: none), read once the flags are parsed.
int64_t memoryBudget = 0;
/// --device-memory in bytes (0: none).
int64_t deviceMemory = 0;
/// --bucket in bytes.
int64_t bucketBytes = 25 << 20;

/// Parses --devices and --device-memory; false after the message.
bool readDevices() {
  if (microBatchesFlag < 1 ||
      (microBatchesFlag > 1 && fitSize.getNumOccurrences())) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << (microBatchesFlag < 1
                ? "--micro-batches expects a number >= 1\n"
                : "--fit searches batch sizes; it takes no --micro-batches\n");
    return false;
  }
  if (pipelineFlag != "1f1b" && pipelineFlag != "gpipe") {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--pipeline expects 1f1b or gpipe, got '" << pipelineFlag << "'\n";
    return false;
  }
  if (replicasFlag < 1 || (replicasFlag > 1 && fitSize.getNumOccurrences())) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << (replicasFlag < 1
                ? "--replicas expects a number >= 1\n"
                : "--fit searches batch sizes; it takes no --replicas\n");
    return false;
  }
  if (syncBatchNormFlag && replicasFlag < 2) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--sync-batchnorm shares batch norm's statistics between "
           "data-parallel replicas; it needs --replicas R (R >= 2)\n";
    return false;
  }
  if (replicasFlag > 1 && devicesFlag > 1) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--replicas replicates a model on one device; data parallelism "
           "across --devices stages is not supported yet\n";
    return false;
  }
  {
    std::optional<int64_t> bytes = parseByteSize(bucketSize);
    if (!bytes || *bytes <= 0) {
      llvm::WithColor::error(llvm::errs(), "cairn")
          << "--bucket expects a size such as 25MiB, 1MB or 4096 (bytes), "
             "got '"
          << bucketSize << "'\n";
      return false;
    }
    bucketBytes = *bytes;
  }
  if (devicesFlag.getNumOccurrences() && devicesFlag < 1) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--devices expects a number of devices >= 1\n";
    return false;
  }
  if (!deviceMemorySize.getNumOccurrences())
    return true;
  if (fitSize.getNumOccurrences()) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--fit SIZE is each device's memory; it takes no --device-memory\n";
    return false;
  }
  std::optional<int64_t> bytes = parseByteSize(deviceMemorySize);
  if (!bytes || *bytes <= 0) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--device-memory expects a size such as 16GiB, 512MiB, 8GB or "
           "1000000 (bytes), got '"
        << deviceMemorySize << "'\n";
    return false;
  }
  deviceMemory = *bytes;
  return true;
}

/// With --device-memory: whether every device's arena fits it; if not, says
/// what each device needs.
bool fitsDeviceMemory(mlir::ModuleOp module) {
  if (deviceMemory <= 0 || getLargestArena(module) <= deviceMemory)
    return true;
  llvm::raw_ostream &error = llvm::WithColor::error(llvm::errs(), "cairn");
  error << "the model does not fit devices of " << formatByteSize(deviceMemory)
        << " (" << deviceMemory << " bytes):";
  for (ProgramOp program : module.getOps<ProgramOp>()) {
    int64_t arena = program.getArenaBytes().value_or(0);
    error << "\n  device " << program.getDevice().value_or(0) << " needs "
          << formatByteSize(arena) << " (" << arena << " bytes)"
          << (arena > deviceMemory ? ", too much" : "");
  }
  error << "\n";
  return false;
}

/// Parses --memory-budget; false (after the message) when it is no size or
/// is asked for with a flag it cannot go with.
bool readMemoryBudget() {
  if (!memoryBudgetSize.getNumOccurrences())
    return true;
  std::optional<int64_t> bytes = parseByteSize(memoryBudgetSize);
  if (!bytes) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--memory-budget expects a size such as 16GiB, 512MiB, 8GB or "
           "1000000 (bytes), got '"
        << memoryBudgetSize << "'\n";
    return false;
  }
  if (noRecompute) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--memory-budget recomputes values, which --no-recompute forbids\n";
    return false;
  }
  if (fitSize.getNumOccurrences()) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--fit SIZE searches the batch size with and without recomputation "
           "to fit SIZE; it takes no --memory-budget\n";
    return false;
  }
  memoryBudget = *bytes;
  return true;
}

/// --kernel-times prices the choice --memory-budget makes; false (after the
/// message) without one.
bool readKernelTimes() {
  if (!kernelTimesFile.getNumOccurrences() || memoryBudget > 0)
    return true;
  if (fitSize.getNumOccurrences()) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--kernel-times measured one batch size; --fit plans many\n";
    return false;
  }
  llvm::WithColor::error(llvm::errs(), "cairn")
      << "--kernel-times prices what --memory-budget recomputes; give "
         "--memory-budget SIZE with it\n";
  return false;
}

/// With --memory-budget: whether the planned arena fits it; if not, says so
/// with the smallest arena recomputation reached (the plan's).
bool fitsMemoryBudget(mlir::ModuleOp module) {
  if (memoryBudget <= 0)
    return true;
  int64_t arena = getLargestArena(module);
  if (arena <= memoryBudget)
    return true;
  llvm::WithColor::error(llvm::errs(), "cairn")
      << "no choice of values to recompute fits the memory budget of "
      << formatByteSize(memoryBudget) << " (" << memoryBudget
      << " bytes): the smallest arena recomputation reaches is "
      << formatByteSize(arena) << " (" << arena << " bytes)\n";
  return false;
}

/// The training pipeline as the flags ask for it, up to `stage`.
PipelineOptions getPipelineOptions(PipelineStage stage, double planSeconds) {
  PipelineOptions options;
  options.target = isCudaTarget() ? "cuda" : "cpu";
  options.precision = precisionName;
  options.lossScaling = lossScalingFlag;
  options.reuse = !noReuse;
  options.reorder = !noReorder;
  options.fuse = !noFuse;
  options.recompute = !noRecompute;
  options.memoryBudget = memoryBudget;
  options.devices = devicesFlag;
  options.deviceMemory = deviceMemory;
  options.microBatches = microBatchesFlag;
  options.pipeline = pipelineFlag;
  options.replicas = replicasFlag;
  options.bucketBytes = bucketBytes;
  options.syncBatchNorm = syncBatchNormFlag;
  options.kernelTimes = kernelTimesFile;
  options.planSeconds = planSeconds;
  options.stopAfter = stage;
  if (planCommand && planStep == PlanStep::Train)
    options.step = "train_step";
  else if (planCommand && planStep == PlanStep::Forward)
    options.step = "forward";
  return options;
}

/// The frontend's module of one model buffer (at `batch`, 0: the model's
/// own); null after an error, reported through the context's handler.
mlir::OwningOpRef<mlir::ModuleOp> elaborateModel(llvm::StringRef source,
                                                 llvm::StringRef filename,
                                                 mlir::MLIRContext &context,
                                                 long long batch) {
  DiagnosticReporter diag(&context, filename);
  ElaborateOptions elaborate;
  if (batch > 0)
    elaborate.batch = batch;
  return compileModelSource(source, diag, elaborate);
}

/// Elaborates the model (at `batch`, 0: the model's own) and runs the
/// training pipeline; null after an error, which went to the context's
/// handler.
mlir::OwningOpRef<mlir::ModuleOp>
compileModel(llvm::StringRef source, llvm::StringRef filename,
             mlir::MLIRContext &context, long long batch,
             const PipelineOptions &options, PlanTimer *timer = nullptr) {
  // Micro-batches and replicas: the model is lowered at the size of one
  // replica's micro-batch.
  if (int64_t parts = options.microBatches * options.replicas; parts > 1) {
    long long whole = batch;
    if (whole <= 0) {
      mlir::OwningOpRef<mlir::ModuleOp> probe =
          elaborateModel(source, filename, context, 0);
      if (!probe)
        return nullptr;
      auto attr = (*probe)->getAttrOfType<mlir::IntegerAttr>("cairn.batch");
      whole = attr ? attr.getInt() : 0;
    }
    if (whole <= 0 || whole % parts != 0) {
      llvm::raw_ostream &error = llvm::WithColor::error(llvm::errs(), "cairn");
      if (options.replicas > 1 && options.microBatches > 1)
        error << "--replicas " << options.replicas << " times --micro-batches "
              << options.microBatches << " (" << parts << ")";
      else if (options.replicas > 1)
        error << "--replicas " << options.replicas;
      else
        error << "--micro-batches " << options.microBatches;
      error << " must divide the batch size (" << whole << ")\n";
      return nullptr;
    }
    batch = whole / parts;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module =
      elaborateModel(source, filename, context, batch);
  if (!module)
    return nullptr;
  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
  std::string error;
  if (llvm::failed(buildTrainingPipeline(pm, options, &error))) {
    llvm::WithColor::error(llvm::errs(), "cairn") << error << "\n";
    return nullptr;
  }
  if (timer)
    addPlanTimer(pm, *timer);
  if (llvm::failed(pm.run(*module)))
    return nullptr;
  return module;
}

/// The planned programs of `module` (one per device) and the reports' view
/// of each plan, once --verify-plan's verdicts went to `verdictOs` and
/// --memory-report's file is written; empty after an error.
std::vector<ArenaLiveness> readPlans(mlir::ModuleOp module,
                                     const PlanTimer &timer,
                                     llvm::raw_ostream &verdictOs) {
  std::vector<ArenaLiveness> plans;
  for (ProgramOp program : module.getOps<ProgramOp>()) {
    plans.emplace_back(program);
    if (!plans.back().isValid())
      return {};
    plans.back().setPlanningSeconds(timer.seconds);
    if (verifyPlanFlag)
      printPlanVerdict(plans.back().getProgramGraph().graph, verdictOs);
  }
  if (!memoryReportFile.empty() &&
      llvm::failed(writeMemoryReport(getDevicePlans(plans))))
    return {};
  return plans;
}

/// --batch, or 0 for the model's own.
long long getBatchFlag() {
  return batchSize.getNumOccurrences() ? batchSize.getValue() : 0;
}

/// Compiles one model buffer and does what the subcommand asks; diagnostics
/// go through whatever handler the caller installed on `context`. Building
/// an executable leaves its C++ in `os` and the number of devices it runs on
/// in `devices`. A plan over --memory-budget fails with `overBudget` set
/// (exit code 2).
llvm::LogicalResult processModel(llvm::StringRef source,
                                 llvm::StringRef filename,
                                 mlir::MLIRContext &context,
                                 llvm::raw_ostream &os, bool &overBudget,
                                 int64_t &devices) {
  long long batch = getBatchFlag();
  auto printModule = [&](mlir::ModuleOp module) {
    mlir::OpPrintingFlags flags;
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
    module->print(os, flags);
    os << "\n";
    return llvm::success();
  };
  PipelineStage stage = emitKind == EmitKind::MLIR
                            ? *parsePipelineStage(stopAfter)
                        : emitKind == EmitKind::TrainMLIR ? PipelineStage::Autodiff
                                                          : PipelineStage::Verify;
  if (checkCommand || stage == PipelineStage::Elaborate) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        elaborateModel(source, filename, context, batch);
    if (!module)
      return llvm::failure();
    if (!checkCommand)
      return printModule(*module);
    std::optional<ModelSummary> summary = summarizeModel(*module);
    if (!summary)
      return llvm::failure();
    if (jsonOutput)
      printSummaryJson(*summary, os);
    else
      printSummaryText(*summary, os);
    return llvm::success();
  }
  PlanTimer timer;
  PipelineOptions options = getPipelineOptions(stage, kDefaultPlanSeconds);
  // A program to run (an executable, or its C++): what the runtime feeds.
  options.executable = buildCommand && emitKind != EmitKind::MLIR &&
                       emitKind != EmitKind::TrainMLIR;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      compileModel(source, filename, context, batch, options, &timer);
  if (!module)
    return llvm::failure();
  if (emitKind == EmitKind::MLIR || emitKind == EmitKind::TrainMLIR)
    return printModule(*module);
  if (!fitsMemoryBudget(*module) || !fitsDeviceMemory(*module)) {
    overBudget = true;
    return llvm::failure();
  }
  std::vector<ArenaLiveness> plans = readPlans(*module, timer, llvm::errs());
  if (plans.empty())
    return llvm::failure();
  std::vector<const ProgramGraph *> programs;
  for (const ArenaLiveness &plan : plans)
    programs.push_back(&plan.getProgramGraph());
  devices = programs.size();
  if (isCudaTarget()) {
    codegen::emitCudaProgram(programs, source, os);
    return llvm::success();
  }
  codegen::emitCpuProgram(programs, source, os);
  return llvm::success();
}

/// Checks --target against --emit, and that a CUDA executable can be
/// built; prints the error if not.
bool checkTarget() {
  if (targetName != "cpu" && targetName != "cuda") {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "unknown --target '" << targetName << "'; expected cpu or cuda\n";
    return false;
  }
  if (!buildCommand)
    return true;
  if (emitKind == EmitKind::Cpp && targetName == "cuda") {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--emit=cpp prints the CPU program; the --target cuda program is "
           "printed by --emit=cuda\n";
    return false;
  }
  if (emitKind == EmitKind::Cuda && targetName.getNumOccurrences() &&
      targetName == "cpu") {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--emit=cuda prints the CUDA program; it does not go with "
           "--target cpu\n";
    return false;
  }
  if (emitKind == EmitKind::Executable && targetName == "cuda" &&
      !codegen::isCudaBackendBuilt()) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--target cuda: this cairn was built without the CUDA backend; "
           "configure Cairn with -DCAIRN_ENABLE_CUDA=ON (it needs nvcc) to "
           "build CUDA executables (--emit=cuda prints the program without "
           "it)\n";
    return false;
  }
  return true;
}

/// `cairn plan MODEL --fit SIZE` (passes/BatchFit.h): exit code 0 when the
/// model fits at its batch size, 2 when it does not.
int runFit(llvm::StringRef source, llvm::StringRef filename,
           mlir::MLIRContext &context, int64_t budget) {
  // The probes plan with a short exact-search budget; the model's own batch
  // with the full one.
  constexpr double kProbeSeconds = 0.1;
  // A probe plans one batch, recomputing under `memoryBudget` bytes (0:
  // only what the model's regions ask).
  auto probeWith = [&](int64_t memoryBudget) {
    return [&, memoryBudget](int64_t batch,
                             bool first) -> std::optional<PlannedBatch> {
      PipelineOptions options = getPipelineOptions(
          PipelineStage::Verify, first ? timeLimit.getValue() : kProbeSeconds);
      options.memoryBudget = memoryBudget;
      // Split across devices so that each fits the size, if a split does.
      if (options.devices > 1)
        options.deviceMemory = budget;
      // Whether a batch fits is the greedy searches' answer (with the
      // square-root family where they fall short): the rest only lowers the
      // extra time of a choice that fits.
      options.recomputeLowerCost = false;
      mlir::OwningOpRef<mlir::ModuleOp> module =
          compileModel(source, filename, context, batch, options);
      if (!module)
        return std::nullopt;
      ProgramOp program = getProgram(*module);
      return PlannedBatch{program.getBatch(), getLargestArena(*module)};
    };
  };
  std::optional<BatchFit> fit =
      findLargestBatch(getBatchFlag(), budget, kMaxBatch, probeWith(0));
  if (!fit)
    return 1;
  printBatchFit(*fit, filename, kMaxBatch, llvm::outs());
  if (noRecompute)
    return fit->fits ? 0 : 2;
  // Again with recomputation chosen to fit the size at each batch: its
  // probes plan the smallest arena recomputation reaches there.
  std::optional<BatchFit> recomputing =
      findLargestBatch(getBatchFlag(), budget, kMaxBatch, probeWith(budget));
  if (!recomputing)
    return 1;
  llvm::outs() << "with recomputation (as --memory-budget " << fitSize
               << (devicesFlag > 1 ? " --device-memory " + fitSize : "")
               << " chooses):\n";
  printBatchFit(*recomputing, filename, kMaxBatch, llvm::outs());
  return fit->fits || recomputing->fits ? 0 : 2;
}

/// `cairn plan MODEL`: the memory plan without building; the text report
/// on stdout, --memory-report to a file, or the --fit answer.
int runPlanModel() {
  std::optional<int64_t> budget;
  if (fitSize.getNumOccurrences()) {
    budget = parseByteSize(fitSize);
    if (!budget) {
      llvm::WithColor::error(llvm::errs(), "cairn")
          << "--fit expects a size such as 16GiB, 512MiB, 8GB or 1000000 "
             "(bytes), got '"
          << fitSize << "'\n";
      return 1;
    }
  }
  std::unique_ptr<llvm::MemoryBuffer> file = readModelFile(planModelFile);
  if (!file)
    return 1;
  llvm::SourceMgr sourceMgr;
  llvm::StringRef source = file->getBuffer();
  std::string name = file->getBufferIdentifier().str();
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  context.printStackTraceOnDiagnostic(false);
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);

  if (budget)
    return runFit(source, name, context, *budget);

  PlanTimer timer;
  mlir::OwningOpRef<mlir::ModuleOp> module = compileModel(
      source, name, context, getBatchFlag(),
      getPipelineOptions(PipelineStage::Verify, timeLimit), &timer);
  if (!module)
    return 1;
  if (!fitsMemoryBudget(*module) || !fitsDeviceMemory(*module))
    return 2;
  std::vector<ArenaLiveness> plans = readPlans(*module, timer, llvm::outs());
  if (plans.empty())
    return 1;
  codegen::printPlanReportText(getDevicePlans(plans), llvm::outs());
  return 0;
}

/// `cairn plan`: reads the buffers, plans them, verifies the plan with the
/// independent checker and prints the arena size next to the lower bound
/// (and, with --capacity, whether it fits).
int runPlan() {
  // Sizes add up to at most 2^62 (parseBufferCsv), so no arena is larger.
  constexpr long long kMaxPlanCapacity = 1ll << 62;
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
  bool fixedCapacity = planCapacity.getNumOccurrences() > 0;
  if (fixedCapacity) {
    if (planCapacity < 1 || planCapacity > kMaxPlanCapacity) {
      llvm::WithColor::error(llvm::errs(), "cairn")
          << "--capacity must be between 1 and " << kMaxPlanCapacity
          << " but got " << planCapacity << "\n";
      return 1;
    }
    options.capacity = planCapacity;
  }
  IntervalPlan plan = planIntervals(buffers, options);
  PlanVerdict verdict = verifyPlan(buffers, plan.offsets, plan.arenaSize);
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
  llvm::outs() << formatPlanSummary(
      buffers, plan,
      fixedCapacity ? std::optional<int64_t>(planCapacity) : std::nullopt);
  return 0;
}

int run() {
  bool buildExecutable = buildCommand && emitKind == EmitKind::Executable;
  if (buildCommand && !checkTarget())
    return 1;
  if (buildCommand && (!readMemoryBudget() || !readKernelTimes() ||
                       !checkPrecision() || !readDevices()))
    return 1;
  if (buildExecutable && (outputFile == "-" || outputFile.empty())) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "expected -o EXE: the executable to build (or --emit=mlir, "
           "train-mlir, cpp or cuda to print)\n";
    return 1;
  }
  if (!checkMemoryReportFlag())
    return 1;
  if (memoryReportFile.getNumOccurrences() && splitInputFile) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--memory-report takes one model; it does not go with "
           "--split-input-file\n";
    return 1;
  }
  if (buildExecutable && splitInputFile) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--split-input-file works only with --emit\n";
    return 1;
  }
  if (!checkBatchFlag())
    return 1;
  if (stopAfter.getNumOccurrences() && emitKind != EmitKind::MLIR) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "--stop-after goes with --emit=mlir (the IR after that stage)\n";
    return 1;
  }
  if (!parsePipelineStage(stopAfter)) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "unknown --stop-after stage '" << stopAfter << "'; expected one of "
        << listPipelineStages() << "\n";
    return 1;
  }

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input = readModelFile(inputFile);
  if (!input)
    return 1;

  // Write to a temporary file that is renamed into place only on success,
  // so a failed build leaves no partial output behind. An executable's C++
  // (or CUDA C++) goes to a string first; compileExecutable or
  // compileCudaExecutable renames the executable.
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

  bool overBudget = false; // a plan over --memory-budget: exit code 2
  int64_t devices = 1;     // a partitioned model links MPI
  auto processBuffer = [&](std::unique_ptr<llvm::MemoryBuffer> buffer,
                           llvm::raw_ostream &os) -> llvm::LogicalResult {
    llvm::SourceMgr sourceMgr;
    llvm::StringRef source = buffer->getBuffer();
    std::string name = buffer->getBufferIdentifier().str();
    sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    if (verifyDiagnostics) {
      mlir::SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &context);
      (void)processModel(source, name, context, os, overBudget, devices);
      return handler.verify();
    }
    mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    return processModel(source, name, context, os, overBudget, devices);
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
    return overBudget ? 2 : 1;
  // With --verify-diagnostics the expected errors were the point.
  if (buildExecutable && !verifyDiagnostics) {
    codegen::HostCompileOptions options;
    if (const char *compiler = std::getenv("CAIRN_CXX"))
      options.compiler = compiler;
    if (const char *nvcc = std::getenv("CAIRN_NVCC"))
      options.cudaCompiler = nvcc;
    options.keepTemps = keepTemps;
    options.linkMpi = devices > 1 || replicasFlag > 1;
    llvm::LogicalResult built =
        isCudaTarget() ? codegen::compileCudaExecutable(generatedStream.str(),
                                                        outputFile, options)
                       : codegen::compileExecutable(generatedStream.str(),
                                                    outputFile, options);
    return llvm::succeeded(built) ? 0 : 1;
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
    // What `build --target` can make here (scripts ask this line).
    os << "targets: cpu"
       << (codegen::isCudaBackendBuilt()
               ? " cuda"
               : " (no cuda: built without CAIRN_ENABLE_CUDA)")
       << "\n";
  });
  cl::HideUnrelatedOptions(cairnCategory);
  cl::HideUnrelatedOptions(cairnCategory, checkCommand);
  cl::HideUnrelatedOptions(cairnCategory, buildCommand);
  cl::HideUnrelatedOptions(cairnCategory, planCommand);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Cairn: an ahead-of-time compiler for neural-network training.\n\n"
      "  cairn check MODEL [--batch N] [--json]\n"
      "  cairn build MODEL -o EXE [--batch N] [--target cpu|cuda] "
      "[--keep-temps]\n"
      "             [--memory-report FILE.json|txt|html] [--no-reuse] "
      "[--no-reorder]\n"
      "             [--no-fuse] [--no-recompute] [--memory-budget SIZE] "
      "[--verify-plan]\n"
      "             [--precision f32|bf16|f16] [--loss-scaling] [--devices N "
      "[--device-memory SIZE]]\n"
      "             [--micro-batches M [--pipeline 1f1b|gpipe]]\n"
      "             [--replicas R [--bucket SIZE] [--sync-batchnorm]]\n"
      "  cairn build MODEL --emit=mlir|train-mlir|cpp|cuda [--stop-after "
      "STAGE]\n"
      "             [--batch N] [-o FILE] [--target cpu|cuda] [--no-reuse] "
      "[--no-reorder] [--no-fuse]\n"
      "             [--no-recompute] [--memory-budget SIZE] [--precision "
      "f32|bf16|f16] [--loss-scaling] [--devices N]\n"
      "  cairn plan MODEL [--batch N] [--target cpu|cuda] [--step "
      "both|train|forward]\n"
      "             [--fit SIZE] [--memory-report FILE.json|txt|html] "
      "[--no-reuse]\n"
      "             [--no-reorder] [--no-fuse] [--no-recompute] "
      "[--memory-budget SIZE]\n"
      "             [--verify-plan] [--time-limit SECONDS] [--precision "
      "f32|bf16|f16] [--loss-scaling]\n"
      "             [--devices N [--device-memory SIZE]] [--micro-batches M]\n"
      "             [--replicas R [--bucket SIZE] [--sync-batchnorm]]\n"
      "  cairn plan --buffers FILE.csv [-o OUT.csv] [--capacity BYTES] "
      "[--time-limit SECONDS]\n\n"
      "Run `cairn check --help`, `cairn build --help` or `cairn plan --help` "
      "for a command's options.\n");
  if (planCommand) {
    bool haveModel = planModelFile.getNumOccurrences() > 0;
    bool haveBuffers = buffersFile.getNumOccurrences() > 0;
    if (haveModel == haveBuffers) {
      llvm::WithColor::error(llvm::errs(), "cairn")
          << (haveModel ? "plan takes a MODEL or --buffers FILE.csv, not both\n"
                        : "plan expects a MODEL file or --buffers FILE.csv\n");
      return 1;
    }
    if (!(timeLimit >= 0 && timeLimit <= kMaxTimeLimitSeconds)) {
      llvm::WithColor::error(llvm::errs(), "cairn")
          << "--time-limit must be between 0 and "
          << llvm::format("%g", kMaxTimeLimitSeconds) << " but got "
          << llvm::format("%g", timeLimit.getValue()) << "\n";
      return 1;
    }
    if (haveBuffers &&
        (memoryReportFile.getNumOccurrences() || fitSize.getNumOccurrences() ||
         noReuse || planStep.getNumOccurrences() ||
         memoryBudgetSize.getNumOccurrences())) {
      llvm::WithColor::error(llvm::errs(), "cairn")
          << "--memory-report, --fit, --memory-budget, --no-reuse and --step "
             "plan a MODEL; they do not apply to --buffers\n";
      return 1;
    }
    if (haveBuffers && targetName.getNumOccurrences()) {
      llvm::WithColor::error(llvm::errs(), "cairn")
          << "--target chooses the program of a MODEL to plan; it does not "
             "apply to --buffers\n";
      return 1;
    }
    if (haveModel && !checkTarget())
      return 1;
    if (haveModel && planCapacity.getNumOccurrences()) {
      llvm::WithColor::error(llvm::errs(), "cairn")
          << "--capacity applies to --buffers; for a MODEL use --fit SIZE\n";
      return 1;
    }
    if (haveModel && planOutputFile.getNumOccurrences()) {
      llvm::WithColor::error(llvm::errs(), "cairn")
          << "-o writes the plan of --buffers; for a MODEL use "
             "--memory-report FILE\n";
      return 1;
    }
    if (!checkMemoryReportFlag() || (haveModel && !checkBatchFlag()) ||
        !readMemoryBudget() || !readKernelTimes() || !checkPrecision() ||
        !readDevices())
      return 1;
    return haveModel ? runPlanModel() : runPlan();
  }
  if (!checkCommand && !buildCommand) {
    llvm::WithColor::error(llvm::errs(), "cairn")
        << "expected a command: check, build or plan (see cairn --help)\n";
    return 1;
  }
  return run();
}
