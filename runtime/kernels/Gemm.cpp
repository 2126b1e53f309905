//===- Gemm.cpp - Matrix products through BLAS ----------------------------===//
//
// Thin wrappers over dnnl_sgemm (oneDNN) or cblas_sgemm, and cblas_dgemm
// (OpenBLAS). Sizes arrive as int64_t and go to the BLAS as blasint, so they
// are range-checked first.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Gemm.h"

#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Parallel.h"

#include <cblas.h>
#include <dnnl.h>
#include <omp.h>

#include <atomic>
#include <limits>
#include <string>
#include <utility>

namespace cairn::kernels {

namespace {

std::atomic<GemmLibrary> gemmLibrary{GemmLibrary::OneDnn};

blasint toBlasInt(int64_t v, const char *what) {
  if (v < 0 || v > std::numeric_limits<blasint>::max())
    throw KernelError(std::string("gemm: ") + what +
                      " out of BLAS range: " + std::to_string(v));
  return static_cast<blasint>(v);
}

void blasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n,
              blasint k, float alpha, const float *a, blasint lda,
              const float *b, blasint ldb, float beta, float *c, blasint ldc) {
  if (gemmLibrary.load(std::memory_order_relaxed) == GemmLibrary::OneDnn) {
    // Row-major, as CBLAS is called here.
    const dnnl_status_t status =
        dnnl_sgemm(ta == CblasTrans ? 'T' : 'N', tb == CblasTrans ? 'T' : 'N',
                   m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (status != dnnl_success)
      throw KernelError("gemm: oneDNN's sgemm failed (dnnl_status_t " +
                        std::to_string(int(status)) + ")");
    return;
  }
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}

void blasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n,
              blasint k, double alpha, const double *a, blasint lda,
              const double *b, blasint ldb, double beta, double *c,
              blasint ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}

} // namespace

template <typename T>
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, T alpha,
          const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
          int64_t ldc) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    // C = beta * C; the BLAS would reject the degenerate leading dimensions
    // such a call usually carries. beta == 0 overwrites, as in the BLAS.
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    return;
  }
  blasGemm(transA ? CblasTrans : CblasNoTrans,
           transB ? CblasTrans : CblasNoTrans, toBlasInt(m, "m"),
           toBlasInt(n, "n"), toBlasInt(k, "k"), alpha, a,
           toBlasInt(lda, "lda"), b, toBlasInt(ldb, "ldb"), beta, c,
           toBlasInt(ldc, "ldc"));
}

template <typename T>
void batchedGemm(int64_t batch, bool transA, bool transB, int64_t m, int64_t n,
                 int64_t k, T alpha, const T *a, int64_t lda, int64_t strideA,
                 const T *b, int64_t ldb, int64_t strideB, T beta, T *c,
                 int64_t ldc, int64_t strideC) {
  if (strideC == 0 && batch > 1)
    throw KernelError("batchedGemm: strideC is 0, outputs would alias");
  // Every matrix has the same sizes: checked here, so that no gemm below
  // throws inside the parallel region.
  for (auto [value, name] : {std::pair{m, "m"}, {n, "n"}, {k, "k"},
                             {lda, "lda"}, {ldb, "ldb"}, {ldc, "ldc"}})
    toBlasInt(value, name);
  // Matrices split across threads, each product on one thread (OpenBLAS's
  // OpenMP build does not thread inside a parallel region): many small
  // products, as attention's, gain more this way than from threading each.
  parallelFor(batch, std::max<int64_t>(m * n * k / 16, 1),
              [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i)
                  gemm(transA, transB, m, n, k, alpha, a + i * strideA, lda,
                       b + i * strideB, ldb, beta, c + i * strideC, ldc);
              });
}

void setGemmLibrary(GemmLibrary library) { gemmLibrary.store(library); }

GemmLibrary getGemmLibrary() { return gemmLibrary.load(); }

const char *getGemmLibraryName(GemmLibrary library) {
  return library == GemmLibrary::OneDnn ? "oneDNN" : "OpenBLAS";
}

const char *blasCoreName() { return openblas_get_corename(); }

void setBlasThreads(int threads) {
  if (threads <= 0)
    return;
  // OpenBLAS's OpenMP build sizes its share of the pool itself; the
  // kernels' own loops (Parallel.h) take the OpenMP setting.
  openblas_set_num_threads(threads);
  omp_set_num_threads(threads);
}

int blasThreads() { return openblas_get_num_threads(); }

template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, float,
                          const float *, int64_t, const float *, int64_t, float,
                          float *, int64_t);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, double,
                           const double *, int64_t, const double *, int64_t,
                           double, double *, int64_t);
template void batchedGemm<float>(int64_t, bool, bool, int64_t, int64_t, int64_t,
                                 float, const float *, int64_t, int64_t,
                                 const float *, int64_t, int64_t, float,
                                 float *, int64_t, int64_t);
template void batchedGemm<double>(int64_t, bool, bool, int64_t, int64_t,
                                  int64_t, double, const double *, int64_t,
                                  int64_t, const double *, int64_t, int64_t,
                                  double, double *, int64_t, int64_t);

} // namespace cairn::kernels
