//===- CairnOps.cpp - Ops of cairn: verifiers -----------------------------===//
//
// Every shape rule lives in ShapeFunctions.cpp; the verifiers here check the
// operand element types, the attributes, and that the result type is the one
// the shape rule computes.
//
//===----------------------------------------------------------------------===//

#include "ir/CairnOps.h"
#include "ir/ShapeFunctions.h"
#include "ir/VerifierHelpers.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace cairn;
using namespace cairn::verifier;

/// A softmax's types: `T` when the result has the input's type, else
/// `T -> U` (a half input, a float32 result).
static ParseResult parseSoftmaxTypes(OpAsmParser &parser, Type &input,
                                     Type &result) {
  if (parser.parseType(input))
    return failure();
  if (succeeded(parser.parseOptionalArrow()))
    return parser.parseType(result);
  result = input;
  return success();
}

static void printSoftmaxTypes(OpAsmPrinter &printer, Operation *, Type input,
                              Type result) {
  printer << input;
  if (result != input)
    printer << " -> " << result;
}

#define GET_OP_CLASSES
#include "ir/CairnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Reports a shape function's error on `op`.
static LogicalResult shapeError(Operation *op, const std::string &error) {
  return op->emitOpError() << error;
}

/// Checks that the result type is tensor<`shape` x `elementType`>.
static LogicalResult verifyResult(Operation *op, ArrayRef<int64_t> shape,
                                  Type elementType) {
  auto expected = RankedTensorType::get(shape, elementType);
  Type actual = op->getResult(0).getType();
  if (actual != expected)
    return op->emitOpError() << "expected result of type " << expected
                             << " but got " << actual;
  return success();
}

/// Checks that the optional `value`, named `name`, is `[size]` with
/// `elementType`.
static LogicalResult verifyVector(Operation *op, StringRef name, Value value,
                                  ArrayRef<int64_t> expected,
                                  Type elementType) {
  if (!value)
    return success();
  if (shapeOf(value) != expected)
    return op->emitOpError() << "expected " << name << " of shape "
                             << shapes::format(expected) << " but got "
                             << shapes::format(shapeOf(value));
  return verifyElementType(op, name, value, elementType);
}

//===----------------------------------------------------------------------===//
// ValidShapes trait
//===----------------------------------------------------------------------===//

static LogicalResult verifyValidShape(Operation *op, Type type, StringRef kind,
                                      unsigned index) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return success(); // Left to the operand and result type constraints.
  if (!tensor.hasStaticShape())
    return op->emitOpError() << "expected " << kind << " #" << index
                             << " of static shape but got " << type;
  if (llvm::any_of(tensor.getShape(), [](int64_t d) { return d < 1; }))
    return op->emitOpError() << "expected " << kind << " #" << index
                             << " with dimensions >= 1 but got " << type;
  std::string error;
  if (!shapes::numElements(tensor.getShape(), error))
    return op->emitOpError() << "expected " << kind << " #" << index
                             << " with at most 2^48 elements but got " << type;
  return success();
}

LogicalResult cairn::OpTrait::verifyValidShapes(Operation *op) {
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(verifyValidShape(op, type, "operand", i)))
      return failure();
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(verifyValidShape(op, type, "result", i)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

static LogicalResult verifyBroadcastBinary(Operation *op) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Type elementType = elementTypeOf(lhs);
  if (failed(verifyElementType(op, "rhs", rhs, elementType)))
    return failure();
  std::string error;
  std::optional<shapes::Shape> shape =
      shapes::broadcast(shapeOf(lhs), shapeOf(rhs), error);
  if (!shape)
    return shapeError(op, error);
  return verifyResult(op, *shape, elementType);
}

LogicalResult AddOp::verify() { return verifyBroadcastBinary(*this); }
LogicalResult SubOp::verify() { return verifyBroadcastBinary(*this); }
LogicalResult MulOp::verify() { return verifyBroadcastBinary(*this); }
LogicalResult DivOp::verify() { return verifyBroadcastBinary(*this); }

