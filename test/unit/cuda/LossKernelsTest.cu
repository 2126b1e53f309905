//===- LossKernelsTest.cu - Softmax, losses and dropout on the GPU --------===//
//
// LossKernels.cu against runtime/kernels/{Softmax,Loss,Dropout}.h on the
// same inputs. Sums run in another order on the GPU (a fixed tree rather
// than a loop), in double on both sides, so results agree to rounding;
// element-wise parts with no sum (the MSE gradient, dropout) agree bit for
// bit. Dropout is also replayed from a captured graph with the step changed
// between launches, as the executor runs it.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"
#include "runtime/kernels/Dropout.h"
#include "runtime/kernels/Loss.h"
#include "runtime/kernels/Softmax.h"

#include "TestContext.h"

#include <cmath>

using namespace cairn;
using namespace cairn::cuda::testing;

namespace {

template <typename T> class LossKernels : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LossKernels, FloatTypes);

/// Reductions in double, in another order: the double results differ in
/// their last bits, which rounding to float almost always hides.
template <typename T> constexpr Tolerance reductionTolerance() {
  return sizeof(T) == 4 ? Tolerance{1e-5, 1e-9} : Tolerance{1e-11, 1e-13};
}

//===----------------------------------------------------------------------===//
// Softmax.
//===----------------------------------------------------------------------===//

struct SoftmaxShape {
  int64_t outer, dim, inner;
};

/// Each path: short rows (a warp each), long rows (a block each), strided
/// columns (a thread each), and the sizes 1, 7 and 1000003.
constexpr SoftmaxShape kSoftmaxShapes[] = {
    {1, 1, 1},  {1, 7, 1}, {1000, 10, 1},           {7, 1024, 1}, {3, 5000, 1}, {1, 1000003, 1},
    {4, 7, 33}, {2, 3, 1}, {1, 7, 1000003 / 7 + 1}, {5, 1, 9},
};

TYPED_TEST(LossKernels, SoftmaxForward) {
  using T = TypeParam;
  const Tolerance tol = reductionTolerance<T>();
  TestContext tc;
  for (const SoftmaxShape &s : kSoftmaxShapes)
    for (bool log : {false, true}) {
      const size_t n = s.outer * s.dim * s.inner;
      std::vector<T> x = randomVector<T>(n, -10, 10, n + log), expected(n);
      kernels::softmaxForward(log, s.outer, s.dim, s.inner, x.data(), expected.data());
      DeviceBuffer<T> dx(x), dy(n);
      cuda::softmaxForward(tc.cx, log, s.outer, s.dim, s.inner, dx.get(), dy.get());
      EXPECT_TRUE(allClose(dy.download(), expected, tol.rtol, tol.atol))
          << (log ? "log_softmax " : "softmax ") << s.outer << "x" << s.dim << "x" << s.inner;
    }
}

TYPED_TEST(LossKernels, SoftmaxForwardInPlace) {
  using T = TypeParam;
  const Tolerance tol = reductionTolerance<T>();
  TestContext tc;
  for (const SoftmaxShape &s :
       {SoftmaxShape{300, 10, 1}, SoftmaxShape{2, 3000, 1}, SoftmaxShape{3, 9, 70}})
    for (bool log : {false, true}) {
      const size_t n = s.outer * s.dim * s.inner;
      std::vector<T> x = randomVector<T>(n, -10, 10, 5), expected(n);
      kernels::softmaxForward(log, s.outer, s.dim, s.inner, x.data(), expected.data());
      DeviceBuffer<T> buf(x);
      cuda::softmaxForward(tc.cx, log, s.outer, s.dim, s.inner, buf.get(), buf.get());
      EXPECT_TRUE(allClose(buf.download(), expected, tol.rtol, tol.atol))
          << (log ? "log_softmax " : "softmax ") << s.outer << "x" << s.dim << "x" << s.inner;
    }
}

TYPED_TEST(LossKernels, SoftmaxBackward) {
  using T = TypeParam;
  const Tolerance tol = reductionTolerance<T>();
  TestContext tc;
  for (const SoftmaxShape &s : kSoftmaxShapes)
    for (bool log : {false, true}) {
      const size_t n = s.outer * s.dim * s.inner;
      std::vector<T> x = randomVector<T>(n, -5, 5, n), y(n), expected(n);
      std::vector<T> dy = randomVector<T>(n, -1, 1, n + 1);
      kernels::softmaxForward(log, s.outer, s.dim, s.inner, x.data(), y.data());
      kernels::softmaxBackward(log, s.outer, s.dim, s.inner, dy.data(), y.data(), expected.data());
      DeviceBuffer<T> ddy(dy), dyv(y), ddx(n);
      cuda::softmaxBackward(tc.cx, log, s.outer, s.dim, s.inner, ddy.get(), dyv.get(), ddx.get());
      // dx = dy - exp(y) sum (log) or y dy - y sum: the GPU sums in double,
      // the CPU's float path in float lanes, so where the two terms cancel
      // the results differ by ulps of the terms, |a| + |a - dx| for a = dy
      // or y dy.
      std::vector<double> allowance(n);
      for (size_t i = 0; i < n; ++i) {
        const double a = log ? double(dy[i]) : double(y[i]) * double(dy[i]);
        allowance[i] = (sizeof(T) == 4 ? 1e-6 : 1e-14) * (std::fabs(a) + std::fabs(a - expected[i]));
      }
      EXPECT_TRUE(allCloseWithin(ddx.download(), expected, tol.rtol, tol.atol, allowance))
          << (log ? "log_softmax " : "softmax ") << s.outer << "x" << s.dim << "x" << s.inner;
    }
}

