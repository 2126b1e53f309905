//===- NormalizationTest.cpp - BatchNorm and LayerNorm --------------------===//
//
// Forward passes against naive loops, backward passes (dx, dgamma, dbeta)
// against central differences, with and without the affine parameters, and
// the running-statistics update against numbers worked out by hand. Batch
// norm over replicas (--sync-batchnorm): R threads, each with its share of
// the batch, give one process's results on the whole batch.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Normalization.h"
#include "runtime/kernels/KernelError.h"

#include "GradCheck.h"
#include "HalfBits.h"
#include "ThreadRanks.h"

#include <cmath>
#include <string>
#include <vector>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

constexpr double kEps = 1e-5;

struct BnCase {
  int64_t n, c, spatial;
};

std::vector<BnCase> bnCases() {
  return {{3, 4, 5},  // BatchNorm2d-like
          {1, 2, 6},  // batch 1
          {4, 3, 1}}; // BatchNorm1d on [n, c]
}

std::string describe(const BnCase &b) {
  return "n" + std::to_string(b.n) + " c" + std::to_string(b.c) + " spatial" +
         std::to_string(b.spatial);
}

template <typename T> std::vector<T> cast(const std::vector<double> &v) {
  return std::vector<T>(v.begin(), v.end());
}

template <typename T>
void expectNear(const std::vector<T> &got, const std::vector<double> &want,
                const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(double(got[i]), want[i],
                tol * std::max(1.0, std::fabs(want[i])))
        << what << " element " << i;
}

/// Normalizes each channel with the given statistics (batch ones when
/// mean/var are null).
std::vector<double> referenceBatchNorm(const BnCase &b,
                                       const std::vector<double> &x,
                                       const std::vector<double> *gamma,
                                       const std::vector<double> *beta,
                                       const std::vector<double> *mean,
                                       const std::vector<double> *var) {
  std::vector<double> y(x.size());
  for (int64_t c = 0; c < b.c; ++c) {
    std::vector<double> values;
    for (int64_t i = 0; i < b.n; ++i)
      for (int64_t s = 0; s < b.spatial; ++s)
        values.push_back(x[(i * b.c + c) * b.spatial + s]);
    double mu = 0, v = 0;
    for (double e : values)
      mu += e / double(values.size());
    for (double e : values)
      v += (e - mu) * (e - mu) / double(values.size());
    if (mean) {
      mu = (*mean)[c];
      v = (*var)[c];
    }
    for (int64_t i = 0; i < b.n; ++i)
      for (int64_t s = 0; s < b.spatial; ++s) {
        int64_t k = (i * b.c + c) * b.spatial + s;
        y[k] = (x[k] - mu) / std::sqrt(v + kEps) * (gamma ? (*gamma)[c] : 1.0) +
               (beta ? (*beta)[c] : 0.0);
      }
  }
  return y;
}

TEST(BatchNorm, TrainingForwardMatchesReference) {
  for (const BnCase &b : bnCases())
    for (bool affine : {true, false}) {
      SCOPED_TRACE(describe(b) + " affine=" + std::to_string(affine));
      // An offset mean shows the variance is taken around it.
      auto x = randomVector(b.n * b.c * b.spatial, 71, 2.0, 5.0);
      auto gamma = randomVector(b.c, 72), beta = randomVector(b.c, 73);
      auto want =
          referenceBatchNorm(b, x, affine ? &gamma : nullptr,
                             affine ? &beta : nullptr, nullptr, nullptr);
      std::vector<double> y(x.size(), std::nan(""));
      batchNormTrainingForward<double>(
          b.n, b.c, b.spatial, x.data(), affine ? gamma.data() : nullptr,
          affine ? beta.data() : nullptr, kEps, y.data());
      expectNear(y, want, "double");
      std::vector<float> fx = cast<float>(x), fg = cast<float>(gamma),
                         fb = cast<float>(beta), fy(x.size(), std::nanf(""));
      batchNormTrainingForward<float>(
          b.n, b.c, b.spatial, fx.data(), affine ? fg.data() : nullptr,
          affine ? fb.data() : nullptr, kEps, fy.data());
      expectNear(fy, want, "float");
    }
}

