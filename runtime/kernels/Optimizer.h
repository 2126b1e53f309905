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
// Before them, with loss scaling, whether a gradient is not finite
// (foundInf), and torch.nn.utils.clip_grad_norm_'s coefficient (clipCoefficient):
// the gradients' total p-norm, then min(max_norm / (total + 1e-6), 1), which
// every gradient is multiplied by. The sum runs over fixed chunks of
// kGradNormChunk elements, one partial each in the workspace, added in order:
// the same bits for any number of threads, and the rule the CUDA kernel and
// the compiler's workspace size share.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_OPTIMIZER_H
#define CAIRN_RUNTIME_KERNELS_OPTIMIZER_H

#include "runtime/kernels/RankSum.h"

#include <cstdint>

namespace cairn::kernels {

/// Elements of one gradient-norm partial.
constexpr int64_t kGradNormChunk = int64_t(1) << 16;

/// Workspace elements (double) clipCoefficient takes for gradients of
/// `sizes`: one partial per chunk of each.
inline int64_t clipCoefficientWorkspaceElements(const int64_t *sizes, int count) {
  int64_t chunks = 0;
  for (int t = 0; t < count; ++t)
    chunks += (sizes[t] + kGradNormChunk - 1) / kGradNormChunk;
  return chunks;
}

/// clip_grad_norm_'s coefficient of the `count` gradients grads[t] of
/// sizes[t] elements, written to coefficient[0]: their total `normType`-norm
/// (infinity: the largest magnitude; a NaN anywhere makes it NaN), then, in
/// T as PyTorch computes it, min(maxNorm * (1 / (total + 1e-6)), 1).
/// `workspace` holds clipCoefficientWorkspaceElements doubles.
///
/// A device of a model split across devices passes its own gradients,
/// `deviceChunks` and `devices` (a sum over the devices): gradient t's
/// partials go at workspace[deviceChunks[t]...] among every device's, whose
/// count deviceChunks[count] is (the workspace holds them), every other
/// partial 0. The devices' sum then gives every partial its one device's
/// value exactly (x + 0 is x), and all are combined in order: the norm of
/// one device holding every gradient, to the bit, on every device.
template <typename T>
void clipCoefficient(int count, const T *const *grads, const int64_t *sizes, double maxNorm,
                     double normType, double *workspace, T *coefficient,
                     const int64_t *deviceChunks = nullptr, const RankSum &devices = RankSum());

/// torch.amp.GradScaler's found_inf: found[0] = 1 when an element of the
/// `count` gradients grads[t] of sizes[t] elements is infinite or NaN, or
/// when `halfNotFinite` (anyNotFinite of the step's half gradients), else
/// 0. A step with loss scaling skips its updates (and the running
/// statistics' commit) when it is 1. With `devices` (a device of a model
/// split across devices, passing its own gradients), 1 when any device's
/// gradient is not finite.
template <typename T>
void foundInf(int count, const T *const *grads, const int64_t *sizes, T *found,
              const RankSum &devices = RankSum(), bool halfNotFinite = false);

/// Whether an element of the `count` half gradients grads[t] of sizes[t]
/// elements, stored as Tag (F16 or Bf16, Convert.h), is infinite or NaN:
/// its exponent bits all set, as its float32 widening's would be.
template <typename Tag>
bool anyNotFinite(int count, const uint16_t *const *grads, const int64_t *sizes);

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
