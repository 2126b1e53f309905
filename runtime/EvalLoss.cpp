//===- EvalLoss.cpp - The model's loss of one test example ----------------===//
#include "runtime/EvalLoss.h"

#include "runtime/Scalar.h"

#include <cmath>

namespace cairn::runtime {

double exampleLoss(const ModelLayout &layout, const unsigned char *output,
                   const unsigned char *target, int64_t row, bool &correct) {
  const LossForm &form = layout.spec->loss;
  const DType outputType = layout.output->dtype, targetType = layout.target->dtype;
  const size_t outputSize = dtypeSize(outputType), targetSize = dtypeSize(targetType);
  if (form.kind == LossKind::CrossEntropy) {
    const int64_t classes = layout.classes;
    const unsigned char *logits = output + row * classes * outputSize;
    double top = loadScalar(outputType, logits);
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c) {
      double value = loadScalar(outputType, logits + c * outputSize);
      if (value > top) {
        top = value;
        best = c;
      }
    }
    double sumExp = 0, sumLogits = 0;
    for (int64_t c = 0; c < classes; ++c) {
      double value = loadScalar(outputType, logits + c * outputSize);
      sumExp += std::exp(value - top);
      sumLogits += value;
    }
    const double logSumExp = top + std::log(sumExp);
    auto label = static_cast<int64_t>(loadScalar(targetType, target + row * targetSize));
    correct = best == label;
    // torch: (1 - s) * nll + s * mean over the classes of -log p.
    const double nll = logSumExp - loadScalar(outputType, logits + label * outputSize);
    const double uniform = logSumExp - sumLogits / static_cast<double>(classes);
    return (1 - form.labelSmoothing) * nll + form.labelSmoothing * uniform;
  }
  // mse_loss: the mean over the batch's elements is the mean of the
  // examples' means.
  int64_t elements = 1;
  for (size_t d = 1; d < layout.output->shape.size(); ++d)
    elements *= layout.output->shape[d];
  double sum = 0;
  for (int64_t k = row * elements; k < (row + 1) * elements; ++k) {
    double diff = loadScalar(outputType, output + k * outputSize) -
                  loadScalar(targetType, target + k * targetSize);
    sum += diff * diff;
  }
  correct = false;
  return sum / static_cast<double>(elements);
}

} // namespace cairn::runtime
