//===- GemmTest.cpp - BLAS-backed matrix products -------------------------===//
//
// Every transpose combination, padded leading dimensions, alpha/beta, and
// batched products with a broadcast operand, against a naive triple loop.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Gemm.h"

#include "GradCheck.h"
#include "runtime/kernels/KernelError.h"

#include <cmath>
#include <string>
#include <vector>

using namespace cairn::kernels;
using cairn::kernels::testing::randomVector;

namespace {

template <typename T> std::vector<T> cast(const std::vector<double> &v) {
  return std::vector<T>(v.begin(), v.end());
}

/// C = alpha * op(A) op(B) + beta * C in double, same storage conventions.
void naiveGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
               double alpha, const std::vector<double> &a, int64_t lda,
               const std::vector<double> &b, int64_t ldb, double beta,
               std::vector<double> &c, int64_t ldc, int64_t offA = 0,
               int64_t offB = 0, int64_t offC = 0) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        double av = transA ? a[offA + p * lda + i] : a[offA + i * lda + p];
        double bv = transB ? b[offB + j * ldb + p] : b[offB + p * ldb + j];
        sum += av * bv;
      }
      double &cv = c[offC + i * ldc + j];
      cv = alpha * sum + beta * cv;
    }
}

template <typename T>
void expectClose(const std::vector<T> &got, const std::vector<double> &want,
                 const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(double(got[i]), want[i],
                tol * std::max(1.0, std::fabs(want[i])))
        << what << " element " << i;
}

template <typename T> void checkAllTransposes() {
  const int64_t m = 5, n = 7, k = 4;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      // Stored shapes, each with two columns of padding in the row stride.
      const int64_t aRows = ta ? k : m, aCols = ta ? m : k;
      const int64_t bRows = tb ? n : k, bCols = tb ? k : n;
      const int64_t lda = aCols + 2, ldb = bCols + 2, ldc = n + 2;
      auto a = randomVector(aRows * lda, 1), b = randomVector(bRows * ldb, 2);
      auto c = randomVector(m * ldc, 3);
      std::vector<double> want = c;
      naiveGemm(ta, tb, m, n, k, 0.5, a, lda, b, ldb, -2.0, want, ldc);
      std::vector<T> ta_ = cast<T>(a), tb_ = cast<T>(b), tc = cast<T>(c);
      gemm<T>(ta, tb, m, n, k, T(0.5), ta_.data(), lda, tb_.data(), ldb,
              T(-2.0), tc.data(), ldc);
      expectClose(tc, want,
                  std::string("transA=") + (ta ? "1" : "0") +
                      " transB=" + (tb ? "1" : "0"));
    }
}

TEST(Gemm, AllTransposesFloat) { checkAllTransposes<float>(); }

TEST(Gemm, AllTransposesFloatOnEitherLibrary) {
  // oneDNN's sgemm (the default) and OpenBLAS's (CAIRN_CPU_GEMM=openblas).
  const GemmLibrary before = getGemmLibrary();
  for (GemmLibrary library : {GemmLibrary::OneDnn, GemmLibrary::OpenBlas}) {
    SCOPED_TRACE(getGemmLibraryName(library));
    setGemmLibrary(library);
    EXPECT_EQ(getGemmLibrary(), library);
    checkAllTransposes<float>();
  }
  setGemmLibrary(before);
  EXPECT_EQ(getGemmLibrary(), GemmLibrary::OneDnn);
}
TEST(Gemm, AllTransposesDouble) { checkAllTransposes<double>(); }

TEST(Gemm, BetaZeroOverwritesNaN) {
  std::vector<double> a = {1, 2, 3, 4}, b = {5, 6, 7, 8};
  std::vector<double> c(4, std::nan(""));
  gemm<double>(false, false, 2, 2, 2, 1.0, a.data(), 2, b.data(), 2, 0.0,
               c.data(), 2);
  EXPECT_EQ(c, (std::vector<double>{19, 22, 43, 50}));
}

TEST(Gemm, EmptyInnerDimensionScalesC) {
  std::vector<float> c = {1, 2, 3, 4};
  gemm<float>(false, false, 2, 2, 0, 1.0f, nullptr, 0, nullptr, 2, 3.0f,
              c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{3, 6, 9, 12}));
  gemm<float>(true, true, 2, 2, 0, 1.0f, nullptr, 2, nullptr, 0, 0.0f, c.data(),
              2);
  EXPECT_EQ(c, (std::vector<float>{0, 0, 0, 0}));
}

template <typename T> void checkBatched(bool broadcastA, bool broadcastB) {
  const int64_t batch = 3, m = 4, n = 3, k = 5;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const int64_t lda = ta ? m : k, ldb = tb ? k : n, ldc = n;
      const int64_t strideA = broadcastA ? 0 : m * k;
      const int64_t strideB = broadcastB ? 0 : k * n;
      const int64_t strideC = m * n + 1; // a gap between outputs
      auto a = randomVector(broadcastA ? m * k : batch * m * k, 4);
      auto b = randomVector(broadcastB ? k * n : batch * k * n, 5);
      auto c = randomVector(batch * strideC, 6);
      std::vector<double> want = c;
      for (int64_t i = 0; i < batch; ++i)
        naiveGemm(ta, tb, m, n, k, 1.5, a, lda, b, ldb, 1.0, want, ldc,
                  i * strideA, i * strideB, i * strideC);
      std::vector<T> ta_ = cast<T>(a), tb_ = cast<T>(b), tc = cast<T>(c);
      batchedGemm<T>(batch, ta, tb, m, n, k, T(1.5), ta_.data(), lda, strideA,
                     tb_.data(), ldb, strideB, T(1.0), tc.data(), ldc, strideC);
      expectClose(tc, want,
                  std::string("batched transA=") + (ta ? "1" : "0") +
                      " transB=" + (tb ? "1" : "0") +
                      " broadcastA=" + (broadcastA ? "1" : "0") +
                      " broadcastB=" + (broadcastB ? "1" : "0"));
    }
}

TEST(Gemm, BatchedFloat) {
  checkBatched<float>(false, false);
  checkBatched<float>(true, false);
  checkBatched<float>(false, true);
}

TEST(Gemm, BatchedDouble) {
  checkBatched<double>(false, false);
  checkBatched<double>(true, false);
  checkBatched<double>(false, true);
}

TEST(Gemm, BatchedRejectsAliasedOutputs) {
  std::vector<float> a(4, 1), b(4, 1), c(4, 0);
  EXPECT_THROW(batchedGemm<float>(2, false, false, 2, 2, 2, 1.0f, a.data(), 2,
                                  0, b.data(), 2, 0, 0.0f, c.data(), 2, 0),
               KernelError);
}

TEST(Gemm, BlasCoreNameAndThreads) {
  const char *name = blasCoreName();
  ASSERT_NE(name, nullptr);
  EXPECT_GT(std::string(name).size(), 0u);
  const int threads = blasThreads();
  EXPECT_GE(threads, 1);
  setBlasThreads(0); // keeps the default
  EXPECT_EQ(blasThreads(), threads);
  setBlasThreads(1);
  EXPECT_EQ(blasThreads(), 1);
  setBlasThreads(threads);
}

} // namespace
