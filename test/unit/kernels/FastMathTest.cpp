//===- FastMathTest.cpp - Vectorisable float32 exp/tanh/erf/Phi tests -----===//
//
// Each function against libm in double, in ulps of the float result, over a
// strided sweep of every float bit pattern in its range; the special values
// (infinities, NaN, saturation, underflow); and bit-identical results from a
// vectorisable loop and from scalar calls.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/FastMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace fm = cairn::kernels::fastmath;

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// Floats in the order of their values as consecutive integers (-0 == +0).
int64_t ordinal(float f) {
  uint32_t u = bitsOf(f);
  return (u >> 31) ? -int64_t(u & 0x7fffffffu) : int64_t(u);
}

float fromOrdinal(int64_t k) {
  return k < 0 ? fromBits(uint32_t(-k) | 0x80000000u) : fromBits(uint32_t(k));
}

struct SweepResult {
  int64_t maxUlp = 0;
  float worstX = 0;
  int64_t count = 0;
};

/// Distance in float ulps between `y` and the double reference rounded to
/// float. Subnormal results are counted the same way, i.e. in steps of
/// 2^-149: an absolute criterion there.
template <typename F, typename Ref>
SweepResult sweep(F f, Ref ref, float lo, float hi, int64_t stride) {
  SweepResult res;
  constexpr int kBlock = 4096;
  std::vector<float> xs(kBlock), ys(kBlock);
  for (int64_t k = ordinal(lo), end = ordinal(hi); k <= end;) {
    int m = 0;
    for (; m < kBlock && k <= end; ++m, k += stride)
      xs[m] = fromOrdinal(k);
    for (int i = 0; i < m; ++i) // the vectorised loop
      ys[i] = f(xs[i]);
    for (int i = 0; i < m; ++i) {
      float r = float(ref(double(xs[i])));
      int64_t d = r == ys[i] ? 0 : std::llabs(ordinal(ys[i]) - ordinal(r));
      if (std::isnan(ys[i]) || std::isnan(r))
        d = std::isnan(ys[i]) && std::isnan(r) ? 0 : INT64_MAX;
      if (d > res.maxUlp) {
        res.maxUlp = d;
        res.worstX = xs[i];
      }
      ++res.count;
    }
  }
  return res;
}

double refExp(double x) { return std::exp(x); }
double refTanh(double x) { return std::tanh(x); }
double refErf(double x) { return std::erf(x); }
double refPhi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Strides are odd and coprime to powers of two so that every mantissa
// pattern is visited; the sweeps together take well under a second.

TEST(FastMathTest, ExpUlp) {
  // Measured over every float in [-110, 100]: max 1 ulp (at -87.33).
  SweepResult r =
      sweep([](float x) { return fm::exp(x); }, refExp, -110.0f, 100.0f, 61);
  EXPECT_LE(r.maxUlp, 1) << "at x = " << r.worstX;
  EXPECT_GT(r.count, 30000000);
}

TEST(FastMathTest, TanhUlp) {
  // Measured over every float in [-20, 20]: max 1 ulp.
  SweepResult r =
      sweep([](float x) { return fm::tanh(x); }, refTanh, -20.0f, 20.0f, 127);
  EXPECT_LE(r.maxUlp, 1) << "at x = " << r.worstX;
}

TEST(FastMathTest, ErfUlp) {
  // Measured over every float in [-10, 10]: max 3 ulp (at -0.9998).
  SweepResult r =
      sweep([](float x) { return fm::erf(x); }, refErf, -10.0f, 10.0f, 127);
  EXPECT_LE(r.maxUlp, 3) << "at x = " << r.worstX;
}

TEST(FastMathTest, NormalCdfUlp) {
  // Measured over every float in [-20, 20]: max 7 ulp (at -11.73; the
  // float evaluation of the rational R dominates).
  SweepResult r = sweep([](float x) { return fm::normalCdf(x); }, refPhi,
                        -20.0f, 20.0f, 127);
  EXPECT_LE(r.maxUlp, 7) << "at x = " << r.worstX;
}

TEST(FastMathTest, NormalCdfLeftTailIsRelative) {
  // GELU x * Phi(x) for negative x: Phi must stay relatively accurate, not
  // collapse to the absolute error of 1 + erf(...).
  for (float x : {-5.0f, -8.0f, -10.0f, -12.0f, -13.0f}) {
    double ref = refPhi(x);
    EXPECT_NEAR(fm::normalCdf(x) / ref, 1.0, 1e-6) << "x = " << x;
  }
}