TEST(BatchNorm, InferenceForwardMatchesReference) {
  for (const BnCase &b : bnCases())
    for (bool affine : {true, false}) {
      SCOPED_TRACE(describe(b) + " affine=" + std::to_string(affine));
      auto x = randomVector(b.n * b.c * b.spatial, 74);
      auto gamma = randomVector(b.c, 75), beta = randomVector(b.c, 76);
      auto mean = randomVector(b.c, 77), var = randomVector(b.c, 78, 0.5, 2.0);
      auto want = referenceBatchNorm(b, x, affine ? &gamma : nullptr,
                                     affine ? &beta : nullptr, &mean, &var);
      std::vector<double> y(x.size(), std::nan(""));
      batchNormInferenceForward<double>(
          b.n, b.c, b.spatial, x.data(), affine ? gamma.data() : nullptr,
          affine ? beta.data() : nullptr, mean.data(), var.data(), kEps,
          y.data());
      expectNear(y, want, "double");
      std::vector<float> fx = cast<float>(x), fg = cast<float>(gamma),
                         fb = cast<float>(beta), fm = cast<float>(mean),
                         fv = cast<float>(var), fy(x.size(), std::nanf(""));
      batchNormInferenceForward<float>(
          b.n, b.c, b.spatial, fx.data(), affine ? fg.data() : nullptr,
          affine ? fb.data() : nullptr, fm.data(), fv.data(), kEps, fy.data());
      expectNear(fy, want, "float");
    }
}

TEST(BatchNorm, BackwardMatchesFiniteDifferences) {
  for (const BnCase &b : bnCases())
    for (bool affine : {true, false}) {
      SCOPED_TRACE(describe(b) + " affine=" + std::to_string(affine));
      auto x = randomVector(b.n * b.c * b.spatial, 81);
      auto gamma = randomVector(b.c, 82, 0.5, 1.5),
           beta = randomVector(b.c, 83);
      auto probe = randomVector(x.size(), 84);
      auto loss = [&](const std::vector<double> &xv,
                      const std::vector<double> &gv,
                      const std::vector<double> &bv) {
        std::vector<double> y(xv.size());
        batchNormTrainingForward<double>(
            b.n, b.c, b.spatial, xv.data(), affine ? gv.data() : nullptr,
            affine ? bv.data() : nullptr, kEps, y.data());
        return dot(y, probe);
      };
      std::vector<double> dx(x.size(), std::nan("")), dg(b.c, std::nan("")),
          db(b.c, std::nan(""));
      batchNormBackward<double>(b.n, b.c, b.spatial, probe.data(), x.data(),
                                affine ? gamma.data() : nullptr, kEps,
                                dx.data(), affine ? dg.data() : nullptr,
                                affine ? db.data() : nullptr);
      checkGradient(
          "dx", x,
          [&](const std::vector<double> &v) { return loss(v, gamma, beta); },
          dx);
      if (affine) {
        checkGradient(
            "dgamma", gamma,
            [&](const std::vector<double> &v) { return loss(x, v, beta); }, dg);
        checkGradient(
            "dbeta", beta,
            [&](const std::vector<double> &v) { return loss(x, gamma, v); },
            db);
      }

      std::vector<float> fx = cast<float>(x), fg = cast<float>(gamma),
                         fdy = cast<float>(probe);
      std::vector<float> fdx(x.size(), std::nanf("")), fdg(b.c, std::nanf("")),
          fdb(b.c, std::nanf(""));
      batchNormBackward<float>(b.n, b.c, b.spatial, fdy.data(), fx.data(),
                               affine ? fg.data() : nullptr, kEps, fdx.data(),
                               affine ? fdg.data() : nullptr,
                               affine ? fdb.data() : nullptr);
      // dx of a normalization loses digits to cancellation; 1e-4 is still
      // well inside what float can promise.
      for (size_t i = 0; i < dx.size(); ++i)
        ASSERT_NEAR(fdx[i], dx[i], 1e-4 * std::max(1.0, std::fabs(dx[i])))
            << "float dx element " << i;
      if (affine) {
        expectNear(fdg, dg, "float dgamma");
        expectNear(fdb, db, "float dbeta");
      }
    }
}

