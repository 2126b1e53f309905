//===- Normalization.h - BatchNorm and LayerNorm -----------------*- C++ -*-===//
//
// PyTorch semantics. BatchNorm sees x as [n, c, spatial] (spatial = H*W, L or
// 1); training mode normalizes with the biased batch variance. The backward
// passes recompute the statistics from x, so the forward saves nothing.
// gamma/beta (and their gradients) may be null when the layer has no affine
// part. Outputs and gradients are overwritten.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_NORMALIZATION_H
#define CAIRN_RUNTIME_KERNELS_NORMALIZATION_H

#include <cstdint>

namespace cairn::kernels {

/// Training mode: batch statistics.
template <typename T>
void batchNormTrainingForward(int64_t n, int64_t c, int64_t spatial,
                              const T *x, const T *gamma, const T *beta,
                              double eps, T *y);

/// Eval mode: running statistics.
template <typename T>
void batchNormInferenceForward(int64_t n, int64_t c, int64_t spatial,
                               const T *x, const T *gamma, const T *beta,
                               const T *runningMean, const T *runningVar,
                               double eps, T *y);

/// Backward of the training-mode forward.
template <typename T>
void batchNormBackward(int64_t n, int64_t c, int64_t spatial, const T *dy,
                       const T *x, const T *gamma, double eps, T *dx,
                       T *dgamma, T *dbeta);

/// running = (1 - momentum) * running + momentum * batch statistic, with the
/// unbiased variance (n * spatial - 1 in the divisor); numBatchesTracked += 1.
/// Updated in place.
template <typename T>
void batchNormUpdateRunningStats(int64_t n, int64_t c, int64_t spatial,
                                 const T *x, double momentum, T *runningMean,
                                 T *runningVar, int64_t *numBatchesTracked);

/// x is [rows, cols]; normalizes each row (cols = product of the normalized
/// trailing dims); gamma/beta are [cols] or null.
template <typename T>
void layerNormForward(int64_t rows, int64_t cols, const T *x, const T *gamma,
                      const T *beta, double eps, T *y);
template <typename T>
void layerNormBackward(int64_t rows, int64_t cols, const T *dy, const T *x,
                       const T *gamma, double eps, T *dx, T *dgamma,
                       T *dbeta);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_NORMALIZATION_H
