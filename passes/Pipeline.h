//===- Pipeline.h - The training pipeline, assembled in one place -*- C++
//-*-===//
//
// From the frontend's module (@forward, @loss) to a planned, verified
// cairn.program, each stage a pass with its own lit tests:
//
//   stage      pass                        takes                leaves
//   autodiff   cairn-autodiff              @forward, @loss      + @train_step
//   lower      cairn-lower-to-kernels      @train_step,         a
//   cairn.program: buffers and
//              (cairn-extract-step)        @forward             kernels, no
//              functions
//   fuse       cairn-fuse-elementwise      a program            element-wise
//   chains as one
//                                                               kernel, relu in
//                                                               its linear
//   schedule   cairn-schedule-for-memory   a program            kernels in
//   their memory-aware
//                                                               order (where
//                                                               the peak drops)
//              cairn-group-updates (CUDA)                       runs of
//              adjacent updates marked
//                                                               as one launch
//   in-place   cairn-write-in-place        a program            in_place
//   buffers plan       cairn-plan-arena            a program offsets,
//   arena_bytes verify     cairn-verify-arena          a planned program    the
//   same, checked
//
// `elaborate` names the frontend's output (no pass). The driver runs this
// pipeline once; `cairn build --stop-after=STAGE --emit=mlir` prints the IR
// after any stage, and cairn-opt runs it as `cairn-training-pipeline`.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_PIPELINE_H
#define CAIRN_PASSES_PIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace cairn {

enum class PipelineStage {
  Elaborate,
  Autodiff,
  Lower,
  Fuse,
  Schedule,
  InPlace,
  Plan,
  Verify
};

/// "elaborate", "autodiff", "lower", "fuse", "schedule", "in-place", "plan",
/// "verify".
llvm::StringRef getPipelineStageName(PipelineStage stage);
std::optional<PipelineStage> parsePipelineStage(llvm::StringRef name);
/// The stage names in order, comma-separated (for messages and --help).
std::string listPipelineStages();

/// What the pipeline is asked for: the driver's flags, cairn-opt's
/// `cairn-training-pipeline{...}` options.
struct PipelineOptions {
  /// cpu or cuda: what the plan holds (CUDA's GEMM workspaces).
  std::string target = "cpu";
  /// Reuse the bytes of dead buffers (false: no reordering, nothing in
  /// place, every buffer its own bytes: the reference layout).
  bool reuse = true;
  /// Run the kernels in the memory-aware order where that lowers the peak.
  bool reorder = true;
  /// Fuse element-wise chains before planning.
  bool fuse = true;
  /// The exact plan search's budget.
  double planSeconds = 1.0;
  /// both, or train_step or forward alone (a plan for reports).
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
