//===- Passes.h - Cairn passes ----------------------------------*- C++ -*-===//

#ifndef CAIRN_PASSES_PASSES_H
#define CAIRN_PASSES_PASSES_H

#include "ir/CairnEnums.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <functional>
#include <vector>

namespace cairn {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Plans a copy of a module whose ops all have a device: each device's
/// arena in bytes, in device order, or failure after an error.
using PlanPlacement =
    std::function<mlir::FailureOr<std::vector<int64_t>>(mlir::ModuleOp)>;
/// Plans a copy of a module after autodiff the same way: each device's
/// arena in bytes, or failure after an error.
using PlanDifferentiated = PlanPlacement;

/// cairn-place-devices with `devices` >= 2 and a `device-memory`: the split
/// chosen with `plan`, the rest of the pipeline, in the loop.
std::unique_ptr<mlir::Pass>
createPlaceDevicesPass(const PlaceDevicesPassOptions &options,
                       PlanPlacement plan);

/// cairn-check-scaled-gradients that keeps its rewrite only where `plan`
/// shows a smaller arena with it than without.
std::unique_ptr<mlir::Pass>
createCheckScaledGradientsPass(PlanDifferentiated plan);

} // namespace cairn

#endif // CAIRN_PASSES_PASSES_H
