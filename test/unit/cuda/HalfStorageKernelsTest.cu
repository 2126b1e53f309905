//===- HalfStorageKernelsTest.cu - Kernels on f16 and bf16 storage --------===//
//
// The activations, the arithmetic (same shape, a scalar operand, broadcast),
// dropout, max pooling and batch norm on f16 and bf16 storage (T = kernels::F16 or Bf16, tensors of
// uint16_t) against the CPU's half kernels on the same bits: both widen
// each element with Convert.h, compute in float with ScalarOps.h and round
// with Convert.h. Arithmetic, relu, dropout and max pooling (its result one
// of its inputs, its gradient rounded after each add on both) are the same
// float operations on both sides, so the bits must be equal; the other activations go through libm
// on the CPU and CUDA's math library on the GPU, which may differ by an
// ulp of float, so their halves may differ by one step (adjacent bit
// patterns of one sign), and no more. Batch norm's statistics differ in
// their last bits (cuDNN's in float for an affine layer, ours in double in
// another order than the CPU's): its half results may differ by one step,
// its float32 parameter gradients and running statistics by 1e-4 relative.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"
#include "runtime/cuda/Library.h"
#include "runtime/kernels/Convert.h"
#include "runtime/kernels/Dropout.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/Normalization.h"
#include "runtime/kernels/Pool.h"

#include "LibraryContext.h"
#include "TestContext.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

using namespace cairn;
using namespace cairn::cuda::testing;
using cairn::kernels::Activation;
using cairn::kernels::BinaryOp;

namespace {

template <typename T> class HalfStorageKernels : public ::testing::Test {};
using HalfTypes = ::testing::Types<kernels::F16, kernels::Bf16>;
TYPED_TEST_SUITE(HalfStorageKernels, HalfTypes);

/// Random values rounded to T's bits, NaN, infinities and signed zeros
/// first.
template <typename T>
std::vector<uint16_t> halfInputs(size_t n, double lo, double hi, uint64_t seed) {
  std::vector<float> v = randomVector<float>(n, lo, hi, seed);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), 0.0f, -0.0f};
  for (size_t i = 0; i < n && i < std::size(specials); ++i)
    v[i] = specials[i];
  std::vector<uint16_t> bits(n);
  for (size_t i = 0; i < n; ++i)
    bits[i] = T::store(v[i]);
  return bits;
}

/// Equal bits, or (with `oneStep`) adjacent bit patterns of one sign: one
/// rounding step of T apart. NaNs are Convert.h's one quiet NaN on both.
::testing::AssertionResult halvesAgree(const std::vector<uint16_t> &gpu,
                                       const std::vector<uint16_t> &cpu, bool oneStep) {
  if (gpu.size() != cpu.size())
    return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < gpu.size(); ++i) {
    if (gpu[i] == cpu[i])
      continue;
    const bool sameSign = (gpu[i] & 0x8000u) == (cpu[i] & 0x8000u);
    if (oneStep && sameSign && std::abs(int(gpu[i]) - int(cpu[i])) == 1)
      continue;
    return ::testing::AssertionFailure() << "element " << i << ": 0x" << std::hex << gpu[i]
                                         << " on the GPU, 0x" << cpu[i] << " on the CPU";
  }
  return ::testing::AssertionSuccess();
}

} // namespace

