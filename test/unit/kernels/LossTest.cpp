//===- LossTest.cpp - Cross-entropy and MSE tests -------------------------===//
//
// Forward against a long-double reference of PyTorch's formulas, backward
// against finite differences (with and without label smoothing), and
// out-of-range labels raising KernelError.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Loss.h"

#include "runtime/kernels/KernelError.h"

#include "GradCheck.h"

#include <algorithm>
#include <cmath>
#include <string>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

bool contains(const char *text, const char *part) {
  return std::string(text).find(part) != std::string::npos;
}

/// mean over rows of -(1 - eps) logp[label] - eps / C * sum(logp).
double naiveCrossEntropy(int64_t rows, int64_t classes,
                         const std::vector<double> &x,
                         const std::vector<int64_t> &labels, double eps) {
  long double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = x.data() + r * classes;
    long double mx = *std::max_element(row, row + classes), s = 0;
    for (int64_t c = 0; c < classes; ++c)
      s += std::exp((long double)row[c] - mx);
    long double lse = mx + std::log(s), sumLogp = 0;
    for (int64_t c = 0; c < classes; ++c)
      sumLogp += row[c] - lse;
    total += -(1 - eps) * (row[labels[r]] - lse) - eps / classes * sumLogp;
  }
  return double(total / rows);
}

std::vector<int64_t> randomLabels(int64_t rows, int64_t classes,
                                  uint32_t seed) {
  std::vector<double> u = randomVector(rows, seed, 0, double(classes));
  std::vector<int64_t> labels(rows);
  for (int64_t r = 0; r < rows; ++r)
    labels[r] = int64_t(u[r]);
  return labels;
}

TEST(CrossEntropy, ForwardMatchesNaive) {
  const int64_t rows = 13, classes = 10;
  std::vector<double> x = randomVector(rows * classes, 1, -4, 4);
  std::vector<float> xf(x.begin(), x.end());
  std::vector<double> xAsFloat(xf.begin(), xf.end());
  std::vector<int64_t> labels = randomLabels(rows, classes, 2);
  std::vector<int32_t> labels32(labels.begin(), labels.end());
  for (double eps : {0.0, 0.1, 1.0}) {
    double want = naiveCrossEntropy(rows, classes, x, labels, eps);
    double wantF = naiveCrossEntropy(rows, classes, xAsFloat, labels, eps);
    double loss = 0, loss32 = 0;
    float lossF = 0;
    crossEntropyForward(rows, classes, x.data(), labels.data(), eps, &loss);
    crossEntropyForward(rows, classes, x.data(), labels32.data(), eps,
                        &loss32);
    crossEntropyForward(rows, classes, xf.data(), labels.data(), eps, &lossF);
    EXPECT_NEAR(loss, want, 1e-14) << "eps " << eps;
    EXPECT_EQ(loss32, loss);
    EXPECT_NEAR(lossF, wantF, 1e-7 * wantF) << "eps " << eps;
  }
}

TEST(CrossEntropy, UniformLogitsGiveLogClasses) {
  std::vector<float> x(3 * 5, 2.5f);
  std::vector<int32_t> labels = {0, 4, 2};
  for (double eps : {0.0, 0.3}) {
    float loss = 0;
    crossEntropyForward(3, 5, x.data(), labels.data(), eps, &loss);
    EXPECT_NEAR(loss, std::log(5.0), 1e-7);
  }
}

TEST(CrossEntropy, InfiniteLogitWithoutSmoothingIsFinite) {
  // Only the smoothing term sums every logp; PyTorch skips it at eps == 0.
  double x[] = {1, -INFINITY, 0};
  int64_t label = 0;
  double loss = 0;
  crossEntropyForward(1, 3, x, &label, 0.0, &loss);
  EXPECT_NEAR(loss, std::log(1 + std::exp(-1.0)), 1e-15);
}

TEST(CrossEntropy, BackwardMatchesFiniteDifferences) {
  const int64_t rows = 4, classes = 6;
  std::vector<double> x = randomVector(rows * classes, 3, -3, 3);
  std::vector<int64_t> labels = randomLabels(rows, classes, 4);
  std::vector<int32_t> labels32(labels.begin(), labels.end());
  double dloss = 0.7;
  for (double eps : {0.0, 0.1, 0.5}) {
    std::vector<double> dx(x.size()), dx32(x.size());
    crossEntropyBackward(rows, classes, &dloss, x.data(), labels.data(), eps,
                         dx.data());
    crossEntropyBackward(rows, classes, &dloss, x.data(), labels32.data(),
                         eps, dx32.data());
    EXPECT_EQ(dx32, dx);
    checkGradient(
        "cross-entropy eps " + std::to_string(eps), x,
        [&](const std::vector<double> &in) {
          double loss = 0;
          crossEntropyForward(rows, classes, in.data(), labels.data(), eps,
                              &loss);
          return dloss * loss;
        },
        dx);
  }
}

