//===- Pipeline.h - The training pipeline, assembled in one place -*- C++
//-*-===//
//
// From the frontend's module (@forward, @loss) to a planned, verified
// cairn.program, each stage a pass with its own lit tests:
//
//   stage      pass                          leaves
//   autodiff   cairn-autodiff                @train_step beside @forward
//              cairn-check-scaled-gradients  (loss scaling) found_inf of the
//                                            half gradients, each unscaled
//                                            at its update
//   lower      cairn-lower-to-kernels        a cairn.program: buffers and
//              (cairn-extract-step)          kernels, no functions
//   recompute  cairn-choose-recomputation    (--memory-budget) what else to
//                                            compute again, the plan in the
//                                            loop
//              cairn-recompute-checkpoints   checkpoint regions' and chosen
//                                            values computed again for the
//                                            backward
//   fuse       cairn-fuse-elementwise        element-wise chains as one
//                                            kernel, relu in its linear
//   schedule   cairn-schedule-for-memory     the memory-aware kernel order
//              cairn-all-reduce-gradients    (--replicas) gradients summed
//                                            across replicas in buckets
//              cairn-sync-batch-norm         (--sync-batchnorm) batch norm
//                                            on every replica's examples
//              cairn-group-updates (CUDA)    runs of adjacent updates marked
//                                            as one launch
//   in-place   cairn-write-in-place          in_place buffers
//   plan       cairn-plan-arena              offsets, arena_bytes
//   verify     cairn-verify-arena            the same, checked
//
// `elaborate` names the frontend's output (no pass). The driver runs this
// pipeline once; `cairn build --stop-after=STAGE --emit=mlir` prints the IR
// after any stage, and cairn-opt runs it as `cairn-training-pipeline`.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_PIPELINE_H
#define CAIRN_PASSES_PIPELINE_H

#include "ir/CairnProgramOps.h"

#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace cairn {

enum class PipelineStage {
  Elaborate,
  Autodiff,
  Lower,
  Recompute,
  Partition,
  Fuse,
  Schedule,
  InPlace,
  Plan,
  Verify
};

/// "elaborate", "autodiff", "lower", "recompute", "partition", "fuse",
/// "schedule", "in-place", "plan", "verify".
llvm::StringRef getPipelineStageName(PipelineStage stage);
std::optional<PipelineStage> parsePipelineStage(llvm::StringRef name);
/// The stage names in order, comma-separated (for messages and --help).
std::string listPipelineStages();

