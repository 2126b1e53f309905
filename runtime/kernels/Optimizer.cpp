//===- Optimizer.cpp - SGD and Adam updates, in place ---------------------===//
//
// Each element is updated in double from its stored T values and rounded
// once per stored tensor. The order of operations follows PyTorch 1.13's
// _single_tensor_sgd and _single_tensor_adam, whose scalars (bias
// corrections, step size) are Python floats, i.e. double. Weight decay is
// skipped at 0 as PyTorch does, so an infinite parameter stays infinite
// rather than becoming NaN through 0 * inf.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Optimizer.h"

#include <cmath>

namespace cairn::kernels {

template <typename T>
void sgdUpdate(int64_t n, double lr, double momentum, double dampening,
               double weightDecay, bool nesterov, bool firstStep, T *param,
               const T *grad, T *momentumBuffer) {
  for (int64_t i = 0; i < n; ++i) {
    double p = param[i];
    double g = grad[i];
    if (weightDecay != 0)
      g += weightDecay * p;
    if (momentum != 0) {
      double buf = firstStep ? g
                             : momentum * double(momentumBuffer[i]) +
                                   (1 - dampening) * g;
      momentumBuffer[i] = T(buf);
      g = nesterov ? g + momentum * buf : buf;
    }
    param[i] = T(p - lr * g);
  }
}

template <typename T>
void adamUpdate(int64_t n, double lr, double beta1, double beta2, double eps,
                double weightDecay, int64_t step, T *param, const T *grad,
                T *expAvg, T *expAvgSq) {
  double t = double(step);
  double biasCorrection1 = 1 - std::pow(beta1, t);
  double biasCorrection2Sqrt = std::sqrt(1 - std::pow(beta2, t));
  double stepSize = lr / biasCorrection1;
  for (int64_t i = 0; i < n; ++i) {
    double p = param[i];
    double g = grad[i];
    if (weightDecay != 0)
      g += weightDecay * p;
    double m = beta1 * double(expAvg[i]) + (1 - beta1) * g;
    double v = beta2 * double(expAvgSq[i]) + (1 - beta2) * g * g;
    expAvg[i] = T(m);
    expAvgSq[i] = T(v);
    double denom = std::sqrt(v) / biasCorrection2Sqrt + eps;
    param[i] = T(p - stepSize * m / denom);
  }
}

template void sgdUpdate<float>(int64_t, double, double, double, double, bool,
                               bool, float *, const float *, float *);
template void sgdUpdate<double>(int64_t, double, double, double, double, bool,
                                bool, double *, const double *, double *);
template void adamUpdate<float>(int64_t, double, double, double, double,
                                double, int64_t, float *, const float *,
                                float *, float *);
template void adamUpdate<double>(int64_t, double, double, double, double,
                                 double, int64_t, double *, const double *,
                                 double *, double *);

} // namespace cairn::kernels
