//===- CairnDialect.cpp - The cairn dialect -------------------------------===//
//
// Registration, constant materialization, and the verification of the
// discardable `cairn.*` attributes.
//
//===----------------------------------------------------------------------===//

#include "ir/CairnDialect.h"
#include "ir/CairnAttrs.h"
#include "ir/CairnKernelOps.h"
#include "ir/CairnOps.h"
#include "ir/CairnProgramOps.h"
#include "ir/TrainingSettings.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace cairn;

#include "ir/CairnDialect.cpp.inc"

void CairnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/CairnOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "ir/CairnProgramOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "ir/CairnKernelOps.cpp.inc"
      >();
  registerAttributes();
}

Operation *CairnDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type || !isa<RankedTensorType>(type))
    return nullptr;
  return ConstantOp::create(builder, loc, type, elements);
}

//===----------------------------------------------------------------------===//
// Discardable attributes
//===----------------------------------------------------------------------===//

/// Whether `value` is an i64 integer attribute >= `min`.
static bool isI64AtLeast(Attribute value, int64_t min) {
  auto integer = dyn_cast<IntegerAttr>(value);
  return integer && integer.getType().isSignlessInteger(64) &&
         integer.getInt() >= min;
}

/// Checks a function argument or result attribute; `where` is "argument #3"
/// or "result #0".
static LogicalResult verifyValueAttribute(Operation *op, const Twine &where,
                                          NamedAttribute attribute,
                                          bool isArgument) {
  StringRef name = attribute.getName().getValue();
  Attribute value = attribute.getValue();
  if (name == CairnDialect::kNameAttrName) {
    auto string = dyn_cast<StringAttr>(value);
    if (!string || string.getValue().empty())
      return op->emitError() << "expected '" << name << "' of " << where
                             << " to be a non-empty string but got " << value;
    return success();
  }
  if (name == CairnDialect::kRoleAttrName) {
    if (!isa<RoleAttr>(value))
      return op->emitError() << "expected '" << name << "' of " << where
                             << " to be a #cairn.role attribute but got "
                             << value;
    return success();
  }
  if (isArgument && name == CairnDialect::kInitAttrName) {
    if (!isa<InitAttr>(value))
      return op->emitError() << "expected '" << name << "' of " << where
                             << " to be a #cairn.init attribute but got "
                             << value;
    return success();
  }
  if (isArgument)
    return op->emitError() << "unknown attribute '" << name << "' on " << where
                           << " (expected cairn.name, cairn.role or "
                              "cairn.init)";
  return op->emitError() << "unknown attribute '" << name << "' on " << where
                         << " (expected cairn.name, cairn.role or "
                            "cairn.updates)";
}

/// Checks `cairn.updates` on result `resultIndex` of the function `op`: the
/// index of an argument of the result's type.
static LogicalResult verifyUpdatesAttribute(Operation *op,
                                            unsigned resultIndex,
                                            Attribute value) {
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function)
    return op->emitError() << "expected '" << CairnDialect::kUpdatesAttrName
                           << "' on the result of a function";
  int64_t numArguments = function.getNumArguments();
  auto index = dyn_cast<IntegerAttr>(value);
  if (!index || !index.getType().isSignlessInteger(64) ||
      index.getInt() < 0 || index.getInt() >= numArguments)
    return op->emitError() << "expected '" << CairnDialect::kUpdatesAttrName
                           << "' of result #" << resultIndex
                           << " to be an i64 argument index in [0, "
                           << numArguments << ") but got " << value;
  Type argument = function.getArgumentTypes()[index.getInt()];
  Type result = function.getResultTypes()[resultIndex];
  if (argument != result)
    return op->emitError() << "expected result #" << resultIndex
                           << " to have the type of argument #"
                           << index.getInt() << " that it updates, "
                           << argument << ", but got " << result;
  return success();
}

