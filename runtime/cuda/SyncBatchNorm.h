//===- SyncBatchNorm.h - Batch norm over every replica's examples -*- C++ -*-===//
//
// The GPU side of --sync-batchnorm: what Library.h's batchNormTrainingForward
// and batchNormBackward and Kernels.h's batchNormUpdateRunningStats run when
// they are given a sum over the replicas. Included by BatchNorm.cu and
// NormalizationKernels.cu only.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CUDA_SYNCBATCHNORM_H
#define CAIRN_RUNTIME_CUDA_SYNCBATCHNORM_H

#include "runtime/cuda/Context.h"
#include "runtime/kernels/Convert.h"
#include "runtime/kernels/RankSum.h"

#include <cstdint>

namespace cairn::cuda {

/// T is float or double, or kernels::F16 or Bf16: the data (x, y, dy, dx)
/// stored as StoredAs<T>, the parameters and statistics ComputedIn<T>, as
/// batchNormTrainingForward's (Library.h).
template <typename T>
void syncBatchNormTrainingForward(Context &cx, int64_t n, int64_t c, int64_t spatial,
                                  const kernels::StoredAs<T> *x,
                                  const kernels::ComputedIn<T> *gamma,
                                  const kernels::ComputedIn<T> *beta, double eps,
                                  kernels::StoredAs<T> *y, double *workspace,
                                  const kernels::RankSum &replicas);
template <typename T>
void syncBatchNormBackward(Context &cx, int64_t n, int64_t c, int64_t spatial,
                           const kernels::StoredAs<T> *dy, const kernels::StoredAs<T> *x,
                           const kernels::ComputedIn<T> *gamma, double eps,
                           kernels::StoredAs<T> *dx, kernels::ComputedIn<T> *dgamma,
                           kernels::ComputedIn<T> *dbeta, double *workspace,
                           const kernels::RankSum &replicas);
template <typename T>
void syncBatchNormUpdateRunningStats(Context &cx, int64_t n, int64_t c, int64_t spatial,
                                     const kernels::StoredAs<T> *x, double momentum,
                                     kernels::ComputedIn<T> *runningMean,
                                     kernels::ComputedIn<T> *runningVar, int64_t *numBatchesTracked,
                                     double *workspace, const kernels::RankSum &replicas);

} // namespace cairn::cuda

#endif // CAIRN_RUNTIME_CUDA_SYNCBATCHNORM_H
