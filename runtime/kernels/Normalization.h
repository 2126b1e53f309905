//===- Normalization.h - BatchNorm and LayerNorm -----------------*- C++ -*-===//
//
// PyTorch semantics. BatchNorm sees x as [n, c, spatial] (spatial = H*W, L or
// 1); training mode normalizes with the biased batch variance. The backward
// passes recompute the statistics from x, so the forward saves nothing.
// gamma/beta (and their gradients) may be null when the layer has no affine
// part. Outputs and gradients are overwritten.
//
// Data-parallel replicas with synchronized batch norm (`cairn build
// --replicas R --sync-batchnorm`) pass a RankSum over the replicas and a
// workspace of batchNormReplicaSumElements doubles, a buffer of the plan
// (cairn-sync-batch-norm): the statistics are then those of every replica's
// examples, as PyTorch's SyncBatchNorm's, and the kernels call the sum
// between their passes (so every replica must call the same kernels in the
// same order). The parameter gradients stay this replica's sums; the
// replicas' gradient sums (cairn-all-reduce-gradients) add them. The CUDA
// twins (runtime/cuda/Library.h) take the same workspace in device memory.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_NORMALIZATION_H
#define CAIRN_RUNTIME_KERNELS_NORMALIZATION_H

#include "runtime/kernels/Convert.h"
#include "runtime/kernels/RankSum.h"

#include <cstdint>

namespace cairn::kernels {

/// Where a batch norm kernel of c channels sums over the replicas, in its
/// workspace of doubles: [0, c) the channels' sums, then their means; [c]
/// the example count; [c + 1, 2c + 1) the squared deviations; then, for the
/// backward, the sums of dy and of dy * (x - mean), c each.
struct ReplicaSumLayout {
  int64_t c;
  constexpr int64_t means() const { return 0; }
  constexpr int64_t count() const { return c; }
  constexpr int64_t squares() const { return c + 1; }
  constexpr int64_t gradientSums() const { return 2 * c + 1; }
  constexpr int64_t elements(bool backward) const {
    return gradientSums() + (backward ? 2 * c : 0);
  }
};

/// The workspace's doubles (ReplicaSumLayout).
constexpr int64_t batchNormReplicaSumElements(int64_t c, bool backward) {
  return ReplicaSumLayout{c}.elements(backward);
}

/// T is float or double, or F16 or Bf16 (Convert.h): half storage for x, y,
/// dy and dx, read widened to float and written rounded, with the float32
/// weight, bias, running statistics and parameter gradients that autocast
/// gives batch norm (ComputedIn<T>); the bits of the float kernel between
/// casts, without the float32 copies.

/// Training mode: batch statistics.
template <typename T>
void batchNormTrainingForward(int64_t n, int64_t c, int64_t spatial,
                              const StoredAs<T> *x, const ComputedIn<T> *gamma,
                              const ComputedIn<T> *beta, double eps,
                              StoredAs<T> *y, double *workspace = nullptr,
                              const RankSum &replicas = RankSum());

/// Eval mode: running statistics.
template <typename T>
void batchNormInferenceForward(int64_t n, int64_t c, int64_t spatial,
                               const StoredAs<T> *x, const ComputedIn<T> *gamma,
                               const ComputedIn<T> *beta,
                               const ComputedIn<T> *runningMean,
                               const ComputedIn<T> *runningVar, double eps,
                               StoredAs<T> *y);

/// Backward of the training-mode forward.
template <typename T>
void batchNormBackward(int64_t n, int64_t c, int64_t spatial,
                       const StoredAs<T> *dy, const StoredAs<T> *x,
                       const ComputedIn<T> *gamma, double eps, StoredAs<T> *dx,
                       ComputedIn<T> *dgamma, ComputedIn<T> *dbeta,
                       double *workspace = nullptr,
                       const RankSum &replicas = RankSum());

/// running = (1 - momentum) * running + momentum * batch statistic, with the
/// unbiased variance (the count of examples - 1 in the divisor);
/// numBatchesTracked += 1. Updated in place.
template <typename T>
void batchNormUpdateRunningStats(int64_t n, int64_t c, int64_t spatial,
                                 const StoredAs<T> *x, double momentum,
                                 ComputedIn<T> *runningMean,
                                 ComputedIn<T> *runningVar,
                                 int64_t *numBatchesTracked,
                                 double *workspace = nullptr,
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