/// What the pipeline is asked for: the driver's flags, cairn-opt's
/// `cairn-training-pipeline{...}` options.
struct PipelineOptions {
  /// cpu or cuda: what the plan holds (CUDA's GEMM workspaces, the
  /// dropouts the CPU's chains draw).
  std::string target = "cpu";
  /// Reuse the bytes of dead buffers (false: no reordering, nothing in
  /// place, every buffer its own bytes: the reference layout).
  bool reuse = true;
  /// Run the kernels in the memory-aware order where that lowers the peak.
  bool reorder = true;
  /// Recompute the values of `checkpoint { }` regions in the backward part
  /// (false: keep them, the reference).
  bool recompute = true;
  /// The arena's budget in bytes (0: none): cairn-choose-recomputation
  /// picks more values to compute again until the plan fits it.
  int64_t memoryBudget = 0;
  /// A kernel profile whose measured times price recomputation (empty: the
  /// roofline model).
  std::string kernelTimes;
  /// cairn-choose-recomputation's searches for a cheaper choice once one
  /// fits (false in --fit's probes: whether a batch fits does not depend
  /// on them).
  bool recomputeLowerCost = true;
  /// cairn-choose-half-weight-copies (false inside the evaluations of
  /// the passes that plan in the loop).
  bool chooseHalfWeightCopies = true;
  /// Fuse element-wise chains before planning.
  bool fuse = true;
  /// Place a model without `on device` regions on this many devices (0:
  /// its regions decide), cairn-place-devices.
  int64_t devices = 0;
  /// Each device's memory in bytes (0: none): with `devices`, the split is
  /// chosen with the plan in the loop so that every device's arena fits.
  int64_t deviceMemory = 0;
  /// Each step runs as this many micro-batches of the batch the model was
  /// lowered at (cairn-split-micro-batches; 1: as one batch).
  int64_t microBatches = 1;
  /// With micro-batches across devices: "1f1b" or "gpipe".
  std::string pipeline = "1f1b";
  /// Data-parallel replicas whose gradients each step sums
  /// (cairn-all-reduce-gradients; 1: none), in buckets of this many bytes.
  int64_t replicas = 1;
  int64_t bucketBytes = 25 << 20;
  /// With replicas: batch norm on every replica's examples' statistics
  /// (cairn-sync-batch-norm).
  bool syncBatchNorm = false;
  /// Split a model placed on several devices into a program per device
  /// (false inside the evaluations of the passes that plan in the loop,
  /// which plan the whole step).
  bool partition = true;
  /// The exact plan search's budget.
  double planSeconds = 1.0;
  /// The model's precision for cairn-autocast: f16, bf16, f32, or empty for
  /// the module's own (float32 without one).
  std::string precision;
  /// Give the training step a loss scaler whatever its precision (an f16
  /// step always has one): cairn-autocast's loss-scaling.
  bool lossScaling = false;
  /// A program to run (`cairn build`): cairn-check-executable first.
  bool executable = false;
  /// both (every step of the program), or train_step or forward alone (a
  /// plan for reports).
  std::string step = "both";
  /// The last stage to run.
  PipelineStage stopAfter = PipelineStage::Verify;
};

/// Adds the stages up to options.stopAfter to `pm` (anchored on
/// builtin.module). Fails, with a message in `error`, on an unknown target
/// or step.
llvm::LogicalResult buildTrainingPipeline(mlir::OpPassManager &pm,
                                          const PipelineOptions &options,
                                          std::string *error = nullptr);

/// Adds the lowering stage (half storage, lowering to kernels,
/// micro-batches, the step to keep) to `pm`: what buildTrainingPipeline
/// runs after autodiff, and cairn-check-scaled-gradients on its candidates.
void addLoweringStages(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Adds the stages after the lowering (recompute to verify, up to
/// options.stopAfter) to `pm`: what buildTrainingPipeline runs on a lowered
/// program, and what cairn-choose-recomputation runs on each candidate.
void addStagesAfterLowering(mlir::OpPassManager &pm,
                            const PipelineOptions &options);
/// What the passes that plan in the loop evaluate: a copy of `module`, whose
/// program `mark` changes (marks kernels), run through the stages after the
/// lowering up to the plan as the pipeline will run them (`target`, `fuse`,
/// `reuse`, `reorder`, `planSeconds` from the caller; no choice of half weight
/// copies in the loop). Null, after a diagnostic naming `pass`, when a pass
/// fails.
mlir::OwningOpRef<mlir::ModuleOp>
planMarkedCopy(mlir::ModuleOp module, llvm::StringRef pass,
               const PipelineOptions &options,
               llvm::function_ref<void(ProgramOp)> mark);

/// The program of `module` with the largest arena: of a model split across
/// devices, the device whose memory a budget binds; null without one.
ProgramOp getLargestProgram(mlir::ModuleOp module);

/// Registers `cairn-training-pipeline` for cairn-opt.
void registerTrainingPipeline();

/// Seconds the passes that decide the plan (schedule, in place, plan) took
/// when `pm` ran: the report's planning time.
struct PlanTimer {
  double seconds = 0;
};
void addPlanTimer(mlir::PassManager &pm, PlanTimer &timer);

} // namespace cairn

#endif // CAIRN_PASSES_PIPELINE_H