//===----------------------------------------------------------------------===//
// Cross-entropy.
//===----------------------------------------------------------------------===//

struct CrossEntropyShape {
  int64_t rows, classes;
};

/// Rows a warp each (classes <= 1024) and a block each, 1 and 7 included.
constexpr CrossEntropyShape kCrossEntropyShapes[] = {
    {1, 1}, {1, 7}, {7, 10}, {300, 1000}, {7, 3001}, {4096, 37}, {3, 100003},
};

template <typename T, typename I> void checkCrossEntropy() {
  const Tolerance tol = reductionTolerance<T>();
  TestContext tc;
  for (const CrossEntropyShape &s : kCrossEntropyShapes)
    for (double smoothing : {0.0, 0.1}) {
      const size_t n = s.rows * s.classes;
      std::vector<T> logits = randomVector<T>(n, -5, 5, n);
      std::vector<I> labels = randomInts<I>(s.rows, 0, s.classes - 1, s.rows);
      std::vector<T> dloss = {T(0.75)};
      T loss;
      std::vector<T> dlogits(n);
      kernels::crossEntropyForward(s.rows, s.classes, logits.data(), labels.data(), smoothing,
                                   &loss);
      kernels::crossEntropyBackward(s.rows, s.classes, dloss.data(), logits.data(), labels.data(),
                                    smoothing, dlogits.data());
      DeviceBuffer<T> dLogits(logits), dLoss(1), dDloss(dloss), dDlogits(n);
      DeviceBuffer<I> dLabels(labels);
      cuda::crossEntropyForward(tc.cx, s.rows, s.classes, dLogits.get(), dLabels.get(), smoothing,
                                dLoss.get());
      cuda::crossEntropyBackward(tc.cx, s.rows, s.classes, dDloss.get(), dLogits.get(),
                                 dLabels.get(), smoothing, dDlogits.get());
      EXPECT_TRUE(allClose(dLoss.download(), std::vector<T>{loss}, tol.rtol, tol.atol))
          << "forward " << s.rows << "x" << s.classes << ", smoothing " << smoothing;
      EXPECT_TRUE(allClose(dDlogits.download(), dlogits, tol.rtol, tol.atol))
          << "backward " << s.rows << "x" << s.classes << ", smoothing " << smoothing;
    }
}

TYPED_TEST(LossKernels, CrossEntropy) {
  checkCrossEntropy<TypeParam, int32_t>();
  checkCrossEntropy<TypeParam, int64_t>();
}

TYPED_TEST(LossKernels, CrossEntropyLabelOutOfRangeGivesNaN) {
  using T = TypeParam;
  TestContext tc;
  const int64_t rows = 5, classes = 10;
  std::vector<T> logits = randomVector<T>(rows * classes, -1, 1, 1), dloss = {T(1)};
  std::vector<int64_t> labels = {0, 3, 10, 9, -1}; // rows 2 and 4 are bad
  DeviceBuffer<T> dLogits(logits), dLoss(1), dDloss(dloss), dDlogits(rows * classes);
  DeviceBuffer<int64_t> dLabels(labels);
  cuda::crossEntropyForward(tc.cx, rows, classes, dLogits.get(), dLabels.get(), 0.0, dLoss.get());
  cuda::crossEntropyBackward(tc.cx, rows, classes, dDloss.get(), dLogits.get(), dLabels.get(), 0.0,
                             dDlogits.get());
  EXPECT_TRUE(std::isnan(dLoss.download()[0]));
  std::vector<T> dx = dDlogits.download();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < classes; ++c)
      EXPECT_EQ(std::isnan(dx[r * classes + c]), r == 2 || r == 4) << r << ", " << c;
}

//===----------------------------------------------------------------------===//
// Mean squared error.
//===----------------------------------------------------------------------===//

