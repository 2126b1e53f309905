//===- Optimizer.h - SGD and Adam updates, in place --------------*- C++ -*-===//
//
// torch.optim.SGD, torch.optim.Adam and torch.optim.AdamW, step by step as
// PyTorch 1.13 computes them for one tensor:
//   SGD:  g = grad + wd * p; if momentum: buf = firstStep ? g
//         : momentum * buf + (1 - dampening) * g; g = nesterov ? g +
//         momentum * buf : buf; p -= lr * g
//   Adam: g = grad + wd * p; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
//         p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
//   AdamW: as Adam with g = grad, after p *= 1 - lr * wd
// where t is the 1-based step number.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_OPTIMIZER_H
#define CAIRN_RUNTIME_KERNELS_OPTIMIZER_H

#include <cstdint>

namespace cairn::kernels {

/// momentumBuffer may be null when momentum == 0.
template <typename T>
void sgdUpdate(int64_t n, double lr, double momentum, double dampening,
               double weightDecay, bool nesterov, bool firstStep, T *param,
               const T *grad, T *momentumBuffer);

template <typename T>
void adamUpdate(int64_t n, double lr, double beta1, double beta2, double eps,
                double weightDecay, bool decoupledWeightDecay, int64_t step,
                T *param, const T *grad, T *expAvg, T *expAvgSq);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_OPTIMIZER_H