TEST(BatchNorm, LargeMeanKeepsFloatAccuracy) {
  // A mean of 1000 with a spread of 1: subtracting a float-rounded mean
  // would leave errors near 1e-4 in outputs of order 1.
  const BnCase b{4, 2, 9};
  std::vector<float> fx =
      cast<float>(randomVector(b.n * b.c * b.spatial, 85, 999.0, 1001.0));
  std::vector<double> x(fx.begin(), fx.end()); // the values float holds
  auto probe = randomVector(x.size(), 86);
  std::vector<double> y(x.size()), dx(x.size());
  batchNormTrainingForward<double>(b.n, b.c, b.spatial, x.data(), nullptr,
                                   nullptr, kEps, y.data());
  batchNormBackward<double>(b.n, b.c, b.spatial, probe.data(), x.data(),
                            nullptr, kEps, dx.data(), nullptr, nullptr);
  std::vector<float> fy(x.size()), fdx(x.size()), fdy = cast<float>(probe);
  batchNormTrainingForward<float>(b.n, b.c, b.spatial, fx.data(), nullptr,
                                  nullptr, kEps, fy.data());
  batchNormBackward<float>(b.n, b.c, b.spatial, fdy.data(), fx.data(), nullptr,
                           kEps, fdx.data(), nullptr, nullptr);
  expectNear(fy, y, "y");
  expectNear(fdx, dx, "dx");
}

TEST(BatchNorm, RunningStatsUpdate) {
  // [n=2, c=2, spatial=2]; channel 0 sees {1, 2, 3, 4}, channel 1 sees
  // {10, 10, 14, 10}.
  std::vector<double> x = {1, 2, 10, 10, 3, 4, 14, 10};
  std::vector<double> mean = {0, 1}, var = {1, 2};
  int64_t tracked = 7;
  batchNormUpdateRunningStats<double>(2, 2, 2, x.data(), 0.1, mean.data(),
                                      var.data(), &tracked);
  // Channel 0: mean 2.5, biased var 1.25, unbiased 5/3.
  EXPECT_DOUBLE_EQ(mean[0], 0.9 * 0 + 0.1 * 2.5);
  EXPECT_DOUBLE_EQ(var[0], 0.9 * 1 + 0.1 * (5.0 / 3.0));
  // Channel 1: mean 11, squared deviations 1+1+9+1 = 12, unbiased 4.
  EXPECT_DOUBLE_EQ(mean[1], 0.9 * 1 + 0.1 * 11);
  EXPECT_DOUBLE_EQ(var[1], 0.9 * 2 + 0.1 * 4);
  EXPECT_EQ(tracked, 8);

  std::vector<float> fx(x.begin(), x.end()), fm = {0, 1}, fv = {1, 2};
  batchNormUpdateRunningStats<float>(2, 2, 2, fx.data(), 0.1, fm.data(),
                                     fv.data(), &tracked);
  EXPECT_FLOAT_EQ(fm[0], 0.25f);
  EXPECT_FLOAT_EQ(fv[0], float(0.9 + 0.5 / 3.0));
  EXPECT_FLOAT_EQ(fm[1], 2.0f);
  EXPECT_FLOAT_EQ(fv[1], 2.2f);
  EXPECT_EQ(tracked, 9);
}

/// The elements of images [begin, end) of x viewed as [n, c, spatial].
template <typename T>
std::vector<T> images(const std::vector<T> &x, const BnCase &b, int64_t begin,
                      int64_t end) {
  return std::vector<T>(x.begin() + begin * b.c * b.spatial,
                        x.begin() + end * b.c * b.spatial);
}