LogicalResult ClampOp::verify() {
  if (!getMin() && !getMax())
    return emitOpError() << "expected a min or a max bound";
  return success();
}

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError() << "expected approximate to be \"none\" or \"tanh\" "
                            "but got \""
                         << getApproximate() << "\"";
  return success();
}

/// The dim, and a result of the input's element type or float32 for a half
/// input (autocast's float32 softmax of a half value).
static LogicalResult verifySoftmax(Operation *op, Value input, Value result,
                                   int64_t dim) {
  int64_t rank = tensorOf(input).getRank();
  if (dim < 0 || dim >= rank)
    return op->emitOpError() << "expected dim in [0, " << rank << ") but got "
                             << dim;
  Type in = elementTypeOf(input), out = elementTypeOf(result);
  if (out != in && !(isHalfElementType(in) && out.isF32()))
    return op->emitOpError() << "expected result with element type " << in
                             << (isHalfElementType(in) ? " or 'f32'" : "")
                             << " but got " << result.getType();
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifySoftmax(*this, getInput(), getResult(), getDim());
}

LogicalResult LogSoftmaxOp::verify() {
  return verifySoftmax(*this, getInput(), getResult(), getDim());
}

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

/// The shape of a matmul operand after its optional transposition (the last
/// two dimensions swapped; a rank < 2 operand is left to shapes::matmul).
static shapes::Shape matmulOperandShape(Value operand, bool transpose) {
  shapes::Shape shape(shapeOf(operand));
  if (transpose && shape.size() >= 2)
    std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
  return shape;
}

LogicalResult MatmulOp::verify() {
  Type elementType = elementTypeOf(getLhs());
  if (failed(verifyElementType(*this, "rhs", getRhs(), elementType)))
    return failure();
  std::string error;
  std::optional<shapes::Shape> shape =
      shapes::matmul(matmulOperandShape(getLhs(), getTransposeLhs()),
                     matmulOperandShape(getRhs(), getTransposeRhs()), error);
  if (!shape)
    return shapeError(*this, error);
  return verifyResult(*this, *shape, elementType);
}

LogicalResult LinearOp::verify() {
  Type product = getProductElementType(*this);
  if (failed(verifyProductElementType(*this, "input", getInput(), product)) ||
      failed(verifyProductElementType(*this, "weight", getWeight(), product)) ||
      (getBias() &&
       failed(verifyProductElementType(*this, "bias", getBias(), product))) ||
      failed(verifyProductElementType(*this, "result", getResult(), product)))
    return failure();
  std::optional<shapes::Shape> bias;
  if (getBias())
    bias = shapes::Shape(shapeOf(getBias()));
  std::string error;
  std::optional<shapes::Shape> shape =
      shapes::linear(shapeOf(getInput()), shapeOf(getWeight()),
                     bias ? &*bias : nullptr, error);
  if (!shape)
    return shapeError(*this, error);
  return verifyResult(*this, *shape, elementTypeOf(getResult()));
}

LogicalResult Conv2dOp::verify() {
  Type product = getProductElementType(*this);
  if (failed(verifyProductElementType(*this, "input", getInput(), product)) ||
      failed(verifyProductElementType(*this, "weight", getWeight(), product)) ||
      (getBias() &&
       failed(verifyProductElementType(*this, "bias", getBias(), product))) ||
      failed(verifyProductElementType(*this, "result", getResult(), product)))
    return failure();
  std::optional<shapes::Shape> bias;
  if (getBias())
    bias = shapes::Shape(shapeOf(getBias()));
  std::string error;
  std::optional<shapes::Shape> shape = shapes::conv2d(
      shapeOf(getInput()), shapeOf(getWeight()), bias ? &*bias : nullptr,
      getStride(), getPadding(), getDilation(), getGroups(), error);
  if (!shape)
    return shapeError(*this, error);
  return verifyResult(*this, *shape, elementTypeOf(getResult()));
}

