//===- PoolTest.cpp - 2-D pooling -----------------------------------------===//
//
// Forward passes against naive loops written from PyTorch's documented
// semantics (plus hand-computed values for its ceil_mode/padding quirks),
// backward passes against central differences, and the tie rule of max
// pooling: the first maximum in window order takes the whole gradient.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Pool.h"

#include "GradCheck.h"
#include "HalfBits.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

/// PyTorch's output size: floor or ceil of the window count, where a ceil
/// window must start inside the input or the left padding.
int64_t outSize(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d,
                bool ceilMode) {
  int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t out = (ceilMode ? (span + s - 1) / s : span / s) + 1;
  if (ceilMode && (out - 1) * s >= in + p)
    --out;
  return out;
}

Pool2dShape shape(int64_t n, int64_t c, int64_t h, int64_t w, int64_t kh,
                  int64_t kw, int64_t sh, int64_t sw, int64_t ph, int64_t pw,
                  int64_t dh = 1, int64_t dw = 1, bool ceilMode = false) {
  return {n,
          c,
          h,
          w,
          kh,
          kw,
          sh,
          sw,
          ph,
          pw,
          dh,
          dw,
          outSize(h, kh, sh, ph, dh, ceilMode),
          outSize(w, kw, sw, pw, dw, ceilMode)};
}

std::string describe(const Pool2dShape &s) {
  return "n" + std::to_string(s.n) + " c" + std::to_string(s.c) + " " +
         std::to_string(s.h) + "x" + std::to_string(s.w) + " k" +
         std::to_string(s.kh) + "x" + std::to_string(s.kw) + " s" +
         std::to_string(s.sh) + "," + std::to_string(s.sw) + " p" +
         std::to_string(s.ph) + "," + std::to_string(s.pw) + " d" +
         std::to_string(s.dh) + "," + std::to_string(s.dw) + " out " +
         std::to_string(s.ho) + "x" + std::to_string(s.wo);
}

std::vector<Pool2dShape> maxShapes() {
  return {
      shape(1, 1, 4, 4, 2, 2, 2, 2, 0, 0),
      shape(2, 3, 7, 5, 2, 2, 2, 2, 0, 0), // 2x2 fast path, odd sizes
      shape(3, 2, 7, 6, 3, 3, 2, 2, 1, 1),
      shape(2, 2, 7, 8, 3, 2, 1, 2, 1, 1, 2, 2),       // dilation 2
      shape(2, 3, 5, 7, 2, 3, 2, 2, 0, 1, 1, 1, true), // ceil_mode
      shape(1, 2, 6, 5, 3, 3, 2, 2, 1, 1, 2, 1, true), // both
  };
}

std::vector<Pool2dShape> avgShapes() {
  return {
      shape(1, 1, 4, 4, 2, 2, 2, 2, 0, 0),
      shape(3, 2, 7, 6, 3, 3, 2, 2, 1, 1),
      shape(2, 3, 5, 7, 2, 3, 2, 2, 0, 1, 1, 1, true), // ceil_mode
      shape(2, 2, 4, 5, 3, 3, 2, 2, 1, 1, 1, 1, true), // window past pad
      shape(1, 2, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, true),
  };
}

template <typename T> std::vector<T> cast(const std::vector<double> &v) {
  return std::vector<T>(v.begin(), v.end());
}

/// Distinct values spaced 0.01 apart in random order, so a perturbation of
/// 1e-6 never changes which element of a window is the max.
std::vector<double> distinctValues(size_t n, uint32_t seed) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  for (double &x : v)
    x = x * 0.01 - 1.0;
  return v;
}

