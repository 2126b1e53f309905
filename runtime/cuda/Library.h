//===- Library.h - GEMMs through cuBLASLt, the rest through cuDNN -*- C++ -*-===//
//
// Each call names its call site (Context::site): the first call builds the
// descriptors and chooses the algorithm, among those whose workspace fits the
// bytes the plan gave it; later calls, and the graph that replays them, reuse
// that choice. All math is fp32 (or fp64) with TF32 off: CUBLAS_COMPUTE_32F,
// CUDNN_DEFAULT_MATH with CUDNN_FMA_MATH where cuDNN offers it. The half
// GEMMs (halfGemm, halfBatchedGemm, halfLinearForward) and convolutions
// (halfConv2dForward, halfConv2dBackwardInput) read and write f16 or bf16
// (the bits as uint16_t, `Type` saying which) and accumulate in fp32 on the
// tensor cores: CUBLAS_COMPUTE_32F, a float convolution descriptor, fp32
// alpha and beta.
//
// Row-major, as the CPU kernels: gemm computes C = alpha op(A) op(B) + beta C
// with the arguments of kernels::gemm.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CUDA_LIBRARY_H
#define CAIRN_RUNTIME_CUDA_LIBRARY_H

#include "runtime/cuda/Context.h"
#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Convert.h"
#include "runtime/kernels/Pool.h"
#include "runtime/kernels/RankSum.h"

#include <cstddef>
#include <cstdint>

