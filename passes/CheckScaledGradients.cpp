//===- CheckScaledGradients.cpp - Check half gradients, unscale late ------===//
//
// Autodiff builds GradScaler's step as "every gradient times 1 / scale, then
// found_inf of them all, then the updates": every float32 gradient lives
// from the backward to the check, and a weight gradient computed in half is
// held as its float32 widening, twice its bytes. GradScaler itself checks
// the scaled gradient and unscales the same element; this pass gives the
// check the scaled gradient, in half where it was computed in half, and
// moves the widening and the unscaling to the gradient's first reader, so
// the step holds half gradients until the check and one float32 gradient
// at a time after it. A half value is infinite or NaN exactly when its
// float32 widening is, so the verdict does not change with the type. Given
// a planner (cairn build and plan), the pass keeps the rewrite only where
// the plan of the step is smaller with it.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/CairnDialect.h"
#include "ir/CairnOps.h"
#include "ir/ProductTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"

namespace cairn {
#define GEN_PASS_DEF_CHECKSCALEDGRADIENTSPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

bool isInverseScale(Value value) {
  auto scale = value.getDefiningOp<LossScaleOp>();
  return scale && scale.getInverse();
}

/// found_inf reads each gradient scaled; its widening and unscaling move to
/// its first reader.
void checkScaledGradients(FoundInfOp found) {
  SmallVector<Value> checked;
  for (Value grad : found.getGrads()) {
    checked.push_back(grad);
    auto unscale = grad.getDefiningOp<MulOp>();
    if (!unscale || !isInverseScale(unscale.getRhs()) ||
        !unscale.getLhs().hasOneUse())
      continue;
    Value scaled = unscale.getLhs();
    // Users of the unscaled gradient other than the check: the update, the
    // step's result, a clipping norm; all after the check in autodiff's
    // step. Anything else, and the gradient stays as it is.
    Operation *reader = nullptr;
    bool allAfter = true;
    for (Operation *user : grad.getUsers()) {
      if (user == found.getOperation())
        continue;
      allAfter &=
          user->getBlock() == found->getBlock() && found->isBeforeInBlock(user);
      if (!reader || (allAfter && user->isBeforeInBlock(reader)))
        reader = user;
    }
    if (!reader || !allAfter)
      continue;
    auto widen = scaled.getDefiningOp<CastOp>();
    bool fromHalf =
        widen &&
        isHalfElementType(getElementTypeOrSelf(widen.getInput().getType()));
    checked.back() = fromHalf ? widen.getInput() : scaled;
    unscale->moveBefore(reader);
    if (fromHalf)
      widen->moveBefore(unscale);
  }
  found.getGradsMutable().assign(checked);
}

/// Rewrites every found_inf of `module`.
void checkScaledGradients(ModuleOp module) {
  module.walk([](FoundInfOp found) { checkScaledGradients(found); });
}

/// The arenas' total, or nullopt when planning failed.
std::optional<int64_t> getTotalArena(const PlanDifferentiated &plan,
                                     ModuleOp copy) {
  FailureOr<std::vector<int64_t>> arenas = plan(copy);
  if (failed(arenas))
    return std::nullopt;
  int64_t total = 0;
  for (int64_t bytes : *arenas)
    total += bytes;
  return total;
}

struct CheckScaledGradientsPass
    : cairn::impl::CheckScaledGradientsPassBase<CheckScaledGradientsPass> {
  using CheckScaledGradientsPassBase::CheckScaledGradientsPassBase;
  explicit CheckScaledGradientsPass(PlanDifferentiated plan)
      : plan(std::move(plan)) {}

  /// Plans a copy of the module (cairn build and plan); null from
  /// cairn-opt, which then always rewrites.
  PlanDifferentiated plan;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Only a step with loss scaling has a check (and is worth two plans).
    if (!module.walk([](FoundInfOp) { return WalkResult::interrupt(); })
             .wasInterrupted())
      return;
    if (!plan) {
      checkScaledGradients(module);
      return;
    }
    // Holding half gradients until the check pays where they would be held
    // long (deep_mlp's 64 layers); where the largest gradient comes last in
    // the backward (mlp's fc1), its half and float32 copies side by side
    // before its update can cost more than its float32 product held for a
    // moment. The plan says which.
    OwningOpRef<ModuleOp> rewritten(cast<ModuleOp>(module->clone()));
    checkScaledGradients(*rewritten);
    OwningOpRef<ModuleOp> asIs(cast<ModuleOp>(module->clone()));
    std::optional<int64_t> with = getTotalArena(plan, *rewritten);
    std::optional<int64_t> without = getTotalArena(plan, *asIs);
    if (!with || !without) {
      module.emitError() << "internal error: cairn-check-scaled-gradients "
                            "could not plan the step with and without its "
                            "rewrite";
      return signalPassFailure();
    }
    if (*with < *without)
      checkScaledGradients(module);
  }
};

} // namespace

std::unique_ptr<Pass>
cairn::createCheckScaledGradientsPass(PlanDifferentiated plan) {
  return std::make_unique<CheckScaledGradientsPass>(std::move(plan));
}
