//===- PoolKernelsTest.cu - 2-D pooling on the GPU -------------------------===//
//
// cuda::maxPool2dForwardDirect, avgPool2dForwardDirect, maxPool2dBackward,
// avgPool2dBackward and the adaptive average pair against their CPU twins
// in runtime/kernels/Pool.h on the same inputs: odd sizes, padding,
// dilation, ceil_mode windows that hang off the input, count_include_pad
// both ways, and adaptive windows that overlap or repeat. Max pooling sees
// inputs of a few distinct values, so windows tie (the first maximum takes
// the gradient), and NaNs (which win); its results must be the CPU's bits.
// Averages are compared to rounding; a second GPU run must give the same
// bits.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"
#include "runtime/kernels/Pool.h"

#include "TestContext.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using cairn::cuda::testing::allClose;
using cairn::cuda::testing::allEqual;
using cairn::cuda::testing::DeviceBuffer;
using cairn::cuda::testing::randomVector;
using cairn::cuda::testing::TestContext;
using cairn::kernels::Pool2dShape;

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

/// PyTorch's output size: floor or ceil of the window count, where a ceil
/// window must start inside the input or the left padding.
int64_t outSize(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceilMode) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t out = (ceilMode ? (span + s - 1) / s : span / s) + 1;
  if (ceilMode && (out - 1) * s >= in + p)
    --out;
  return out;
}

Pool2dShape shape(int64_t n, int64_t c, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh,
                  int64_t sw, int64_t ph, int64_t pw, int64_t dh = 1, int64_t dw = 1,
                  bool ceilMode = false) {
  return {n,  c,  h,  w,  kh, kw, sh, sw, ph, pw, dh, dw, outSize(h, kh, sh, ph, dh, ceilMode),
          outSize(w, kw, sw, pw, dw, ceilMode)};
}

std::string describe(const Pool2dShape &s) {
  return "n" + std::to_string(s.n) + " c" + std::to_string(s.c) + " " + std::to_string(s.h) +
         "x" + std::to_string(s.w) + " k" + std::to_string(s.kh) + "x" + std::to_string(s.kw) +
         " s" + std::to_string(s.sh) + "," + std::to_string(s.sw) + " p" + std::to_string(s.ph) +
         "," + std::to_string(s.pw) + " d" + std::to_string(s.dh) + "," + std::to_string(s.dw) +
         " out " + std::to_string(s.ho) + "x" + std::to_string(s.wo);
}

std::vector<Pool2dShape> maxShapes() {
  return {
      shape(1, 1, 4, 4, 2, 2, 2, 2, 0, 0),
      shape(2, 3, 7, 5, 2, 2, 2, 2, 0, 0),                // 2x2, odd sizes
      shape(2, 2, 8, 8, 2, 2, 2, 2, 0, 0, 1, 1, true),    // 2x2 in ceil_mode, even
      shape(2, 2, 9, 9, 2, 2, 2, 2, 0, 0, 1, 1, true),    // 2x2 windows off the edge
      shape(3, 2, 7, 6, 3, 3, 2, 2, 1, 1),
      shape(2, 4, 13, 11, 3, 3, 1, 1, 1, 1),              // overlapping, stride 1
      shape(2, 2, 7, 8, 3, 2, 1, 2, 1, 1, 2, 2),          // dilation 2
      shape(1, 1, 11, 10, 3, 3, 2, 2, 1, 1, 3, 3),        // dilation 3
      shape(2, 3, 5, 7, 2, 3, 2, 2, 0, 1, 1, 1, true),    // ceil_mode
      shape(1, 2, 6, 5, 3, 3, 2, 2, 1, 1, 2, 1, true),    // ceil_mode and dilation
      shape(1, 3, 9, 9, 5, 5, 3, 3, 2, 2, 1, 1, true),
      shape(4, 16, 32, 30, 3, 3, 2, 2, 1, 1),             // more than a wave of threads
  };
}