namespace cairn::cuda {

template <typename T>
void gemm(Context &cx, int site, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          T alpha, const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c, int64_t ldc,
          void *workspace, size_t workspaceBytes);
template <typename T>
void batchedGemm(Context &cx, int site, int64_t batch, bool transA, bool transB, int64_t m,
                 int64_t n, int64_t k, T alpha, const T *a, int64_t lda, int64_t strideA,
                 const T *b, int64_t ldb, int64_t strideB, T beta, T *c, int64_t ldc,
                 int64_t strideC, void *workspace, size_t workspaceBytes);
/// y[rows, out] = x[rows, in] W[out, in]^T (+ bias[out]) (then relu), one
/// cuBLASLt call with the bias (and relu) as its epilogue.
template <typename T>
void linearForward(Context &cx, int site, int64_t rows, int64_t in, int64_t out, const T *x,
                   const T *w, const T *bias, bool relu, T *y, void *workspace,
                   size_t workspaceBytes);

/// gemm, batchedGemm and linearForward on f16 or bf16 (Type F16 or BF16)
/// operands and results, accumulated in fp32; each result is rounded once.
template <kernels::CastType Type>
void halfGemm(Context &cx, int site, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              float alpha, const uint16_t *a, int64_t lda, const uint16_t *b, int64_t ldb,
              float beta, uint16_t *c, int64_t ldc, void *workspace, size_t workspaceBytes);
template <kernels::CastType Type>
void halfBatchedGemm(Context &cx, int site, int64_t batch, bool transA, bool transB, int64_t m,
                     int64_t n, int64_t k, float alpha, const uint16_t *a, int64_t lda,
                     int64_t strideA, const uint16_t *b, int64_t ldb, int64_t strideB, float beta,
                     uint16_t *c, int64_t ldc, int64_t strideC, void *workspace,
                     size_t workspaceBytes);
template <kernels::CastType Type>
void halfLinearForward(Context &cx, int site, int64_t rows, int64_t in, int64_t out,
                       const uint16_t *x, const uint16_t *w, const uint16_t *bias, bool relu,
                       uint16_t *y, void *workspace, size_t workspaceBytes);

/// NCHW convolutions; `bias` and `dbias` may be null.
template <typename T>
void conv2dForward(Context &cx, int site, const kernels::Conv2dShape &s, const T *x, const T *w,
                   const T *bias, T *y, void *workspace, size_t workspaceBytes);
/// conv2dBackwardInput's `bias` (s.c elements: a transposed convolution's) is
/// added to dx.
template <typename T>
void conv2dBackwardInput(Context &cx, int site, const kernels::Conv2dShape &s,
                         const T *dy, const T *w, const T *bias, T *dx,
                         void *workspace, size_t workspaceBytes);
template <typename T>
void conv2dBackwardWeight(Context &cx, int site, const kernels::Conv2dShape &s, const T *dy,
                          const T *x, T *dw, T *dbias, void *workspace, size_t workspaceBytes);

/// conv2dForward and conv2dBackwardInput on f16 or bf16 (Type F16 or BF16)
/// tensors, accumulated in fp32; each result is rounded once.
template <kernels::CastType Type>
void halfConv2dForward(Context &cx, int site, const kernels::Conv2dShape &s, const uint16_t *x,
                       const uint16_t *w, const uint16_t *bias, uint16_t *y, void *workspace,
                       size_t workspaceBytes);
template <kernels::CastType Type>
void halfConv2dBackwardInput(Context &cx, int site,
                             const kernels::Conv2dShape &s, const uint16_t *dy,
                             const uint16_t *w, const uint16_t *bias,
                             uint16_t *dx, void *workspace,
                             size_t workspaceBytes);

/// Batch normalisation over (n, c, spatial) as kernels::batchNorm*: batch
/// statistics with the biased variance; gamma/beta may be null (no affine).
/// The backward recomputes the batch statistics (the plan keeps none).
/// With `replicas` (--sync-batchnorm: DeviceCollectives.h's sumOverRanks),
/// the statistics are every replica's examples', summed in `workspace`
/// (device memory, kernels::batchNormReplicaSumElements doubles) by our
/// own kernels (SyncBatchNorm.h), not cuDNN. T is float or double, or
/// kernels::F16 or Bf16: the data (x, y, dy, dx) then half storage, the
/// parameters, statistics and parameter gradients float32 (ComputedIn<T>),
/// as kernels::batchNorm*, computed by our own kernels on the widened data.
template <typename T>
void batchNormTrainingForward(Context &cx, int site, int64_t n, int64_t c, int64_t spatial,
                              const kernels::StoredAs<T> *x, const kernels::ComputedIn<T> *gamma,
                              const kernels::ComputedIn<T> *beta, double eps,
                              kernels::StoredAs<T> *y, double *workspace = nullptr,
                              const kernels::RankSum &replicas = kernels::RankSum());
template <typename T>
void batchNormInferenceForward(Context &cx, int site, int64_t n, int64_t c, int64_t spatial,
                               const kernels::StoredAs<T> *x, const kernels::ComputedIn<T> *gamma,
                               const kernels::ComputedIn<T> *beta,
                               const kernels::ComputedIn<T> *runningMean,
                               const kernels::ComputedIn<T> *runningVar, double eps,
                               kernels::StoredAs<T> *y);
template <typename T>
void batchNormBackward(Context &cx, int site, int64_t n, int64_t c, int64_t spatial,
                       const kernels::StoredAs<T> *dy, const kernels::StoredAs<T> *x,
                       const kernels::ComputedIn<T> *gamma, double eps, kernels::StoredAs<T> *dx,
                       kernels::ComputedIn<T> *dgamma, kernels::ComputedIn<T> *dbeta,
                       double *workspace = nullptr,
                       const kernels::RankSum &replicas = kernels::RankSum());

/// Pooling forward through cuDNN (the backward is in Kernels.h). Max
/// pooling on f16 or bf16 storage (T kernels::F16 or Bf16) runs
/// maxPool2dForwardDirect, the CPU's comparisons and NaN.
template <typename T>
void maxPool2dForward(Context &cx, int site, const kernels::Pool2dShape &s,
                      const kernels::StoredAs<T> *x, kernels::StoredAs<T> *y);
template <typename T>
void avgPool2dForward(Context &cx, int site, const kernels::Pool2dShape &s,
                      bool countIncludePad, const T *x, T *y);

/// "cuDNN 9.19.0, cuBLASLt 13.1.0": the versions loaded at run time.
const char *librariesVersion();

} // namespace cairn::cuda

#endif // CAIRN_RUNTIME_CUDA_LIBRARY_H