TYPED_TEST(LossKernels, Mse) {
  using T = TypeParam;
  const Tolerance tol = reductionTolerance<T>();
  TestContext tc;
  for (size_t n : {size_t(1), size_t(7), size_t(1000003)}) {
    std::vector<T> x = randomVector<T>(n, -3, 3, n), t = randomVector<T>(n, -3, 3, n + 1);
    std::vector<T> dloss = {T(1.25)}, dx(n);
    T loss;
    kernels::mseForward(n, x.data(), t.data(), &loss);
    kernels::mseBackward<T>(n, dloss.data(), x.data(), t.data(), dx.data(), nullptr);
    DeviceBuffer<T> dX(x), dT(t), dLoss(1), dDloss(dloss), dDx(n);
    cuda::mseForward(tc.cx, n, dX.get(), dT.get(), dLoss.get());
    cuda::mseBackward(tc.cx, n, dDloss.get(), dX.get(), dT.get(), dDx.get());
    EXPECT_TRUE(allClose(dLoss.download(), std::vector<T>{loss}, tol.rtol, tol.atol))
        << "n = " << n;
    // No sum in the gradient: the same double operations, the same bits.
    EXPECT_TRUE(allEqual(dDx.download(), dx)) << "n = " << n;
  }
}

//===----------------------------------------------------------------------===//
// Dropout: the CPU's mask, bit for bit.
//===----------------------------------------------------------------------===//

struct DropoutCase {
  size_t n;
  double p;
  uint64_t seed, step, stream;
};

std::vector<DropoutCase> dropoutCases() {
  std::vector<DropoutCase> cases;
  for (size_t n : {size_t(1), size_t(7)})
    for (double p : {0.0, 0.1, 0.5, 1.0})
      for (uint64_t seed : {uint64_t(0), uint64_t(0x123456789abcdefULL)})
        for (uint64_t step : {uint64_t(0), uint64_t(3), (uint64_t(1) << 33) + 5})
          for (uint64_t stream : {uint64_t(0), uint64_t(7)})
            cases.push_back({n, p, seed, step, stream});
  // Large: the grid-stride loop and the upper words of the group counter.
  cases.push_back({1000003, 0.1, 42, 0, 1});
  cases.push_back({1000003, 0.5, 0xfedcba9876543210ULL, 123456789, 3});
  cases.push_back({1000003, 0.9, 1, (uint64_t(1) << 40) + 1, 0xffffffffULL});
  return cases;
}

TYPED_TEST(LossKernels, DropoutMatchesCpuMask) {
  using T = TypeParam;
  TestContext tc;
  for (const DropoutCase &c : dropoutCases()) {
    std::vector<T> x = randomVector<T>(c.n, -2, 2, c.n), expected(c.n);
    kernels::dropout<T>(c.n, c.p, c.seed, c.step, c.stream, x.data(),
                        expected.data());
    tc.setSeed(c.seed);
    tc.setStep(static_cast<int64_t>(c.step));
    DeviceBuffer<T> dx(x), dy(c.n);
    cuda::dropout<T>(tc.cx, c.n, c.p, c.stream, dx.get(), dy.get());
    EXPECT_TRUE(allEqual(dy.download(), expected))
        << "n " << c.n << ", p " << c.p << ", seed " << c.seed << ", step " << c.step << ", stream "
        << c.stream;
  }
}

TYPED_TEST(LossKernels, DropoutInPlace) {
  using T = TypeParam;
  TestContext tc;
  const size_t n = 1000003;
  std::vector<T> x = randomVector<T>(n, -2, 2, 9), expected(n);
  kernels::dropout<T>(n, 0.3, 77, 5, 2, x.data(), expected.data());
  tc.setSeed(77);
  tc.setStep(5);
  DeviceBuffer<T> buf(x);
  cuda::dropout<T>(tc.cx, n, 0.3, 2, buf.get(), buf.get());
  EXPECT_TRUE(allEqual(buf.download(), expected));
}

/// Captured once and replayed: every step reads its own step and seed.
TYPED_TEST(LossKernels, DropoutReplayedFromAGraph) {
  using T = TypeParam;
  TestContext tc;
  const size_t n = 100003;
  std::vector<T> x = randomVector<T>(n, -2, 2, 11);
  DeviceBuffer<T> dx(x), dy(n);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CAIRN_CUDA_CHECK(cudaStreamBeginCapture(tc.cx.stream, cudaStreamCaptureModeThreadLocal));
  cuda::dropout<T>(tc.cx, n, 0.5, 4, dx.get(), dy.get());
  CAIRN_CUDA_CHECK(cudaStreamEndCapture(tc.cx.stream, &graph));
  CAIRN_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int64_t step : {0, 1, 2, 1000}) {
    const uint64_t seed = 1000 + step % 2;
    tc.setSeed(seed);
    tc.setStep(step);
    CAIRN_CUDA_CHECK(cudaGraphLaunch(exec, tc.cx.stream));
    tc.sync();
    std::vector<T> expected(n);
    kernels::dropout<T>(n, 0.5, seed, step, 4, x.data(), expected.data());
    EXPECT_TRUE(allEqual(dy.download(), expected)) << "step " << step;
  }
  CAIRN_CUDA_CHECK(cudaGraphExecDestroy(exec));
  CAIRN_CUDA_CHECK(cudaGraphDestroy(graph));
}

} // namespace
