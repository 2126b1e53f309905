//===- SoftmaxTest.cpp - softmax and log_softmax tests --------------------===//
//
// Forward against a long-double reference along the first, a middle and the
// last dimension (and inner sizes past one column block); backward against
// finite differences; large logits; in-place use.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Softmax.h"

#include "GradCheck.h"
#include "HalfBits.h"
#include "runtime/kernels/FastMath.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

struct Layout {
  int64_t outer, dim, inner;
};

/// Softmax of a [3, 4, 5] tensor along dims 0, 1, 2, then wider layouts.
const Layout kLayouts[] = {{1, 3, 20}, {3, 4, 5}, {12, 5, 1},
                           {2, 7, 70}, {2, 1, 3}, {1, 300, 1}};

std::vector<double> naiveSoftmax(bool log, Layout l,
                                 const std::vector<double> &x) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.inner; ++i) {
      auto at = [&](int64_t d) { return (o * l.dim + d) * l.inner + i; };
      long double mx = x[at(0)], sum = 0;
      for (int64_t d = 0; d < l.dim; ++d)
        mx = std::max(mx, (long double)x[at(d)]);
      for (int64_t d = 0; d < l.dim; ++d)
        sum += std::exp((long double)x[at(d)] - mx);
      for (int64_t d = 0; d < l.dim; ++d)
        y[at(d)] = double(log ? x[at(d)] - mx - std::log(sum)
                              : std::exp(x[at(d)] - mx) / sum);
    }
  return y;
}

int64_t size(Layout l) { return l.outer * l.dim * l.inner; }

/// The bits of a float; every NaN alike (which NaN an IEEE operation on NaN
/// returns depends on its operands' order in the instruction).
uint32_t bitsOf(float value) {
  if (std::isnan(value))
    return 0x7fc00000u;
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

/// Rows of up to 64 floats go sixteen at a time, transposed; each must keep
/// the bits of one row alone: its max, FastMath's exp, the sum in double in
/// the row's order, and the normaliser (or the log-sum) in double. With
/// `special`, some elements are NaN or infinite and some rows all -inf.
void checkShortRowsKeepTheirBits(bool special) {
  for (int64_t dim : {1, 5, 28, 64})
    for (int64_t outer : {1, 13, 17, 1000})
      for (bool log : {false, true}) {
        SCOPED_TRACE(std::to_string(outer) + " rows of " + std::to_string(dim) +
                     (log ? " log" : ""));
        std::vector<double> xd =
            randomVector(outer * dim, uint32_t(dim * 7 + outer), -8, 8);
        std::vector<float> x(xd.begin(), xd.end()), y(x.size());
        if (special) {
          const float inf = std::numeric_limits<float>::infinity();
          const float specials[] = {std::nanf(""), inf, -inf};
          for (size_t i = 0; i < x.size(); i += 7)
            x[i] = specials[(i / 7) % 3];
          for (int64_t r = 0; r < dim; ++r)
            x[(outer / 2) * dim + r] = -inf;
        }
        softmaxForward(log, outer, dim, 1, x.data(), y.data());
        for (int64_t o = 0; o < outer; ++o) {
          const float *row = x.data() + o * dim;
          float mx = -std::numeric_limits<float>::infinity();
          for (int64_t r = 0; r < dim; ++r)
            mx = std::max(mx, row[r]);
          double sum = 0;
          for (int64_t r = 0; r < dim; ++r)
            sum += double(fastmath::exp(row[r] - mx));
          for (int64_t r = 0; r < dim; ++r) {
            float want =
                log ? float(double(row[r]) - (double(mx) + std::log(sum)))
                    : float(double(fastmath::exp(row[r] - mx)) * (1 / sum));
            ASSERT_EQ(bitsOf(y[o * dim + r]), bitsOf(want))
                << "row " << o << " element " << r;
          }
        }
        // In place, the same bits.
        std::vector<float> inPlace = x;
        softmaxForward(log, outer, dim, 1, inPlace.data(), inPlace.data());
        for (size_t i = 0; i < y.size(); ++i)
          ASSERT_EQ(bitsOf(inPlace[i]), bitsOf(y[i])) << "element " << i;
      }
}

TEST(Softmax, ShortFloatRowsKeepTheBitsOfOneRowAlone) {
  checkShortRowsKeepTheirBits(/*special=*/false);
}

TEST(Softmax, ShortFloatRowsKeepTheBitsOfOneRowAloneWithNaNAndInfinities) {
  checkShortRowsKeepTheirBits(/*special=*/true);
}

TEST(Softmax, ForwardMatchesNaive) {
  uint32_t seed = 1;
  for (bool log : {false, true})
    for (Layout l : kLayouts) {
      std::vector<double> x = randomVector(size(l), seed++, -5, 5);
      std::vector<float> xf(x.begin(), x.end());
      std::vector<double> want = naiveSoftmax(log, l, x);
      std::vector<double> wantF =
          naiveSoftmax(log, l, std::vector<double>(xf.begin(), xf.end()));
      std::vector<double> y(x.size());
      std::vector<float> yf(x.size());
      softmaxForward(log, l.outer, l.dim, l.inner, x.data(), y.data());
      softmaxForward(log, l.outer, l.dim, l.inner, xf.data(), yf.data());
      for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_NEAR(y[i], want[i], 1e-14 * std::max(1.0, std::fabs(want[i])))
            << "log " << log << " dim " << l.dim << " at " << i;
        EXPECT_NEAR(yf[i], wantF[i], 1e-6 * std::fabs(wantF[i]) + 1e-12)
            << "float log " << log << " dim " << l.dim << " at " << i;
      }
    }
}