TYPED_TEST(HalfStorageKernels, ActivationsAsOnTheCpu) {
  using T = TypeParam;
  TestContext tc;
  for (size_t n : kSizes)
    for (Activation kind : kActivations) {
      std::vector<uint16_t> x = halfInputs<T>(n, -6, 6, n), y(n);
      std::vector<uint16_t> dy = halfInputs<T>(n, -2, 2, n + 1), dx(n);
      kernels::activationForward<T>(kind, n, x.data(), y.data());
      // The saved value: the forward's result for sigmoid, tanh and relu.
      const bool savesResult =
          kind == Activation::Sigmoid || kind == Activation::Tanh || kind == Activation::Relu;
      const std::vector<uint16_t> &saved = savesResult ? y : x;
      kernels::activationBackward<T>(kind, n, dy.data(), saved.data(), dx.data());
      DeviceBuffer<uint16_t> dX(x), dY(n), dDy(dy), dSaved(saved), dDx(n);
      cuda::activationForward<T>(tc.cx, kind, n, dX.get(), dY.get());
      cuda::activationBackward<T>(tc.cx, kind, n, dDy.get(), dSaved.get(), dDx.get());
      const bool exact = kind == Activation::Relu;
      EXPECT_TRUE(halvesAgree(dY.download(), y, !exact)) << "n " << n << ", " << int(kind);
      EXPECT_TRUE(halvesAgree(dDx.download(), dx, !exact)) << "n " << n << ", " << int(kind);
    }
}

TYPED_TEST(HalfStorageKernels, ArithmeticAsOnTheCpu) {
  using T = TypeParam;
  TestContext tc;
  for (size_t n : kSizes)
    for (BinaryOp op : kBinaryOps) {
      std::vector<uint16_t> a = halfInputs<T>(n, -3, 3, 10 + n),
                            b = halfInputs<T>(n, -3, 3, 20 + n);
      std::vector<uint16_t> one = {T::store(0.7f)}, same(n), scalar(n);
      const int64_t shape[] = {int64_t(n)}, unit[] = {1}, zero[] = {0};
      kernels::binaryBroadcast<T>(op, 1, shape, a.data(), unit, b.data(), unit, same.data());
      kernels::binaryBroadcast<T>(op, 1, shape, a.data(), unit, one.data(), zero, scalar.data());
      DeviceBuffer<uint16_t> dA(a), dB(b), dOne(one), dSame(n), dScalar(n);
      cuda::binarySameShape<T>(tc.cx, op, n, dA.get(), dB.get(), dSame.get());
      cuda::binaryScalar<T>(tc.cx, op, n, false, dA.get(), dOne.get(), dScalar.get());
      EXPECT_TRUE(halvesAgree(dSame.download(), same, false)) << "n " << n << ", op " << int(op);
      EXPECT_TRUE(halvesAgree(dScalar.download(), scalar, false))
          << "n " << n << ", op " << int(op);
    }
}

TYPED_TEST(HalfStorageKernels, BroadcastAsOnTheCpu) {
  using T = TypeParam;
  TestContext tc;
  // A [5, 1, 7] by [1, 6, 7] into [5, 6, 7]: a bias-like and a row-like
  // operand, neither contiguous with the output.
  const int64_t shape[] = {5, 6, 7}, aStrides[] = {7, 0, 1}, bStrides[] = {0, 7, 1};
  std::vector<uint16_t> a = halfInputs<T>(35, -3, 3, 1), b = halfInputs<T>(42, -3, 3, 2);
  for (BinaryOp op : kBinaryOps) {
    std::vector<uint16_t> expected(210);
    kernels::binaryBroadcast<T>(op, 3, shape, a.data(), aStrides, b.data(), bStrides,
                                expected.data());
    DeviceBuffer<uint16_t> dA(a), dB(b), dOut(210);
    cuda::binaryBroadcast<T>(tc.cx, op, 3, shape, dA.get(), aStrides, dB.get(), bStrides,
                             dOut.get());
    EXPECT_TRUE(halvesAgree(dOut.download(), expected, false)) << "op " << int(op);
  }
}

TYPED_TEST(HalfStorageKernels, DropoutAsOnTheCpu) {
  using T = TypeParam;
  TestContext tc;
  for (size_t n : kSizes)
    for (double p : {0.1, 0.5}) {
      std::vector<uint16_t> x = halfInputs<T>(n, -2, 2, 30 + n), expected(n);
      kernels::dropout<T>(n, p, 42, 3, 5, x.data(), expected.data());
      tc.setSeed(42);
      tc.setStep(3);
      DeviceBuffer<uint16_t> dX(x), dY(n);
      cuda::dropout<T>(tc.cx, n, p, 5, dX.get(), dY.get());
      EXPECT_TRUE(halvesAgree(dY.download(), expected, false)) << "n " << n << ", p " << p;
    }
}

