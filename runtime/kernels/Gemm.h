//===- Gemm.h - Matrix products through BLAS ---------------------*- C++ -*-===//
//
// Row-major GEMM on the CPU. T is float or double (dgemm, for gradient
// checks). Float products run on oneDNN's sgemm (its JIT kernels, the
// library PyTorch's CPU convolutions use) unless OpenBLAS is chosen: on the
// small products of the examples' linear layers (batch 64 or 256 against
// 512 features) it is faster than OpenBLAS's on one thread and two, the
// more so on two (bench/results/cpu-step-*.md against the runs before it).
// Double products, and the BLAS core and thread settings below, are
// OpenBLAS's (CBLAS).
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

/// The library float GEMMs run on (CAIRN_CPU_GEMM, runtime/CpuBackend.cpp).
/// Both leave every element of C to one thread where a kernel splits a
/// product (Conv.cpp, batchedGemm): inside an OpenMP parallel region each
/// call runs on its thread alone.
enum class GemmLibrary { OneDnn, OpenBlas };
void setGemmLibrary(GemmLibrary library);
GemmLibrary getGemmLibrary();
/// "oneDNN" or "OpenBLAS".
const char *getGemmLibraryName(GemmLibrary library);

/// The BLAS core in use, e.g. "SkylakeX" (for reports and benchmarks).
const char *blasCoreName();

/// Threads the BLAS and the kernels use (Parallel.h); 0 keeps the default,
/// one per core.
void setBlasThreads(int threads);

/// Threads the BLAS uses now (its default, or what setBlasThreads set).
int blasThreads();

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_GEMM_H
