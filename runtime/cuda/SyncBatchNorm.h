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
#include "runtime/kernels/RankSum.h"

#include <cstdint>

namespace cairn::cuda {

template <typename T>
void syncBatchNormTrainingForward(Context &cx, int64_t n, int64_t c, int64_t spatial, const T *x,
                                  const T *gamma, const T *beta, double eps, T *y,
                                  double *workspace, const kernels::RankSum &replicas);
template <typename T>
void syncBatchNormBackward(Context &cx, int64_t n, int64_t c, int64_t spatial, const T *dy,
                           const T *x, const T *gamma, double eps, T *dx, T *dgamma, T *dbeta,
                           double *workspace, const kernels::RankSum &replicas);
template <typename T>
void syncBatchNormUpdateRunningStats(Context &cx, int64_t n, int64_t c, int64_t spatial,
                                     const T *x, double momentum, T *runningMean,
                                     T *runningVar, int64_t *numBatchesTracked,
                                     double *workspace, const kernels::RankSum &replicas);

} // namespace cairn::cuda

#endif // CAIRN_RUNTIME_CUDA_SYNCBATCHNORM_H
