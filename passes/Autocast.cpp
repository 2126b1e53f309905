//===- Autocast.cpp - Half precision where it is safe, float32 where not --===//
//
// Before autodiff, decides the element type each op of @loss, @forward and
// @eval_loss computes in, as PyTorch's autocast does, so that the backward
// autodiff builds from it follows: a gradient has its value's type, and the
// cast's rule brings the gradients of float32 parameters back to float32.
//
// The rules, in order:
// - an op in a `precision f32 { }` region, and the float32 list (layer
//   norm, softmax, log-softmax, the losses, sums and means; autocast's
//   float32 list): float operands in float32;
// - batch norm takes its input in the type it comes in (a half input is
//   saved in half) and its parameters and statistics in float32, computing
//   in float32, as cuDNN's batch norm does;
// - the half list (matmul, linear, conv2d, conv2d_grad_input): float
//   operands in the half type (the model's, or the op's `precision f16|bf16`
//   region's); the kernels accumulate in float32;
// - every other op: the widest float type of its operands (a sum of a half
//   and a float32 tensor is float32; f16 with bf16 is float32). A scalar
//   constant (`x * 0.5`) takes the other operand's type instead, as a Python
//   number does in PyTorch.
// A float result takes the type its op computes in. A value is cast at most
// once to each type, right before its first reader, and every consumer in
// that type shares the copy: one half copy of a float32 weight per step. The
// functions' arguments (inputs, float32 master parameters and buffers) and
// results (the loss, the forward's output) keep their types.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/CairnDialect.h"
#include "ir/CairnOps.h"
#include "ir/ElementConversion.h"
#include "ir/ModelPrecision.h"
#include "ir/VerifierHelpers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

namespace cairn {
#define GEN_PASS_DEF_AUTOCASTPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

/// How an op chooses the type it computes in.
enum class CastPolicy { Float32, Half, Widest, NormInput };

CastPolicy getPolicy(Operation *op) {
  return TypeSwitch<Operation *, CastPolicy>(op)
      .Case<BatchNormOp>([](auto) { return CastPolicy::NormInput; })
      .Case<LayerNormOp, SoftmaxOp, LogSoftmaxOp, CrossEntropyOp, MseLossOp,
            SumOp, MeanOp>([](auto) { return CastPolicy::Float32; })
      .Case<MatmulOp, LinearOp, Conv2dOp, Conv2dGradInputOp>(
          [](auto) { return CastPolicy::Half; })
      .Default([](Operation *) { return CastPolicy::Widest; });
}

std::optional<Type> getFloatType(Precision precision, MLIRContext *context) {
  switch (precision) {
  case Precision::f16:
    return Float16Type::get(context);
  case Precision::bf16:
    return BFloat16Type::get(context);
  case Precision::f32:
    return Float32Type::get(context);
  }
  return std::nullopt;
}

bool isFloatTensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && isa<FloatType>(type.getElementType());
}

/// A source scalar (`0.5` in `x * 0.5`): it takes the other operand's type.
bool isScalarConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  return constant && cast<RankedTensorType>(value.getType()).getRank() == 0;
}

/// The wider of two float types: the one with more bits, float32 for f16
/// with bf16.
Type widen(Type a, Type b) {
  if (!a || a == b)
    return b;
  auto fa = cast<FloatType>(a), fb = cast<FloatType>(b);
  if (fa.getWidth() != fb.getWidth())
    return fa.getWidth() > fb.getWidth() ? a : b;
  return Float32Type::get(a.getContext());
}

class Autocaster {
public:
  Autocaster(func::FuncOp func, std::optional<Type> half)
      : func(func), half(half), builder(func.getContext()) {}

  LogicalResult run();

private:
  /// The type `op` computes in under `policy` (its getPolicy), or null to
  /// leave it as it is.
  Type getComputeType(Operation *op, CastPolicy policy);
  /// `value` in `elementType`: itself, a scalar constant made again, or its
  /// one cast to that type, made right before `user` (its first reader)
  /// when there is none yet.
  Value castTo(Value value, Type elementType, Operation *user);

  func::FuncOp func;
  std::optional<Type> half;
  OpBuilder builder;
  llvm::DenseMap<std::pair<Value, Type>, Value> casts;
  /// Scalar constants made again in another type; erased when unread.
  SmallVector<ConstantOp> remade;
};

Type Autocaster::getComputeType(Operation *op, CastPolicy policy) {
  auto pinned =
      op->getAttrOfType<PrecisionAttr>(CairnDialect::kPrecisionAttrName);
  if (pinned && pinned.getValue() == Precision::f32)
    policy = CastPolicy::Float32;
  // Batch norm takes its input as it comes (half stays half, its saved
  // input too) and computes in float32 with float32 parameters.
  if (policy == CastPolicy::NormInput)
    return verifier::elementTypeOf(op->getOperand(0));
  if (policy == CastPolicy::Float32)
    return Float32Type::get(op->getContext());
  if (policy == CastPolicy::Half) {
    if (pinned)
      return *getFloatType(pinned.getValue(), op->getContext());
    return half ? *half : Type();
  }
  Type widest, scalars;
  for (Value operand : op->getOperands()) {
    if (!isFloatTensor(operand))
      continue;
    Type &into = isScalarConstant(operand) ? scalars : widest;
    into = widen(into, verifier::elementTypeOf(operand));
  }
  return widest ? widest : scalars;
}

