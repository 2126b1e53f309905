//===- Autodiff.cpp - Build @train_step from @loss ------------------------===//
//
// Reverse-mode differentiation of @loss, then the optimizer update: the
// result is one function the code generator turns into the training step.
// The contract with it (argument and result order, attributes) is in the
// pass description in Passes.td; the rule of each op is in GradientRules.cpp.
//
// Every new op gets the location of the forward op it comes from (the
// optimizer's, that of its parameter's argument), and every iteration is
// over ops or arguments in order, so the output is deterministic.
//
//===----------------------------------------------------------------------===//

#include "passes/GradientRules.h"
#include "passes/Passes.h"

#include "ir/CairnDialect.h"
#include "ir/CairnOps.h"
#include "ir/TrainingSettings.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringMap.h"

namespace cairn {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

/// Copies cairn.device and cairn.precision from the forward op being
/// differentiated onto every op its backward inserts, so that later passes
/// place and type the backward with its forward. (Not cairn.checkpoint: that
/// marks forward ops to recompute; but the running-statistics update is part
/// of its forward batch_norm, and takes its region.)
struct StampListener : OpBuilder::Listener {
  SmallVector<NamedAttribute, 2> stamps;

  /// `forward`'s device and precision; its checkpoint region too for an op
  /// of the forward part (a gradient op is in no region).
  void stampLike(Operation *forward, bool inForwardPart = false) {
    stamps.clear();
    for (StringRef name :
         {CairnDialect::kDeviceAttrName, CairnDialect::kPrecisionAttrName,
          CairnDialect::kCheckpointAttrName})
      if (Attribute value = forward->getAttr(name);
          value && (inForwardPart || name != CairnDialect::kCheckpointAttrName))
        stamps.emplace_back(StringAttr::get(forward->getContext(), name),
                            value);
  }

  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint) override {
    for (NamedAttribute stamp : stamps)
      op->setAttr(stamp.getName(), stamp.getValue());
  }
};

/// Builds @train_step for one module; run() reports its errors.
class TrainStepBuilder {
public:
  explicit TrainStepBuilder(ModuleOp module)
      : module(module), context(module.getContext()),
        builder(context, &listener), state(builder) {}

  LogicalResult run();

private:
  LogicalResult checkLoss();
  void createFunction();
  LogicalResult cloneForward();
  LogicalResult emitRunningUpdate(BatchNormOp bn);
  LogicalResult emitBackward();
  void addOptimizerState();
  LogicalResult emitLossScaling();
  LogicalResult emitClipGradNorm();
  void emitOptimizer();
  void emitReturn();

  StringAttr nameOf(unsigned arg) {
    return step.getArgAttrOfType<StringAttr>(arg, CairnDialect::kNameAttrName);
  }
  RoleAttr roleOf(func::FuncOp function, unsigned arg) {
    return function.getArgAttrOfType<RoleAttr>(arg,
                                               CairnDialect::kRoleAttrName);
  }

  ModuleOp module;
  MLIRContext *context;
  StampListener listener;
  OpBuilder builder;
  GradientState state;
  Attribute optimizer;
  /// cairn.loss_scaling: the seed is the loss scale, the gradients are
  /// unscaled, and a step with a non-finite one (`foundInf`) is skipped.
  bool lossScaling = false;
  Value foundInf;

  func::FuncOp loss, step;
  /// @loss's argument numbers: params and buffers, then inputs (the order
  /// of @train_step's arguments before the optimizer state).
  SmallVector<unsigned> stateArgs, inputArgs;
  llvm::StringMap<unsigned> argByName;
  /// The newest value of each param and buffer argument of @train_step: the
  /// argument itself until an update replaces it.
  SmallVector<Value> latest;
  /// The cloned forward ops, in order, and the loss they compute.
  SmallVector<Operation *> forwardOps;
  Value lossValue;
  /// Params with a gradient, and the first of their optimizer-state
  /// arguments (none for SGD without momentum).
  struct Trained {
    unsigned arg;
    Value grad;
    unsigned firstState;
  };
  SmallVector<Trained> trained;
  /// New values of optimizer-state arguments, by argument number.
  SmallVector<std::pair<unsigned, Value>> stateUpdates;
};

} // namespace

