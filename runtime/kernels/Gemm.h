//===- Gemm.h - Matrix products through BLAS ---------------------*- C++ -*-===//
//
// Row-major GEMM on the CPU through CBLAS (OpenBLAS). T is float (sgemm) or
// double (dgemm, for gradient checks).
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_GEMM_H
#define CAIRN_RUNTIME_KERNELS_GEMM_H

#include <cstdint>

namespace cairn::kernels {

/// C[m, n] = alpha * op(A) * op(B) + beta * C, all row-major; op(A) is
/// [m, k] (A stored [k, m] when transA), op(B) is [k, n] (B stored [n, k]
/// when transB). lda/ldb/ldc are row strides in elements.
template <typename T>
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, T alpha,
          const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
          int64_t ldc);

/// `batch` independent GEMMs; strideA/B/C are element offsets between
/// consecutive matrices (0 broadcasts one matrix over the batch; strideC
/// must not be 0).
template <typename T>
void batchedGemm(int64_t batch, bool transA, bool transB, int64_t m, int64_t n,
                 int64_t k, T alpha, const T *a, int64_t lda, int64_t strideA,
                 const T *b, int64_t ldb, int64_t strideB, T beta, T *c,
                 int64_t ldc, int64_t strideC);

/// The BLAS core in use, e.g. "SkylakeX" (for reports and benchmarks).
const char *blasCoreName();

/// Threads the BLAS and the kernels use (Parallel.h); 0 keeps the default,
/// one per core.
void setBlasThreads(int threads);

/// Threads the BLAS uses now (its default, or what setBlasThreads set).
int blasThreads();

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_GEMM_H