TEST(CrossEntropy, FloatBackwardMatchesDouble) {
  const int64_t rows = 8, classes = 100;
  std::vector<double> x = randomVector(rows * classes, 5, -5, 5);
  std::vector<float> xf(x.begin(), x.end());
  std::vector<double> xr(xf.begin(), xf.end());
  std::vector<int64_t> labels = randomLabels(rows, classes, 6);
  float dlossF = 1.5f;
  double dloss = 1.5;
  std::vector<float> dxf(x.size());
  std::vector<double> dx(x.size());
  crossEntropyBackward(rows, classes, &dlossF, xf.data(), labels.data(), 0.1,
                       dxf.data());
  crossEntropyBackward(rows, classes, &dloss, xr.data(), labels.data(), 0.1,
                       dx.data());
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(dxf[i], dx[i], 1e-7 * std::fabs(dx[i]) + 1e-30) << i;
}

TEST(CrossEntropy, LabelOutOfRangeThrows) {
  std::vector<float> x(3 * 4, 0.0f), dx(x.size(), 9.0f);
  float dloss = 1, loss = 5;
  std::vector<int32_t> high = {1, 4, 0};
  std::vector<int64_t> negative = {0, 1, -1};
  try {
    crossEntropyForward(3, 4, x.data(), high.data(), 0.0, &loss);
    FAIL() << "no exception";
  } catch (const KernelError &e) {
    EXPECT_TRUE(contains(e.what(), "label 4 at row 1")) << e.what();
    EXPECT_TRUE(contains(e.what(), "[0, 4)")) << e.what();
  }
  EXPECT_EQ(loss, 5);
  try {
    crossEntropyBackward(3, 4, &dloss, x.data(), negative.data(), 0.1,
                         dx.data());
    FAIL() << "no exception";
  } catch (const KernelError &e) {
    EXPECT_TRUE(contains(e.what(), "label -1 at row 2")) << e.what();
  }
  EXPECT_EQ(dx, std::vector<float>(x.size(), 9.0f));
}

TEST(Mse, ForwardMatchesNaive) {
  const int64_t n = 1000;
  std::vector<double> x = randomVector(n, 10), t = randomVector(n, 11);
  std::vector<float> xf(x.begin(), x.end()), tf(t.begin(), t.end());
  long double s = 0, sf = 0;
  for (int64_t i = 0; i < n; ++i) {
    s += (long double)(x[i] - t[i]) * (x[i] - t[i]);
    long double df = (long double)xf[i] - tf[i];
    sf += df * df;
  }
  double loss = 0;
  float lossF = 0;
  mseForward(n, x.data(), t.data(), &loss);
  mseForward(n, xf.data(), tf.data(), &lossF);
  EXPECT_NEAR(loss, double(s / n), 1e-15);
  EXPECT_NEAR(lossF, double(sf / n), 1e-7 * double(sf / n));
}

TEST(Mse, BackwardMatchesFiniteDifferences) {
  const int64_t n = 20;
  std::vector<double> x = randomVector(n, 12), t = randomVector(n, 13);
  double dloss = -1.3;
  std::vector<double> dx(n), dt(n), dxOnly(n);
  mseBackward(n, &dloss, x.data(), t.data(), dx.data(), dt.data());
  mseBackward(n, &dloss, x.data(), t.data(), dxOnly.data(),
              static_cast<double *>(nullptr));
  EXPECT_EQ(dxOnly, dx);
  auto loss = [&](const std::vector<double> &xv, const std::vector<double> &tv) {
    double l = 0;
    mseForward(n, xv.data(), tv.data(), &l);
    return dloss * l;
  };
  checkGradient(
      "mse dx", x, [&](const std::vector<double> &v) { return loss(v, t); },
      dx);
  checkGradient(
      "mse dt", t, [&](const std::vector<double> &v) { return loss(x, v); },
      dt);
}

} // namespace
