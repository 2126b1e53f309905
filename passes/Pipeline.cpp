//===- Pipeline.cpp - The training pipeline, assembled in one place -------===//

#include "passes/Pipeline.h"

#include "passes/KernelGraphIR.h"
#include "passes/Lowering.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassRegistry.h"

#include <chrono>

using namespace mlir;
using namespace cairn;

namespace {
struct StageName {
  PipelineStage stage;
  llvm::StringLiteral name;
};
constexpr StageName kStages[] = {
    {PipelineStage::Elaborate, "elaborate"},
    {PipelineStage::Autodiff, "autodiff"},
    {PipelineStage::Lower, "lower"},
    {PipelineStage::Recompute, "recompute"},
    {PipelineStage::Partition, "partition"},
    {PipelineStage::Fuse, "fuse"},
    {PipelineStage::Schedule, "schedule"},
    {PipelineStage::InPlace, "in-place"},
    {PipelineStage::Plan, "plan"},
    {PipelineStage::Verify, "verify"},
};
} // namespace

llvm::StringRef cairn::getPipelineStageName(PipelineStage stage) {
  for (const StageName &entry : kStages)
    if (entry.stage == stage)
      return entry.name;
  llvm_unreachable("unknown pipeline stage");
}

std::optional<PipelineStage> cairn::parsePipelineStage(llvm::StringRef name) {
  for (const StageName &entry : kStages)
    if (entry.name == name)
      return entry.stage;
  return std::nullopt;
}

std::string cairn::listPipelineStages() {
  std::string list;
  for (const StageName &entry : kStages)
    list += (list.empty() ? "" : ", ") + entry.name.str();
  return list;
}

namespace {
/// Plans `copy` in the loop of a pass: the stages `addStages` puts in a pass
/// manager for `rest`, up to the plan, with no executable's checks and a
/// tenth of the search time. Every program's (device's) arena.
FailureOr<std::vector<int64_t>> planInTheLoop(
    ModuleOp copy, PipelineOptions rest,
    llvm::function_ref<LogicalResult(OpPassManager &, const PipelineOptions &)>
        addStages) {
  rest.executable = false;
  rest.planSeconds /= 10;
  rest.stopAfter = PipelineStage::Plan;
  PassManager pm(copy.getContext(), ModuleOp::getOperationName());
  if (failed(addStages(pm, rest)) || failed(pm.run(copy)))
    return failure();
  std::vector<int64_t> arenas;
  for (ProgramOp program : copy.getOps<ProgramOp>())
    arenas.push_back(program.getArenaBytes().value_or(0));
  return arenas;
}

/// A copy whose ops are placed (cairn-place-devices), through the whole
/// pipeline.
FailureOr<std::vector<int64_t>> planPlacedCopy(ModuleOp copy,
                                               const PipelineOptions &options) {
  PipelineOptions rest = options;
  rest.devices = 0;
  rest.deviceMemory = 0;
  return planInTheLoop(copy, rest,
                       [](OpPassManager &pm, const PipelineOptions &rest) {
                         return buildTrainingPipeline(pm, rest, nullptr);
                       });
}

/// A copy after autodiff (cairn-check-scaled-gradients), from the lowering,
/// without a memory budget's search and the half weight copies' choice.
FailureOr<std::vector<int64_t>>
planDifferentiatedCopy(ModuleOp copy, const PipelineOptions &options) {
  PipelineOptions rest = options;
  rest.memoryBudget = 0;
  rest.chooseHalfWeightCopies = false;
  return planInTheLoop(copy, rest,
                       [](OpPassManager &pm, const PipelineOptions &rest) {
                         addLoweringStages(pm, rest);
                         addStagesAfterLowering(pm, rest);
                         return success();
                       });
}
} // namespace