std::vector<double> referenceMax(const Pool2dShape &s,
                                 const std::vector<double> &x) {
  std::vector<double> y(s.n * s.c * s.ho * s.wo);
  for (int64_t pl = 0; pl < s.n * s.c; ++pl)
    for (int64_t oh = 0; oh < s.ho; ++oh)
      for (int64_t ow = 0; ow < s.wo; ++ow) {
        double best = -std::numeric_limits<double>::infinity();
        for (int64_t i = 0; i < s.kh; ++i)
          for (int64_t j = 0; j < s.kw; ++j) {
            int64_t ih = oh * s.sh - s.ph + i * s.dh;
            int64_t iw = ow * s.sw - s.pw + j * s.dw;
            if (ih >= 0 && ih < s.h && iw >= 0 && iw < s.w)
              best = std::max(best, x[(pl * s.h + ih) * s.w + iw]);
          }
        y[(pl * s.ho + oh) * s.wo + ow] = best;
      }
  return y;
}

/// Walks every tap of the unclipped window: a tap before H + pad (W + pad)
/// counts toward the padded divisor, a tap inside the input is summed.
std::vector<double> referenceAvg(const Pool2dShape &s, bool includePad,
                                 const std::vector<double> &x) {
  std::vector<double> y(s.n * s.c * s.ho * s.wo);
  for (int64_t pl = 0; pl < s.n * s.c; ++pl)
    for (int64_t oh = 0; oh < s.ho; ++oh)
      for (int64_t ow = 0; ow < s.wo; ++ow) {
        double sum = 0;
        int64_t padded = 0, real = 0;
        for (int64_t i = 0; i < s.kh; ++i)
          for (int64_t j = 0; j < s.kw; ++j) {
            int64_t ih = oh * s.sh - s.ph + i, iw = ow * s.sw - s.pw + j;
            if (ih < s.h + s.ph && iw < s.w + s.pw)
              ++padded;
            if (ih >= 0 && ih < s.h && iw >= 0 && iw < s.w) {
              ++real;
              sum += x[(pl * s.h + ih) * s.w + iw];
            }
          }
        y[(pl * s.ho + oh) * s.wo + ow] =
            real == 0 ? 0.0 : sum / double(includePad ? padded : real);
      }
  return y;
}

template <typename T>
void expectNear(const std::vector<T> &got, const std::vector<double> &want,
                const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double tol = sizeof(T) == 4 ? 1e-6 : 1e-13;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(double(got[i]), want[i],
                tol * std::max(1.0, std::fabs(want[i])))
        << what << " element " << i;
}

template <typename T> void checkMaxForward(const Pool2dShape &s) {
  auto x = randomVector(s.n * s.c * s.h * s.w, 41);
  std::vector<T> tx = cast<T>(x), y(s.n * s.c * s.ho * s.wo);
  maxPool2dForward<T>(s, tx.data(), y.data());
  expectNear(y, referenceMax(s, x), describe(s));
}

TEST(MaxPool2d, ForwardMatchesReference) {
  for (const Pool2dShape &s : maxShapes()) {
    checkMaxForward<float>(s);
    checkMaxForward<double>(s);
  }
}

TEST(MaxPool2d, BackwardMatchesFiniteDifferences) {
  for (const Pool2dShape &s : maxShapes()) {
    SCOPED_TRACE(describe(s));
    auto x = distinctValues(s.n * s.c * s.h * s.w, 42);
    auto probe = randomVector(s.n * s.c * s.ho * s.wo, 43);
    std::vector<double> dx(x.size(), std::nan(""));
    maxPool2dBackward<double>(s, probe.data(), x.data(), dx.data());
    auto loss = [&](const std::vector<double> &v) {
      std::vector<double> y(probe.size());
      maxPool2dForward<double>(s, v.data(), y.data());
      return dot(y, probe);
    };
    checkGradient("dx", x, loss, dx);

    std::vector<float> fdy = cast<float>(probe), fx = cast<float>(x);
    std::vector<float> fdx(x.size(), std::nanf(""));
    maxPool2dBackward<float>(s, fdy.data(), fx.data(), fdx.data());
    expectNear(fdx, dx, "float dx");
  }
}

