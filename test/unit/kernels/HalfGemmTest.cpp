//===- HalfGemmTest.cpp - Matrix products of half tensors -----------------===//
//
// halfGemm against exact sums: small integers (k/16 steps, as HalfBits.h's
// randomHalves makes them) whose products and sums float32 holds exactly in
// any order, so each element must be the exact sum rounded once to the
// result's type, whatever order the BLAS adds in. Shapes cross the tiles
// (a last partial one) on both sides and the slices of K, with each
// transpose, padded strides, a bias, a folded relu, and special values; and
// the bits of a product do not depend on the number of threads.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/HalfGemm.h"

#include "HalfBits.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

struct Shape {
  int64_t m, n, k;
};

/// The exact float result of C (double sums, exact here) before rounding.
std::vector<float> exactProduct(bool transA, bool transB, const Shape &s,
                                const std::vector<float> &a, int64_t lda,
                                const std::vector<float> &b, int64_t ldb,
                                const std::vector<float> *bias, bool relu) {
  std::vector<float> c(size_t(s.m * s.n));
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = bias ? (*bias)[size_t(j)] : 0.0;
      for (int64_t p = 0; p < s.k; ++p)
        sum +=
            double(transA ? a[size_t(p * lda + i)] : a[size_t(i * lda + p)]) *
            double(transB ? b[size_t(j * ldb + p)] : b[size_t(p * ldb + j)]);
      float value = float(sum);
      c[size_t(i * s.n + j)] = relu ? std::max(value, 0.0f) : value;
    }
  return c;
}

template <typename T> void checkExact(const Shape &s, uint32_t seed) {
  const CastType type = T::kCastType;
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (bool withBias : {false, true}) {
        const bool relu = withBias;
        // Stored shapes, with 3 elements of padding in each row stride.
        const int64_t lda = (transA ? s.m : s.k) + 3;
        const int64_t ldb = (transB ? s.k : s.n) + 3;
        const int64_t ldc = s.n + 3;
        auto a = randomHalves<T>(size_t((transA ? s.k : s.m) * lda), seed,
                                 /*specials=*/false);
        auto b = randomHalves<T>(size_t((transB ? s.n : s.k) * ldb), seed + 1,
                                 /*specials=*/false);
        auto bias = randomHalves<T>(size_t(s.n), seed + 2, false, 3.0f);
        std::vector<float> wideBias = widen(bias, type);
        std::vector<float> want =
            exactProduct(transA, transB, s, widen(a, type), lda, widen(b, type),
                         ldb, withBias ? &wideBias : nullptr, relu);
        const uint16_t sentinel = 0x1234;
        std::vector<uint16_t> c(size_t(s.m * ldc), sentinel);
        std::vector<float> workspace(
            size_t(halfGemmWorkspaceElements(s.m, s.n, s.k)));
        halfGemm<T>(transA, transB, s.m, s.n, s.k, a.data(), lda, b.data(), ldb,
                    withBias ? bias.data() : nullptr, relu, c.data(), ldc,
                    workspace.data());
        std::vector<uint16_t> rounded = narrow(want, type);
        const std::string what =
            std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
            std::to_string(s.k) + " transA " + std::to_string(transA) +
            " transB " + std::to_string(transB) + " bias+relu " +
            std::to_string(withBias);
        for (int64_t i = 0; i < s.m; ++i)
          for (int64_t j = 0; j < ldc; ++j) {
            const uint16_t got = c[size_t(i * ldc + j)];
            if (j >= s.n)
              ASSERT_EQ(got, sentinel) << what << ": padding written";
            else
              ASSERT_EQ(got, rounded[size_t(i * s.n + j)])
                  << what << " element " << i << ", " << j;
          }
      }
}

const Shape kShapes[] = {
    {1, 1, 1},        {5, 7, 4}, // one tile
    {64, 256, 784},   // mlp's first layer: 4 tiles, a partial K slice
    {256, 784, 64},   // its weight gradient
    {200, 150, 1000}, // partial last tiles both ways, 4 slices of K
    {40, 3000, 30},   // 47 tiles in a row
    {7, 9, 0},        // no depth: the bias alone (or zeros)
};

