//===- CollectivesTest.cpp - NCCL's calls of the steps, on one rank -------===//
//
// Every call a CUDA step of several processes makes (DeviceCollectives.h), on
// a communicator of one rank: the device machines have one GPU, and NCCL
// takes one rank per GPU. The communicator is opened as an executable opens
// it, through a transport (a LocalTransport, whose broadcast of NCCL's id
// has no one to reach); a sum or a maximum over one rank is the rank's own
// values, bit for bit (through the kernels that take the sum too), and the
// misuses a generated step cannot make but a hand-written one could are
// errors, not hangs.
//
//===----------------------------------------------------------------------===//

#include "runtime/Transport.h"
#include "runtime/cuda/DeviceCollectives.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/cuda/Library.h"
#include "runtime/kernels/Normalization.h"
#include "runtime/kernels/Optimizer.h"

#include "TestContext.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace cairn::cuda::testing {
namespace {

/// A TestContext with a communicator of one rank, closed at the end.
class OneRankCollectives : public ::testing::Test {
protected:
  void SetUp() override {
    absl::Status opened = openCollectives(test.cx, transport);
    ASSERT_TRUE(opened.ok()) << opened.message();
    ASSERT_NE(test.cx.collectives, nullptr);
  }
  void TearDown() override {
    closeCollectives(test.cx);
    EXPECT_EQ(test.cx.collectives, nullptr);
  }