LogicalResult cairn::buildTrainingPipeline(OpPassManager &pm,
                                           const PipelineOptions &options,
                                           std::string *error) {
  auto fail = [&](const llvm::Twine &message) {
    if (error)
      *error = message.str();
    return failure();
  };
  if (!getLoweringTarget(options.target))
    return fail("unknown target '" + options.target + "'; expected cpu or cuda");
  if (options.step != "both" && options.step != "train_step" &&
      options.step != "forward")
    return fail("unknown step '" + options.step +
                "'; expected both, train_step or forward");
  auto runs = [&](PipelineStage stage) { return stage <= options.stopAfter; };

  if (options.executable)
    pm.addPass(createCheckExecutablePass());
  if (runs(PipelineStage::Autodiff)) {
    PlaceDevicesPassOptions place{options.devices, options.deviceMemory};
    if (options.devices >= 2 && options.deviceMemory > 0)
      pm.addPass(createPlaceDevicesPass(place, [options](ModuleOp copy) {
        return planPlacedCopy(copy, options);
      }));
    else
      pm.addPass(createPlaceDevicesPass(place));
    pm.addPass(createAutocastPass({options.precision, options.lossScaling}));
    pm.addPass(createAutodiffPass());
    pm.addPass(createSaveInHalfPass({options.precision}));
    // Micro-batches and replicas sum float32 gradients before the check.
    // Without reuse, the reference layout: autodiff's step as it is.
    if (getLoweringTarget(options.target)->checkScaledGradients &&
        options.reuse && options.microBatches <= 1 && options.replicas <= 1)
      pm.addPass(createCheckScaledGradientsPass([options](ModuleOp copy) {
        return planDifferentiatedCopy(copy, options);
      }));
  }
  if (runs(PipelineStage::Lower))
    addLoweringStages(pm, options);
  addStagesAfterLowering(pm, options);
  return success();
}

void cairn::addLoweringStages(OpPassManager &pm,
                              const PipelineOptions &options) {
  // A target whose kernels compute in float32 stores half values only
  // (but multiplies them, where it has half GEMMs).
  if (std::optional<LoweringTarget> target = getLoweringTarget(options.target);
      target->halfStorage)
    pm.addPass(createComputeHalfInFloat32Pass(
        {target->halfProducts,
         getHalfStorageKernelsName(target->halfStorageKernels).str()}));
  pm.addPass(createLowerToKernelsPass({options.target}));
  if (options.microBatches > 1)
    pm.addPass(
        createSplitMicroBatchesPass({options.microBatches, options.pipeline}));
  if (options.step != "both")
    pm.addPass(createExtractStepPass({options.step}));
}

void cairn::addStagesAfterLowering(OpPassManager &pm,
                                   const PipelineOptions &options) {
  auto runs = [&](PipelineStage stage) { return stage <= options.stopAfter; };
  if (runs(PipelineStage::Recompute) && options.recompute) {
    // With reuse only: without it every buffer has its own bytes anyway.
    if (options.chooseHalfWeightCopies && options.reuse)
      // Two plans in the loop before the real one: a tenth of its search
      // time each, as cairn-choose-recomputation's rounds take.
      pm.addPass(createChooseHalfWeightCopiesPass(
          {options.target, options.fuse, options.reorder,
           options.planSeconds / 10, options.replicas, options.bucketBytes}));
    if (options.memoryBudget > 0)
      pm.addPass(createChooseRecomputationPass(
          {options.memoryBudget, options.target, options.fuse, options.reuse,
           options.reorder, options.planSeconds, options.kernelTimes,
           options.replicas, options.bucketBytes, options.recomputeLowerCost}));
    pm.addPass(createRecomputeCheckpointsPass());
  }
  if (runs(PipelineStage::Partition) && options.partition)
    pm.addPass(createPartitionDevicesPass());
  if (runs(PipelineStage::Fuse) && options.fuse) {
    FuseElementwisePassOptions fuse;
    fuse.dropout = getLoweringTarget(options.target)
                       .value_or(LoweringTarget())
                       .chainDropout;
    pm.addPass(createFuseElementwisePass(fuse));
  }
  // Without reuse the plan is the reference layout: the lowered order,
  // nothing in place, every buffer its own bytes.
  if (runs(PipelineStage::Schedule) && options.reuse && options.reorder)
    pm.addPass(createScheduleForMemoryPass());
  // After the schedule, which would move each bucket's start next to its
  // wait (less memory, no overlap).
  if (runs(PipelineStage::Schedule) && options.replicas > 1)
    pm.addPass(
        createAllReduceGradientsPass({options.replicas, options.bucketBytes}));
  if (runs(PipelineStage::Schedule) && options.syncBatchNorm)
    pm.addPass(createSyncBatchNormPass());
  // The order is final: CUDA launches runs of adjacent updates as one.
  if (runs(PipelineStage::Schedule) && options.target == "cuda")
    pm.addPass(createGroupUpdatesPass());
  if (runs(PipelineStage::InPlace) && options.reuse)
    pm.addPass(createWriteInPlacePass());
  if (runs(PipelineStage::Plan))
    pm.addPass(createPlanArenaPass({options.reuse, options.planSeconds}));
  // Bytes the plan leaves free at a convolution go to its library.
  if (runs(PipelineStage::Plan) && options.reuse)
    pm.addPass(createGrowWorkspacesPass());
  if (runs(PipelineStage::Verify))
    pm.addPass(createVerifyArenaPass());
}

