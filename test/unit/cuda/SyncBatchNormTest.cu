//===- SyncBatchNormTest.cu - Batch norm over the replicas on the GPU ------===//
//
// --sync-batchnorm's kernels (runtime/cuda/SyncBatchNorm.cu, reached through
// batchNormTrainingForward, batchNormBackward and batchNormUpdateRunningStats
// with a sum over the replicas): the replicas run as threads, each with its
// own stream and its share of the batch, and their sums go through the host
// in rank order (ThreadRanks) where NCCL would sum them. Every replica must
// normalise by the whole batch's statistics, as the CPU kernels on the whole
// batch do (to rounding: both work in double, in different orders), update
// the running statistics alike, and keep its own share of the parameter
// gradients. Uneven shares, an empty one, and both launch forms (1024 and
// 256 threads per channel).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"
#include "runtime/cuda/Library.h"
#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Normalization.h"
#include "test/unit/kernels/ThreadRanks.h"

#include "TestContext.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace cairn;
using cairn::cuda::testing::allClose;
using cairn::cuda::testing::DeviceBuffer;
using cairn::cuda::testing::randomVector;
using cairn::cuda::testing::TestContext;
using cairn::kernels::testing::ThreadRanks;

constexpr double kEps = 1e-5;

template <typename T> double tolerance() { return sizeof(T) == 4 ? 2e-5 : 1e-11; }

/// A sum over the replicas of values in device memory: through the host,
/// on the replica's stream.
kernels::RankSum throughHost(TestContext &tc, kernels::RankSum host) {
  return [&tc, host](double *values, int64_t count) {
    std::vector<double> h(count);
    CAIRN_CUDA_CHECK(cudaMemcpyAsync(h.data(), values, count * sizeof(double),
                                     cudaMemcpyDeviceToHost, tc.cx.stream));
    tc.sync();
    host(h.data(), count);
    CAIRN_CUDA_CHECK(cudaMemcpyAsync(values, h.data(), count * sizeof(double),
                                     cudaMemcpyHostToDevice, tc.cx.stream));
    tc.sync();
  };
}

/// Images [begin, end) of x viewed as [n, c, spatial].
template <typename T>
std::vector<T> images(const std::vector<T> &x, int64_t c, int64_t spatial, int64_t begin,
                      int64_t end) {
  return std::vector<T>(x.begin() + begin * c * spatial, x.begin() + end * c * spatial);
}