TYPED_TEST(HalfStorageKernels, MaxPoolAsOnTheCpu) {
  using T = TypeParam;
  TestContext tc;
  // n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo: 2x2 windows of
  // stride 2 (odd input: a row and column left out), 3x3 of stride 3 with
  // padding (windows at the edge partly padding), and overlapping 3x3 of
  // stride 2 (a gradient summed over windows).
  const kernels::Pool2dShape shapes[] = {{3, 5, 9, 11, 2, 2, 2, 2, 0, 0, 1, 1, 4, 5},
                                         {2, 3, 8, 7, 3, 3, 3, 3, 1, 1, 1, 1, 3, 3},
                                         {2, 3, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 5, 5}};
  for (const kernels::Pool2dShape &s : shapes) {
    const size_t in = s.n * s.c * s.h * s.w, out = s.n * s.c * s.ho * s.wo;
    std::vector<uint16_t> x = halfInputs<T>(in, -4, 4, in), dy = halfInputs<T>(out, -1, 1, out);
    // A tie in every plane: equal values, the first of a window wins.
    x[in - 1] = x[in - 2];
    std::vector<uint16_t> y(out), dx(in);
    kernels::maxPool2dForward<T>(s, x.data(), y.data());
    kernels::maxPool2dBackward<T>(s, dy.data(), x.data(), dx.data());
    DeviceBuffer<uint16_t> dX(x), dY(out), dDy(dy), dDx(in);
    cuda::maxPool2dForwardDirect<T>(tc.cx, s, dX.get(), dY.get());
    cuda::maxPool2dBackward<T>(tc.cx, s, dDy.get(), dX.get(), dDx.get());
    EXPECT_TRUE(halvesAgree(dY.download(), y, false)) << s.h << "x" << s.w << " k" << s.kh;
    EXPECT_TRUE(halvesAgree(dDx.download(), dx, false)) << s.h << "x" << s.w << " k" << s.kh;
  }
}

/// Float32 values within 1e-4 of each other, relative above 1 (LibraryTest's
/// bound for cuDNN's float32 batch norm against the CPU's).
::testing::AssertionResult floatsAgree(const std::vector<float> &gpu,
                                       const std::vector<float> &cpu) {
  if (gpu.size() != cpu.size())
    return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < gpu.size(); ++i)
    if (!(std::fabs(double(gpu[i]) - double(cpu[i])) <=
          1e-4 * std::max(1.0, std::fabs(double(cpu[i])))))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << gpu[i] << " on the GPU, " << cpu[i] << " on the CPU";
  return ::testing::AssertionSuccess();
}

