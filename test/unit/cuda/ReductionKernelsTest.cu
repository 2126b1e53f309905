//===- ReductionKernelsTest.cu - reduceSum and broadcastTo on the GPU -----===//
//
// cuda::reduceSum and cuda::broadcastTo against their CPU twins in
// runtime/kernels/Reduction.h on the same random inputs: every reduced-dims
// pattern of rank-4 and rank-5 shapes, and shapes that take each launch
// form (a warp, a block or a 1024-thread block per output row; narrow and
// wide column tiles). Sums are in double on both sides but in different
// orders, so they agree to rounding; a second run must give the same bits.
// broadcastTo does one multiply per element on both sides: exact.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"
#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Reduction.h"

#include "TestContext.h"

#include <gtest/gtest.h>

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

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

std::vector<bool> maskBits(unsigned bits, size_t rank) {
  std::vector<bool> m(rank);
  for (size_t d = 0; d < rank; ++d)
    m[d] = (bits >> d) & 1;
  return m;
}

template <typename T> class ReductionKernels : public ::testing::Test {
protected:
  /// reduceSum on both sides, and twice on the GPU (same bits).
  void checkReduce(const std::vector<int64_t> &shape, const std::vector<bool> &reduced,
                   double alpha, uint32_t seed) {
    const int rank = static_cast<int>(shape.size());
    bool mask[16];
    std::string what = "shape";
    int64_t outCount = 1;
    for (int d = 0; d < rank; ++d) {
      mask[d] = reduced[d];
      what += " " + std::to_string(shape[d]) + (reduced[d] ? "R" : "K");
      if (!reduced[d])
        outCount *= shape[d];
    }
    const std::vector<T> in = randomValues<T>(numel(shape), seed);
    std::vector<T> want(outCount, T(-99));
    cairn::kernels::reduceSum<T>(rank, shape.data(), mask, T(alpha), in.data(), want.data());

    DeviceBuffer<T> dIn(in), dOut(std::vector<T>(outCount, T(-99)));
    cairn::cuda::reduceSum<T>(tc.cx, rank, shape.data(), mask, T(alpha), dIn.get(), dOut.get());
    const std::vector<T> got = dOut.download();
    EXPECT_TRUE(closeToCpu(got, want)) << what;
    cairn::cuda::reduceSum<T>(tc.cx, rank, shape.data(), mask, T(alpha), dIn.get(), dOut.get());
    EXPECT_TRUE(allEqual(dOut.download(), got)) << what << ": a second run differs";
  }

  void checkBroadcast(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                      int64_t inSize, double alpha, uint32_t seed) {
    const int rank = static_cast<int>(shape.size());
    const std::vector<T> in = randomValues<T>(inSize, seed);
    std::vector<T> want(numel(shape), T(-99));
    cairn::kernels::broadcastTo<T>(rank, shape.data(), strides.data(), T(alpha), in.data(),
                                   want.data());
    DeviceBuffer<T> dIn(in), dOut(std::vector<T>(want.size(), T(-99)));
    cairn::cuda::broadcastTo<T>(tc.cx, rank, shape.data(), strides.data(), T(alpha), dIn.get(),
                                dOut.get());
    EXPECT_TRUE(allEqual(dOut.download(), want)) << "broadcast of rank " << rank;
  }

  TestContext tc;
};

using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ReductionKernels, Types);

TYPED_TEST(ReductionKernels, EveryMaskOfRank4) {
  for (unsigned bits = 0; bits < 16; ++bits) {
    this->checkReduce({3, 5, 7, 9}, maskBits(bits, 4), 1.0, 100 + bits);
    this->checkReduce({2, 1, 33, 4}, maskBits(bits, 4), 0.5, 200 + bits);
    this->checkReduce({6, 40, 3, 70}, maskBits(bits, 4), -1.5, 300 + bits);
  }
}

TYPED_TEST(ReductionKernels, EveryMaskOfRank5WithSizeOneDimensions) {
  for (unsigned bits = 0; bits < 32; ++bits)
    this->checkReduce({3, 1, 4, 1, 2}, maskBits(bits, 5), 0.25, 400 + bits);
}

TYPED_TEST(ReductionKernels, RowSumsOfEveryGroupSize) {
  this->checkReduce({37, 1000}, {false, true}, 1.0, 500);     // a warp per row
  this->checkReduce({300, 2000}, {false, true}, 1.0, 501);    // 256 threads per row
  this->checkReduce({3, 5000}, {false, true}, 1.0 / 5000, 502); // 1024 threads per row
  this->checkReduce({100003}, {true}, 1.0, 503);              // one output, odd length
  this->checkReduce({4, 3, 50, 60}, {true, false, true, true}, 1.0, 504);
}