template <typename T> void checkShapes() {
  uint32_t seed = 1;
  for (const Shape &s : kShapes)
    checkExact<T>(s, seed += 10);
}

TEST(HalfGemm, ExactSumRoundedOnceF16) { checkShapes<F16>(); }
TEST(HalfGemm, ExactSumRoundedOnceBf16) { checkShapes<Bf16>(); }

TEST(HalfGemm, TilesFollowTheRule) {
  // Tiles of at most 64 x 64, K in slices of at most 256, a slot for every
  // 2^18 elements of the three tensors, at least 2 and at most 8, no more
  // than the tiles.
  HalfGemmTiles t = halfGemmTiles(64, 256, 784); // mlp's first layer
  EXPECT_EQ(t.rows, 64);
  EXPECT_EQ(t.columns, 64);
  EXPECT_EQ(t.depth, 256);
  EXPECT_EQ(t.slots, 2);
  EXPECT_EQ(halfGemmWorkspaceElements(64, 256, 784),
            2 * (64 * 256 + 256 * 64 + 64 * 64));
  t = halfGemmTiles(256, 784, 64); // its weight gradient
  EXPECT_EQ(t.depth, 64);
  EXPECT_EQ(halfGemmWorkspaceElements(256, 784, 64),
            2 * (64 * 64 + 64 * 64 + 64 * 64));
  t = halfGemmTiles(5, 7, 4); // one tile, whole
  EXPECT_EQ(t.rows, 5);
  EXPECT_EQ(t.columns, 7);
  EXPECT_EQ(t.depth, 4);
  EXPECT_EQ(t.slots, 1);
  t = halfGemmTiles(8192, 2048, 512); // a big product: 8 slots
  EXPECT_EQ(t.slots, 8);
  t = halfGemmTiles(100, 100, 1 << 20); // big, but 4 tiles
  EXPECT_EQ(t.slots, 4);
  for (const Shape &s : kShapes) {
    // The scratch of a big product under 0.3 of its half tensors' bytes
    // (0.15 of their elements in floats), two 144 KiB slots at most else.
    const int64_t elements = halfGemmWorkspaceElements(s.m, s.n, s.k);
    const int64_t tensors = s.m * s.k + s.k * s.n + s.m * s.n;
    EXPECT_LE(elements, std::max<int64_t>(tensors * 3 / 20, 2 * 36864))
        << s.m << "x" << s.n << "x" << s.k;
  }
}

/// Each tile is summed on one thread, its K slices in order: the bits do
/// not depend on the number of threads.
TEST(HalfGemm, SameBitsOnOneThreadAndMany) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  const Shape s = {300, 200, 700};
  std::vector<float> a(size_t(s.m * s.k)), b(size_t(s.k * s.n));
  for (float &v : a)
    v = normal(rng);
  for (float &v : b)
    v = normal(rng);
  auto ha = narrow(a, CastType::BF16), hb = narrow(b, CastType::BF16);
  std::vector<float> workspace(
      size_t(halfGemmWorkspaceElements(s.m, s.n, s.k)));
  auto run = [&](int threads) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<uint16_t> c(size_t(s.m * s.n));
    halfGemm<Bf16>(false, true, s.m, s.n, s.k, ha.data(), s.k, hb.data(), s.k,
                   nullptr, false, c.data(), s.n, workspace.data());
    omp_set_num_threads(before);
    return c;
  };
  EXPECT_EQ(run(1), run(4));
}