LogicalResult TrainStepBuilder::run() {
  loss = module.lookupSymbol<func::FuncOp>("loss");
  if (!loss || loss.isExternal())
    return module.emitError()
           << "expected a function @loss (the training forward) to build "
              "@train_step from";
  if (module.lookupSymbol("train_step"))
    return module.emitError() << "expected no @train_step before autodiff";
  optimizer = module->getAttr(CairnDialect::kOptimizerAttrName);
  if (!optimizer)
    return module.emitError() << "expected '"
                              << CairnDialect::kOptimizerAttrName
                              << "' on the module to build @train_step";
  lossScaling = module->hasAttr(CairnDialect::kLossScalingAttrName);
  if (failed(checkLoss()))
    return failure();
  createFunction();
  if (failed(cloneForward()) || failed(emitBackward()))
    return failure();
  addOptimizerState();
  if (failed(emitLossScaling()) || failed(emitClipGradNorm()))
    return failure();
  emitOptimizer();
  emitReturn();
  return success();
}

/// @loss returns one scalar float, and every argument has a name and the
/// role input, param or buffer.
LogicalResult TrainStepBuilder::checkLoss() {
  auto ret = cast<func::ReturnOp>(loss.getBody().front().getTerminator());
  auto type = ret.getNumOperands() == 1
                  ? dyn_cast<RankedTensorType>(ret.getOperand(0).getType())
                  : nullptr;
  if (!type || type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
    return ret.emitError() << "expected @loss to return one rank-0 float "
                              "tensor (the loss)";
  for (BlockArgument arg : loss.getArguments()) {
    unsigned i = arg.getArgNumber();
    RoleAttr role = roleOf(loss, i);
    if (!role || !loss.getArgAttrOfType<StringAttr>(
                     i, CairnDialect::kNameAttrName))
      return emitError(arg.getLoc())
             << "expected argument #" << i
             << " of @loss to have 'cairn.name' and 'cairn.role'";
    switch (role.getValue()) {
    case Role::input:
      inputArgs.push_back(i);
      break;
    case Role::param:
    case Role::buffer:
      stateArgs.push_back(i);
      break;
    default:
      return emitError(arg.getLoc())
             << "expected argument #" << i
             << " of @loss to be an input, param or buffer but got "
             << role;
    }
  }
  return success();
}

/// @train_step after @loss, with @loss's params and buffers, then its
/// inputs, as arguments (same attributes and locations).
void TrainStepBuilder::createFunction() {
  builder.setInsertionPointAfter(loss);
  step = func::FuncOp::create(builder, loss.getLoc(), "train_step",
                              builder.getFunctionType({}, {}));
  Block *body = builder.createBlock(&step.getBody());
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  for (unsigned i : llvm::concat<unsigned>(stateArgs, inputArgs)) {
    BlockArgument arg = loss.getArgument(i);
    body->addArgument(arg.getType(), arg.getLoc());
    types.push_back(arg.getType());
    attrs.push_back(loss.getArgAttrDict(i));
  }
  step.setType(builder.getFunctionType(types, {}));
  step.setAllArgAttrs(attrs);
  for (BlockArgument arg : step.getArguments())
    argByName[nameOf(arg.getArgNumber()).getValue()] = arg.getArgNumber();
  latest.assign(step.getArguments().begin(),
                step.getArguments().begin() + stateArgs.size());
}

/// Clones @loss's ops and marks the values that depend on a param.
LogicalResult TrainStepBuilder::cloneForward() {
  IRMapping mapping;
  for (auto [i, lossArg] : llvm::enumerate(
           llvm::concat<unsigned>(stateArgs, inputArgs))) {
    BlockArgument arg = step.getArgument(i);
    mapping.map(loss.getArgument(lossArg), arg);
    if (roleOf(step, i).getValue() == Role::param &&
        isa<FloatType>(cast<RankedTensorType>(arg.getType()).getElementType()))
      state.markActive(arg);
  }
  for (Operation &op : loss.getBody().front().without_terminator()) {
    Operation *clone = builder.clone(op, mapping);
    forwardOps.push_back(clone);
    if (llvm::any_of(clone->getOperands(),
                     [&](Value v) { return state.isActive(v); }))
      for (Value result : clone->getResults())
        if (isa<FloatType>(getElementTypeOrSelf(result.getType())))
          state.markActive(result);
    auto bn = dyn_cast<BatchNormOp>(clone);
    if (bn && bn.getTraining() && bn.getRunningMean() &&
        failed(emitRunningUpdate(bn)))
      return failure();
  }
  lossValue = mapping.lookup(
      loss.getBody().front().getTerminator()->getOperand(0));
  return success();
}

/// One batch_norm_running_update per training-mode batch_norm call, in call
/// order, each from the statistics the previous call of the layer left.
LogicalResult TrainStepBuilder::emitRunningUpdate(BatchNormOp bn) {
  auto bufferIndex = [&](Value value) -> std::optional<unsigned> {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getArgNumber() >= stateArgs.size() ||
        roleOf(step, arg.getArgNumber()).getValue() != Role::buffer)
      return std::nullopt;
    return arg.getArgNumber();
  };
  std::optional<unsigned> mean = bufferIndex(bn.getRunningMean());
  std::optional<unsigned> var = bufferIndex(bn.getRunningVar());
  if (!mean || !var)
    return bn.emitError() << "expected the running statistics of a "
                             "training-mode batch_norm to be buffer arguments";
  StringRef meanName = nameOf(*mean).getValue();
  if (!meanName.consume_back("running_mean"))
    return bn.emitError() << "expected the running mean buffer to be named "
                             "'<layer>.running_mean' but got '"
                          << nameOf(*mean).getValue() << "'";
  std::string countName = (meanName + "num_batches_tracked").str();
  auto count = argByName.find(countName);
  if (count == argByName.end() || !bufferIndex(step.getArgument(count->second)))
    return bn.emitError() << "expected a buffer argument '" << countName
                          << "' for the running statistics of this "
                             "batch_norm";
  listener.stampLike(bn, /*inForwardPart=*/true);
  auto update = BatchNormRunningUpdateOp::create(
      builder, bn.getLoc(), latest[*mean].getType(), latest[*var].getType(),
      latest[count->second].getType(), bn.getInput(), latest[*mean],
      latest[*var], latest[count->second], bn.getMomentum());
  listener.stamps.clear();
  latest[*mean] = update.getNewRunningMean();
  latest[*var] = update.getNewRunningVar();
  latest[count->second] = update.getNewNumBatchesTracked();
  return success();
}