TYPED_TEST(ReductionKernels, ColumnSumsOfEveryTileShape) {
  this->checkReduce({2000, 300}, {true, false}, 1.0, 600);    // few tiles: 1024 threads
  this->checkReduce({40, 50, 300}, {true, false, false}, 1.0, 601); // many tiles
  this->checkReduce({3, 2000, 5}, {false, true, false}, 1.0, 602);  // 8-wide columns
  this->checkReduce({7, 3}, {true, false}, 2.0, 603);               // 4-wide columns
  this->checkReduce({5, 1000, 33}, {true, true, false}, 1.0, 604);  // a partial tile
}

TYPED_TEST(ReductionKernels, Rank8Alternating) {
  this->checkReduce({2, 3, 2, 3, 2, 3, 2, 3}, {true, false, true, false, true, false, true, false},
                    1.0, 700);
  this->checkReduce({2, 3, 2, 3, 2, 3, 2, 3}, {false, true, false, true, false, true, false, true},
                    1.0, 701);
}

TYPED_TEST(ReductionKernels, RankZeroAndAllOnes) {
  this->checkReduce({}, {}, 2.0, 800);
  this->checkReduce({1, 1, 1}, {true, false, true}, 3.0, 801);
}

TYPED_TEST(ReductionKernels, EmptyInputGivesZeros) {
  using T = TypeParam;
  const int64_t shape[] = {0, 3};
  const bool reduceRows[] = {true, false};
  DeviceBuffer<T> in(std::vector<T>(1, T(5))), out(std::vector<T>(3, T(-1)));
  cairn::cuda::reduceSum<T>(this->tc.cx, 2, shape, reduceRows, T(1), in.get(), out.get());
  EXPECT_EQ(out.download(), std::vector<T>(3, T(0)));
  const bool keepAll[] = {false, false};
  cairn::cuda::reduceSum<T>(this->tc.cx, 2, shape, keepAll, T(1), in.get(), out.get());
  EXPECT_EQ(out.download(), std::vector<T>(3, T(0)));
}

TYPED_TEST(ReductionKernels, TooManyRunsThrows) {
  using T = TypeParam;
  const int64_t shape[9] = {2, 2, 2, 2, 2, 2, 2, 2, 2};
  const bool mask[9] = {true, false, true, false, true, false, true, false, true};
  DeviceBuffer<T> in(std::vector<T>(512)), out(std::vector<T>(16));
  EXPECT_THROW(cairn::cuda::reduceSum<T>(this->tc.cx, 9, shape, mask, T(1), in.get(), out.get()),
               cairn::kernels::KernelError);
}

TEST(ReductionKernelsFloat, SumIsAccumulatedInDouble) {
  // 2^24 + (n - 1) ones: a float accumulator would stall at 2^24.
  TestContext tc;
  const int64_t n = 1 << 20;
  std::vector<float> in(n, 1.0f);
  in[0] = float(1 << 24);
  const bool all = true;
  DeviceBuffer<float> dIn(in), dOut(std::vector<float>(1));
  cairn::cuda::reduceSum<float>(tc.cx, 1, &n, &all, 1.0f, dIn.get(), dOut.get());
  EXPECT_EQ(dOut.download()[0], float((1 << 24) + n - 1));
}

TYPED_TEST(ReductionKernels, BroadcastMatchesCpu) {
  struct Case {
    std::vector<int64_t> shape, strides;
    int64_t inSize;
  };
  const std::vector<Case> cases = {
      {{4, 5}, {0, 1}, 5},                // bias rows
      {{4, 5}, {1, 0}, 4},                // per-row value
      {{2, 3, 4, 5}, {0, 1, 0, 0}, 3},    // per-channel
      {{3, 4}, {0, 0}, 1},                // scalar
      {{3, 4}, {1, 3}, 12},               // a transposed view
      {{3, 1, 4}, {8, 99, 2}, 24},        // gaps; size-1 stride ignored
      {{2, 2, 2, 2, 2, 2, 2, 3}, {0, 24, 0, 6, 0, 3, 0, 1}, 48},
      {{257, 1001}, {0, 1}, 1001},        // more elements than one wave
      {{}, {}, 1},                        // rank 0
  };
  uint32_t seed = 900;
  for (const Case &c : cases)
    this->checkBroadcast(c.shape, c.strides, c.inSize, -2.0, seed++);
}

TYPED_TEST(ReductionKernels, BroadcastOfNothingWritesNothing) {
  using T = TypeParam;
  const int64_t shape[] = {3, 0};
  const int64_t strides[] = {1, 0};
  DeviceBuffer<T> in(std::vector<T>(3, T(1))), out(std::vector<T>(1, T(-7)));
  cairn::cuda::broadcastTo<T>(this->tc.cx, 2, shape, strides, T(1), in.get(), out.get());
  EXPECT_EQ(out.download()[0], T(-7));
}

} // namespace