TEST(BatchNorm, ReplicasNormalizeByEveryReplicasExamples) {
  // 5 images as 3 replicas of 2, 2 and 1: uneven shares too.
  const BnCase b{5, 3, 4};
  const std::vector<int64_t> firstImage = {0, 2, 4, 5};
  const int replicas = 3;
  auto x = randomVector(b.n * b.c * b.spatial, 91, 1.0, 3.0);
  auto dy = randomVector(x.size(), 92);
  auto gamma = randomVector(b.c, 93, 0.5, 1.5), beta = randomVector(b.c, 94);
  std::vector<double> y(x.size()), dx(x.size()), dg(b.c), db(b.c);
  std::vector<double> mean = {0.1, 0.2, 0.3}, var = {1, 2, 3};
  int64_t tracked = 0;
  batchNormTrainingForward<double>(b.n, b.c, b.spatial, x.data(), gamma.data(),
                                   beta.data(), kEps, y.data());
  batchNormBackward<double>(b.n, b.c, b.spatial, dy.data(), x.data(),
                            gamma.data(), kEps, dx.data(), dg.data(),
                            db.data());
  batchNormUpdateRunningStats<double>(b.n, b.c, b.spatial, x.data(), 0.1,
                                      mean.data(), var.data(), &tracked);

  struct Replica {
    std::vector<double> y, dx, dg, db, mean = {0.1, 0.2, 0.3}, var = {1, 2, 3};
    int64_t tracked = 0;
  };
  std::vector<Replica> got(replicas);
  ThreadRanks exchange(replicas);
  exchange.run([&](int r, const RankSum &sum) {
    const int64_t n = firstImage[r + 1] - firstImage[r];
    const auto xr = images(x, b, firstImage[r], firstImage[r + 1]);
    const auto dyr = images(dy, b, firstImage[r], firstImage[r + 1]);
    Replica &out = got[r];
    std::vector<double> workspace(batchNormReplicaSumElements(b.c, true));
    out.y.resize(xr.size());
    out.dx.resize(xr.size());
    out.dg.resize(b.c);
    out.db.resize(b.c);
    batchNormTrainingForward<double>(n, b.c, b.spatial, xr.data(), gamma.data(),
                                     beta.data(), kEps, out.y.data(),
                                     workspace.data(), sum);
    batchNormBackward<double>(n, b.c, b.spatial, dyr.data(), xr.data(),
                              gamma.data(), kEps, out.dx.data(), out.dg.data(),
                              out.db.data(), workspace.data(), sum);
    batchNormUpdateRunningStats<double>(n, b.c, b.spatial, xr.data(), 0.1,
                                        out.mean.data(), out.var.data(),
                                        &out.tracked, workspace.data(), sum);
  });
  // Two sums for each kernel's statistics, one more for the backward's.
  EXPECT_EQ(exchange.callsMade(), replicas * 7);

  std::vector<double> dgSum(b.c, 0.0), dbSum(b.c, 0.0);
  for (int r = 0; r < replicas; ++r) {
    SCOPED_TRACE("replica " + std::to_string(r));
    const Replica &out = got[r];
    expectNear(out.y, images(y, b, firstImage[r], firstImage[r + 1]), "y");
    expectNear(out.dx, images(dx, b, firstImage[r], firstImage[r + 1]), "dx");
    // The running statistics are every replica's, so the same on each.
    expectNear(out.mean, mean, "running mean");
    expectNear(out.var, var, "running var");
    EXPECT_EQ(out.tracked, 1);
    for (int64_t c = 0; c < b.c; ++c) {
      dgSum[c] += out.dg[c];
      dbSum[c] += out.db[c];
    }
  }
  // Each replica's parameter gradients are its own examples' share: the
  // replicas' gradient sums add them up to the whole batch's.
  expectNear(dgSum, dg, "dgamma summed over the replicas");
  expectNear(dbSum, db, "dbeta summed over the replicas");
}