TEST(MaxPool2d, FirstMaximumTakesTheGradient) {
  // 1x1x3x3, a 2x2 window with stride 1: every window holds ties.
  Pool2dShape s = shape(1, 1, 3, 3, 2, 2, 1, 1, 0, 0);
  // clang-format off
  std::vector<double> x = {1, 5, 5,
                           5, 5, 0,
                           5, 5, 5};
  // clang-format on
  std::vector<double> dy = {1, 10, 100, 1000};
  std::vector<double> dx(9);
  maxPool2dBackward<double>(s, dy.data(), x.data(), dx.data());
  // Rows are scanned outer: window (0,0) picks (0,1), not (1,0); the other
  // windows pick their top-left element.
  EXPECT_EQ(dx, (std::vector<double>{0, 11, 0, 100, 1000, 0, 0, 0, 0}));
}

TEST(MaxPool2d, TiesOnTheTwoByTwoFastPath) {
  // One 2x2 window of equal values: the first in scan order takes the
  // gradient; a NaN anywhere wins over numbers.
  Pool2dShape s = shape(1, 1, 2, 2, 2, 2, 2, 2, 0, 0);
  std::vector<float> x = {1, 1, 1, 1}, dy = {5}, dx(4), y(1);
  maxPool2dBackward<float>(s, dy.data(), x.data(), dx.data());
  EXPECT_EQ(dx, (std::vector<float>{5, 0, 0, 0}));
  x = {1, 2, std::nanf(""), 3};
  maxPool2dForward<float>(s, x.data(), y.data());
  EXPECT_TRUE(std::isnan(y[0]));
  maxPool2dBackward<float>(s, dy.data(), x.data(), dx.data());
  EXPECT_EQ(dx, (std::vector<float>{0, 0, 5, 0}));
}

TEST(MaxPool2d, TiesWithPaddingAndDilation) {
  // Padding is -inf, so the first real element in scan order wins a tie;
  // with dilation 2 the taps of the 2x2 window are two apart.
  Pool2dShape s = shape(1, 1, 2, 4, 2, 2, 2, 2, 1, 1, 2, 2);
  ASSERT_EQ(s.ho, 1);
  ASSERT_EQ(s.wo, 2);
  std::vector<float> x(8, 2.0f), dy = {3.0f, 7.0f}, dx(8, -1.0f);
  maxPool2dBackward<float>(s, dy.data(), x.data(), dx.data());
  // Window 0 taps (-1,-1) (-1,1) (1,-1) (1,1): the first real one is (1,1).
  // Window 1 taps (-1,1) (-1,3) (1,1) (1,3): (1,1) again.
  std::vector<float> want(8, 0.0f);
  want[1 * 4 + 1] = 10.0f;
  EXPECT_EQ(dx, want);
}

TEST(MaxPool2d, NaNPropagates) {
  Pool2dShape s = shape(1, 1, 2, 2, 2, 2, 2, 2, 0, 0);
  std::vector<float> x = {1.0f, std::nanf(""), 3.0f, 2.0f}, y(1);
  maxPool2dForward<float>(s, x.data(), y.data());
  EXPECT_TRUE(std::isnan(y[0]));
}

template <typename T>
void checkAvgForward(const Pool2dShape &s, bool includePad) {
  auto x = randomVector(s.n * s.c * s.h * s.w, 51);
  std::vector<T> tx = cast<T>(x), y(s.n * s.c * s.ho * s.wo);
  avgPool2dForward<T>(s, includePad, tx.data(), y.data());
  expectNear(y, referenceAvg(s, includePad, x),
             describe(s) + " includePad=" + std::to_string(includePad));
}

TEST(AvgPool2d, ForwardMatchesReference) {
  for (const Pool2dShape &s : avgShapes())
    for (bool includePad : {true, false}) {
      checkAvgForward<float>(s, includePad);
      checkAvgForward<double>(s, includePad);
    }
}

