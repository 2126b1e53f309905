//===- CheckExecutable.cpp - What a generated executable can run ----------===//
//
// The runtime (runtime/Commands.cpp) trains a model by feeding every input
// one batch of examples at a time from a data directory, reads the forward
// pass's output a row per example (eval's loss, `predict`), and needs a loss
// and an optimizer to train. A model that breaks this compiles to a plan
// and C++ but could only fail at run time; `cairn build` runs this pass
// first and refuses it, at the input or the statement that breaks it.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/CairnAttrs.h"
#include "ir/CairnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace cairn {
#define GEN_PASS_DEF_CHECKEXECUTABLEPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, dim] : llvm::enumerate(shape))
    text += (i ? ", " : "") + std::to_string(dim);
  return text + "]";
}

/// The contract, on the elaborated `module`.
LogicalResult checkExecutable(ModuleOp module) {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  auto loss = module.lookupSymbol<func::FuncOp>("loss");
  auto batchAttr =
      module->getAttrOfType<IntegerAttr>(CairnDialect::kBatchAttrName);
  if (!forward || forward.isExternal())
    return module.emitError() << "expected a @forward function";
  if (!loss || !module->hasAttr(CairnDialect::kOptimizerAttrName))
    return module.emitError()
           << "cairn build makes a training executable, which needs a "
              "loss(...) { ... } and an optimizer; this model has "
           << (loss ? "no optimizer" : "no loss")
           << " (cairn check and cairn plan take it as it is)";
  if (!batchAttr)
    return module.emitError() << "an executable needs the batch size: "
                                 "declare 'batch B = N' or pass --batch N";
  const int64_t batch = batchAttr.getInt();

  // Every input of either function, where it is declared.
  for (func::FuncOp func : {forward, loss})
    for (BlockArgument arg : func.getArguments()) {
      auto role = func.getArgAttrOfType<RoleAttr>(arg.getArgNumber(),
                                                  CairnDialect::kRoleAttrName);
      auto name = func.getArgAttrOfType<StringAttr>(
          arg.getArgNumber(), CairnDialect::kNameAttrName);
      if (!role || role.getValue() != Role::input || !name)
        continue;
      // Element types are the lowering's to refuse, per target.
      auto type = cast<RankedTensorType>(arg.getType());
      if (type.getRank() == 0 || type.getShape()[0] != batch)
        return emitError(arg.getLoc())
               << "input '" << name.getValue() << "' of shape "
               << formatShape(type.getShape())
               << " does not start with the batch size " << batch
               << ": an executable feeds every input one batch of examples "
                  "at a time (make it [B, ...], or a Parameter or a "
                  "constant if it is the same for every example)";
    }

  Operation *ret = forward.getBody().front().getTerminator();
  auto type = ret->getNumOperands() == 1
                  ? dyn_cast<RankedTensorType>(ret->getOperand(0).getType())
                  : RankedTensorType();
  if (!type || type.getRank() == 0 || type.getShape()[0] != batch ||
      !isa<FloatType>(type.getElementType()))
    return emitError(ret->getLoc())
           << "forward returns "
           << (type ? formatShape(type.getShape())
                    : std::string("more than one value"))
           << "; an executable reads one floating-point output of shape "
              "[batch, ...] (batch "
           << batch << "), a row per example";
  return success();
}

struct CheckExecutablePass
    : cairn::impl::CheckExecutablePassBase<CheckExecutablePass> {
  void runOnOperation() override {
    if (failed(checkExecutable(getOperation())))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