std::vector<Pool2dShape> avgShapes() {
  return {
      shape(1, 1, 4, 4, 2, 2, 2, 2, 0, 0),
      shape(3, 2, 7, 6, 3, 3, 2, 2, 1, 1),
      shape(2, 3, 5, 7, 2, 3, 2, 2, 0, 1, 1, 1, true),    // ceil_mode
      shape(1, 2, 6, 5, 3, 3, 2, 2, 1, 1, 1, 1, true),
      shape(2, 2, 9, 9, 3, 3, 3, 3, 1, 1, 1, 1, true),
      shape(1, 1, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1, true),    // last window mostly padding
      shape(2, 3, 8, 8, 4, 4, 1, 1, 2, 2),                // overlapping, wide padding
      shape(4, 16, 32, 30, 3, 3, 2, 2, 1, 1),
  };
}

/// Values in {0, 1, 2}: most windows hold a tie for their maximum.
template <typename T> std::vector<T> tiedValues(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(n);
  for (T &x : v)
    x = T(rng() % 3);
  return v;
}

template <typename T> class PoolKernels : public ::testing::Test {
protected:
  void checkMax(const Pool2dShape &s, const std::vector<T> &x, uint32_t seed) {
    const std::string what = describe(s);
    const std::vector<T> dy = randomValues<T>(s.n * s.c * s.ho * s.wo, seed);
    std::vector<T> wantY(dy.size(), T(-99)), wantDx(x.size(), T(-99));
    cairn::kernels::maxPool2dForward<T>(s, x.data(), wantY.data());
    cairn::kernels::maxPool2dBackward<T>(s, dy.data(), x.data(), wantDx.data());
    DeviceBuffer<T> dX(x), dDy(dy), dY(std::vector<T>(dy.size(), T(-99))),
        dDx(std::vector<T>(x.size(), T(-99)));
    cairn::cuda::maxPool2dForwardDirect<T>(tc.cx, s, dX.get(), dY.get());
    cairn::cuda::maxPool2dBackward<T>(tc.cx, s, dDy.get(), dX.get(), dDx.get());
    EXPECT_TRUE(allEqual(dY.download(), wantY)) << what << ": forward";
    EXPECT_TRUE(allEqual(dDx.download(), wantDx)) << what << ": backward";
  }

  void checkAverage(const Pool2dShape &s, bool countIncludePad, uint32_t seed) {
    const std::string what = describe(s) + (countIncludePad ? " count_include_pad" : "");
    const std::vector<T> x = randomValues<T>(s.n * s.c * s.h * s.w, seed),
                         dy = randomValues<T>(s.n * s.c * s.ho * s.wo, seed + 1);
    std::vector<T> wantY(dy.size(), T(-99)), wantDx(x.size(), T(-99));
    cairn::kernels::avgPool2dForward<T>(s, countIncludePad, x.data(), wantY.data());
    cairn::kernels::avgPool2dBackward<T>(s, countIncludePad, dy.data(), wantDx.data());
    DeviceBuffer<T> dX(x), dDy(dy), dY(std::vector<T>(dy.size(), T(-99))),
        dDx(std::vector<T>(x.size(), T(-99)));
    cairn::cuda::avgPool2dForwardDirect<T>(tc.cx, s, countIncludePad, dX.get(), dY.get());
    cairn::cuda::avgPool2dBackward<T>(tc.cx, s, countIncludePad, dDy.get(), dDx.get());
    const std::vector<T> y = dY.download(), dx = dDx.download();
    EXPECT_TRUE(closeToCpu(y, wantY)) << what + ": forward";
    EXPECT_TRUE(closeToCpu(dx, wantDx)) << what + ": backward";
    cairn::cuda::avgPool2dForwardDirect<T>(tc.cx, s, countIncludePad, dX.get(), dY.get());
    cairn::cuda::avgPool2dBackward<T>(tc.cx, s, countIncludePad, dDy.get(), dDx.get());
    EXPECT_TRUE(allEqual(dY.download(), y) && allEqual(dDx.download(), dx))
        << what << ": a second run differs";
  }

  void checkAdaptive(int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh, int64_t ow,
                     uint32_t seed) {
    const std::string what = std::to_string(h) + "x" + std::to_string(w) + " -> " +
                             std::to_string(oh) + "x" + std::to_string(ow);
    const std::vector<T> x = randomValues<T>(n * c * h * w, seed),
                         dy = randomValues<T>(n * c * oh * ow, seed + 1);
    std::vector<T> wantY(dy.size(), T(-99)), wantDx(x.size(), T(-99));
    cairn::kernels::adaptiveAvgPool2dForward<T>(n, c, h, w, oh, ow, x.data(), wantY.data());
    cairn::kernels::adaptiveAvgPool2dBackward<T>(n, c, h, w, oh, ow, dy.data(), wantDx.data());
    DeviceBuffer<T> dX(x), dDy(dy), dY(std::vector<T>(dy.size(), T(-99))),
        dDx(std::vector<T>(x.size(), T(-99)));
    cairn::cuda::adaptiveAvgPool2dForward<T>(tc.cx, n, c, h, w, oh, ow, dX.get(), dY.get());
    cairn::cuda::adaptiveAvgPool2dBackward<T>(tc.cx, n, c, h, w, oh, ow, dDy.get(), dDx.get());
    EXPECT_TRUE(closeToCpu(dY.download(), wantY)) << what + ": forward";
    EXPECT_TRUE(closeToCpu(dDx.download(), wantDx)) << what + ": backward";
  }

  TestContext tc;
};