TEST(BatchNorm, OneReplicaIsTheBatchToTheBit) {
  // The replica path's arithmetic is the local one's: with one replica (a
  // sum that changes nothing) every output is the same float.
  const BnCase b{3, 4, 7};
  std::vector<float> x = cast<float>(randomVector(b.n * b.c * b.spatial, 95,
                                                  -2.0, 4.0)),
                     dy = cast<float>(randomVector(x.size(), 96)),
                     gamma = cast<float>(randomVector(b.c, 97)),
                     beta = cast<float>(randomVector(b.c, 98));
  int calls = 0;
  const RankSum alone = [&](double *, int64_t) { ++calls; };
  struct Outputs {
    std::vector<float> y, dx, dg, db, mean, var;
  };
  auto runAll = [&](const RankSum &sum) {
    std::vector<double> workspace(batchNormReplicaSumElements(b.c, true));
    double *ws = sum ? workspace.data() : nullptr;
    Outputs o{std::vector<float>(x.size()), std::vector<float>(x.size()),
              std::vector<float>(b.c),      std::vector<float>(b.c),
              std::vector<float>(b.c, 0.5f), std::vector<float>(b.c, 2.0f)};
    batchNormTrainingForward<float>(b.n, b.c, b.spatial, x.data(),
                                    gamma.data(), beta.data(), kEps,
                                    o.y.data(), ws, sum);
    batchNormBackward<float>(b.n, b.c, b.spatial, dy.data(), x.data(),
                             gamma.data(), kEps, o.dx.data(), o.dg.data(),
                             o.db.data(), ws, sum);
    batchNormUpdateRunningStats<float>(b.n, b.c, b.spatial, x.data(), 0.1,
                                       o.mean.data(), o.var.data(), nullptr,
                                       ws, sum);
    return o;
  };
  const Outputs local = runAll(RankSum()), replica = runAll(alone);
  EXPECT_EQ(calls, 7);
  EXPECT_EQ(local.y, replica.y);
  EXPECT_EQ(local.dx, replica.dx);
  EXPECT_EQ(local.dg, replica.dg);
  EXPECT_EQ(local.db, replica.db);
  EXPECT_EQ(local.mean, replica.mean);
  EXPECT_EQ(local.var, replica.var);
}

TEST(BatchNorm, ReplicasWithoutTheirWorkspaceAreAnError) {
  const BnCase b{2, 3, 2};
  std::vector<float> x(b.n * b.c * b.spatial, 1.0f), y(x.size());
  const RankSum alone = [](double *, int64_t) {};
  EXPECT_THROW(batchNormTrainingForward<float>(b.n, b.c, b.spatial, x.data(),
                                               nullptr, nullptr, kEps,
                                               y.data(), nullptr, alone),
               KernelError);
}

std::vector<double> referenceLayerNorm(int64_t rows, int64_t cols,
                                       const std::vector<double> &x,
                                       const std::vector<double> *gamma,
                                       const std::vector<double> *beta) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mu = 0, v = 0;
    for (int64_t j = 0; j < cols; ++j)
      mu += x[r * cols + j] / double(cols);
    for (int64_t j = 0; j < cols; ++j)
      v += (x[r * cols + j] - mu) * (x[r * cols + j] - mu) / double(cols);
    for (int64_t j = 0; j < cols; ++j)
      y[r * cols + j] = (x[r * cols + j] - mu) / std::sqrt(v + kEps) *
                            (gamma ? (*gamma)[j] : 1.0) +
                        (beta ? (*beta)[j] : 0.0);
  }
  return y;
}

TEST(LayerNorm, ForwardMatchesReference) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 8}, {1, 5}, {6, 2}})
    for (bool affine : {true, false}) {
      SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) +
                   " affine=" + std::to_string(affine));
      auto x = randomVector(rows * cols, 91, -3.0, 4.0);
      auto gamma = randomVector(cols, 92), beta = randomVector(cols, 93);
      auto want = referenceLayerNorm(rows, cols, x, affine ? &gamma : nullptr,
                                     affine ? &beta : nullptr);
      std::vector<double> y(x.size(), std::nan(""));
      layerNormForward<double>(rows, cols, x.data(),
                               affine ? gamma.data() : nullptr,
                               affine ? beta.data() : nullptr, kEps, y.data());
      expectNear(y, want, "double");
      std::vector<float> fx = cast<float>(x), fg = cast<float>(gamma),
                         fb = cast<float>(beta), fy(x.size(), std::nanf(""));
      layerNormForward<float>(rows, cols, fx.data(),
                              affine ? fg.data() : nullptr,
                              affine ? fb.data() : nullptr, kEps, fy.data());
      expectNear(fy, want, "float");
    }
}