Value Autocaster::castTo(Value value, Type elementType, Operation *user) {
  if (verifier::elementTypeOf(value) == elementType)
    return value;
  Value &cached = casts[{value, elementType}];
  if (cached)
    return cached;
  auto type = cast<RankedTensorType>(value.getType()).clone(elementType);
  OpBuilder::InsertionGuard guard(builder);
  if (auto constant = value.getDefiningOp<ConstantOp>();
      constant && isScalarConstant(value)) {
    // Made again in the new type: a scalar is not a tensor to convert.
    builder.setInsertionPointAfter(constant);
    cached = ConstantOp::create(
        builder, constant.getLoc(), type,
        convertFloatElements(cast<DenseElementsAttr>(constant.getValue()),
                             cast<FloatType>(elementType)));
    remade.push_back(constant);
    return cached;
  }
  // Right before its first reader (the ops are visited in order): a copy
  // of a weight made at the function's start would live through every
  // layer before its own.
  builder.setInsertionPoint(user);
  cached = CastOp::create(builder, value.getLoc(), type, value);
  copyRegionAndDevice(user, cached.getDefiningOp());
  return cached;
}

LogicalResult Autocaster::run() {
  Block &body = func.getBody().front();
  // The casts this inserts go right before the op being visited: the walk,
  // over the ops as they were, never visits them.
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (isa<CastOp, ConstantOp>(op))
      continue;
    CastPolicy policy = getPolicy(op);
    Type type = getComputeType(op, policy);
    if (!type)
      continue;
    Type f32 = Float32Type::get(op->getContext());
    bool normInput = policy == CastPolicy::NormInput;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isFloatTensor(operand.get()))
        continue;
      // Batch norm's parameters and statistics: float32 for a half input.
      bool param = normInput && operand.getOperandNumber() != 0 &&
                   (type.isF16() || type.isBF16());
      operand.set(castTo(operand.get(), param ? f32 : type, op));
    }
    for (Value result : op->getResults())
      if (isFloatTensor(result))
        result.setType(cast<RankedTensorType>(result.getType()).clone(type));
  }
  // The results keep the function's types.
  Operation *ret = body.getTerminator();
  ArrayRef<Type> resultTypes = func.getFunctionType().getResults();
  for (OpOperand &operand : ret->getOpOperands()) {
    Type declared = resultTypes[operand.getOperandNumber()];
    if (operand.get().getType() == declared)
      continue;
    operand.set(castTo(operand.get(),
                       cast<RankedTensorType>(declared).getElementType(), ret));
  }
  for (ConstantOp constant : remade)
    if (constant->use_empty())
      constant.erase();
  return success();
}

struct AutocastPass : cairn::impl::AutocastPassBase<AutocastPass> {
  using AutocastPassBase::AutocastPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<Precision> model;
    if (failed(getModelPrecision(module, precision, "cairn-autocast", model)))
      return signalPassFailure();
    std::optional<Type> half;
    if (model)
      half = getFloatType(*model, &getContext());
    // float32 for the model: only the regions' half lists.
    if (half && (*half).isF32())
      half.reset();
    if (module.lookupSymbol("train_step")) {
      module.emitError() << "cairn-autocast runs before cairn-autodiff: "
                            "@train_step exists already";
      return signalPassFailure();
    }
    for (StringRef name : {"forward", "loss", "eval_loss"})
      if (auto func = module.lookupSymbol<func::FuncOp>(name))
        if (failed(Autocaster(func, half).run()))
          return signalPassFailure();
    if (failed(markLossScaling(module, lossScaling)))
      return signalPassFailure();
  }

  /// f16 keeps 5 exponent bits: gradients under 2^-24 flush to zero. A
  /// trained model with an f16 value in its training forward gets a loss
  /// scaler, as torch.amp.GradScaler (bf16 has float32's range and none).
  /// `always` (--loss-scaling) gives one to any trained model: its steps
  /// skip an update whose gradients overflow, at the cost of holding every
  /// gradient until the check.
  static LogicalResult markLossScaling(ModuleOp module, bool always) {
    auto loss = module.lookupSymbol<func::FuncOp>("loss");
    if (!loss || !module->hasAttr(CairnDialect::kOptimizerAttrName)) {
      if (always)
        return module.emitError()
               << "--loss-scaling: model has no training step to scale (it "
                  "needs a loss and an optimizer)";
      return success();
    }
    auto mark = [&] {
      module->setAttr(CairnDialect::kLossScalingAttrName,
                      UnitAttr::get(module.getContext()));
    };
    if (always) {
      mark();
      return success();
    }
    WalkResult found = loss.walk([](Operation *op) {
      for (Value result : op->getResults())
        if (getElementTypeOrSelf(result.getType()).isF16())
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (found.wasInterrupted())
      mark();
    return success();
  }
};

} // namespace
