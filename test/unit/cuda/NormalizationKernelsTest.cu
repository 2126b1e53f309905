//===- NormalizationKernelsTest.cu - Running stats and LayerNorm on the GPU -===//
//
// cuda::batchNormUpdateRunningStats, layerNormForward and layerNormBackward
// against their CPU twins in runtime/kernels/Normalization.h on the same
// random inputs: odd sizes, every launch form (a warp, 256 or 1024 threads
// per row or channel), LayerNorm with and without gamma / beta and with
// either parameter gradient left out, and dgamma / dbeta over one chunk of
// rows or many (partial sums parked in dx, which may start off an 8-byte
// boundary). Both sides work in double in different orders: they agree to
// rounding, and a second GPU run must give the same bits.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"
#include "runtime/kernels/Normalization.h"

#include "TestContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using cairn::cuda::testing::allClose;
using cairn::cuda::testing::allEqual;
using cairn::cuda::testing::DeviceBuffer;
using cairn::cuda::testing::randomVector;
using cairn::cuda::testing::TestContext;

template <typename T> std::vector<T> randomValues(size_t n, uint64_t seed) {
  return randomVector<T>(n, -1, 1, seed);
}

/// Both sides work in double but add in different orders: they agree to
/// rounding.
template <typename T> double tolerance() { return sizeof(T) == 4 ? 1e-5 : 1e-12; }

template <typename T>
::testing::AssertionResult closeToCpu(const std::vector<T> &gpu, const std::vector<T> &cpu) {
  return allClose(gpu, cpu, tolerance<T>(), tolerance<T>());
}

constexpr double kEps = 1e-5;

template <typename T> class NormalizationKernels : public ::testing::Test {
protected:
  void checkRunningStats(int64_t n, int64_t c, int64_t spatial, bool tracked, uint32_t seed) {
    const std::string what = "n" + std::to_string(n) + " c" + std::to_string(c) + " spatial" +
                             std::to_string(spatial);
    const std::vector<T> x = randomValues<T>(n * c * spatial, seed);
    std::vector<T> mean = randomValues<T>(c, seed + 1), var = randomValues<T>(c, seed + 2);
    for (T &v : var)
      v = std::fabs(v) + T(0.5);
    DeviceBuffer<T> dX(x), dMean(mean), dVar(var);
    DeviceBuffer<int64_t> dCount(std::vector<int64_t>{41});
    int64_t count = 41;
    cairn::kernels::batchNormUpdateRunningStats<T>(n, c, spatial, x.data(), 0.1, mean.data(),
                                                   var.data(), tracked ? &count : nullptr);
    cairn::cuda::batchNormUpdateRunningStats<T>(tc.cx, n, c, spatial, dX.get(), 0.1, dMean.get(),
                                                dVar.get(), tracked ? dCount.get() : nullptr);
    EXPECT_TRUE(closeToCpu(dMean.download(), mean)) << what + " running mean";
    EXPECT_TRUE(closeToCpu(dVar.download(), var)) << what + " running var";
    EXPECT_EQ(dCount.download()[0], tracked ? 42 : 41) << what;
    EXPECT_EQ(count, tracked ? 42 : 41) << what;
  }

  void checkForward(int64_t rows, int64_t cols, bool withGamma, bool withBeta, uint32_t seed) {
    const std::string what = std::to_string(rows) + "x" + std::to_string(cols) +
                             (withGamma ? " gamma" : "") + (withBeta ? " beta" : "");
    const std::vector<T> x = randomValues<T>(rows * cols, seed);
    const std::vector<T> gamma = randomValues<T>(cols, seed + 1),
                         beta = randomValues<T>(cols, seed + 2);
    std::vector<T> want(rows * cols, T(-99));
    cairn::kernels::layerNormForward<T>(rows, cols, x.data(), withGamma ? gamma.data() : nullptr,
                                        withBeta ? beta.data() : nullptr, kEps, want.data());
    DeviceBuffer<T> dX(x), dGamma(gamma), dBeta(beta), dY(std::vector<T>(rows * cols, T(-99)));
    auto run = [&] {
      cairn::cuda::layerNormForward<T>(tc.cx, rows, cols, dX.get(),
                                       withGamma ? dGamma.get() : nullptr,
                                       withBeta ? dBeta.get() : nullptr, kEps, dY.get());
      return dY.download();
    };
    const std::vector<T> got = run();
    EXPECT_TRUE(closeToCpu(got, want)) << what;
    EXPECT_TRUE(allEqual(run(), got)) << what << ": a second run differs";
  }

  /// dx starts `dxOffset` elements into its allocation (1 puts a float dx
  /// off an 8-byte boundary).
  void checkBackward(int64_t rows, int64_t cols, bool withGamma, bool wantDgamma, bool wantDbeta,
                     uint32_t seed, int dxOffset = 0) {
    const std::string what = std::to_string(rows) + "x" + std::to_string(cols) +
                             (withGamma ? " gamma" : "") + (wantDgamma ? " dgamma" : "") +
                             (wantDbeta ? " dbeta" : "") +
                             (dxOffset ? " dx+" + std::to_string(dxOffset) : "");
    const std::vector<T> x = randomValues<T>(rows * cols, seed),
                         dy = randomValues<T>(rows * cols, seed + 1),
                         gamma = randomValues<T>(cols, seed + 2);
    const T *g = withGamma ? gamma.data() : nullptr;
    std::vector<T> dx(rows * cols, T(-99)), dgamma(cols, T(-99)), dbeta(cols, T(-99));
    cairn::kernels::layerNormBackward<T>(rows, cols, dy.data(), x.data(), g, kEps, dx.data(),
                                         wantDgamma ? dgamma.data() : nullptr,
                                         wantDbeta ? dbeta.data() : nullptr);

    DeviceBuffer<T> dX(x), dDy(dy), dGamma(gamma);
    DeviceBuffer<T> dDx(std::vector<T>(rows * cols + dxOffset, T(-99)));
    DeviceBuffer<T> dDgamma(std::vector<T>(cols, T(-99))), dDbeta(std::vector<T>(cols, T(-99)));
    auto run = [&] {
      cairn::cuda::layerNormBackward<T>(tc.cx, rows, cols, dDy.get(), dX.get(),
                                        withGamma ? dGamma.get() : nullptr, kEps,
                                        dDx.get() + dxOffset,
                                        wantDgamma ? dDgamma.get() : nullptr,
                                        wantDbeta ? dDbeta.get() : nullptr);
      std::vector<T> all = dDx.download();
      EXPECT_TRUE(std::all_of(all.begin(), all.begin() + dxOffset, [](T v) { return v == T(-99); }))
          << what << ": wrote before dx";
      return std::vector<T>(all.begin() + dxOffset, all.end());
    };
    const std::vector<T> got = run();
    EXPECT_TRUE(closeToCpu(got, dx)) << what + " dx";
    // Untouched when left out (-99), else the sums.
    EXPECT_TRUE(closeToCpu(dDgamma.download(), dgamma)) << what + " dgamma";
    EXPECT_TRUE(closeToCpu(dDbeta.download(), dbeta)) << what + " dbeta";
    const std::vector<T> gotDgamma = dDgamma.download(), gotDbeta = dDbeta.download();
    EXPECT_TRUE(allEqual(run(), got)) << what << ": a second run differs (dx)";
    EXPECT_TRUE(allEqual(dDgamma.download(), gotDgamma)) << what << ": a second run differs";
    EXPECT_TRUE(allEqual(dDbeta.download(), gotDbeta)) << what << ": a second run differs";
  }

  TestContext tc;
};