TEST(AvgPool2d, PyTorchDivisors) {
  // F.avg_pool2d(ones(1,1,3,3), 2, 2, padding=1, ceil_mode=True).
  Pool2dShape s = shape(1, 1, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, true);
  ASSERT_EQ(s.ho, 2);
  std::vector<double> x(9, 1.0), y(4);
  avgPool2dForward<double>(s, true, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<double>{0.25, 0.5, 0.5, 1.0}));
  avgPool2dForward<double>(s, false, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<double>{1, 1, 1, 1}));

  // 4x4, kernel 3, stride 2, padding 1, ceil_mode: the last window runs
  // past H + pad, and its padded size is clipped to 2, not 3.
  s = shape(1, 1, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, true);
  ASSERT_EQ(s.ho, 3);
  x.assign(16, 1.0);
  y.assign(9, 0.0);
  avgPool2dForward<double>(s, true, x.data(), y.data());
  EXPECT_DOUBLE_EQ(y[0], 4.0 / 9.0);
  EXPECT_DOUBLE_EQ(y[2], 2.0 / 6.0); // rows [-1,2) x cols [3,5): 2 real of 6
  EXPECT_DOUBLE_EQ(y[8], 1.0 / 4.0); // rows [3,5) x cols [3,5): 1 real of 4
}

TEST(AvgPool2d, BackwardMatchesFiniteDifferences) {
  for (const Pool2dShape &s : avgShapes())
    for (bool includePad : {true, false}) {
      SCOPED_TRACE(describe(s) + " includePad=" + std::to_string(includePad));
      auto x = randomVector(s.n * s.c * s.h * s.w, 52);
      auto probe = randomVector(s.n * s.c * s.ho * s.wo, 53);
      std::vector<double> dx(x.size(), std::nan(""));
      avgPool2dBackward<double>(s, includePad, probe.data(), dx.data());
      auto loss = [&](const std::vector<double> &v) {
        std::vector<double> y(probe.size());
        avgPool2dForward<double>(s, includePad, v.data(), y.data());
        return dot(y, probe);
      };
      checkGradient("dx", x, loss, dx);

      std::vector<float> fdy = cast<float>(probe);
      std::vector<float> fdx(x.size(), std::nanf(""));
      avgPool2dBackward<float>(s, includePad, fdy.data(), fdx.data());
      expectNear(fdx, dx, "float dx");
    }
}

struct AdaptiveCase {
  int64_t n, c, h, w, oh, ow;
};

std::vector<AdaptiveCase> adaptiveCases() {
  return {{2, 3, 6, 6, 3, 3},  // divisible
          {1, 2, 5, 7, 3, 4},  // overlapping windows
          {3, 1, 4, 5, 1, 1},  // global average
          {1, 2, 2, 3, 3, 5}}; // more outputs than inputs
}

std::vector<double> referenceAdaptive(const AdaptiveCase &a,
                                      const std::vector<double> &x) {
  std::vector<double> y(a.n * a.c * a.oh * a.ow);
  for (int64_t pl = 0; pl < a.n * a.c; ++pl)
    for (int64_t i = 0; i < a.oh; ++i)
      for (int64_t j = 0; j < a.ow; ++j) {
        auto h0 = int64_t(std::floor(double(i * a.h) / double(a.oh)));
        auto h1 = int64_t(std::ceil(double((i + 1) * a.h) / double(a.oh)));
        auto w0 = int64_t(std::floor(double(j * a.w) / double(a.ow)));
        auto w1 = int64_t(std::ceil(double((j + 1) * a.w) / double(a.ow)));
        double sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw)
            sum += x[(pl * a.h + ih) * a.w + iw];
        y[(pl * a.oh + i) * a.ow + j] = sum / double((h1 - h0) * (w1 - w0));
      }
  return y;
}

