//===- Optimizer.cpp - SGD and Adam updates, in place ---------------------===//
//
// Each element is updated in double from its stored T values and rounded
// once per stored tensor, by the bodies in ScalarOps.h that the CUDA
// kernels share. The order of operations follows PyTorch 1.13's
// _single_tensor_sgd and _single_tensor_adam, whose scalars (bias
// corrections, step size) are Python floats, i.e. double. Weight decay is
// skipped at 0 as PyTorch does, so an infinite parameter stays infinite
// rather than becoming NaN through 0 * inf.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Optimizer.h"

#include "runtime/kernels/ScalarOps.h"

namespace cairn::kernels {

template <typename T>
void sgdUpdate(int64_t n, double lr, double momentum, double dampening,
               double weightDecay, bool nesterov, bool firstStep, T *param,
               const T *grad, T *momentumBuffer) {
  const ops::SgdHyper h = {lr, momentum, dampening, weightDecay, nesterov};
  for (int64_t i = 0; i < n; ++i)
    ops::sgdElement(h, firstStep, param, grad, momentumBuffer, i);
}

template <typename T>
void adamUpdate(int64_t n, double lr, double beta1, double beta2, double eps,
                double weightDecay, bool decoupledWeightDecay, int64_t step,
                T *param, const T *grad, T *expAvg, T *expAvgSq) {
  const ops::AdamHyper h = {lr,  beta1,       beta2,
                            eps, weightDecay, decoupledWeightDecay};
  const ops::AdamBias bias = ops::adamBias(h, step);
  for (int64_t i = 0; i < n; ++i)
    ops::adamElement(h, bias, param, grad, expAvg, expAvgSq, i);
}

template void sgdUpdate<float>(int64_t, double, double, double, double, bool,
                               bool, float *, const float *, float *);
template void sgdUpdate<double>(int64_t, double, double, double, double, bool,
                                bool, double *, const double *, double *);
template void adamUpdate<float>(int64_t, double, double, double, double,
                                double, bool, int64_t, float *, const float *,
                                float *, float *);
template void adamUpdate<double>(int64_t, double, double, double, double,
                                 double, bool, int64_t, double *,
                                 const double *, double *, double *);

} // namespace cairn::kernels