  runtime::LocalTransport transport;
  TestContext test;
};

/// Asserts that `call` throws a KernelError whose message contains `part`.
template <typename Call> void expectKernelError(Call call, const char *part) {
  try {
    call();
  } catch (const kernels::KernelError &e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    return;
  }
  ADD_FAILURE() << "expected a KernelError containing '" << part << "'";
}

TEST_F(OneRankCollectives, SumOfOneRankKeepsTheGradientsBits) {
  std::vector<float> first = randomVector<float>(1000, -3, 3, 1);
  std::vector<float> second = randomVector<float>(37, -1e-30, 1e-30, 2);
  DeviceBuffer<float> a(first), b(second), empty(0);
  // Two steps: a bucket's events are made once and used on every step.
  for (int step = 0; step < 2; ++step) {
    allReduceStart(test.cx, 3, {{a.get(), a.size()}, {empty.get(), 0}, {b.get(), b.size()}});
    allReduceWait(test.cx, 3);
    test.sync();
    std::vector<float> gotA = a.download(), gotB = b.download();
    EXPECT_EQ(std::memcmp(gotA.data(), first.data(), first.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(gotB.data(), second.data(), second.size() * sizeof(float)), 0);
  }
}

TEST_F(OneRankCollectives, BucketsInFlightTogether) {
  std::vector<float> host = randomVector<float>(4096, -1, 1, 3);
  DeviceBuffer<float> early(host), late(host);
  allReduceStart(test.cx, 0, {{early.get(), early.size()}});
  allReduceStart(test.cx, 1, {{late.get(), late.size()}});
  allReduceWait(test.cx, 0);
  allReduceWait(test.cx, 1);
  test.sync();
  EXPECT_EQ(early.download(), host);
  EXPECT_EQ(late.download(), host);
}

TEST_F(OneRankCollectives, MaxOfOneRankIsItsFlag) {
  DeviceBuffer<float> flag(std::vector<float>{1});
  DeviceBuffer<double> flags(std::vector<double>{0, 1, -2.5});
  maxOverRanks(test.cx, flag.get(), 1);
  maxOverRanks(test.cx, flags.get(), 3);
  test.sync();
  EXPECT_EQ(flag.download(), std::vector<float>{1});
  EXPECT_EQ(flags.download(), (std::vector<double>{0, 1, -2.5}));
}

TEST_F(OneRankCollectives, SumOverOneRankIsItsValues) {
  const std::vector<double> host = randomVector<double>(77, -1e300, 1e300, 4);
  DeviceBuffer<double> values(host);
  const kernels::RankSum sum = sumOverRanks(test.cx);
  sum(values.get(), int64_t(values.size()));
  sum(values.get(), 0);
  test.sync();
  EXPECT_TRUE(allEqual(values.download(), host));
}

/// The kernels that take the sum: a split model's clipping on its one
/// device gives the plain coefficient's bits, and batch norm synchronised
/// over one replica normalises by its own batch.
TEST_F(OneRankCollectives, KernelsSumThroughNccl) {
  const std::vector<float> g0 = randomVector<float>(70000, -1, 1, 5),
                           g1 = randomVector<float>(300, -1, 1, 6);
  DeviceBuffer<float> dG0(g0), dG1(g1), plain(1), split(1);
  const float *grads[] = {dG0.get(), dG1.get()};
  const int64_t sizes[] = {70000, 300};
  const int64_t partials = kernels::clipCoefficientWorkspaceElements(sizes, 2);
  const int64_t chunks[] = {0, kernels::clipCoefficientWorkspaceElements(sizes, 1), partials};
  DeviceBuffer<double> w0(partials), w1(partials);
  clipCoefficient<float>(test.cx, 2, grads, sizes, 0.5, 2.0, w0.get(), plain.get());
  clipCoefficient<float>(test.cx, 2, grads, sizes, 0.5, 2.0, w1.get(), split.get(), chunks,
                         sumOverRanks(test.cx));
  test.sync();
  EXPECT_TRUE(allEqual(split.download(), plain.download()));

  const int64_t n = 4, c = 3, spatial = 5;
  const std::vector<float> x = randomVector<float>(n * c * spatial, -2, 2, 7);
  DeviceBuffer<float> dX(x), alone(x.size()), synced(x.size());
  DeviceBuffer<double> workspace(kernels::batchNormReplicaSumElements(c, false));
  // No gamma or beta: Cairn's own kernels, no cuDNN handle needed.
  batchNormTrainingForward<float>(test.cx, 0, n, c, spatial, dX.get(), nullptr, nullptr, 1e-5,
                                  alone.get());
  batchNormTrainingForward<float>(test.cx, 1, n, c, spatial, dX.get(), nullptr, nullptr, 1e-5,
                                  synced.get(), workspace.get(), sumOverRanks(test.cx));
  test.sync();
  EXPECT_TRUE(allClose(synced.download(), alone.download(), 1e-6, 1e-6));
}

TEST_F(OneRankCollectives, MisusesAreErrors) {
  DeviceBuffer<float> grad(std::vector<float>{1, 2, 3});
  expectKernelError([&] { allReduceWait(test.cx, 5); }, "gradient bucket 5 is waited for");
  allReduceStart(test.cx, 2, {{grad.get(), grad.size()}});
  expectKernelError([&] { allReduceStart(test.cx, 2, {{grad.get(), grad.size()}}); },
                    "gradient bucket 2 was started twice");
  allReduceWait(test.cx, 2);
  // One rank has no peer: rank 0 of 1 cannot send to itself or to rank 1.
  expectKernelError([&] { sendToPeer(test.cx, grad.get(), 12, 0); },
                    "rank 0 cannot exchange a value with rank 0 of 1");
  expectKernelError([&] { receiveFromPeer(test.cx, grad.get(), 12, 1); },
                    "rank 0 cannot exchange a value with rank 1 of 1");
  test.sync();
}

TEST(Collectives, StepsWithoutACommunicatorSaySo) {
  TestContext test;
  float *none = nullptr;
  expectKernelError([&] { allReduceStart(test.cx, 0, {}); },
                    "the replicas' gradient sum needs the NCCL communicator");
  expectKernelError([&] { sendToPeer(test.cx, none, 0, 1); },
                    "a value sent to another device needs the NCCL communicator");
  expectKernelError([&] { maxOverRanks(test.cx, none, 1); },
                    "the overflow check over the devices needs the NCCL communicator");
  double *values = nullptr;
  expectKernelError([&] { sumOverRanks(test.cx)(values, 1); },
                    "a sum over the processes needs the NCCL communicator");
}

/// A transport whose broadcast fails, as MPI's does when a rank is gone.
class BrokenTransport : public runtime::LocalTransport {
public:
  absl::Status broadcast(void *, size_t, int) override {
    return absl::UnavailableError("rank 1 is gone");
  }
};

TEST(Collectives, OpeningReportsTheTransportsFailure) {
  TestContext test;
  BrokenTransport transport;
  absl::Status opened = openCollectives(test.cx, transport);
  EXPECT_FALSE(opened.ok());
  EXPECT_EQ(opened.message(), "rank 1 is gone");
  EXPECT_EQ(test.cx.collectives, nullptr);
}

} // namespace
} // namespace cairn::cuda::testing