TEST(LayerNorm, BackwardMatchesFiniteDifferences) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 8}, {1, 5}, {6, 2}})
    for (bool affine : {true, false}) {
      SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) +
                   " affine=" + std::to_string(affine));
      auto x = randomVector(rows * cols, 94);
      auto gamma = randomVector(cols, 95, 0.5, 1.5),
           beta = randomVector(cols, 96);
      auto probe = randomVector(x.size(), 97);
      auto loss = [&](const std::vector<double> &xv,
                      const std::vector<double> &gv,
                      const std::vector<double> &bv) {
        std::vector<double> y(xv.size());
        layerNormForward<double>(rows, cols, xv.data(),
                                 affine ? gv.data() : nullptr,
                                 affine ? bv.data() : nullptr, kEps, y.data());
        return dot(y, probe);
      };
      std::vector<double> dx(x.size(), std::nan("")), dg(cols, std::nan("")),
          db(cols, std::nan(""));
      layerNormBackward<double>(rows, cols, probe.data(), x.data(),
                                affine ? gamma.data() : nullptr, kEps,
                                dx.data(), affine ? dg.data() : nullptr,
                                affine ? db.data() : nullptr);
      checkGradient(
          "dx", x,
          [&](const std::vector<double> &v) { return loss(v, gamma, beta); },
          dx);
      if (affine) {
        checkGradient(
            "dgamma", gamma,
            [&](const std::vector<double> &v) { return loss(x, v, beta); }, dg);
        checkGradient(
            "dbeta", beta,
            [&](const std::vector<double> &v) { return loss(x, gamma, v); },
            db);
      }

      std::vector<float> fx = cast<float>(x), fg = cast<float>(gamma),
                         fdy = cast<float>(probe);
      std::vector<float> fdx(x.size(), std::nanf("")), fdg(cols, std::nanf("")),
          fdb(cols, std::nanf(""));
      layerNormBackward<float>(rows, cols, fdy.data(), fx.data(),
                               affine ? fg.data() : nullptr, kEps, fdx.data(),
                               affine ? fdg.data() : nullptr,
                               affine ? fdb.data() : nullptr);
      for (size_t i = 0; i < dx.size(); ++i)
        ASSERT_NEAR(fdx[i], dx[i], 1e-4 * std::max(1.0, std::fabs(dx[i])))
            << "float dx element " << i;
      if (affine) {
        expectNear(fdg, dg, "float dgamma");
        expectNear(fdb, db, "float dbeta");
      }
    }
}

TEST(LayerNorm, ParameterGradientsOfManyRowsAcrossThreads) {
  // Enough rows and columns that the columns are split across threads and
  // each thread sums its columns row after row: dgamma and dbeta against a
  // column-by-column sum in double.
  const int64_t rows = 1201, cols = 67;
  auto x = randomVector(rows * cols, 98), dy = randomVector(rows * cols, 99);
  auto gamma = randomVector(cols, 100, 0.5, 1.5);
  std::vector<double> dx(x.size()), dg(cols, std::nan("")),
      db(cols, std::nan(""));
  layerNormBackward<double>(rows, cols, dy.data(), x.data(), gamma.data(), kEps,
                            dx.data(), dg.data(), db.data());
  // Without gamma and beta the reference layer norm is x-hat.
  const std::vector<double> xhat =
      referenceLayerNorm(rows, cols, x, nullptr, nullptr);
  std::vector<double> wantG(cols, 0.0), wantB(cols, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) {
      wantG[j] += dy[r * cols + j] * xhat[r * cols + j];
      wantB[j] += dy[r * cols + j];
    }
  expectNear(dg, wantG, "dgamma");
  expectNear(db, wantB, "dbeta");
}

} // namespace