//===----------------------------------------------------------------------===//
// Normalization, embedding, dropout
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::verify() {
  if (!getWeight() != !getBias())
    return emitOpError()
           << "expected weight and bias to be both present or both absent";
  if (!getRunningMean() != !getRunningVar())
    return emitOpError() << "expected running_mean and running_var to be "
                            "both present or both absent";
  if (!getTraining() && !getRunningMean())
    return emitOpError() << "expected running_mean and running_var in eval "
                            "mode (training = false)";
  if (!(getEps() > 0))
    return emitOpError() << "expected eps > 0 but got " << str(getEps());
  if (!(getMomentum() >= 0 && getMomentum() <= 1))
    return emitOpError() << "expected momentum in [0, 1] but got "
                         << str(getMomentum());
  ArrayRef<int64_t> input = shapeOf(getInput());
  std::string error;
  if (!shapes::batchNorm(input, input.size() >= 2 ? input[1] : 0, error))
    return shapeError(*this, error);
  Type elementType = elementTypeOf(getInput());
  Type paramType = getNormParamElementType(getInput());
  int64_t channels[] = {input[1]};
  if (failed(verifyVector(*this, "weight", getWeight(), channels, paramType)) ||
      failed(verifyVector(*this, "bias", getBias(), channels, paramType)) ||
      failed(verifyVector(*this, "running_mean", getRunningMean(), channels,
                          paramType)) ||
      failed(verifyVector(*this, "running_var", getRunningVar(), channels,
                          paramType)))
    return failure();
  return verifyResult(*this, input, elementType);
}

LogicalResult LayerNormOp::verify() {
  ArrayRef<int64_t> input = shapeOf(getInput());
  int64_t rank = static_cast<int64_t>(input.size());
  int64_t normalizedRank = getNormalizedRank();
  if (normalizedRank < 1 || normalizedRank > rank)
    return emitOpError() << "expected normalized_rank in [1, " << rank
                         << "] for input " << shapes::format(input)
                         << " but got " << normalizedRank;
  if (!(getEps() > 0))
    return emitOpError() << "expected eps > 0 but got " << str(getEps());
  ArrayRef<int64_t> normalized = input.take_back(normalizedRank);
  std::string error;
  if (!shapes::layerNorm(input, normalized, error))
    return shapeError(*this, error);
  Type elementType = elementTypeOf(getInput());
  if (failed(verifyVector(*this, "weight", getWeight(), normalized,
                          elementType)) ||
      failed(verifyVector(*this, "bias", getBias(), normalized, elementType)))
    return failure();
  return verifyResult(*this, input, elementType);
}

LogicalResult EmbeddingOp::verify() {
  std::string error;
  std::optional<shapes::Shape> shape =
      shapes::embedding(shapeOf(getIndices()), shapeOf(getWeight()), error);
  if (!shape)
    return shapeError(*this, error);
  int64_t num = shapeOf(getWeight())[0];
  if (std::optional<int64_t> paddingIdx = getPaddingIdx())
    if (*paddingIdx < 0 || *paddingIdx >= num)
      return emitOpError() << "expected padding_idx in [0, " << num
                           << ") but got " << *paddingIdx;
  return verifyResult(*this, *shape, elementTypeOf(getWeight()));
}