/// Seeds d(loss) = 1 (the loss scale times 1 with loss scaling) and runs the
/// rules over the forward ops in reverse.
LogicalResult TrainStepBuilder::emitBackward() {
  if (state.isActive(lossValue)) {
    Location loc = lossValue.getDefiningOp() ? lossValue.getDefiningOp()->getLoc()
                                             : step.getLoc();
    auto type = cast<RankedTensorType>(lossValue.getType());
    auto one = [&](RankedTensorType oneType) {
      auto constant = ConstantOp::create(
          builder, loc, oneType,
          DenseElementsAttr::get(
              oneType, FloatAttr::get(oneType.getElementType(), 1.0)));
      // Marked, so that micro-batches and replicas find it (and no other
      // constant 1): each seeds its share of the batch with 1/M, 1/(M R).
      constant->setAttr(CairnDialect::kBackwardSeedAttrName,
                        builder.getUnitAttr());
      return constant.getResult();
    };
    Value seed;
    if (lossScaling) {
      // The scale times the marked 1 (exact: the scale is a power of two).
      auto scalar = RankedTensorType::get({}, builder.getF32Type());
      Value scale = LossScaleOp::create(builder, loc, scalar);
      seed = MulOp::create(builder, loc, scalar, scale, one(scalar));
      if (seed.getType() != type)
        seed = CastOp::create(builder, loc, type, seed);
    } else {
      seed = one(type);
    }
    state.accumulate(lossValue, seed, loc);
  }
  for (Operation *op : llvm::reverse(forwardOps)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value v) { return state.gradient(v); }))
      continue;
    Value dy = op->getNumResults() == 1 ? state.gradient(op->getResult(0))
                                        : Value();
    listener.stampLike(op);
    if (failed(emitGradient(op, dy, state)))
      return failure();
  }
  listener.stamps.clear();
  return success();
}