/// batchedHalfGemm: each product is halfGemm's on that product, bit for
/// bit, on one thread and on four, with strided operands, a broadcast one
/// (stride 0), operands through offset tables, transposes, a product past a
/// tile and a slice of K, and one product (halfGemm's own path).
template <typename T> void checkBatched() {
  struct Case {
    int64_t batch, m, n, k;
    bool transA, transB, broadcastB, offsets;
  };
  const Case cases[] = {
      {12, 28, 28, 16, false, false, false, false}, // attention's scores
      {7, 28, 16, 28, true, false, true, false},    // one B for every A
      {5, 70, 90, 300, false, true, false, true},   // tiles, K slices
      {1, 70, 90, 300, true, true, false, false},   // halfGemm itself
  };
  uint32_t seed = 80;
  for (const Case &c : cases) {
    const int64_t matrixA = c.m * c.k, matrixB = c.k * c.n;
    const int64_t lda = c.transA ? c.m : c.k, ldb = c.transB ? c.k : c.n;
    auto a = randomHalves<T>(size_t(c.batch * matrixA), seed++, false);
    auto b = randomHalves<T>(size_t((c.broadcastB ? 1 : c.batch) * matrixB),
                             seed++, false);
    // Offsets: the products' A in reverse order.
    std::vector<int64_t> aOffsets;
    for (int64_t i = 0; i < c.batch; ++i)
      aOffsets.push_back((c.batch - 1 - i) * matrixA);
    const int64_t strideB = c.broadcastB ? 0 : matrixB;
    std::vector<uint16_t> want(size_t(c.batch * c.m * c.n));
    std::vector<float> one(size_t(halfGemmWorkspaceElements(c.m, c.n, c.k)));
    for (int64_t i = 0; i < c.batch; ++i)
      halfGemm<T>(c.transA, c.transB, c.m, c.n, c.k,
                  a.data() + (c.offsets ? aOffsets[size_t(i)] : i * matrixA),
                  lda, b.data() + i * strideB, ldb, nullptr, false,
                  want.data() + i * c.m * c.n, c.n, one.data());
    std::vector<float> workspace(
        size_t(batchedHalfGemmWorkspaceElements(c.batch, c.m, c.n, c.k)));
    for (int threads : {1, 4}) {
      const int before = omp_get_max_threads();
      omp_set_num_threads(threads);
      std::vector<uint16_t> got(want.size(), 0x1234);
      batchedHalfGemm<T>(c.batch, c.transA, c.transB, c.m, c.n, c.k, a.data(),
                         lda, matrixA, c.offsets ? aOffsets.data() : nullptr,
                         b.data(), ldb, strideB, nullptr, got.data(),
                         workspace.data());
      omp_set_num_threads(before);
      EXPECT_EQ(got, want) << c.batch << " x " << c.m << "x" << c.n << "x"
                           << c.k << " on " << threads << " threads";
    }
  }
}

TEST(HalfGemm, BatchedIsEachProductsHalfGemmF16) { checkBatched<F16>(); }
TEST(HalfGemm, BatchedIsEachProductsHalfGemmBf16) { checkBatched<Bf16>(); }

/// A NaN or an infinity in a row of op(A) reaches that row of C alone, as in
/// the float product (an infinity times a zero, or two of opposite signs
/// summed, is NaN).
template <typename T> void checkSpecials() {
  const CastType type = T::kCastType;
  const Shape s = {70, 90, 1000};
  auto a = randomHalves<T>(size_t(s.m * s.k), 7, /*specials=*/false);
  auto b = randomHalves<T>(size_t(s.k * s.n), 8, /*specials=*/false);
  a[size_t(3 * s.k + 5)] = T::store(std::nanf(""));
  a[size_t(68 * s.k + 999)] = T::store(INFINITY);
  std::vector<uint16_t> c(size_t(s.m * s.n));
  std::vector<float> workspace(
      size_t(halfGemmWorkspaceElements(s.m, s.n, s.k)));
  halfGemm<T>(false, false, s.m, s.n, s.k, a.data(), s.k, b.data(), s.n,
              nullptr, false, c.data(), s.n, workspace.data());
  std::vector<float> got = widen(c, type);
  std::vector<float> bWide = widen(b, type);
  for (int64_t j = 0; j < s.n; ++j) {
    EXPECT_TRUE(std::isnan(got[size_t(3 * s.n + j)])) << j;
    const float factor = bWide[size_t(999 * s.n + j)];
    const float value = got[size_t(68 * s.n + j)];
    if (factor == 0)
      EXPECT_TRUE(std::isnan(value)) << j;
    else
      EXPECT_EQ(value, factor > 0 ? INFINITY : -INFINITY) << j;
    EXPECT_TRUE(std::isfinite(got[size_t(4 * s.n + j)])) << j;
  }
}

TEST(HalfGemm, SpecialValuesStayInTheirRowF16) { checkSpecials<F16>(); }
TEST(HalfGemm, SpecialValuesStayInTheirRowBf16) { checkSpecials<Bf16>(); }

} // namespace
