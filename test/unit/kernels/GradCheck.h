//===- GradCheck.h - Finite-difference checks for backward rules -*- C++ -*-===//
//
// For a scalar function L(x) = sum(forward(x) * probe) with a fixed random
// probe, a backward rule given dy = probe must return dL/dx. checkGradient
// compares it against central differences in float64.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_TEST_UNIT_KERNELS_GRADCHECK_H
#define CAIRN_TEST_UNIT_KERNELS_GRADCHECK_H

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace cairn::kernels::testing {

/// n values uniform in [lo, hi), reproducible from `seed`.
inline std::vector<double> randomVector(size_t n, uint32_t seed,
                                        double lo = -1, double hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double &x : v)
    x = dist(rng);
  return v;
}

/// `loss(x)` is a scalar function of x; `analytic` is its gradient at x as
/// the backward rule computed it. Checks every element to `tolerance`
/// (relative to max(1, |numeric|)).
inline void checkGradient(const std::string &what, std::vector<double> x,
                          const std::function<double(const std::vector<double> &)> &loss,
                          const std::vector<double> &analytic,
                          double step = 1e-6, double tolerance = 1e-6) {
  ASSERT_EQ(x.size(), analytic.size()) << what;
  for (size_t i = 0; i < x.size(); ++i) {
    double saved = x[i];
    x[i] = saved + step;
    double up = loss(x);
    x[i] = saved - step;
    double down = loss(x);
    x[i] = saved;
    double numeric = (up - down) / (2 * step);
    double scale = std::max(1.0, std::fabs(numeric));
    ASSERT_NEAR(analytic[i] / scale, numeric / scale, tolerance)
        << what << ": element " << i << " analytic " << analytic[i]
        << " numeric " << numeric;
  }
}

/// sum(a[i] * b[i]).
inline double dot(const std::vector<double> &a, const std::vector<double> &b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

} // namespace cairn::kernels::testing

#endif // CAIRN_TEST_UNIT_KERNELS_GRADCHECK_H
