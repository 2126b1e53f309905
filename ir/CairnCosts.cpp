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
// A conversion moves data; it computes nothing.
int64_t CastOp::getFlops() { return 0; }
// exp, add, divide and a negation.
int64_t SigmoidOp::getFlops() { return perResultElement(*this, 4); }
int64_t TanhOp::getFlops() { return perResultElement(*this, 4); }
// x / (1 + exp(-x)): exp, add, divide and a negation.
int64_t SiluOp::getFlops() { return perResultElement(*this, 4); }
// x * min(max(x + 3, 0), 6) / 6.
int64_t HardswishOp::getFlops() { return perResultElement(*this, 5); }
// Two compares and selects; a compare and a multiply.
int64_t ClampOp::getFlops() { return perResultElement(*this, 2); }
int64_t LeakyReluOp::getFlops() { return perResultElement(*this, 2); }
// x * 0.5 * (1 + erf(x / sqrt(2))) or its tanh form: about 8 either way.
int64_t GeluOp::getFlops() { return perResultElement(*this, 8); }
// max, subtract, exp, sum, divide (or log).
int64_t SoftmaxOp::getFlops() { return perResultElement(*this, 5); }
int64_t LogSoftmaxOp::getFlops() { return perResultElement(*this, 5); }

int64_t MatmulOp::getFlops() {
  ArrayRef<int64_t> lhs = cast<RankedTensorType>(getLhs().getType()).getShape();
  int64_t k = getTransposeLhs() ? lhs[lhs.size() - 2] : lhs.back();
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

//===----------------------------------------------------------------------===//
// Training ops (CairnTrainingOps.td)
//===----------------------------------------------------------------------===//

int64_t ReluGradOp::getFlops() { return perResultElement(*this, 1); }
// dy * y * (1 - y); dy * (1 - y * y).
int64_t SigmoidGradOp::getFlops() { return perResultElement(*this, 3); }
int64_t TanhGradOp::getFlops() { return perResultElement(*this, 3); }
// The sigmoid again (4), then dy * s * (1 + x * (1 - s)).
int64_t SiluGradOp::getFlops() { return perResultElement(*this, 9); }
// Two compares, x / 3 + 0.5 and the product.
int64_t HardswishGradOp::getFlops() { return perResultElement(*this, 5); }
// Two compares and a select; a compare and a multiply.
int64_t ClampGradOp::getFlops() { return perResultElement(*this, 3); }
int64_t LeakyReluGradOp::getFlops() { return perResultElement(*this, 2); }
// The forward's cdf (or tanh) again, the density term and the product.
int64_t GeluGradOp::getFlops() { return perResultElement(*this, 12); }
// The row sum of dy * y (or of dy), a subtract and a multiply (or exp).
int64_t SoftmaxGradOp::getFlops() { return perResultElement(*this, 4); }
int64_t LogSoftmaxGradOp::getFlops() { return perResultElement(*this, 4); }

// Both products have the forward's multiply-adds: 2 * numel(dy) * in.
int64_t LinearGradInputOp::getFlops() {
  int64_t in = cast<RankedTensorType>(getWeight().getType()).getShape()[1];
  return saturatingMul(saturatingMul(numel(getDy()), 2), in);
}

int64_t LinearGradWeightOp::getFlops() {
  int64_t in = cast<RankedTensorType>(getInput().getType()).getShape().back();
  return saturatingMul(saturatingMul(numel(getDy()), 2), in);
}

// Both products have the forward's multiply-adds:
// 2 * numel(dy) * (C / groups) * kh * kw; a transposed convolution's bias
// one add per result element.
int64_t Conv2dGradInputOp::getFlops() {
  ArrayRef<int64_t> weight =
      cast<RankedTensorType>(getWeight().getType()).getShape();
  int64_t flops = saturatingMul(saturatingMul(numel(getDy()), 2),
                                product(weight.drop_front(1)));
  if (getBias())
    flops = saturatingAdd(flops, perResultElement(*this, 1));
  return flops;
}

int64_t Conv2dGradWeightOp::getFlops() {
  ArrayRef<int64_t> weight =
      cast<RankedTensorType>(getResult().getType()).getShape();
  return saturatingMul(saturatingMul(numel(getDy()), 2),
                       product(weight.drop_front(1)));
}

// Statistics recomputed, two reductions over dy, and dx.
int64_t BatchNormGradOp::getFlops() {
  return saturatingMul(numel(getInput()), 10);
}

// Sum and sum of squares per channel, and the blend of each statistic.
int64_t BatchNormRunningUpdateOp::getFlops() {
  return saturatingMul(numel(getInput()), 3);
}

int64_t LayerNormGradOp::getFlops() {
  return saturatingMul(numel(getInput()), 10);
}

// One add per element of dy.
int64_t EmbeddingGradOp::getFlops() { return numel(getDy()); }

// The window scanned again for its maximum.
int64_t MaxPool2dGradOp::getFlops() {
  return saturatingMul(numel(getDy()), product(getKernelSize()));
}

int64_t AvgPool2dGradOp::getFlops() {
  return saturatingMul(numel(getDy()), product(getKernelSize()));
}

int64_t AdaptiveAvgPool2dGradOp::getFlops() {
  return saturatingAdd(numel(getDy()), perResultElement(*this, 1));
}

int64_t SliceGradOp::getFlops() { return 0; }
int64_t BroadcastOp::getFlops() { return 0; }

// softmax (5 per logit), the target subtracted, the scale.
int64_t CrossEntropyGradOp::getFlops() {
  return saturatingMul(numel(getLogits()), 7);
}

// subtract, scale.
int64_t MseLossGradOp::getFlops() { return perResultElement(*this, 2); }

int64_t ClipCoefficientOp::getFlops() {
  // |g|^p and the sum, per element.
  int64_t flops = 0;
  for (Value grad : getGrads())
    flops = saturatingAdd(flops, saturatingMul(numel(grad), 2));
  return flops;
}

int64_t LossScaleOp::getFlops() { return 1; }

// isfinite per element.
int64_t FoundInfOp::getFlops() {
  int64_t flops = 0;
  for (Value grad : getGrads())
    flops = saturatingAdd(flops, numel(grad));
  return flops;
}

int64_t SkipSelectOp::getFlops() { return numel(getResult()); }

int64_t SGDUpdateOp::getFlops() {
  int64_t perElement = 2; // p -= lr * g
  if (getWeightDecay() != 0)
    perElement += 2;
  if (getMomentum() != 0)
    perElement += getNesterov() ? 5 : 3;
  return saturatingMul(numel(getParam()), perElement);
}

int64_t AdamUpdateOp::getFlops() {
  // m: 3, v: 4, the step with its bias corrections and sqrt: 5.
  int64_t perElement = getWeightDecay() != 0 ? 14 : 12;
  return saturatingMul(numel(getParam()), perElement);
}
