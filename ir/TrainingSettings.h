//===- TrainingSettings.h - The lr schedule and gradient clipping -*- C++
//-*-===//
//
// Two module attributes set by a model's `scheduler` and `clip_grad_norm`
// statements, beside its `cairn.optimizer`:
//
//   cairn.lr_schedule = [{name = "LinearLR", start_factor = 1.0e-01 : f64,
//                         end_factor = 1.0 : f64, total_iters = 100 : i64},
//                        {name = "CosineAnnealingLR", T_max = 900 : i64,
//                         eta_min = 0.0 : f64}]
//   cairn.clip_grad_norm = {max_norm = 1.0 : f64, norm_type = 2.0 : f64}
//   cairn.eval_loss = {kind = "cross_entropy", target = "label",
//                      label_smoothing = 0.0 : f64}
//
// Also here: how people read these settings and the optimizer's
// (describeOptimizer, describeLrScheduler, describeClipGradNorm).
//
// The schedule changes no op: it travels to the program (cairn.program's
// lr_schedule) and the runtime scales the updates' lr each step
// (runtime/LrSchedule.h). Clipping is ops: autodiff scales every gradient by
// a clip_coefficient before the updates. The eval loss, set by the frontend
// when the loss is one the runtime can compute from the forward step's output
// (runtime/LossForm.h), also travels to the program and the executable.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_IR_TRAININGSETTINGS_H
#define CAIRN_IR_TRAININGSETTINGS_H

#include "runtime/LossForm.h"
#include "runtime/LrSchedule.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace cairn {

/// The optimizer's settings as torch.optim spells the call ("SGD(lr=0.1,
/// momentum=0.9, ...)"), for people; "" for anything else.
std::string describeOptimizer(mlir::Attribute optimizer);

/// torch's name of the scheduler, which is also its enumerator's.
llvm::StringRef getLrSchedulerName(runtime::LrSchedulerKind kind);

/// "CosineAnnealingLR(T_max=100, eta_min=0)", as torch spells the call.
std::string describeLrScheduler(const runtime::LrScheduler &scheduler);

/// Why `schedule` is not one Cairn runs (empty when it is): torch's
/// argument checks, and a second scheduler only after a LinearLR warm-up.
std::string checkLrSchedule(llvm::ArrayRef<runtime::LrScheduler> schedule);

mlir::ArrayAttr
getLrScheduleAttr(mlir::MLIRContext *context,
                  llvm::ArrayRef<runtime::LrScheduler> schedule);

/// The schedule `attr` spells, checked; errors through `emitError`.
mlir::FailureOr<std::vector<runtime::LrScheduler>>
readLrSchedule(mlir::Attribute attr,
               llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// torch.nn.utils.clip_grad_norm_'s settings (norm_type may be infinity).
struct ClipGradNorm {
  double maxNorm = 0;
  double normType = 2;
};

/// Why `clip` is not valid (empty when it is).
std::string checkClipGradNorm(const ClipGradNorm &clip);

mlir::DictionaryAttr getClipGradNormAttr(mlir::MLIRContext *context,
                                         const ClipGradNorm &clip);

mlir::FailureOr<ClipGradNorm>
readClipGradNorm(mlir::Attribute attr,
                 llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// "clip_grad_norm(max_norm=1, norm_type=inf)", as the model spells it.
std::string describeClipGradNorm(const ClipGradNorm &clip);

mlir::DictionaryAttr getEvalLossAttr(mlir::MLIRContext *context,
                                     const runtime::LossForm &loss);

/// The loss form `attr` spells (its kind known, a target named).
mlir::FailureOr<runtime::LossForm>
readEvalLoss(mlir::Attribute attr,
             llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

} // namespace cairn

#endif // CAIRN_IR_TRAININGSETTINGS_H