/// Records the params that got a gradient, and inserts their optimizer
/// state after the params and buffers: zero-initialized, the param's type.
void TrainStepBuilder::addOptimizerState() {
  SmallVector<StringRef, 2> suffixes;
  if (auto sgd = dyn_cast<SGDAttr>(optimizer); sgd && sgd.getMomentum() != 0)
    suffixes = {".momentum_buffer"};
  else if (isa<AdamAttr>(optimizer))
    suffixes = {".exp_avg", ".exp_avg_sq"};

  unsigned next = stateArgs.size();
  SmallVector<unsigned> indices;
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;
  SmallVector<Location> locs;
  for (unsigned i = 0; i < stateArgs.size(); ++i) {
    BlockArgument param = step.getArgument(i);
    Value grad = state.gradient(param);
    if (roleOf(step, i).getValue() != Role::param || !grad)
      continue;
    trained.push_back({i, grad, next});
    for (StringRef suffix : suffixes) {
      NamedAttribute attributes[] = {
          builder.getNamedAttr(
              CairnDialect::kInitAttrName,
              InitAttr::get(context, InitKind::zeros, 0.0, -1)),
          builder.getNamedAttr(
              CairnDialect::kNameAttrName,
              builder.getStringAttr(nameOf(i).getValue() + suffix)),
          builder.getNamedAttr(CairnDialect::kRoleAttrName,
                               RoleAttr::get(context, Role::optimizer_state))};
      indices.push_back(stateArgs.size());
      types.push_back(param.getType());
      attrs.push_back(builder.getDictionaryAttr(attributes));
      locs.push_back(param.getLoc());
      ++next;
    }
  }
  (void)step.insertArguments(indices, types, attrs, locs);
}

/// Loss scaling, as torch.amp.GradScaler's unscale_ and step: every
/// trained gradient times 1 / scale, then whether any is not finite, which
/// the updates take (a skipped step changes nothing) and which commits the
/// running statistics the forward computed.
LogicalResult TrainStepBuilder::emitLossScaling() {
  if (!lossScaling || trained.empty())
    return success();
  Location loc = module.getLoc();
  auto scalar = RankedTensorType::get({}, builder.getF32Type());
  Value inverse = LossScaleOp::create(builder, loc, scalar, /*inverse=*/true);
  SmallVector<Value> grads;
  for (Trained &t : trained) {
    auto type = cast<RankedTensorType>(t.grad.getType());
    if (!type.getElementType().isF32())
      return module.emitError()
             << "loss scaling needs float32 parameters, but '"
             << nameOf(t.arg).getValue() << "' is " << type;
    t.grad = MulOp::create(builder, loc, type, t.grad, inverse);
    grads.push_back(t.grad);
  }
  foundInf = FoundInfOp::create(builder, loc, scalar, grads);
  for (auto [i, value] : llvm::enumerate(latest))
    if (value != step.getArgument(i))
      latest[i] = SkipSelectOp::create(builder, loc, value.getType(), foundInf,
                                       value, step.getArgument(i));
  return success();
}

/// One sgd_update or adam_update per trained param, at its argument's
/// location (the module's when it has none).
/// clip_grad_norm: every trained gradient times the clip coefficient of
/// them all, before any update reads one (and what `step` reports).
LogicalResult TrainStepBuilder::emitClipGradNorm() {
  Attribute attr = module->getAttr(CairnDialect::kClipGradNormAttrName);
  if (!attr || trained.empty())
    return success();
  FailureOr<ClipGradNorm> clip =
      readClipGradNorm(attr, [&] { return module.emitError(); });
  if (failed(clip))
    return failure();
  SmallVector<Value> grads;
  for (const Trained &t : trained)
    grads.push_back(t.grad);
  Type element =
      cast<RankedTensorType>(grads.front().getType()).getElementType();
  for (Value grad : grads)
    if (cast<RankedTensorType>(grad.getType()).getElementType() != element)
      return module.emitError()
             << "clip_grad_norm needs the parameters to share one element "
                "type, but they have "
             << element << " and "
             << cast<RankedTensorType>(grad.getType()).getElementType();
  Location loc = module.getLoc();
  Value coefficient = ClipCoefficientOp::create(
      builder, loc, RankedTensorType::get({}, element), grads, clip->maxNorm,
      clip->normType);
  for (Trained &t : trained)
    t.grad = MulOp::create(builder, loc, t.grad.getType(), t.grad, coefficient);
  return success();
}

