//===- CairnTrainingOps.cpp - Ops of the training step: verifiers ---------===//
//
// A gradient op checks its operands against the forward op's shape rule
// (ShapeFunctions.cpp) run on the shapes it is given: conv2d_grad_input, for
// one, requires that conv2d of its result type by its weight has dy's shape.
// The optimizer ops check their hyperparameters with the verifiers of
// #cairn.sgd and #cairn.adam.
//
//===----------------------------------------------------------------------===//

#include "ir/CairnOps.h"
#include "ir/ShapeFunctions.h"
#include "ir/TrainingSettings.h"
#include "ir/VerifierHelpers.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace cairn;
using namespace cairn::verifier;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Checks that `value`, named `name`, has type `expected`.
static LogicalResult verifyType(Operation *op, const Twine &name, Value value,
                                Type expected) {
  if (value.getType() != expected)
    return op->emitOpError() << "expected " << name << " of type " << expected
                             << " but got " << value.getType();
  return success();
}

/// Checks that `value`, named `name`, is tensor<`shape` x `elementType`>.
static LogicalResult verifyTensor(Operation *op, const Twine &name,
                                  Value value, ArrayRef<int64_t> shape,
                                  Type elementType) {
  return verifyType(op, name, value, RankedTensorType::get(shape, elementType));
}

/// Checks that the forward shape rule, run on the shapes the op was given,
/// produced `dy`'s shape.
static LogicalResult verifyForwardShape(Operation *op,
                                        const std::optional<shapes::Shape> &shape,
                                        const std::string &error, Value dy) {
  if (!shape)
    return op->emitOpError() << error;
  if (ArrayRef<int64_t>(*shape) != shapeOf(dy))
    return op->emitOpError() << "expected dy of shape "
                             << shapes::format(*shape)
                             << " (the forward op's result) but got "
                             << shapes::format(shapeOf(dy));
  return success();
}

static LogicalResult verifyDim(Operation *op, Value value, int64_t dim) {
  int64_t rank = tensorOf(value).getRank();
  if (dim < 0 || dim >= rank)
    return op->emitOpError() << "expected dim in [0, " << rank << ") but got "
                             << dim;
  return success();
}

static LogicalResult verifyEps(Operation *op, double eps) {
  if (!(eps > 0))
    return op->emitOpError() << "expected eps > 0 but got " << str(eps);
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise and softmax
//===----------------------------------------------------------------------===//

LogicalResult GeluGradOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError() << "expected approximate to be \"none\" or \"tanh\" "
                            "but got \""
                         << getApproximate() << "\"";
  return success();
}

LogicalResult SoftmaxGradOp::verify() {
  return verifyDim(*this, getOutput(), getDim());
}

LogicalResult LogSoftmaxGradOp::verify() {
  return verifyDim(*this, getOutput(), getDim());
}

//===----------------------------------------------------------------------===//
// Linear and convolution
//===----------------------------------------------------------------------===//

LogicalResult LinearGradInputOp::verify() {
  Type product = getProductElementType(*this);
  ArrayRef<int64_t> dy = shapeOf(getDy()), weight = shapeOf(getWeight());
  if (failed(verifyProductElementType(*this, "dy", getDy(), product)) ||
      failed(verifyProductElementType(*this, "weight", getWeight(), product)) ||
      failed(verifyProductElementType(*this, "result", getResult(), product)))
    return failure();
  if (weight.size() != 2 || dy.empty() || dy.back() != weight[0])
    return emitOpError() << "expected weight [out, in] and dy [..., out] but "
                            "got weight "
                         << shapes::format(weight) << " and dy "
                         << shapes::format(dy);
  shapes::Shape input(dy.drop_back());
  input.push_back(weight[1]);
  return verifyTensor(*this, "result", getResult(), input,
                      elementTypeOf(getResult()));
}

LogicalResult LinearGradWeightOp::verify() {
  Type product = getProductElementType(*this);
  ArrayRef<int64_t> dy = shapeOf(getDy()), input = shapeOf(getInput());
  if (failed(verifyProductElementType(*this, "dy", getDy(), product)) ||
      failed(verifyProductElementType(*this, "input", getInput(), product)) ||
      failed(verifyProductElementType(*this, "result", getResult(), product)))
    return failure();
  if (dy.empty() || input.size() != dy.size() ||
      dy.drop_back() != input.drop_back())
    return emitOpError() << "expected dy [..., out] and input [..., in] with "
                            "the same leading dimensions but got dy "
                         << shapes::format(dy) << " and input "
                         << shapes::format(input);
  return verifyTensor(*this, "result", getResult(), {dy.back(), input.back()},
                      elementTypeOf(getResult()));
}