OwningOpRef<ModuleOp>
cairn::planMarkedCopy(ModuleOp module, llvm::StringRef pass,
                      const PipelineOptions &options,
                      llvm::function_ref<void(ProgramOp)> mark) {
  OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
  ProgramOp program = getProgramFor(*copy, pass);
  if (!program)
    return nullptr;
  mark(program);
  PipelineOptions rest;
  rest.target = options.target;
  rest.fuse = options.fuse;
  rest.reuse = options.reuse;
  rest.reorder = options.reorder;
  rest.planSeconds = options.planSeconds;
  rest.chooseHalfWeightCopies = false;
  rest.replicas = options.replicas;
  rest.bucketBytes = options.bucketBytes;
  rest.stopAfter = PipelineStage::Plan;
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  addStagesAfterLowering(pm, rest);
  if (failed(pm.run(*copy)) || !getLargestProgram(*copy))
    return nullptr;
  return copy;
}

ProgramOp cairn::getLargestProgram(ModuleOp module) {
  ProgramOp largest;
  for (ProgramOp program : module.getOps<ProgramOp>())
    if (!largest || program.getArenaBytes().value_or(0) >
                        largest.getArenaBytes().value_or(0))
      largest = program;
  return largest;
}

namespace {
/// PipelineOptions as cairn-opt parses them.
struct TrainingPipelineOptions
    : public PassPipelineOptions<TrainingPipelineOptions> {
  Option<std::string> target{*this, "target", llvm::cl::desc("cpu or cuda"),
                             llvm::cl::init("cpu")};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("f16, bf16 or f32 for cairn-autocast (default: the "
                     "module's cairn.precision)"),
      llvm::cl::init("")};
  Option<bool> lossScaling{
      *this, "loss-scaling",
      llvm::cl::desc("A loss scaler in any trained model's step"),
      llvm::cl::init(false)};
  Option<bool> reuse{*this, "reuse",
                     llvm::cl::desc("Reuse the bytes of dead buffers"),
                     llvm::cl::init(true)};
  Option<bool> reorder{*this, "reorder",
                       llvm::cl::desc("The memory-aware kernel order"),
                       llvm::cl::init(true)};
  Option<bool> recompute{
      *this, "recompute",
      llvm::cl::desc("Recompute the values of checkpoint regions"),
      llvm::cl::init(true)};
  Option<int64_t> memoryBudget{
      *this, "memory-budget",
      llvm::cl::desc("The arena's budget in bytes (0: none)"),
      llvm::cl::init(0)};
  Option<std::string> kernelTimes{
      *this, "kernel-times",
      llvm::cl::desc("A kernel profile pricing recomputation (EXE train "
                     "--profile)"),
      llvm::cl::init("")};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Fuse element-wise chains"),
                    llvm::cl::init(true)};
  Option<double> planSeconds{*this, "plan-seconds",
                             llvm::cl::desc("The exact plan search's budget"),
                             llvm::cl::init(1.0)};
  Option<int64_t> devices{
      *this, "devices",
      llvm::cl::desc("Place a model without `on device` on this many devices"),
      llvm::cl::init(0)};
  Option<int64_t> replicas{
      *this, "replicas",
      llvm::cl::desc("Data-parallel replicas summing their gradients"),
      llvm::cl::init(1)};
  Option<int64_t> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("The replicas' gradient buckets, in bytes"),
      llvm::cl::init(25 << 20)};
  Option<bool> syncBatchNorm{
      *this, "sync-batchnorm",
      llvm::cl::desc("Replicas' batch norm on the whole batch's statistics"),
      llvm::cl::init(false)};
  Option<std::string> step{*this, "step",
                           llvm::cl::desc("both, train_step or forward"),
                           llvm::cl::init("both")};
  Option<std::string> stopAfter{*this, "stop-after",
                                llvm::cl::desc("The last stage to run"),
                                llvm::cl::init("verify")};
};
} // namespace

