//===- Normalization.h - BatchNorm and LayerNorm -----------------*- C++ -*-===//
//
// PyTorch semantics. BatchNorm sees x as [n, c, spatial] (spatial = H*W, L or
// 1); training mode normalizes with the biased batch variance. The backward
// passes recompute the statistics from x, so the forward saves nothing.
// gamma/beta (and their gradients) may be null when the layer has no affine
// part. Outputs and gradients are overwritten.
//
// Data-parallel replicas with synchronized batch norm (`cairn build
// --replicas R --sync-batchnorm`) pass a RankSum over the replicas: the
// statistics are then those of every replica's examples, as PyTorch's
// SyncBatchNorm's, and the kernels call it between their passes (so every
// replica must call the same kernels in the same order). The parameter
// gradients stay this replica's sums; the replicas' gradient sums
// (cairn-all-reduce-gradients) add them.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_NORMALIZATION_H
#define CAIRN_RUNTIME_KERNELS_NORMALIZATION_H

#include "runtime/kernels/RankSum.h"

#include <cstdint>

namespace cairn::kernels {

/// Training mode: batch statistics.
template <typename T>
void batchNormTrainingForward(int64_t n, int64_t c, int64_t spatial,
                              const T *x, const T *gamma, const T *beta,
                              double eps, T *y,
                              const RankSum &replicas = RankSum());

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
                       T *dgamma, T *dbeta,
                       const RankSum &replicas = RankSum());

/// running = (1 - momentum) * running + momentum * batch statistic, with the
/// unbiased variance (the count of examples - 1 in the divisor);
/// numBatchesTracked += 1. Updated in place.
template <typename T>
void batchNormUpdateRunningStats(int64_t n, int64_t c, int64_t spatial,
                                 const T *x, double momentum, T *runningMean,
                                 T *runningVar, int64_t *numBatchesTracked,
                                 const RankSum &replicas = RankSum());

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