using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(NormalizationKernels, Types);

TYPED_TEST(NormalizationKernels, RunningStats) {
  this->checkRunningStats(3, 4, 5, true, 100);     // BatchNorm2d-like
  this->checkRunningStats(1, 2, 6, true, 110);     // batch 1
  this->checkRunningStats(4, 3, 1, false, 120);    // BatchNorm1d, no counter
  this->checkRunningStats(2, 300, 7, true, 130);   // 256 threads per channel
  this->checkRunningStats(16, 3, 1000, true, 140); // long channels
  this->checkRunningStats(5, 7, 33, false, 150);
}

TYPED_TEST(NormalizationKernels, RunningStatsOfOneElementIsNaNAsOnTheCpu) {
  this->checkRunningStats(1, 3, 1, true, 160);
}

TYPED_TEST(NormalizationKernels, RunningStatsWithoutChannelsStillCounts) {
  this->checkRunningStats(2, 0, 3, true, 170);
}

TYPED_TEST(NormalizationKernels, LayerNormForward) {
  const int64_t shapes[][2] = {{1, 1},   {5, 7},    {33, 31}, {8, 256},
                               {3, 257}, {300, 300}, {2, 4096}, {1000, 40}};
  uint32_t seed = 200;
  for (const auto &s : shapes)
    for (int affine = 0; affine < 4; ++affine)
      this->checkForward(s[0], s[1], affine & 1, affine & 2, seed += 3);
}

TYPED_TEST(NormalizationKernels, LayerNormBackward) {
  const int64_t shapes[][2] = {{1, 1},   {5, 7},     {33, 31},  {8, 256},
                               {3, 257}, {300, 300}, {2, 4096}, {40, 33}};
  uint32_t seed = 300;
  for (const auto &s : shapes)
    for (int flags = 0; flags < 8; ++flags)
      this->checkBackward(s[0], s[1], flags & 1, flags & 2, flags & 4, seed += 3);
}

TYPED_TEST(NormalizationKernels, LayerNormParameterGradientsOverManyChunks) {
  this->checkBackward(1000, 40, true, true, true, 400);  // row statistics parked in dx
  this->checkBackward(3000, 20, true, true, true, 410);  // statistics from the warp
  this->checkBackward(600, 3, false, true, true, 420);   // three columns
  this->checkBackward(70000, 5, true, true, false, 430); // chunks grown past 256 rows
  this->checkBackward(1000, 40, false, false, true, 440); // dbeta alone needs no statistics
  this->checkBackward(513, 64, true, true, true, 450, 1); // dx off an 8-byte boundary
  this->checkBackward(300, 33, true, true, true, 460, 1);
}

TYPED_TEST(NormalizationKernels, LayerNormBackwardWithoutRows) {
  this->checkBackward(0, 5, true, true, true, 500);
  this->checkBackward(0, 50, true, true, true, 510);
}

} // namespace