TEST(AdaptiveAvgPool2d, ForwardMatchesReference) {
  for (const AdaptiveCase &a : adaptiveCases()) {
    auto x = randomVector(a.n * a.c * a.h * a.w, 61);
    auto want = referenceAdaptive(a, x);
    std::vector<double> y(want.size());
    adaptiveAvgPool2dForward<double>(a.n, a.c, a.h, a.w, a.oh, a.ow, x.data(),
                                     y.data());
    expectNear(y, want, "double");
    std::vector<float> fx = cast<float>(x), fy(want.size());
    adaptiveAvgPool2dForward<float>(a.n, a.c, a.h, a.w, a.oh, a.ow, fx.data(),
                                    fy.data());
    expectNear(fy, want, "float");
  }
}

TEST(AdaptiveAvgPool2d, BackwardMatchesFiniteDifferences) {
  for (const AdaptiveCase &a : adaptiveCases()) {
    auto x = randomVector(a.n * a.c * a.h * a.w, 62);
    auto probe = randomVector(a.n * a.c * a.oh * a.ow, 63);
    std::vector<double> dx(x.size(), std::nan(""));
    adaptiveAvgPool2dBackward<double>(a.n, a.c, a.h, a.w, a.oh, a.ow,
                                      probe.data(), dx.data());
    auto loss = [&](const std::vector<double> &v) {
      std::vector<double> y(probe.size());
      adaptiveAvgPool2dForward<double>(a.n, a.c, a.h, a.w, a.oh, a.ow, v.data(),
                                       y.data());
      return dot(y, probe);
    };
    checkGradient("dx", x, loss, dx);

    std::vector<float> fdy = cast<float>(probe), fdx(x.size(), std::nanf(""));
    adaptiveAvgPool2dBackward<float>(a.n, a.c, a.h, a.w, a.oh, a.ow, fdy.data(),
                                     fdx.data());
    expectNear(fdx, dx, "float dx");
  }
}

} // namespace

namespace {

/// Max pooling on half storage has the bits of the float pool on widened
/// copies followed by a cast (what cairn-compute-half-in-float32 would make
/// of it), forward, and backward where windows do not overlap.
template <typename T> void checkHalfMaxPool(CastType type) {
  std::vector<Pool2dShape> shapes = maxShapes();
  shapes.push_back(shape(2, 3, 9, 7, 3, 3, 3, 3, 1, 0)); // tiled 3x3, padded
  shapes.push_back(shape(1, 2, 8, 8, 2, 2, 3, 3, 0, 0)); // gaps between
  for (const Pool2dShape &s : shapes) {
    SCOPED_TRACE(describe(s));
    const int64_t in = s.n * s.c * s.h * s.w, out = s.n * s.c * s.ho * s.wo;
    std::vector<uint16_t> x = randomHalves<T>(in, uint32_t(in)),
                          dy = randomHalves<T>(out, uint32_t(out + 1));
    std::vector<float> y32(out), dx32(in);
    maxPool2dForward<float>(s, widen(x, type).data(), y32.data());
    std::vector<uint16_t> y(out);
    maxPool2dForward<T>(s, x.data(), y.data());
    ASSERT_EQ(y, narrow(y32, type));
    const bool overlap = s.sh < s.dh * (s.kh - 1) + 1 || s.sw < s.dw * (s.kw - 1) + 1;
    if (overlap)
      continue;
    maxPool2dBackward<float>(s, widen(dy, type).data(), widen(x, type).data(), dx32.data());
    std::vector<uint16_t> dx(in, 0x1234); // overwritten
    maxPool2dBackward<T>(s, dy.data(), x.data(), dx.data());
    ASSERT_EQ(dx, narrow(dx32, type));
  }
}

} // namespace

TEST(MaxPool2dHalfStorage, SameBitsAsFloatBetweenCastsF16) { checkHalfMaxPool<F16>(CastType::F16); }

TEST(MaxPool2dHalfStorage, SameBitsAsFloatBetweenCastsBf16) {
  checkHalfMaxPool<Bf16>(CastType::BF16);
}