TEST(FastMathTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();

  EXPECT_EQ(bitsOf(fm::exp(-inf)), bitsOf(0.0f));
  EXPECT_EQ(bitsOf(fm::exp(-1e30f)), bitsOf(0.0f));
  EXPECT_EQ(bitsOf(fm::exp(-104.0f)), bitsOf(0.0f));
  EXPECT_GT(fm::exp(-103.9f), 0.0f); // subnormal, not flushed
  EXPECT_EQ(fm::exp(-87.5f), float(std::exp(-87.5)));
  EXPECT_EQ(fm::exp(0.0f), 1.0f);
  EXPECT_EQ(fm::exp(-0.0f), 1.0f);
  EXPECT_TRUE(std::isfinite(fm::exp(88.72f)));
  EXPECT_EQ(fm::exp(88.73f), inf);
  EXPECT_EQ(fm::exp(1e30f), inf);
  EXPECT_EQ(fm::exp(inf), inf);
  EXPECT_TRUE(std::isnan(fm::exp(nan)));

  EXPECT_EQ(fm::tanh(inf), 1.0f);
  EXPECT_EQ(fm::tanh(-inf), -1.0f);
  EXPECT_EQ(fm::tanh(9.1f), 1.0f);
  EXPECT_EQ(fm::tanh(-30.0f), -1.0f);
  EXPECT_EQ(bitsOf(fm::tanh(0.0f)), bitsOf(0.0f));
  EXPECT_EQ(bitsOf(fm::tanh(-0.0f)), bitsOf(-0.0f));
  EXPECT_EQ(fm::tanh(1e-30f), 1e-30f);
  EXPECT_EQ(fm::tanh(fromBits(1)), fromBits(1)); // smallest subnormal
  EXPECT_TRUE(std::isnan(fm::tanh(nan)));

  EXPECT_EQ(fm::erf(inf), 1.0f);
  EXPECT_EQ(fm::erf(-inf), -1.0f);
  EXPECT_EQ(bitsOf(fm::erf(-0.0f)), bitsOf(-0.0f));
  EXPECT_TRUE(std::isnan(fm::erf(nan)));

  EXPECT_EQ(bitsOf(fm::normalCdf(-inf)), bitsOf(0.0f));
  EXPECT_EQ(bitsOf(fm::normalCdf(-15.0f)), bitsOf(0.0f));
  EXPECT_EQ(fm::normalCdf(inf), 1.0f);
  EXPECT_EQ(fm::normalCdf(10.0f), 1.0f);
  EXPECT_EQ(fm::normalCdf(0.0f), 0.5f);
  EXPECT_TRUE(std::isnan(fm::normalCdf(nan)));
}

/// Inputs that reach every branch and the special values.
std::vector<float> bitCheckInputs() {
  std::vector<float> xs = {0.0f,
                           -0.0f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(),
                           fromBits(1),
                           -103.95f,
                           -87.4f,
                           88.7f,
                           0.62f,
                           -0.63f,
                           0.99f,
                           1.01f};
  uint32_t s = 12345;
  while (xs.size() < 4099) { // not a multiple of any vector width
    s = s * 1664525u + 1013904223u;
    xs.push_back((int32_t(s) >> 8) * (40.0f / 8388608.0f)); // [-40, 40)
  }
  return xs;
}

template <typename F> void expectSameBits(F f, const char *name) {
  std::vector<float> xs = bitCheckInputs(), ys(xs.size());
  const float *in = xs.data();
  float *out = ys.data();
  for (size_t i = 0; i < xs.size(); ++i) // vectorised at -O3
    out[i] = f(in[i]);
  for (size_t i = 0; i < xs.size(); ++i) {
    volatile float v = xs[i]; // opaque: the scalar code path
    float s = f(v);
    if (std::isnan(s) || std::isnan(ys[i]))
      EXPECT_TRUE(std::isnan(s) && std::isnan(ys[i])) << name << " " << xs[i];
    else
      EXPECT_EQ(bitsOf(s), bitsOf(ys[i])) << name << "(" << xs[i] << ")";
  }
}

TEST(FastMathTest, LoopAndScalarGiveSameBits) {
  expectSameBits([](float x) { return fm::exp(x); }, "exp");
  expectSameBits([](float x) { return fm::tanh(x); }, "tanh");
  expectSameBits([](float x) { return fm::erf(x); }, "erf");
  expectSameBits([](float x) { return fm::normalCdf(x); }, "normalCdf");
}

} // namespace
