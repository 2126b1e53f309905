//===- GradientRules.cpp - The backward rule of each cairn op -------------===//
//
// One `rule` overload per differentiable op, dispatched from the table in
// emitGradient. A rule emits ops only for the operands that need a gradient
// (GradientState::isActive), all at the forward op's location, so errors and
// generated-code comments point at the model line the op came from.
//
//===----------------------------------------------------------------------===//

#include "passes/GradientRules.h"

#include "ir/CairnOps.h"
#include "ir/ShapeFunctions.h"
#include "ir/VerifierHelpers.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cairn;

/// The type `value`'s gradient is summed in: its own, or the input's of a
/// narrowing cast (autocast's half copy of a float32 value).
static Type getGradientType(Value value) {
  if (auto cast = value.getDefiningOp<CastOp>()) {
    Type from = getElementTypeOrSelf(cast.getInput().getType());
    Type to = getElementTypeOrSelf(value.getType());
    if (isa<FloatType>(from) && isa<FloatType>(to) &&
        from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
      return cast.getInput().getType();
  }
  return value.getType();
}

void GradientState::accumulate(Value value, Value grad, Location loc) {
  if (!isActive(value))
    return;
  // A half copy of a float32 value sums its uses' gradients in float32:
  // PyTorch's autocast casts an activation once per use, so autograd adds
  // the uses' gradients widened, and a half sum would round each addition
  // (the transformer's q, k and v projections of one input).
  Type type = getGradientType(value);
  if (grad.getType() != type)
    grad = CastOp::create(builder, loc, type, grad);
  Value &sum = gradients[value];
  sum = sum ? AddOp::create(builder, loc, type, sum, grad).getResult() : grad;
}

namespace {
/// What every rule needs: the builder, the forward op's location, and the
/// state holding activity and gradients.
struct Rule {
  OpBuilder &b;
  Location loc;
  GradientState &state;

  bool needs(Value value) const { return value && state.isActive(value); }
  void add(Value value, Value grad) { state.accumulate(value, grad, loc); }
};
} // namespace

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static RankedTensorType typeOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// A rank-0 constant of `elementType`.
static Value scalar(Rule &r, Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  return ConstantOp::create(
      r.b, r.loc, type,
      DenseElementsAttr::get(type, FloatAttr::get(elementType, value)));
}

/// A broadcasting binary op; the operands are broadcast-compatible by
/// construction (they come from a verified forward op).
template <typename OpTy> static Value binary(Rule &r, Value lhs, Value rhs) {
  std::string error;
  std::optional<shapes::Shape> shape =
      shapes::broadcast(typeOf(lhs).getShape(), typeOf(rhs).getShape(), error);
  assert(shape && "gradient operands broadcast by construction");
  auto type = RankedTensorType::get(*shape, typeOf(lhs).getElementType());
  return OpTy::create(r.b, r.loc, type, lhs, rhs);
}

/// `value * -1`.
static Value negate(Rule &r, Value value) {
  return binary<MulOp>(r, value,
                       scalar(r, typeOf(value).getElementType(), -1.0));
}

/// Sums `grad` down to `target`'s shape, the inverse of NumPy broadcasting:
/// over the leading dimensions `target` lacks and those where it has 1.
static Value reduceTo(Rule &r, Value grad, Value target) {
  RankedTensorType targetType = typeOf(target);
  ArrayRef<int64_t> from = typeOf(grad).getShape();
  ArrayRef<int64_t> to = targetType.getShape();
  if (from == to)
    return grad;
  size_t leading = from.size() - to.size();
  SmallVector<int64_t> dims;
  bool inner = false;
  for (size_t i = 0; i < from.size(); ++i) {
    if (i < leading || (to[i - leading] == 1 && from[i] != 1)) {
      dims.push_back(i);
      inner |= i >= leading;
    }
  }
  // Only leading dimensions: dropping them gives the target directly.
  if (!inner)
    return SumOp::create(r.b, r.loc, targetType, grad, dims, false);
  shapes::Shape kept(from);
  for (int64_t d : dims)
    kept[d] = 1;
  Value sum = SumOp::create(
      r.b, r.loc, RankedTensorType::get(kept, targetType.getElementType()),
      grad, dims, true);
  if (leading == 0)
    return sum;
  return ReshapeOp::create(r.b, r.loc, targetType, sum);
}

/// A matmul with optional transpositions; the shapes agree by construction.
static Value matmul(Rule &r, Value lhs, bool transposeLhs, Value rhs,
                    bool transposeRhs) {
  auto operandShape = [](Value value, bool transpose) {
    shapes::Shape shape(typeOf(value).getShape());
    if (transpose)
      std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
    return shape;
  };
  std::string error;
  std::optional<shapes::Shape> shape =
      shapes::matmul(operandShape(lhs, transposeLhs),
                     operandShape(rhs, transposeRhs), error);
  assert(shape && "gradient matmuls agree by construction");
  auto type = RankedTensorType::get(*shape, typeOf(lhs).getElementType());
  return MatmulOp::create(r.b, r.loc, type, lhs, rhs, transposeLhs,
                          transposeRhs);
}

/// The gradient of sum and mean: `dy` (already scaled for mean) reshaped to
/// the keepdim form and broadcast back to the input's shape.
static Value unreduce(Rule &r, Value dy, Value input, ArrayRef<int64_t> dims) {
  RankedTensorType inputType = typeOf(input);
  shapes::Shape kept(inputType.getShape());
  for (int64_t d : dims)
    kept[d] = 1;
  auto keptType = RankedTensorType::get(kept, inputType.getElementType());
  Value g = dy;
  if (typeOf(g) != keptType)
    g = ReshapeOp::create(r.b, r.loc, keptType, g);
  if (keptType == inputType)
    return g;
  return BroadcastOp::create(r.b, r.loc, inputType, g);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

static LogicalResult rule(AddOp op, Value dy, Rule &r) {
  if (r.needs(op.getLhs()))
    r.add(op.getLhs(), reduceTo(r, dy, op.getLhs()));
  if (r.needs(op.getRhs()))
    r.add(op.getRhs(), reduceTo(r, dy, op.getRhs()));
  return success();
}

static LogicalResult rule(SubOp op, Value dy, Rule &r) {
  if (r.needs(op.getLhs()))
    r.add(op.getLhs(), reduceTo(r, dy, op.getLhs()));
  if (r.needs(op.getRhs()))
    r.add(op.getRhs(), negate(r, reduceTo(r, dy, op.getRhs())));
  return success();
}

static LogicalResult rule(MulOp op, Value dy, Rule &r) {
  if (r.needs(op.getLhs()))
    r.add(op.getLhs(),
          reduceTo(r, binary<MulOp>(r, dy, op.getRhs()), op.getLhs()));
  if (r.needs(op.getRhs()))
    r.add(op.getRhs(),
          reduceTo(r, binary<MulOp>(r, dy, op.getLhs()), op.getRhs()));
  return success();
}

// d/da = dy / b; d/db = -dy * (y / b) with y = a / b, as PyTorch computes
// -dy * a / b^2.
static LogicalResult rule(DivOp op, Value dy, Rule &r) {
  if (r.needs(op.getLhs()))
    r.add(op.getLhs(),
          reduceTo(r, binary<DivOp>(r, dy, op.getRhs()), op.getLhs()));
  if (r.needs(op.getRhs())) {
    Value quotient = binary<DivOp>(r, op.getResult(), op.getRhs());
    Value product = binary<MulOp>(r, dy, quotient);
    r.add(op.getRhs(), negate(r, reduceTo(r, product, op.getRhs())));
  }
  return success();
}

static LogicalResult rule(ReluOp op, Value dy, Rule &r) {
  r.add(op.getInput(),
        ReluGradOp::create(r.b, r.loc, dy.getType(), dy, op.getResult()));
  return success();
}

static LogicalResult rule(SigmoidOp op, Value dy, Rule &r) {
  r.add(op.getInput(),
        SigmoidGradOp::create(r.b, r.loc, dy.getType(), dy, op.getResult()));
  return success();
}

static LogicalResult rule(TanhOp op, Value dy, Rule &r) {
  r.add(op.getInput(),
        TanhGradOp::create(r.b, r.loc, dy.getType(), dy, op.getResult()));
  return success();
}

static LogicalResult rule(SiluOp op, Value dy, Rule &r) {
  r.add(op.getInput(),
        SiluGradOp::create(r.b, r.loc, dy.getType(), dy, op.getInput()));
  return success();
}

static LogicalResult rule(HardswishOp op, Value dy, Rule &r) {
  r.add(op.getInput(),
        HardswishGradOp::create(r.b, r.loc, dy.getType(), dy, op.getInput()));
  return success();
}

static LogicalResult rule(ClampOp op, Value dy, Rule &r) {
  r.add(op.getInput(),
        ClampGradOp::create(r.b, r.loc, dy.getType(), dy, op.getInput(),
                            op.getMinAttr(), op.getMaxAttr()));
  return success();
}

static LogicalResult rule(LeakyReluOp op, Value dy, Rule &r) {
  r.add(op.getInput(),
        LeakyReluGradOp::create(r.b, r.loc, dy.getType(), dy, op.getInput(),
                                op.getNegativeSlopeAttr()));
  return success();
}

static LogicalResult rule(GeluOp op, Value dy, Rule &r) {
  r.add(op.getInput(), GeluGradOp::create(r.b, r.loc, dy.getType(), dy,
                                          op.getInput(), op.getApproximate()));
  return success();
}

static LogicalResult rule(SoftmaxOp op, Value dy, Rule &r) {
  r.add(op.getInput(), SoftmaxGradOp::create(r.b, r.loc, dy.getType(), dy,
                                             op.getResult(), op.getDim()));
  return success();
}

static LogicalResult rule(LogSoftmaxOp op, Value dy, Rule &r) {
  r.add(op.getInput(), LogSoftmaxGradOp::create(r.b, r.loc, dy.getType(), dy,
                                                op.getResult(), op.getDim()));
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

// With A = op(lhs) and B = op(rhs): dA = dy B^T and dB = A^T dy, written
// with the transpose flags so that no operand is transposed in memory; the
// result is summed over the batch dimensions the operand was broadcast in.
static LogicalResult rule(MatmulOp op, Value dy, Rule &r) {
  Value a = op.getLhs(), b = op.getRhs();
  bool ta = op.getTransposeLhs(), tb = op.getTransposeRhs();
  if (r.needs(a)) {
    Value da = ta ? matmul(r, b, tb, dy, true) : matmul(r, dy, false, b, !tb);
    r.add(a, reduceTo(r, da, a));
  }
  if (r.needs(b)) {
    Value db = tb ? matmul(r, dy, true, a, ta) : matmul(r, a, !ta, dy, false);
    r.add(b, reduceTo(r, db, b));
  }
  return success();
}

static LogicalResult rule(LinearOp op, Value dy, Rule &r) {
  Value x = op.getInput(), w = op.getWeight(), bias = op.getBias();
  if (r.needs(x))
    r.add(x, LinearGradInputOp::create(r.b, r.loc, x.getType(), dy, w));
  if (r.needs(w))
    r.add(w, LinearGradWeightOp::create(r.b, r.loc, w.getType(), dy, x));
  if (r.needs(bias)) // A sum over dy's leading dimensions.
    r.add(bias, reduceTo(r, dy, bias));
  return success();
}

static LogicalResult rule(Conv2dOp op, Value dy, Rule &r) {
  Value x = op.getInput(), w = op.getWeight(), bias = op.getBias();
  if (r.needs(x))
    r.add(x, Conv2dGradInputOp::create(r.b, r.loc, x.getType(), dy, w, Value(),
                                       op.getStride(), op.getPadding(),
                                       op.getDilation(), op.getGroups()));
  if (r.needs(w))
    r.add(w, Conv2dGradWeightOp::create(r.b, r.loc, w.getType(), dy, x,
                                        op.getStride(), op.getPadding(),
                                        op.getDilation(), op.getGroups()));
  if (r.needs(bias))
    r.add(bias, SumOp::create(r.b, r.loc, bias.getType(), dy,
                              ArrayRef<int64_t>{0, 2, 3}, false));
  return success();
}

/// ConvTranspose2d is conv2d_grad_input, the adjoint of a convolution A_w:
/// y = A_w^T x, so dx = A_w dy (a convolution) and dw is conv2d_grad_weight
/// with the roles of x and dy exchanged; the bias's is a sum of dy over all
/// but its channels, as a convolution's.
static LogicalResult rule(Conv2dGradInputOp op, Value dy, Rule &r) {
  Value x = op.getDy(), w = op.getWeight(), bias = op.getBias();
  if (r.needs(x))
    r.add(x, Conv2dOp::create(r.b, r.loc, x.getType(), dy, w, Value(),
                              op.getStride(), op.getPadding(), op.getDilation(),
                              op.getGroups()));
  if (r.needs(w))
    r.add(w, Conv2dGradWeightOp::create(r.b, r.loc, w.getType(), x, dy,
                                        op.getStride(), op.getPadding(),
                                        op.getDilation(), op.getGroups()));
  if (r.needs(bias))
    r.add(bias, SumOp::create(r.b, r.loc, bias.getType(), dy,
                              ArrayRef<int64_t>{0, 2, 3}, false));
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization, embedding, dropout
//===----------------------------------------------------------------------===//

// Training mode only: its running statistics are updated in the forward part
// (Autodiff.cpp); eval mode would need the running statistics' rule.
static LogicalResult rule(BatchNormOp op, Value dy, Rule &r) {
  if (!op.getTraining())
    return op.emitError() << "no gradient rule for '" << op->getName()
                          << "' in eval mode (training = false)";
  Value x = op.getInput();
  // A half input keeps float32 parameters: their gradients are float32.
  auto channels = RankedTensorType::get({typeOf(x).getDimSize(1)},
                                        verifier::getNormParamElementType(x));
  auto grad = BatchNormGradOp::create(r.b, r.loc, x.getType(), channels,
                                      channels, dy, x, op.getWeight(),
                                      op.getEps());
  r.add(x, grad.getGradInput());
  r.add(op.getWeight(), grad.getGradWeight());
  r.add(op.getBias(), grad.getGradBias());
  return success();
}

static LogicalResult rule(LayerNormOp op, Value dy, Rule &r) {
  Value x = op.getInput();
  auto normalized = RankedTensorType::get(
      typeOf(x).getShape().take_back(op.getNormalizedRank()),
      typeOf(x).getElementType());
  auto grad = LayerNormGradOp::create(r.b, r.loc, x.getType(), normalized,
                                      normalized, dy, x, op.getWeight(),
                                      op.getNormalizedRank(), op.getEps());
  r.add(x, grad.getGradInput());
  r.add(op.getWeight(), grad.getGradWeight());
  r.add(op.getBias(), grad.getGradBias());
  return success();
}

static LogicalResult rule(EmbeddingOp op, Value dy, Rule &r) {
  Value w = op.getWeight();
  r.add(w, EmbeddingGradOp::create(r.b, r.loc, w.getType(), dy,
                                   op.getIndices(), typeOf(w).getDimSize(0),
                                   op.getPaddingIdxAttr()));
  return success();
}

/// The gradient goes back to the input's type: a float32 master weight
/// cast to half for a matmul gets a float32 gradient. A narrowing cast's
/// gradient is summed in that type already (GradientState::accumulate).
static LogicalResult rule(CastOp op, Value dy, Rule &r) {
  Value input = op.getInput();
  r.add(input, dy.getType() == input.getType()
                   ? dy
                   : CastOp::create(r.b, r.loc, input.getType(), dy));
  return success();
}

// The mask is a pure function of (seed, step, stream): the same op on dy
// applies it again.
static LogicalResult rule(DropoutOp op, Value dy, Rule &r) {
  r.add(op.getInput(), op.getTraining()
                           ? DropoutOp::create(r.b, r.loc, dy.getType(), dy,
                                               op.getP(), true, op.getStream())
                                 .getResult()
                           : dy);
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

static LogicalResult rule(MaxPool2dOp op, Value dy, Rule &r) {
  Value x = op.getInput();
  r.add(x, MaxPool2dGradOp::create(r.b, r.loc, x.getType(), dy, x,
                                   op.getKernelSize(), op.getStride(),
                                   op.getPadding(), op.getDilation(),
                                   op.getCeilMode()));
  return success();
}

static LogicalResult rule(AvgPool2dOp op, Value dy, Rule &r) {
  Value x = op.getInput();
  r.add(x, AvgPool2dGradOp::create(r.b, r.loc, x.getType(), dy,
                                   op.getKernelSize(), op.getStride(),
                                   op.getPadding(), op.getCeilMode(),
                                   op.getCountIncludePad()));
  return success();
}

static LogicalResult rule(AdaptiveAvgPool2dOp op, Value dy, Rule &r) {
  Value x = op.getInput();
  r.add(x, AdaptiveAvgPool2dGradOp::create(r.b, r.loc, x.getType(), dy));
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

static LogicalResult rule(ReshapeOp op, Value dy, Rule &r) {
  Value x = op.getInput();
  r.add(x, ReshapeOp::create(r.b, r.loc, x.getType(), dy));
  return success();
}

static LogicalResult rule(PermuteOp op, Value dy, Rule &r) {
  Value x = op.getInput();
  ArrayRef<int64_t> perm = op.getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  r.add(x, PermuteOp::create(r.b, r.loc, x.getType(), dy, inverse));
  return success();
}

// Each input's gradient is its slab of dy along `dim`.
static LogicalResult rule(ConcatOp op, Value dy, Rule &r) {
  int64_t dim = op.getDim(), offset = 0;
  for (Value input : op.getInputs()) {
    RankedTensorType type = typeOf(input);
    if (r.needs(input)) {
      SmallVector<int64_t> start(type.getRank(), 0);
      SmallVector<int64_t> limit(typeOf(dy).getShape());
      SmallVector<int64_t> step(type.getRank(), 1);
      start[dim] = offset;
      limit[dim] = offset + type.getDimSize(dim);
      r.add(input,
            SliceOp::create(r.b, r.loc, type, dy, start, limit, step));
    }
    offset += type.getDimSize(dim);
  }
  return success();
}

static LogicalResult rule(SliceOp op, Value dy, Rule &r) {
  Value x = op.getInput();
  r.add(x, SliceGradOp::create(r.b, r.loc, x.getType(), dy, op.getStart(),
                               op.getLimit(), op.getStep()));
  return success();
}

static LogicalResult rule(BroadcastOp op, Value dy, Rule &r) {
  r.add(op.getInput(), reduceTo(r, dy, op.getInput()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and losses
//===----------------------------------------------------------------------===//

static LogicalResult rule(SumOp op, Value dy, Rule &r) {
  r.add(op.getInput(), unreduce(r, dy, op.getInput(), op.getDims()));
  return success();
}

// Divided by the count before the broadcast: the same values as PyTorch's
// expand-then-divide, on fewer elements.
static LogicalResult rule(MeanOp op, Value dy, Rule &r) {
  ArrayRef<int64_t> shape = typeOf(op.getInput()).getShape();
  int64_t count = 1;
  for (int64_t d : op.getDims())
    count *= shape[d];
  Value scaled = binary<DivOp>(
      r, dy, scalar(r, typeOf(dy).getElementType(), double(count)));
  r.add(op.getInput(), unreduce(r, scaled, op.getInput(), op.getDims()));
  return success();
}

static LogicalResult rule(CrossEntropyOp op, Value dy, Rule &r) {
  Value logits = op.getLogits();
  r.add(logits, CrossEntropyGradOp::create(r.b, r.loc, logits.getType(), dy,
                                           logits, op.getLabels(),
                                           op.getLabelSmoothing()));
  return success();
}

static LogicalResult rule(MseLossOp op, Value dy, Rule &r) {
  Value input = op.getInput(), target = op.getTarget();
  Value grad = MseLossGradOp::create(r.b, r.loc, input.getType(), dy, input,
                                     target);
  r.add(input, grad);
  if (r.needs(target))
    r.add(target, negate(r, grad));
  return success();
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

LogicalResult cairn::emitGradient(Operation *op, Value dy,
                                  GradientState &state) {
  Rule r{state.getBuilder(), op->getLoc(), state};
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case<AddOp, SubOp, MulOp, DivOp,                               //
            ReluOp, SigmoidOp, TanhOp, GeluOp, SiluOp, HardswishOp,   //
            ClampOp, LeakyReluOp, SoftmaxOp, LogSoftmaxOp,            //
            MatmulOp, LinearOp, Conv2dOp, Conv2dGradInputOp,          //
            BatchNormOp, LayerNormOp, EmbeddingOp, DropoutOp, CastOp, //
            MaxPool2dOp, AvgPool2dOp, AdaptiveAvgPool2dOp,            //
            ReshapeOp, PermuteOp, ConcatOp, SliceOp, BroadcastOp,     //
            SumOp, MeanOp, CrossEntropyOp, MseLossOp>(
          [&](auto op) { return rule(op, dy, r); })
      .Default([](Operation *op) {
        return op->emitError()
               << "no gradient rule for '" << op->getName() << "'";
      });
}