TEST(Softmax, LargeLogitsDoNotOverflow) {
  float x[] = {1000, 1001, 999, -1e30f};
  float y[4];
  softmaxForward(false, 1, 4, 1, x, y);
  double e = std::exp(1.0), total = 1 + e + 1 / e;
  EXPECT_NEAR(y[0], 1 / total, 1e-7);
  EXPECT_NEAR(y[1], e / total, 1e-7);
  EXPECT_EQ(y[3], 0.0f);
  softmaxForward(true, 1, 4, 1, x, y);
  EXPECT_NEAR(y[1], 1 - std::log(total), 1e-6);
}

TEST(Softmax, BackwardMatchesFiniteDifferences) {
  uint32_t seed = 100;
  for (bool log : {false, true})
    for (Layout l : kLayouts) {
      if (size(l) > 300)
        continue;
      std::vector<double> x = randomVector(size(l), seed++, -3, 3);
      std::vector<double> probe = randomVector(size(l), seed++);
      auto forward = [&](const std::vector<double> &in) {
        std::vector<double> y(in.size());
        softmaxForward(log, l.outer, l.dim, l.inner, in.data(), y.data());
        return y;
      };
      std::vector<double> y = forward(x), dx(x.size());
      softmaxBackward(log, l.outer, l.dim, l.inner, probe.data(), y.data(),
                      dx.data());
      checkGradient(
          std::string(log ? "log_softmax" : "softmax") + " dim " +
              std::to_string(l.dim) + " inner " + std::to_string(l.inner),
          x,
          [&](const std::vector<double> &in) {
            return dot(forward(in), probe);
          },
          dx);
    }
}

TEST(Softmax, FloatBackwardMatchesDouble) {
  Layout l = {2, 7, 70};
  std::vector<double> x = randomVector(size(l), 200, -3, 3),
                      dy = randomVector(size(l), 201);
  for (bool log : {false, true}) {
    std::vector<float> xf(x.begin(), x.end()), dyf(dy.begin(), dy.end()),
        yf(x.size()), dxf(x.size());
    softmaxForward(log, l.outer, l.dim, l.inner, xf.data(), yf.data());
    softmaxBackward(log, l.outer, l.dim, l.inner, dyf.data(), yf.data(),
                    dxf.data());
    std::vector<double> yr(yf.begin(), yf.end()), dyr(dyf.begin(), dyf.end()),
        dx(x.size());
    softmaxBackward(log, l.outer, l.dim, l.inner, dyr.data(), yr.data(),
                    dx.data());
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_NEAR(dxf[i], dx[i], 1e-6 * std::fabs(dx[i]) + 1e-12)
          << "log " << log << " at " << i;
  }
}

TEST(Softmax, InPlace) {
  Layout l = {3, 4, 70};
  std::vector<double> x = randomVector(size(l), 300, -3, 3),
                      dy = randomVector(size(l), 301);
  for (bool log : {false, true}) {
    std::vector<double> y(x.size()), inPlace = x;
    softmaxForward(log, l.outer, l.dim, l.inner, x.data(), y.data());
    softmaxForward(log, l.outer, l.dim, l.inner, inPlace.data(),
                   inPlace.data());
    EXPECT_EQ(inPlace, y);
    std::vector<double> dx(x.size()), dyInPlace = dy;
    softmaxBackward(log, l.outer, l.dim, l.inner, dy.data(), y.data(),
                    dx.data());
    softmaxBackward(log, l.outer, l.dim, l.inner, dyInPlace.data(), y.data(),
                    dyInPlace.data());
    EXPECT_EQ(dyInPlace, dx);
  }
}

/// A half input into float32: the float kernel on the widened copy, bit for
/// bit, along the last dimension (short rows, long rows) and a middle one,
/// with NaN, infinities and subnormals among the inputs.
template <typename T> void checkHalfInput(CastType type) {
  const Layout layouts[] = {{3584, 28, 1}, {5, 300, 1}, {3, 7, 70}};
  uint32_t seed = 400;
  for (const Layout &l : layouts)
    for (bool log : {false, true}) {
      auto x = randomHalves<T>(size_t(l.outer * l.dim * l.inner), seed++,
                               /*specials=*/l.outer == 5);
      std::vector<float> wide = widen(x, type), want(x.size()),
                         got(x.size(), -1.0f);
      softmaxForward<float>(log, l.outer, l.dim, l.inner, wide.data(),
                            want.data());
      softmaxForward<T>(log, l.outer, l.dim, l.inner, x.data(), got.data());
      EXPECT_EQ(
          0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)))
          << "log " << log << " outer " << l.outer;
    }
}

TEST(SoftmaxHalfInput, SameBitsAsFloatOnTheWidenedCopyF16) {
  checkHalfInput<F16>(CastType::F16);
}
TEST(SoftmaxHalfInput, SameBitsAsFloatOnTheWidenedCopyBf16) {
  checkHalfInput<Bf16>(CastType::BF16);
}

} // namespace