LogicalResult CastOp::verify() {
  auto input = cast<RankedTensorType>(getInput().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (input.getShape() != result.getShape())
    return emitOpError() << "expected the input's shape but got " << result;
  return success();
}

LogicalResult DropoutOp::verify() {
  if (!(getP() >= 0 && getP() < 1))
    return emitOpError() << "expected p in [0, 1) but got " << str(getP());
  if (getStream() < 0)
    return emitOpError() << "expected stream >= 0 but got " << getStream();
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

LogicalResult MaxPool2dOp::verify() {
  std::string error;
  std::optional<shapes::Shape> shape = shapes::maxPool2d(
      shapeOf(getInput()), getKernelSize(), getStride(), getPadding(),
      getDilation(), getCeilMode(), error);
  if (!shape)
    return shapeError(*this, error);
  return verifyResult(*this, *shape, elementTypeOf(getInput()));
}

LogicalResult AvgPool2dOp::verify() {
  std::string error;
  std::optional<shapes::Shape> shape =
      shapes::avgPool2d(shapeOf(getInput()), getKernelSize(), getStride(),
                        getPadding(), getCeilMode(), error);
  if (!shape)
    return shapeError(*this, error);
  return verifyResult(*this, *shape, elementTypeOf(getInput()));
}

LogicalResult AdaptiveAvgPool2dOp::verify() {
  std::string error;
  std::optional<shapes::Shape> shape = shapes::adaptiveAvgPool2d(
      shapeOf(getInput()), getOutputSize(), error);
  if (!shape)
    return shapeError(*this, error);
  return verifyResult(*this, *shape, elementTypeOf(getInput()));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType input = tensorOf(getInput());
  RankedTensorType result = tensorOf(getResult());
  if (input.getElementType() != result.getElementType())
    return emitOpError() << "expected result with element type "
                         << input.getElementType() << " but got " << result;
  // Both shapes are valid (ValidShapes): their counts are exact.
  if (input.getNumElements() != result.getNumElements())
    return emitOpError() << "expected result with " << input.getNumElements()
                         << " elements, as input " << input << ", but got "
                         << result;
  return success();
}

LogicalResult PermuteOp::verify() {
  std::string error;
  std::optional<shapes::Shape> shape =
      shapes::permute(shapeOf(getInput()), getPermutation(), error);
  if (!shape)
    return shapeError(*this, error);
  return verifyResult(*this, *shape, elementTypeOf(getInput()));
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "expected at least one input but got none";
  Type elementType = elementTypeOf(getInputs().front());
  llvm::SmallVector<shapes::Shape> inputs;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    if (failed(verifyElementType(*this, "input #" + std::to_string(i), input,
                                 elementType)))
      return failure();
    inputs.emplace_back(shapeOf(input));
  }
  std::string error;
  std::optional<shapes::Shape> shape =
      shapes::concat(inputs, getDim(), error);
  if (!shape)
    return shapeError(*this, error);
  return verifyResult(*this, *shape, elementType);
}

LogicalResult SliceOp::verify() {
  std::string error;
  std::optional<shapes::Shape> shape = shapes::slice(
      shapeOf(getInput()), getStart(), getLimit(), getStep(), error);
  if (!shape)
    return shapeError(*this, error);
  return verifyResult(*this, *shape, elementTypeOf(getInput()));
}

//===----------------------------------------------------------------------===//
// Reductions and losses
//===----------------------------------------------------------------------===//

static LogicalResult verifyReduce(Operation *op, Value input,
                                  ArrayRef<int64_t> dims, bool keepdim) {
  std::string error;
  std::optional<shapes::Shape> shape =
      shapes::reduce(shapeOf(input), dims, keepdim, error);
  if (!shape)
    return shapeError(op, error);
  // A half input may be summed into a float32 result (the CPU reads it so,
  // cairn-compute-half-in-float32, where autocast sums in float32).
  Type element = elementTypeOf(input);
  Type resultElement = getElementTypeOrSelf(op->getResult(0).getType());
  if (isHalfElementType(element) && resultElement.isF32())
    element = resultElement;
  return verifyResult(op, *shape, element);
}

LogicalResult SumOp::verify() {
  return verifyReduce(*this, getInput(), getDims(), getKeepdim());
}

LogicalResult MeanOp::verify() {
  return verifyReduce(*this, getInput(), getDims(), getKeepdim());
}

LogicalResult CrossEntropyOp::verify() {
  double smoothing = getLabelSmoothing();
  if (!(smoothing >= 0 && smoothing <= 1))
    return emitOpError() << "expected label_smoothing in [0, 1] but got "
                         << str(smoothing);
  std::string error;
  std::optional<shapes::Shape> shape = shapes::crossEntropy(
      shapeOf(getLogits()), shapeOf(getLabels()), error);
  if (!shape)
    return shapeError(*this, error);
  return verifyResult(*this, *shape, elementTypeOf(getLogits()));
}

LogicalResult MseLossOp::verify() {
  if (getTarget().getType() != getInput().getType())
    return emitOpError() << "expected target of type " << getInput().getType()
                         << " but got " << getTarget().getType();
  return verifyResult(*this, {}, elementTypeOf(getInput()));
}