/// Affine, through cuDNN's half batch norm (or our kernels where cuDNN
/// declines the type), and without gamma and beta, through our kernels.
TYPED_TEST(HalfStorageKernels, BatchNormAsOnTheCpu) {
  using T = TypeParam;
  Gpu gpu;
  // n, c, spatial: a convolution's output, one channel of one element per
  // example, and more channels than blocks of 1024 threads take.
  const int64_t shapes[][3] = {{8, 5, 49}, {16, 1, 1}, {4, 300, 9}};
  int site = 0;
  for (bool affine : {true, false})
    for (const auto &shape : shapes) {
      const int64_t n = shape[0], c = shape[1], spatial = shape[2], total = n * c * spatial;
      std::vector<uint16_t> x = halfInputs<T>(total, -3, 5, total),
                            dy = halfInputs<T>(total, -1, 1, c);
      // No NaN or infinity: they would make every statistic NaN.
      for (size_t i = 0; i < 5 && i < x.size(); ++i)
        x[i] = T::store(0.25f * float(i)), dy[i] = T::store(-0.5f * float(i));
      const std::vector<float> gamma = randomVector<float>(c, 0.5, 1.5, 3),
                               beta = randomVector<float>(c, -0.5, 0.5, 4),
                               mean = randomVector<float>(c, -0.1, 0.1, 5),
                               var = randomVector<float>(c, 0.9, 1.1, 6);
      const float *g = affine ? gamma.data() : nullptr, *b = affine ? beta.data() : nullptr;
      std::vector<uint16_t> y(total), yEval(total), dx(total);
      std::vector<float> dgamma(c), dbeta(c), newMean = mean, newVar = var;
      int64_t tracked = 7;
      kernels::batchNormTrainingForward<T>(n, c, spatial, x.data(), g, b, 1e-5, y.data());
      kernels::batchNormInferenceForward<T>(n, c, spatial, x.data(), g, b, mean.data(), var.data(),
                                            1e-5, yEval.data());
      kernels::batchNormBackward<T>(n, c, spatial, dy.data(), x.data(), g, 1e-5, dx.data(),
                                    affine ? dgamma.data() : nullptr,
                                    affine ? dbeta.data() : nullptr);
      kernels::batchNormUpdateRunningStats<T>(n, c, spatial, x.data(), 0.1, newMean.data(),
                                              newVar.data(), &tracked);
      // Outputs start as a pattern no kernel writes (a NaN other than
      // Convert.h's) and -99: an output left unwritten fails.
      const std::vector<uint16_t> unwritten(total, 0xffff);
      const std::vector<float> unwrittenParams(c, -99.0f);
      DeviceArray<uint16_t> dX(x), dDy(dy), dY(unwritten), dYEval(unwritten), dDx(unwritten);
      DeviceArray<float> dGamma(gamma), dBeta(beta), dMean(mean), dVar(var),
          dDgamma(unwrittenParams), dDbeta(unwrittenParams);
      DeviceArray<int64_t> dTracked(std::vector<int64_t>{7});
      const float *gg = affine ? dGamma.get() : nullptr, *gb = affine ? dBeta.get() : nullptr;
      cuda::batchNormTrainingForward<T>(gpu.cx, site++, n, c, spatial, dX.get(), gg, gb, 1e-5,
                                        dY.get());
      cuda::batchNormInferenceForward<T>(gpu.cx, site++, n, c, spatial, dX.get(), gg, gb,
                                         dMean.get(), dVar.get(), 1e-5, dYEval.get());
      cuda::batchNormBackward<T>(gpu.cx, site++, n, c, spatial, dDy.get(), dX.get(), gg, 1e-5,
                                 dDx.get(), affine ? dDgamma.get() : nullptr,
                                 affine ? dDbeta.get() : nullptr);
      cuda::batchNormUpdateRunningStats<T>(gpu.cx, n, c, spatial, dX.get(), 0.1, dMean.get(),
                                           dVar.get(), dTracked.get());
      const std::string at =
          "n " + std::to_string(n) + ", c " + std::to_string(c) + (affine ? ", affine" : "");
      EXPECT_TRUE(halvesAgree(dY.read(gpu), y, true)) << at;
      EXPECT_TRUE(halvesAgree(dYEval.read(gpu), yEval, true)) << at;
      EXPECT_TRUE(halvesAgree(dDx.read(gpu), dx, true)) << at;
      if (affine) {
        EXPECT_TRUE(floatsAgree(dDgamma.read(gpu), dgamma)) << at;
        EXPECT_TRUE(floatsAgree(dDbeta.read(gpu), dbeta)) << at;
      } else {
        // Not asked for: untouched.
        EXPECT_TRUE(floatsAgree(dDgamma.read(gpu), unwrittenParams)) << at;
      }
      EXPECT_TRUE(floatsAgree(dMean.read(gpu), newMean)) << at;
      EXPECT_TRUE(floatsAgree(dVar.read(gpu), newVar)) << at;
      EXPECT_EQ(dTracked.read(gpu)[0], 8) << at;
    }
}
