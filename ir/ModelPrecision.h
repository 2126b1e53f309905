//===- ModelPrecision.h - The precision of a model and its ops -*- C++ -*-===//
//
// A model's precision comes from a pass option (the driver's --precision),
// else the module's `cairn.precision` (the model's `precision` statement);
// an op in a `precision` region carries its own `cairn.precision`, which
// wins for that op. The passes that decide types by precision read the
// model's here (cairn-autocast, cairn-save-in-half), and an op's
// (cairn-save-in-half; cairn-autocast weighs a pinned op's policy itself).
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_IR_MODELPRECISION_H
#define CAIRN_IR_MODELPRECISION_H

#include "ir/CairnAttrs.h"
#include "ir/CairnDialect.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace cairn {

/// Sets `model` to `option` when given (f16, bf16 or f32), else to the
/// module's cairn.precision, else to none; fails with an error naming `pass`
/// for another option.
inline mlir::LogicalResult getModelPrecision(mlir::ModuleOp module,
                                             llvm::StringRef option,
                                             llvm::StringRef pass,
                                             std::optional<Precision> &model) {
  model.reset();
  if (!option.empty()) {
    model = symbolizePrecision(option);
    if (!model)
      return module.emitError() << pass << ": unknown precision '" << option
                                << "'; expected f16, bf16 or f32";
    return mlir::success();
  }
  if (auto attr = module->getAttrOfType<PrecisionAttr>(
          CairnDialect::kPrecisionAttrName))
    model = attr.getValue();
  return mlir::success();
}

/// The precision `op` computes its half list in: its region's, else `model`.
inline std::optional<Precision> getOpPrecision(mlir::Operation *op,
                                               std::optional<Precision> model) {
  if (auto pinned =
          op->getAttrOfType<PrecisionAttr>(CairnDialect::kPrecisionAttrName))
    return pinned.getValue();
  return model;
}

} // namespace cairn

#endif // CAIRN_IR_MODELPRECISION_H