template <typename T> class SyncBatchNorm : public ::testing::Test {
protected:
  /// Images firstImage[r] .. firstImage[r + 1] are replica r's.
  void check(int64_t c, int64_t spatial, const std::vector<int64_t> &firstImage, uint64_t seed) {
    const int replicas = int(firstImage.size()) - 1;
    const int64_t n = firstImage.back();
    const std::vector<T> x = randomVector<T>(n * c * spatial, 1, 3, seed),
                         dy = randomVector<T>(x.size(), -1, 1, seed + 1),
                         gamma = randomVector<T>(c, 0.5, 1.5, seed + 2),
                         beta = randomVector<T>(c, -1, 1, seed + 3);
    const std::vector<T> mean0 = randomVector<T>(c, -1, 1, seed + 4),
                         var0 = randomVector<T>(c, 0.5, 2, seed + 5);
    // The whole batch on the CPU.
    std::vector<T> y(x.size()), dx(x.size()), dg(c), db(c), mean = mean0, var = var0;
    kernels::batchNormTrainingForward<T>(n, c, spatial, x.data(), gamma.data(), beta.data(), kEps,
                                         y.data());
    kernels::batchNormBackward<T>(n, c, spatial, dy.data(), x.data(), gamma.data(), kEps,
                                  dx.data(), dg.data(), db.data());
    kernels::batchNormUpdateRunningStats<T>(n, c, spatial, x.data(), 0.1, mean.data(),
                                            var.data(), nullptr);

    struct Replica {
      std::vector<T> y, dx, dg, db, mean, var;
      int64_t tracked = 0;
    };
    std::vector<Replica> got(replicas);
    ThreadRanks exchange(replicas);
    exchange.run([&](int r, const kernels::RankSum &sum) {
      TestContext tc;
      const kernels::RankSum overReplicas = throughHost(tc, sum);
      const int64_t mine = firstImage[r + 1] - firstImage[r];
      DeviceBuffer<T> dX(images(x, c, spatial, firstImage[r], firstImage[r + 1])),
          dDy(images(dy, c, spatial, firstImage[r], firstImage[r + 1])), dGamma(gamma),
          dBeta(beta), dY(mine * c * spatial), dDx(mine * c * spatial), dDg(c), dDb(c),
          dMean(mean0), dVar(var0);
      DeviceBuffer<int64_t> dTracked(std::vector<int64_t>{0});
      DeviceBuffer<double> workspace(kernels::batchNormReplicaSumElements(c, true));
      cuda::batchNormTrainingForward<T>(tc.cx, 0, mine, c, spatial, dX.get(), dGamma.get(),
                                        dBeta.get(), kEps, dY.get(), workspace.get(),
                                        overReplicas);
      cuda::batchNormBackward<T>(tc.cx, 1, mine, c, spatial, dDy.get(), dX.get(), dGamma.get(),
                                 kEps, dDx.get(), dDg.get(), dDb.get(), workspace.get(),
                                 overReplicas);
      cuda::batchNormUpdateRunningStats<T>(tc.cx, mine, c, spatial, dX.get(), 0.1, dMean.get(),
                                           dVar.get(), dTracked.get(), workspace.get(),
                                           overReplicas);
      tc.sync();
      got[r] = {dY.download(), dDx.download(), dDg.download(), dDb.download(),
                dMean.download(), dVar.download(), dTracked.download()[0]};
    });
    // Two sums for each kernel's statistics, one more for the backward's.
    EXPECT_EQ(exchange.callsMade(), replicas * 7);

    const double tol = tolerance<T>();
    std::vector<T> dgSum(c, T(0)), dbSum(c, T(0));
    for (int r = 0; r < replicas; ++r) {
      SCOPED_TRACE("replica " + std::to_string(r) + " of c" + std::to_string(c));
      const Replica &out = got[r];
      EXPECT_TRUE(
          allClose(out.y, images(y, c, spatial, firstImage[r], firstImage[r + 1]), tol, tol));
      EXPECT_TRUE(
          allClose(out.dx, images(dx, c, spatial, firstImage[r], firstImage[r + 1]), tol, tol));
      EXPECT_TRUE(allClose(out.mean, mean, tol, tol));
      EXPECT_TRUE(allClose(out.var, var, tol, tol));
      EXPECT_EQ(out.tracked, 1);
      for (int64_t ch = 0; ch < c; ++ch) {
        dgSum[ch] += out.dg[ch];
        dbSum[ch] += out.db[ch];
      }
    }
    // Each replica's parameter gradients are its own examples' share.
    EXPECT_TRUE(allClose(dgSum, dg, 10 * tol, 10 * tol));
    EXPECT_TRUE(allClose(dbSum, db, 10 * tol, 10 * tol));
  }
};

using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SyncBatchNorm, FloatTypes);

TYPED_TEST(SyncBatchNorm, ReplicasNormaliseByTheWholeBatch) {
  this->check(3, 7, {0, 2, 4, 5}, 11);  // 3 replicas of 2, 2 and 1 images
  this->check(300, 5, {0, 3, 4}, 21);   // 256 threads per channel
  this->check(4, 9, {0, 3, 3}, 31);     // a replica with no images takes part
}

TEST(SyncBatchNormEdges, NoWorkspaceIsAnError) {
  TestContext tc;
  DeviceBuffer<float> x(std::vector<float>(12, 1.0f)), y(12);
  const kernels::RankSum alone = [](double *, int64_t) {};
  EXPECT_THROW(cuda::batchNormTrainingForward<float>(tc.cx, 0, 2, 3, 2, x.get(), nullptr, nullptr,
                                                     kEps, y.get(), nullptr, alone),
               kernels::KernelError);
}

} // namespace