void cairn::registerTrainingPipeline() {
  // Registered by hand rather than with PassPipelineRegistration, whose
  // builder cannot fail: a bad option is an error message, not a crash.
  registerPassPipeline(
      "cairn-training-pipeline",
      "From the frontend's @forward and @loss to a planned, verified "
      "cairn.program (passes/Pipeline.h)",
      [](OpPassManager &pm, llvm::StringRef text,
         llvm::function_ref<LogicalResult(const llvm::Twine &)> error) {
        TrainingPipelineOptions parsed;
        if (failed(parsed.parseFromString(text)))
          return failure();
        std::optional<PipelineStage> stage =
            parsePipelineStage(parsed.stopAfter);
        if (!stage)
          return error("cairn-training-pipeline: unknown stage '" +
                       parsed.stopAfter + "'; expected one of " +
                       listPipelineStages());
        PipelineOptions options;
        options.target = parsed.target;
        options.precision = parsed.precision;
        options.lossScaling = parsed.lossScaling;
        options.reuse = parsed.reuse;
        options.reorder = parsed.reorder;
        options.recompute = parsed.recompute;
        options.memoryBudget = parsed.memoryBudget;
        options.kernelTimes = parsed.kernelTimes;
        options.fuse = parsed.fuse;
        options.planSeconds = parsed.planSeconds;
        options.step = parsed.step;
        options.devices = parsed.devices;
        options.replicas = parsed.replicas;
        options.bucketBytes = parsed.bucketBytes;
        options.syncBatchNorm = parsed.syncBatchNorm;
        options.stopAfter = *stage;
        std::string message;
        if (failed(buildTrainingPipeline(pm, options, &message)))
          return error("cairn-training-pipeline: " + message);
        return success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)> print) {
        print(TrainingPipelineOptions());
      });
}

namespace {
class PlanTimerInstrumentation : public PassInstrumentation {
public:
  explicit PlanTimerInstrumentation(PlanTimer &timer) : timer(timer) {}

  void runBeforePass(Pass *pass, Operation *) override {
    if (isPlanPass(pass))
      begin = std::chrono::steady_clock::now();
  }
  void runAfterPass(Pass *pass, Operation *) override {
    if (isPlanPass(pass))
      timer.seconds += std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - begin)
                           .count();
  }

private:
  static bool isPlanPass(Pass *pass) {
    llvm::StringRef name = pass->getArgument();
    return name == "cairn-schedule-for-memory" ||
           name == "cairn-write-in-place" || name == "cairn-plan-arena";
  }
  PlanTimer &timer;
  std::chrono::steady_clock::time_point begin;
};
} // namespace

void cairn::addPlanTimer(PassManager &pm, PlanTimer &timer) {
  pm.addInstrumentation(std::make_unique<PlanTimerInstrumentation>(timer));
}
