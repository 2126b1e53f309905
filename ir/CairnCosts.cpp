//===- CairnCosts.cpp - CostOpInterface of the cairn ops ------------------===//
//
// FLOPs of one execution: a multiply-add counts 2, an elementwise op 1 per
// output element; data movement and constants 0. Every count saturates at
// INT64_MAX (see saturatingAdd / saturatingMul).
//
//===----------------------------------------------------------------------===//

#include "ir/CairnInterfaces.h"
#include "ir/CairnOps.h"

using namespace mlir;
using namespace cairn;

/// The element count of a value's tensor type, saturating (0 for a dynamic
/// dimension, which a verified op never has).
static int64_t numel(Value value) {
  int64_t count = 1;
  for (int64_t d : cast<RankedTensorType>(value.getType()).getShape())
    count = saturatingMul(count, d);
  return count;
}

/// `perElement` FLOPs per element of the op's result.
static int64_t perResultElement(Operation *op, int64_t perElement) {
  return saturatingMul(numel(op->getResult(0)), perElement);
}

/// Product of the values of an array attribute, saturating.
static int64_t product(ArrayRef<int64_t> values) {
  int64_t result = 1;
  for (int64_t v : values)
    result = saturatingMul(result, v);
  return result;
}

int64_t ConstantOp::getFlops() { return 0; }

int64_t AddOp::getFlops() { return perResultElement(*this, 1); }
int64_t SubOp::getFlops() { return perResultElement(*this, 1); }
int64_t MulOp::getFlops() { return perResultElement(*this, 1); }
int64_t DivOp::getFlops() { return perResultElement(*this, 1); }

int64_t ReluOp::getFlops() { return perResultElement(*this, 1); }
// exp, add, divide and a negation.
int64_t SigmoidOp::getFlops() { return perResultElement(*this, 4); }
int64_t TanhOp::getFlops() { return perResultElement(*this, 4); }
// x * 0.5 * (1 + erf(x / sqrt(2))) or its tanh form: about 8 either way.
int64_t GeluOp::getFlops() { return perResultElement(*this, 8); }
// max, subtract, exp, sum, divide (or log).
int64_t SoftmaxOp::getFlops() { return perResultElement(*this, 5); }
int64_t LogSoftmaxOp::getFlops() { return perResultElement(*this, 5); }

int64_t MatmulOp::getFlops() {
  int64_t k = cast<RankedTensorType>(getLhs().getType()).getShape().back();
  return saturatingMul(perResultElement(*this, 2), k);
}

int64_t LinearOp::getFlops() {
  int64_t in = cast<RankedTensorType>(getWeight().getType()).getShape().back();
  int64_t flops = saturatingMul(perResultElement(*this, 2), in);
  if (getBias())
    flops = saturatingAdd(flops, perResultElement(*this, 1));
  return flops;
}

int64_t Conv2dOp::getFlops() {
  // 2 * N * O * Ho * Wo * (C / groups) * kh * kw, + N * O * Ho * Wo for bias.
  ArrayRef<int64_t> weight =
      cast<RankedTensorType>(getWeight().getType()).getShape();
  int64_t perOutput = product(weight.drop_front(1)); // (C / groups) * kh * kw
  int64_t flops =
      saturatingMul(perResultElement(*this, 2), perOutput);
  if (getBias())
    flops = saturatingAdd(flops, perResultElement(*this, 1));
  return flops;
}

int64_t BatchNormOp::getFlops() {
  // Training also computes the batch mean and variance.
  return perResultElement(*this, getTraining() ? 8 : 4);
}

int64_t LayerNormOp::getFlops() { return perResultElement(*this, 8); }

int64_t EmbeddingOp::getFlops() { return 0; }

int64_t DropoutOp::getFlops() {
  // A random draw compared with p, and a multiply; the identity in eval mode.
  return getTraining() ? perResultElement(*this, 2) : 0;
}

int64_t MaxPool2dOp::getFlops() {
  return saturatingMul(perResultElement(*this, 1), product(getKernelSize()));
}

int64_t AvgPool2dOp::getFlops() {
  return saturatingMul(perResultElement(*this, 1), product(getKernelSize()));
}

int64_t AdaptiveAvgPool2dOp::getFlops() {
  // Every input element summed about once, and one divide per output.
  return saturatingAdd(numel(getInput()), perResultElement(*this, 1));
}

int64_t ReshapeOp::getFlops() { return 0; }
int64_t PermuteOp::getFlops() { return 0; }
int64_t ConcatOp::getFlops() { return 0; }
int64_t SliceOp::getFlops() { return 0; }

int64_t SumOp::getFlops() { return numel(getInput()); }

int64_t MeanOp::getFlops() {
  return saturatingAdd(numel(getInput()), perResultElement(*this, 1));
}

int64_t CrossEntropyOp::getFlops() {
  // log_softmax (5 per logit), the picked term and the smoothing term.
  return saturatingMul(numel(getLogits()), 6);
}

int64_t MseLossOp::getFlops() {
  // subtract, square, accumulate.
  return saturatingMul(numel(getInput()), 3);
}
