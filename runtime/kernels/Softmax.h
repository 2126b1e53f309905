//===- Softmax.h - softmax and log_softmax ----------------------*- C++ -*-===//
//
// x viewed as [outer, dim, inner]; the softmax runs along the middle
// dimension, max-subtracted for stability.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_SOFTMAX_H
#define CAIRN_RUNTIME_KERNELS_SOFTMAX_H

#include <cstdint>

namespace cairn::kernels {

template <typename T>
void softmaxForward(bool log, int64_t outer, int64_t dim, int64_t inner,
                    const T *x, T *y);

/// The float32 softmax of a half tensor (T F16 or Bf16, Convert.h), as
/// autocast's float32 softmax of its float32 copy: x widened into y, then
/// the float kernel in place, its bits.
template <typename T>
void softmaxForward(bool log, int64_t outer, int64_t dim, int64_t inner,
                    const uint16_t *x, float *y);

/// Given the forward output y: softmax dx = y * (dy - sum(dy * y)),
/// log_softmax dx = dy - exp(y) * sum(dy).
template <typename T>
void softmaxBackward(bool log, int64_t outer, int64_t dim, int64_t inner,
                     const T *dy, const T *y, T *dx);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_SOFTMAX_H