void TrainStepBuilder::emitOptimizer() {
  for (const Trained &t : trained) {
    Value param = step.getArgument(t.arg);
    Location loc = isa<UnknownLoc>(param.getLoc()) ? module.getLoc()
                                                   : param.getLoc();
    if (auto sgd = dyn_cast<SGDAttr>(optimizer)) {
      Value buffer = sgd.getMomentum() != 0 ? step.getArgument(t.firstState)
                                            : Value();
      auto update = SGDUpdateOp::create(
          builder, loc, param.getType(), buffer ? param.getType() : Type(),
          param, t.grad, buffer, foundInf, sgd.getLr(), sgd.getMomentum(),
          sgd.getDampening(), sgd.getWeightDecay(), sgd.getNesterov());
      latest[t.arg] = update.getNewParam();
      if (buffer)
        stateUpdates.push_back({t.firstState, update.getNewMomentumBuffer()});
      continue;
    }
    auto adam = cast<AdamAttr>(optimizer);
    auto update = AdamUpdateOp::create(
        builder, loc, param.getType(), param.getType(), param.getType(), param,
        t.grad, step.getArgument(t.firstState),
        step.getArgument(t.firstState + 1), foundInf, adam.getLr(),
        adam.getBeta1(), adam.getBeta2(), adam.getEps(), adam.getWeightDecay(),
        adam.getDecoupledWeightDecay());
    latest[t.arg] = update.getNewParam();
    stateUpdates.push_back({t.firstState, update.getNewExpAvg()});
    stateUpdates.push_back({t.firstState + 1, update.getNewExpAvgSq()});
  }
}

/// Returns the loss, the new value of every updated argument (in argument
/// order, with cairn.updates), and the params' gradients.
void TrainStepBuilder::emitReturn() {
  SmallVector<Value> results;
  SmallVector<Attribute> attrs;
  auto describe = [&](Value value, StringAttr name, Role role,
                      std::optional<unsigned> updates = std::nullopt) {
    SmallVector<NamedAttribute, 3> list = {
        builder.getNamedAttr(CairnDialect::kNameAttrName, name),
        builder.getNamedAttr(CairnDialect::kRoleAttrName,
                             RoleAttr::get(context, role))};
    if (updates)
      list.push_back(builder.getNamedAttr(CairnDialect::kUpdatesAttrName,
                                          builder.getI64IntegerAttr(*updates)));
    results.push_back(value);
    attrs.push_back(builder.getDictionaryAttr(list));
  };

  describe(lossValue, builder.getStringAttr("loss"), Role::output);
  // The runtime's scaler reads whether the step was skipped.
  if (foundInf)
    describe(foundInf, builder.getStringAttr("found_inf"), Role::output);
  for (auto [i, value] : llvm::enumerate(latest))
    if (value != step.getArgument(i))
      describe(value, nameOf(i), roleOf(step, i).getValue(), i);
  for (auto [i, value] : stateUpdates)
    describe(value, nameOf(i), Role::optimizer_state, i);
  for (const Trained &t : trained)
    describe(t.grad,
             builder.getStringAttr("grad." + nameOf(t.arg).getValue()),
             Role::gradient);

  func::ReturnOp::create(builder,
                         loss.getBody().front().getTerminator()->getLoc(),
                         results);
  step.setType(builder.getFunctionType(step.getArgumentTypes(),
                                       ValueRange(results).getTypes()));
  step.setAllResultAttrs(attrs);
}

namespace {
struct AutodiffPass : cairn::impl::AutodiffPassBase<AutodiffPass> {
  void runOnOperation() override {
    if (failed(TrainStepBuilder(getOperation()).run()))
      signalPassFailure();
  }
};
} // namespace