LogicalResult Conv2dGradInputOp::verify() {
  Type product = getProductElementType(*this);
  if (failed(verifyProductElementType(*this, "dy", getDy(), product)) ||
      failed(verifyProductElementType(*this, "weight", getWeight(), product)) ||
      (getBias() &&
       failed(verifyProductElementType(*this, "bias", getBias(), product))) ||
      failed(verifyProductElementType(*this, "result", getResult(), product)))
    return failure();
  if (Value bias = getBias()) {
    ArrayRef<int64_t> result = shapeOf(getResult());
    if (shapeOf(bias).size() != 1 || result.size() != 4 ||
        shapeOf(bias)[0] != result[1])
      return emitOpError() << "expected a bias ["
                           << (result.size() > 1 ? result[1] : 0)
                           << "] (the result's channels) but got "
                           << shapes::format(shapeOf(bias));
  }
  std::string error;
  std::optional<shapes::Shape> shape = shapes::conv2d(
      shapeOf(getResult()), shapeOf(getWeight()), nullptr, getStride(),
      getPadding(), getDilation(), getGroups(), error);
  return verifyForwardShape(*this, shape, error, getDy());
}

LogicalResult Conv2dGradWeightOp::verify() {
  Type product = getProductElementType(*this);
  if (failed(verifyProductElementType(*this, "dy", getDy(), product)) ||
      failed(verifyProductElementType(*this, "input", getInput(), product)) ||
      failed(verifyProductElementType(*this, "result", getResult(), product)))
    return failure();
  std::string error;
  std::optional<shapes::Shape> shape = shapes::conv2d(
      shapeOf(getInput()), shapeOf(getResult()), nullptr, getStride(),
      getPadding(), getDilation(), getGroups(), error);
  return verifyForwardShape(*this, shape, error, getDy());
}

//===----------------------------------------------------------------------===//
// Normalization and embedding
//===----------------------------------------------------------------------===//

/// The checks shared by batch_norm_grad and layer_norm_grad: dy and the
/// results against the input, the weight and the per-feature gradients
/// against `features`.
static LogicalResult verifyNormGrad(Operation *op, Value dy, Value input,
                                    Value weight, ArrayRef<int64_t> features,
                                    Type elementType) {
  if (failed(verifyType(op, "dy", dy, input.getType())) ||
      (weight &&
       failed(verifyTensor(op, "weight", weight, features, elementType))) ||
      failed(verifyType(op, "result #0", op->getResult(0), input.getType())) ||
      failed(verifyTensor(op, "result #1", op->getResult(1), features,
                          elementType)) ||
      failed(verifyTensor(op, "result #2", op->getResult(2), features,
                          elementType)))
    return failure();
  return success();
}

LogicalResult BatchNormGradOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  std::string error;
  if (!shapes::batchNorm(input, input.size() >= 2 ? input[1] : 0, error))
    return emitOpError() << error;
  if (failed(verifyEps(*this, getEps())))
    return failure();
  return verifyNormGrad(*this, getDy(), getInput(), getWeight(), input[1],
                        getNormParamElementType(getInput()));
}

LogicalResult BatchNormRunningUpdateOp::verify() {
  double momentum = getMomentum();
  if (!(momentum >= 0 && momentum <= 1))
    return emitOpError() << "expected momentum in [0, 1] but got "
                         << str(momentum);
  ArrayRef<int64_t> input = shapeOf(getInput());
  std::string error;
  if (!shapes::batchNorm(input, input.size() >= 2 ? input[1] : 0, error))
    return emitOpError() << error;
  // The unbiased variance divides by N * spatial - 1; torch refuses 1 too.
  if (tensorOf(getInput()).getNumElements() == input[1])
    return emitOpError() << "expected more than one value per channel but "
                            "got input "
                         << shapes::format(input);
  Type elementType = getNormParamElementType(getInput());
  int64_t channels[] = {input[1]};
  if (failed(verifyTensor(*this, "running_mean", getRunningMean(), channels,
                          elementType)) ||
      failed(verifyTensor(*this, "running_var", getRunningVar(), channels,
                          elementType)) ||
      failed(verifyTensor(*this, "num_batches_tracked",
                          getNumBatchesTracked(), {},
                          elementTypeOf(getNumBatchesTracked()))))
    return failure();
  for (unsigned i = 0; i < 3; ++i)
    if (failed(verifyType(*this, "result #" + Twine(i), getResult(i),
                          getOperand(i + 1).getType())))
      return failure();
  return success();
}