using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PoolKernels, Types);

TYPED_TEST(PoolKernels, MaxPoolWithTies) {
  using T = TypeParam;
  uint32_t seed = 100;
  for (const Pool2dShape &s : maxShapes()) {
    this->checkMax(s, tiedValues<T>(s.n * s.c * s.h * s.w, seed), seed + 1);
    seed += 2;
  }
}

TYPED_TEST(PoolKernels, MaxPoolOfDistinctValues) {
  using T = TypeParam;
  uint32_t seed = 200;
  for (const Pool2dShape &s : maxShapes()) {
    this->checkMax(s, randomValues<T>(s.n * s.c * s.h * s.w, seed), seed + 1);
    seed += 2;
  }
}

TYPED_TEST(PoolKernels, MaxPoolNaNWins) {
  using T = TypeParam;
  uint32_t seed = 300;
  for (const Pool2dShape &s : maxShapes()) {
    std::vector<T> x = tiedValues<T>(s.n * s.c * s.h * s.w, seed);
    // Every seventh element NaN: some windows hold one, some several.
    for (size_t i = 3; i < x.size(); i += 7)
      x[i] = std::numeric_limits<T>::quiet_NaN();
    this->checkMax(s, x, seed + 1);
    seed += 2;
  }
}

TYPED_TEST(PoolKernels, AvgPool) {
  uint32_t seed = 400;
  for (const Pool2dShape &s : avgShapes())
    for (bool countIncludePad : {false, true}) {
      this->checkAverage(s, countIncludePad, seed);
      seed += 2;
    }
}

TYPED_TEST(PoolKernels, AdaptiveAvgPool) {
  const int64_t cases[][4] = {{7, 5, 3, 2}, {10, 10, 4, 4}, {5, 5, 7, 7}, {1, 1, 1, 1},
                              {6, 6, 6, 6}, {13, 9, 1, 1},  {4, 7, 3, 5}, {3, 8, 5, 3},
                              {32, 30, 7, 7}};
  uint32_t seed = 500;
  for (const auto &k : cases) {
    this->checkAdaptive(2, 3, k[0], k[1], k[2], k[3], seed);
    seed += 2;
  }
}

} // namespace