LogicalResult CairnDialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attribute) {
  (void)regionIndex;
  return verifyValueAttribute(op, "argument #" + Twine(argIndex), attribute,
                              /*isArgument=*/true);
}

LogicalResult CairnDialect::verifyRegionResultAttribute(
    Operation *op, unsigned regionIndex, unsigned resultIndex,
    NamedAttribute attribute) {
  (void)regionIndex;
  if (attribute.getName() == kUpdatesAttrName)
    return verifyUpdatesAttribute(op, resultIndex, attribute.getValue());
  return verifyValueAttribute(op, "result #" + Twine(resultIndex), attribute,
                              /*isArgument=*/false);
}

LogicalResult CairnDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  Attribute value = attribute.getValue();

  // Attributes of any op.
  if (name == kCheckpointAttrName || name == kDeviceAttrName) {
    if (!isI64AtLeast(value, 0))
      return op->emitError() << "expected '" << name
                             << "' to be an i64 integer >= 0 but got "
                             << value;
    return success();
  }
  if (name == kPrecisionAttrName) {
    if (!isa<PrecisionAttr>(value))
      return op->emitError() << "expected '" << name
                             << "' to be a #cairn.precision attribute but got "
                             << value;
    return success();
  }

  // Autodiff's d(loss) = 1 (a constant, then its fill kernel), which
  // cairn-split-micro-batches turns into 1/M.
  if (name == kBackwardSeedAttrName) {
    if (!isa<UnitAttr>(value))
      return op->emitError() << "expected '" << name
                             << "' to be a unit attribute but got " << value;
    return success();
  }
  // A kernel the scheduler keeps right before its first reader; a forward
  // kernel whose outputs the backward computes again.
  if (name == kBeforeFirstUseAttrName || name == kRecomputeAttrName ||
      name == kRecomputePerUseAttrName) {
    if (!isa<UnitAttr>(value))
      return op->emitError() << "expected '" << name
                             << "' to be a unit attribute but got " << value;
    if (!isa<KernelOpInterface>(op))
      return op->emitError() << "expected '" << name
                             << "' on a kernel but found it on '"
                             << op->getName() << "'";
    // Per use says how a recomputed kernel is copied: only with a mark.
    if (name == kRecomputePerUseAttrName && !op->hasAttr(kRecomputeAttrName))
      return op->emitError() << "expected '" << name << "' only with '"
                             << kRecomputeAttrName << "'";
    return success();
  }

  // The data-parallel replicas a program's training step is one of
  // (cairn-all-reduce-gradients).
  if (name == kReplicasAttrName) {
    if (!isI64AtLeast(value, 2))
      return op->emitError() << "expected '" << name
                             << "' to be an i64 integer >= 2 but got " << value;
    if (!isa<ProgramOp>(op))
      return op->emitError()
             << "expected '" << name << "' on a cairn.program but found it on '"
             << op->getName() << "'";
    return success();
  }
  // A replica's program whose batch norms share their statistics
  // (cairn-sync-batch-norm).
  if (name == kSyncBatchNormAttrName) {
    if (!isa<UnitAttr>(value))
      return op->emitError() << "expected '" << name
                             << "' to be a unit attribute but got " << value;
    if (!isa<ProgramOp>(op) || !op->hasAttr(kReplicasAttrName))
      return op->emitError() << "expected '" << name
                             << "' on the cairn.program of a replica (with '"
                             << kReplicasAttrName << "')";
    return success();
  }
  // The budget the recomputation was chosen for.
  if (name == kMemoryBudgetAttrName) {
    if (!isI64AtLeast(value, 1))
      return op->emitError() << "expected '" << name
                             << "' to be an i64 integer >= 1 but got " << value;
    if (!isa<ProgramOp>(op))
      return op->emitError()
             << "expected '" << name << "' on a cairn.program but found it on '"
             << op->getName() << "'";
    return success();
  }

  // The first of a run of updates one multi-tensor launch runs
  // (cairn-group-updates): the next kernels are updates of its settings.
  if (name == kUpdateGroupAttrName) {
    if (!isI64AtLeast(value, 2))
      return op->emitError() << "expected '" << name
                             << "' to be an i64 integer >= 2 but got " << value;
    if (!isa<SgdUpdateKernelOp, AdamUpdateKernelOp>(op))
      return op->emitError() << "expected '" << name
                             << "' on an optimizer update but found it on '"
                             << op->getName() << "'";
    int64_t count = cast<IntegerAttr>(value).getInt();
    SmallVector<Operation *> after = getKernelsAfter(op);
    for (int64_t i = 0; i + 1 < count; ++i)
      if (i >= int64_t(after.size()) || !haveSameUpdateSettings(op, after[i]))
        return op->emitError()
               << "expected '" << name << "' = " << count
               << " on an optimizer update followed by " << count - 1
               << " more with its settings, but kernel #" << i + 1
               << " of the group is not one";
    return success();
  }

  // Attributes of the builtin module.
  if (name == kModelAttrName || name == kBatchAttrName ||
      name == kOptimizerAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "expected '" << name
                             << "' on the builtin module but found it on '"
                             << op->getName() << "'";
    if (name == kModelAttrName && !isa<StringAttr>(value))
      return op->emitError() << "expected '" << name
                             << "' to be a string but got " << value;
    if (name == kBatchAttrName && !isI64AtLeast(value, 1))
      return op->emitError() << "expected '" << name
                             << "' to be an i64 integer > 0 but got " << value;
    if (name == kOptimizerAttrName && !isa<SGDAttr, AdamAttr>(value))
      return op->emitError() << "expected '" << name
                             << "' to be a #cairn.sgd or #cairn.adam "
                                "attribute but got "
                             << value;
    return success();
  }

  // The lr schedule and gradient clipping (TrainingSettings.h): on the
  // builtin module beside the optimizer; the schedule also on the program.
  if (name == kLrScheduleAttrName || name == kClipGradNormAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "expected '" << name
                             << "' on the builtin module but found it on '"
                             << op->getName() << "'";
    if (!op->hasAttr(kOptimizerAttrName))
      return op->emitError() << "expected '" << name << "' only with '"
                             << kOptimizerAttrName << "'";
    auto emitError = [&] { return op->emitError(); };
    if (name == kLrScheduleAttrName)
      return success(succeeded(readLrSchedule(value, emitError)));
    return success(succeeded(readClipGradNorm(value, emitError)));
  }

  // What eval computes the loss from (TrainingSettings.h).
  if (name == kEvalLossAttrName) {
    if (!isa<ModuleOp>(op))
      return op->emitError() << "expected '" << name
                             << "' on the builtin module but found it on '"
                             << op->getName() << "'";
    return success(
        succeeded(readEvalLoss(value, [&] { return op->emitError(); })));
  }

  // The training step scales its loss (cairn-autocast sets it for f16).
  if (name == kLossScalingAttrName) {
    if (!isa<ModuleOp>(op) || !isa<UnitAttr>(value))
      return op->emitError() << "expected '" << name
                             << "' as a unit attribute of the builtin module";
    if (!op->hasAttr(kOptimizerAttrName))
      return op->emitError() << "expected '" << name << "' only with '"
                             << kOptimizerAttrName << "'";
    return success();
  }

  // Attributes of function arguments, misplaced on an op.
  if (name == kNameAttrName || name == kRoleAttrName || name == kInitAttrName)
    return op->emitError() << "expected '" << name
                           << "' in the attributes of a function argument, "
                              "not on an op";

  return op->emitError() << "unknown attribute '" << name
                         << "' (expected one of cairn.checkpoint, "
                            "cairn.device, cairn.precision on ops; "
                            "cairn.model, cairn.batch, cairn.optimizer, "
                            "cairn.lr_schedule, cairn.clip_grad_norm, "
                            "cairn.eval_loss, cairn.loss_scaling on the "
                            "module)";
}