LogicalResult LayerNormGradOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  int64_t rank = static_cast<int64_t>(input.size());
  int64_t normalizedRank = getNormalizedRank();
  if (normalizedRank < 1 || normalizedRank > rank)
    return emitOpError() << "expected normalized_rank in [1, " << rank
                         << "] for input " << shapes::format(input)
                         << " but got " << normalizedRank;
  if (failed(verifyEps(*this, getEps())))
    return failure();
  return verifyNormGrad(*this, getDy(), getInput(), getWeight(),
                        input.take_back(normalizedRank),
                        elementTypeOf(getInput()));
}

LogicalResult EmbeddingGradOp::verify() {
  int64_t num = getNumEmbeddings();
  if (num < 1)
    return emitOpError() << "expected num_embeddings >= 1 but got " << num;
  if (std::optional<int64_t> paddingIdx = getPaddingIdx())
    if (*paddingIdx < 0 || *paddingIdx >= num)
      return emitOpError() << "expected padding_idx in [0, " << num
                           << ") but got " << *paddingIdx;
  ArrayRef<int64_t> dy = shapeOf(getDy()), indices = shapeOf(getIndices());
  if (dy.size() != indices.size() + 1 || dy.drop_back() != indices)
    return emitOpError() << "expected dy of shape indices + [dim] with "
                            "indices "
                         << shapes::format(indices) << " but got "
                         << shapes::format(dy);
  return verifyTensor(*this, "result", getResult(), {num, dy.back()},
                      elementTypeOf(getDy()));
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

LogicalResult MaxPool2dGradOp::verify() {
  if (failed(verifyElementType(*this, "input", getInput(),
                               elementTypeOf(getDy()))) ||
      failed(verifyType(*this, "result", getResult(), getInput().getType())))
    return failure();
  std::string error;
  std::optional<shapes::Shape> shape = shapes::maxPool2d(
      shapeOf(getInput()), getKernelSize(), getStride(), getPadding(),
      getDilation(), getCeilMode(), error);
  return verifyForwardShape(*this, shape, error, getDy());
}

LogicalResult AvgPool2dGradOp::verify() {
  if (failed(verifyElementType(*this, "result", getResult(),
                               elementTypeOf(getDy()))))
    return failure();
  std::string error;
  std::optional<shapes::Shape> shape =
      shapes::avgPool2d(shapeOf(getResult()), getKernelSize(), getStride(),
                        getPadding(), getCeilMode(), error);
  return verifyForwardShape(*this, shape, error, getDy());
}

LogicalResult AdaptiveAvgPool2dGradOp::verify() {
  if (failed(verifyElementType(*this, "result", getResult(),
                               elementTypeOf(getDy()))))
    return failure();
  ArrayRef<int64_t> dy = shapeOf(getDy());
  if (dy.size() != 4)
    return emitOpError() << "expected dy [N, C, oh, ow] but got "
                         << shapes::format(dy);
  std::string error;
  std::optional<shapes::Shape> shape = shapes::adaptiveAvgPool2d(
      shapeOf(getResult()), dy.drop_front(2), error);
  return verifyForwardShape(*this, shape, error, getDy());
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult SliceGradOp::verify() {
  if (failed(verifyElementType(*this, "result", getResult(),
                               elementTypeOf(getDy()))))
    return failure();
  std::string error;
  std::optional<shapes::Shape> shape = shapes::slice(
      shapeOf(getResult()), getStart(), getLimit(), getStep(), error);
  return verifyForwardShape(*this, shape, error, getDy());
}

LogicalResult BroadcastOp::verify() {
  if (failed(verifyElementType(*this, "result", getResult(),
                               elementTypeOf(getInput()))))
    return failure();
  ArrayRef<int64_t> input = shapeOf(getInput()), result = shapeOf(getResult());
  std::string error;
  std::optional<shapes::Shape> shape = shapes::broadcast(input, result, error);
  if (!shape || ArrayRef<int64_t>(*shape) != result)
    return emitOpError() << "expected a result shape that "
                         << shapes::format(input)
                         << " broadcasts to but got " << shapes::format(result);
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// dloss is the rank-0 gradient of a loss of `input`'s element type.
static LogicalResult verifyLossGrad(Operation *op, Value dloss, Value input) {
  if (failed(verifyTensor(op, "dloss", dloss, {}, elementTypeOf(input))) ||
      failed(verifyType(op, "result", op->getResult(0), input.getType())))
    return failure();
  return success();
}

LogicalResult CrossEntropyGradOp::verify() {
  double smoothing = getLabelSmoothing();
  if (!(smoothing >= 0 && smoothing <= 1))
    return emitOpError() << "expected label_smoothing in [0, 1] but got "
                         << str(smoothing);
  std::string error;
  if (!shapes::crossEntropy(shapeOf(getLogits()), shapeOf(getLabels()), error))
    return emitOpError() << error;
  return verifyLossGrad(*this, getDloss(), getLogits());
}

LogicalResult MseLossGradOp::verify() {
  if (failed(verifyType(*this, "target", getTarget(), getInput().getType())))
    return failure();
  return verifyLossGrad(*this, getDloss(), getInput());
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

LogicalResult ClipCoefficientOp::verify() {
  if (getGrads().empty())
    return emitOpError() << "expected at least one gradient";
  Type element = elementTypeOf(getGrads().front());
  for (Value grad : getGrads())
    if (elementTypeOf(grad) != element)
      return emitOpError() << "expected gradients of one element type, "
                           << element << ", but got " << grad.getType();
  if (std::string why = checkClipGradNorm({getMaxNorm(), getNormType()});
      !why.empty())
    return emitOpError() << why;
  return verifyType(*this, "result", getResult(),
                    RankedTensorType::get({}, element));
}

/// A rank-0 float32 tensor: the loss scale and found_inf.
static LogicalResult verifyScalarF32(Operation *op, const Twine &what,
                                     Value value) {
  return verifyType(
      op, what, value,
      RankedTensorType::get({}, Float32Type::get(op->getContext())));
}

LogicalResult LossScaleOp::verify() {
  return verifyScalarF32(*this, "result", getResult());
}

LogicalResult FoundInfOp::verify() {
  if (getGrads().empty())
    return emitOpError() << "expected at least one gradient";
  return verifyScalarF32(*this, "result", getResult());
}

LogicalResult SkipSelectOp::verify() {
  if (failed(verifyScalarF32(*this, "found_inf", getFoundInf())) ||
      failed(verifyType(*this, "updated", getUpdated(), getOld().getType())))
    return failure();
  return verifyType(*this, "result", getResult(), getOld().getType());
}

/// Every operand and result of an optimizer op has the parameter's type,
/// but `foundInf`, a rank-0 float32.
static LogicalResult verifyParamTypes(Operation *op, Value foundInf) {
  Type type = op->getOperand(0).getType();
  if (foundInf && failed(verifyScalarF32(op, "found_inf", foundInf)))
    return failure();
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    if (operand != foundInf &&
        failed(verifyType(op, "operand #" + Twine(i), operand, type)))
      return failure();
  for (auto [i, result] : llvm::enumerate(op->getResults()))
    if (failed(verifyType(op, "result #" + Twine(i), result, type)))
      return failure();
  return success();
}

LogicalResult SGDUpdateOp::verify() {
  if (failed(SGDAttr::verify([&] { return emitOpError(); }, getLr(),
                             getMomentum(), getDampening(), getWeightDecay(),
                             getNesterov())))
    return failure();
  bool hasMomentum = getMomentum() != 0;
  if (hasMomentum != bool(getMomentumBuffer()))
    return emitOpError() << "expected a momentum_buffer operand exactly when "
                            "momentum != 0 but got momentum "
                         << str(getMomentum())
                         << (getMomentumBuffer() ? " with one" : " without one");
  if (hasMomentum != bool(getNewMomentumBuffer()))
    return emitOpError() << "expected " << (hasMomentum ? 2 : 1)
                         << " results but got " << getNumResults();
  return verifyParamTypes(*this, getFoundInf());
}

LogicalResult AdamUpdateOp::verify() {
  if (failed(AdamAttr::verify([&] { return emitOpError(); }, getLr(),
                              getBeta1(), getBeta2(), getEps(),
                              getWeightDecay(), getDecoupledWeightDecay())))
    return failure();
  return verifyParamTypes(*this, getFoundInf());
}