namespace {

/// Batch norm on F16 or Bf16 storage with float32 parameters and statistics
/// (what autocast gives it) has the bits of the float kernel on widened
/// copies followed by a cast, in every kernel: the forward on batch and on
/// running statistics, the backward (dx rounded, the parameter gradients the
/// same floats), the running update, and through the replicas' workspace.
template <typename T> void checkHalfBatchNorm(CastType type) {
  struct Case {
    BnCase shape;
    bool affine, specials;
    float offset; // a mean far from 0: Centered's head and tail in float
  };
  const Case cases[] = {{{3, 4, 5}, true, false, 0},
                        {{2, 3, 37}, true, false, 12},
                        {{4, 3, 1}, false, false, 0},
                        {{2, 2, 64}, true, true, 0}};
  for (const Case &k : cases) {
    const BnCase &b = k.shape;
    SCOPED_TRACE(describe(b) + (k.specials ? " with NaN and infinities" : ""));
    const int64_t size = b.n * b.c * b.spatial;
    const std::vector<uint16_t> x = randomHalves<T>(size, uint32_t(size),
                                                    k.specials, k.offset),
                                dy = randomHalves<T>(size, uint32_t(size + 1),
                                                     k.specials);
    const std::vector<float> x32 = widen(x, type), dy32 = widen(dy, type);
    std::vector<float> gammaValues = cast<float>(randomVector(b.c, 7)),
                       betaValues = cast<float>(randomVector(b.c, 8));
    const float *gamma = k.affine ? gammaValues.data() : nullptr;
    const float *beta = k.affine ? betaValues.data() : nullptr;
    for (bool replicas : {false, true}) {
      SCOPED_TRACE(replicas ? "one replica" : "alone");
      std::vector<double> workspace(batchNormReplicaSumElements(b.c, true));
      double *ws = replicas ? workspace.data() : nullptr;
      const RankSum sum =
          replicas ? RankSum([](double *, int64_t) {}) : RankSum();

      std::vector<float> y32(size);
      std::vector<uint16_t> y(size, 0x1234); // overwritten
      batchNormTrainingForward<float>(b.n, b.c, b.spatial, x32.data(), gamma,
                                      beta, kEps, y32.data(), ws, sum);
      batchNormTrainingForward<T>(b.n, b.c, b.spatial, x.data(), gamma, beta,
                                  kEps, y.data(), ws, sum);
      ASSERT_EQ(y, narrow(y32, type)) << "training forward";

      std::vector<float> dx32(size), dg32(b.c), db32(b.c), dg(b.c), db(b.c);
      std::vector<uint16_t> dx(size, 0x1234);
      batchNormBackward<float>(b.n, b.c, b.spatial, dy32.data(), x32.data(),
                               gamma, kEps, dx32.data(), dg32.data(),
                               db32.data(), ws, sum);
      batchNormBackward<T>(b.n, b.c, b.spatial, dy.data(), x.data(), gamma,
                           kEps, dx.data(), dg.data(), db.data(), ws, sum);
      ASSERT_EQ(dx, narrow(dx32, type)) << "dx";
      if (!k.specials) { // NaN != NaN: the float vectors compare by value
        ASSERT_EQ(dg, dg32) << "dgamma";
        ASSERT_EQ(db, db32) << "dbeta";
      }

      std::vector<float> mean32(b.c, 0.5f), var32(b.c, 2.0f), mean(b.c, 0.5f),
          var(b.c, 2.0f);
      int64_t tracked32 = 3, tracked = 3;
      batchNormUpdateRunningStats<float>(b.n, b.c, b.spatial, x32.data(), 0.1,
                                         mean32.data(), var32.data(),
                                         &tracked32, ws, sum);
      batchNormUpdateRunningStats<T>(b.n, b.c, b.spatial, x.data(), 0.1,
                                     mean.data(), var.data(), &tracked, ws,
                                     sum);
      if (!k.specials) {
        ASSERT_EQ(mean, mean32) << "running mean";
        ASSERT_EQ(var, var32) << "running var";
      }
      ASSERT_EQ(tracked, 4);

      batchNormInferenceForward<float>(b.n, b.c, b.spatial, x32.data(), gamma,
                                       beta, mean32.data(), var32.data(), kEps,
                                       y32.data());
      batchNormInferenceForward<T>(b.n, b.c, b.spatial, x.data(), gamma, beta,
                                   mean32.data(), var32.data(), kEps, y.data());
      ASSERT_EQ(y, narrow(y32, type)) << "inference forward";
    }
  }
}

} // namespace

TEST(BatchNormHalfStorage, SameBitsAsFloatBetweenCastsF16) {
  checkHalfBatchNorm<F16>(CastType::F16);
}

TEST(BatchNormHalfStorage, SameBitsAsFloatBetweenCastsBf16) {
  checkHalfBatchNorm<Bf16>(CastType::BF16);
}
