//===- HalfLibraryTest.cu - f16 and bf16 GEMMs and convolutions -----------===//
//
// halfGemm, halfBatchedGemm, halfLinearForward, halfConv2dForward and
// halfConv2dBackwardInput (runtime/cuda/Library.h) against the exact
// product: random half operands, widened (exactly) and multiplied in fp64
// on the CPU (kernels::gemm<double>, kernels::conv2dForward<double>), then
// compared with the GPU's half result. The GPU accumulates in fp32 and rounds once
// to half, so each element is within one unit in the last place of the
// half type (2^-10 relative for f16, 2^-7 for bf16) of the exact value,
// plus fp32's accumulation error (k 2^-24 of the sum of |products|), which
// the check allows as well. All four transposes, odd and aligned sizes,
// padded leading dimensions, k = 0 with beta, broadcast batches; linear
// with bias and relu in the epilogue; convolutions with padding, stride,
// groups and one input channel, with and without bias (added to the rounded
// product and rounded again), under cuDNN's heuristics, cudnn.benchmark and
// --deterministic. A site decided once gives the same bits when run again.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Check.h"
#include "runtime/cuda/Library.h"
#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Convert.h"
#include "runtime/kernels/Gemm.h"

#include "LibraryContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using cairn::cuda::testing::DeviceArray;
using cairn::cuda::testing::Gpu;
using cairn::cuda::testing::Workspace;
using cairn::kernels::CastType;
using cairn::kernels::Conv2dShape;

constexpr size_t kWorkspaceBytes = size_t(32) << 20;

template <CastType Type> float toFloat(uint16_t bits) {
  return Type == CastType::F16 ? cairn::kernels::floatFromHalf(bits)
                               : cairn::kernels::floatFromBfloat16(bits);
}
template <CastType Type> uint16_t toHalf(float value) {
  return Type == CastType::F16 ? cairn::kernels::halfFromFloat(value)
                               : cairn::kernels::bfloat16FromFloat(value);
}
/// One unit in the last place, relative: 10 and 7 stored mantissa bits.
template <CastType Type> double ulp() {
  return Type == CastType::F16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
}

template <CastType Type> std::vector<uint16_t> randomHalves(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<uint16_t> v(n);
  for (uint16_t &x : v)
    x = toHalf<Type>(dist(rng));
  return v;
}

template <CastType Type> std::vector<double> widen(const std::vector<uint16_t> &bits) {
  std::vector<double> out(bits.size());
  for (size_t i = 0; i < bits.size(); ++i)
    out[i] = toFloat<Type>(bits[i]);
  return out;
}

/// Each element within one ulp of `exact` plus fp32's accumulation error
/// `slack[i]`; every element written (the output starts as NaN bits where
/// the test poisons it).
template <CastType Type>
void expectWithinUlp(const std::vector<uint16_t> &got, const std::vector<double> &exact,
                     const std::vector<double> &slack, const std::string &what) {
  ASSERT_EQ(got.size(), exact.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < got.size() && failures < 10; ++i) {
    const double value = toFloat<Type>(got[i]);
    const double allowed = ulp<Type>() * std::fabs(exact[i]) + slack[i] + 1e-30;
    if (!(std::fabs(value - exact[i]) <= allowed)) {
      ADD_FAILURE() << what << ": element " << i << " is " << value << ", exact " << exact[i]
                    << " (allowed " << allowed << ")";
      ++failures;
    }
  }
}

template <typename P> class HalfLibrary : public ::testing::Test {
protected:
  static constexpr CastType kType = P::value;

  /// C = alpha op(A) op(B) + beta C, row strides padded by `pad`.
  void checkGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                 float beta, int64_t pad, int site) {
    const std::string what = std::string("halfGemm ") + (transA ? "T" : "N") +
                             (transB ? "T" : "N") + " " + std::to_string(m) + "x" +
                             std::to_string(n) + "x" + std::to_string(k) + " pad " +
                             std::to_string(pad);
    const int64_t lda = (transA ? m : k) + pad, ldb = (transB ? k : n) + pad, ldc = n + pad;
    const std::vector<uint16_t> a = randomHalves<kType>((transA ? k : m) * lda, site * 10 + 1),
                                b = randomHalves<kType>((transB ? n : k) * ldb, site * 10 + 2),
                                c = randomHalves<kType>(m * ldc, site * 10 + 3);
    const std::vector<double> a64 = widen<kType>(a), b64 = widen<kType>(b);
    std::vector<double> exact = widen<kType>(c);
    cairn::kernels::gemm<double>(transA, transB, m, n, k, alpha, a64.data(), lda, b64.data(), ldb,
                                 beta, exact.data(), ldc);
    // fp32's error bound: k + 2 roundings of the sum of magnitudes.
    std::vector<double> magnitude = widen<kType>(c), absA = a64, absB = b64;
    for (double &v : absA)
      v = std::fabs(v);
    for (double &v : absB)
      v = std::fabs(v);
    for (double &v : magnitude)
      v = std::fabs(v);
    cairn::kernels::gemm<double>(transA, transB, m, n, k, std::fabs(alpha), absA.data(), lda,
                                 absB.data(), ldb, std::fabs(beta), magnitude.data(), ldc);
    for (double &v : magnitude)
      v *= (k + 2) * std::ldexp(1.0, -24);

    DeviceArray<uint16_t> dA(a), dB(b);
    Workspace ws(kWorkspaceBytes);
    auto run = [&] {
      DeviceArray<uint16_t> dC(c);
      cairn::cuda::halfGemm<kType>(gpu.cx, site, transA, transB, m, n, k, alpha, dA.get(), lda,
                                   dB.get(), ldb, beta, dC.get(), ldc, ws.data, ws.bytes);
      return dC.read(gpu);
    };
    const std::vector<uint16_t> got = run();
    // Only the m x n window is the product; the padding keeps c's bits.
    std::vector<uint16_t> window;
    std::vector<double> exactWindow, slackWindow;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n + pad; ++j) {
        if (j >= n) {
          EXPECT_EQ(got[i * ldc + j], c[i * ldc + j]) << what << ": padding written";
          continue;
        }
        window.push_back(got[i * ldc + j]);
        exactWindow.push_back(exact[i * ldc + j]);
        slackWindow.push_back(magnitude[i * ldc + j]);
      }
    expectWithinUlp<kType>(window, exactWindow, slackWindow, what);
    EXPECT_EQ(run(), got) << what << ": a second run differs";
  }

  void checkBatched(int64_t batch, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                    bool broadcastA, int site) {
    const std::string what = std::string("halfBatchedGemm ") + (transA ? "T" : "N") +
                             (transB ? "T" : "N") + " " + std::to_string(batch) + " x " +
                             std::to_string(m) + "x" + std::to_string(n) + "x" +
                             std::to_string(k) + (broadcastA ? " A broadcast" : "");
    const int64_t lda = transA ? m : k, ldb = transB ? k : n, ldc = n;
    const int64_t strideA = broadcastA ? 0 : m * k, strideB = k * n, strideC = m * n;
    const std::vector<uint16_t> a = randomHalves<kType>(m * k + strideA * (batch - 1), site * 10),
                                b = randomHalves<kType>(strideB * batch, site * 10 + 1);
    const std::vector<double> a64 = widen<kType>(a), b64 = widen<kType>(b);
    std::vector<double> exact(strideC * batch), slack(strideC * batch);
    for (int64_t i = 0; i < batch; ++i) {
      cairn::kernels::gemm<double>(transA, transB, m, n, k, 1.0, a64.data() + i * strideA, lda,
                                   b64.data() + i * strideB, ldb, 0.0, exact.data() + i * strideC,
                                   ldc);
    }
    for (size_t i = 0; i < exact.size(); ++i)
      slack[i] = (k + 2) * std::ldexp(1.0, -24) * k; // |a|, |b| <= 1
    DeviceArray<uint16_t> dA(a), dB(b), dC(std::vector<uint16_t>(strideC * batch, 0xFFFF));
    Workspace ws(kWorkspaceBytes);
    cairn::cuda::halfBatchedGemm<kType>(gpu.cx, site, batch, transA, transB, m, n, k, 1.0f,
                                        dA.get(), lda, strideA, dB.get(), ldb, strideB, 0.0f,
                                        dC.get(), ldc, strideC, ws.data, ws.bytes);
    expectWithinUlp<kType>(dC.read(gpu), exact, slack, what);
  }

  void checkLinear(int64_t rows, int64_t in, int64_t out, bool withBias, bool relu, int site) {
    const std::string what = "halfLinearForward " + std::to_string(rows) + "x" +
                             std::to_string(in) + " -> " + std::to_string(out) +
                             (withBias ? " bias" : "") + (relu ? " relu" : "");
    const std::vector<uint16_t> x = randomHalves<kType>(rows * in, site * 10 + 1),
                                w = randomHalves<kType>(out * in, site * 10 + 2),
                                bias = randomHalves<kType>(out, site * 10 + 3);
    const std::vector<double> x64 = widen<kType>(x), w64 = widen<kType>(w),
                              bias64 = widen<kType>(bias);
    std::vector<double> exact(rows * out, 0.0), slack(rows * out);
    if (in > 0)
      cairn::kernels::gemm<double>(false, true, rows, out, in, 1.0, x64.data(), in, w64.data(), in,
                                   0.0, exact.data(), out);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < out; ++o) {
        double &v = exact[r * out + o];
        if (withBias)
          v += bias64[o];
        if (relu && v < 0)
          v = 0;
        slack[r * out + o] = (in + 2) * std::ldexp(1.0, -24) * (in + 1);
      }
    DeviceArray<uint16_t> dX(x), dW(w), dBias(bias), dY(std::vector<uint16_t>(rows * out, 0xFFFF));
    Workspace ws(kWorkspaceBytes);
    auto run = [&] {
      cairn::cuda::halfLinearForward<kType>(gpu.cx, site, rows, in, out, dX.get(), dW.get(),
                                            withBias ? dBias.get() : nullptr, relu, dY.get(),
                                            ws.data, ws.bytes);
      return dY.read(gpu);
    };
    const std::vector<uint16_t> got = run();
    expectWithinUlp<kType>(got, exact, slack, what);
    EXPECT_EQ(run(), got) << what << ": a second run differs";
  }

  /// Forward (with and without bias) and input gradient of one
  /// convolution, sites `site` .. `site + 2`.
  void checkConv(Conv2dShape s, bool benchmark, bool deterministic, int site) {
    s.ho = (s.h + 2 * s.ph - s.dh * (s.kh - 1) - 1) / s.sh + 1;
    s.wo = (s.w + 2 * s.pw - s.dw * (s.kw - 1) - 1) / s.sw + 1;
    const std::string what =
        "halfConv2d n" + std::to_string(s.n) + " c" + std::to_string(s.c) + " " +
        std::to_string(s.h) + "x" + std::to_string(s.w) + " o" + std::to_string(s.o) + " k" +
        std::to_string(s.kh) + " s" + std::to_string(s.sh) + " p" + std::to_string(s.ph) + " g" +
        std::to_string(s.groups) + (benchmark ? " benchmark" : " heuristics") +
        (deterministic ? " deterministic" : "");
    gpu.cx.benchmark = benchmark;
    gpu.cx.deterministic = deterministic;
    const int64_t xSize = s.n * s.c * s.h * s.w, ySize = s.n * s.o * s.ho * s.wo,
                  wSize = s.o * (s.c / s.groups) * s.kh * s.kw;
    const std::vector<uint16_t> x = randomHalves<kType>(xSize, site * 10 + 1),
                                w = randomHalves<kType>(wSize, site * 10 + 2),
                                bias = randomHalves<kType>(s.o, site * 10 + 3),
                                dy = randomHalves<kType>(ySize, site * 10 + 4);
    const std::vector<double> x64 = widen<kType>(x), w64 = widen<kType>(w),
                              bias64 = widen<kType>(bias), dy64 = widen<kType>(dy);
    std::vector<double> cpuWs(std::max(
        cairn::kernels::conv2dWorkspaceElements(s, cairn::kernels::ConvPass::Forward),
        cairn::kernels::conv2dWorkspaceElements(s, cairn::kernels::ConvPass::BackwardInput)));
    std::vector<double> y(ySize), yBias(ySize), dx(xSize);
    cairn::kernels::conv2dForward<double>(s, x64.data(), w64.data(), nullptr, y.data(),
                                          cpuWs.data());
    cairn::kernels::conv2dForward<double>(s, x64.data(), w64.data(), bias64.data(),
                                          yBias.data(), cpuWs.data());
    cairn::kernels::conv2dBackwardInput<double>(s, dy64.data(), w64.data(), dx.data(),
                                                cpuWs.data());
    // fp32's error: the terms of a sum are at most 1 each (|x|, |w| <= 1).
    const double terms = static_cast<double>((s.c / s.groups) * s.kh * s.kw);
    const double termsBack = static_cast<double>((s.o / s.groups) * s.kh * s.kw);
    const std::vector<double> slack(ySize, (terms + 3) * (terms + 1) * std::ldexp(1.0, -24)),
        slackBack(xSize, (termsBack + 2) * termsBack * std::ldexp(1.0, -24));

    DeviceArray<uint16_t> dX(x), dW(w), dBias(bias), dDy(dy);
    DeviceArray<uint16_t> dY(std::vector<uint16_t>(ySize, 0xFFFF)),
        dYBias(std::vector<uint16_t>(ySize, 0xFFFF)), dDx(std::vector<uint16_t>(xSize, 0xFFFF));
    Workspace ws(kWorkspaceBytes);
    auto run = [&] {
      cairn::cuda::halfConv2dForward<kType>(gpu.cx, site, s, dX.get(), dW.get(), nullptr,
                                            dY.get(), ws.data, ws.bytes);
      cairn::cuda::halfConv2dForward<kType>(gpu.cx, site + 1, s, dX.get(), dW.get(), dBias.get(),
                                            dYBias.get(), ws.data, ws.bytes);
      cairn::cuda::halfConv2dBackwardInput<kType>(gpu.cx, site + 2, s,
                                                  dDy.get(), dW.get(), nullptr,
                                                  dDx.get(), ws.data, ws.bytes);
      return std::vector<std::vector<uint16_t>>{dY.read(gpu), dYBias.read(gpu), dDx.read(gpu)};
    };
    const std::vector<std::vector<uint16_t>> got = run();
    expectWithinUlp<kType>(got[0], y, slack, what + " forward");
    // The bias is added to the product rounded to half, then rounded again:
    // up to half a unit in the last place of the product more (ulp() of it
    // bounds a whole unit).
    std::vector<double> slackBias(ySize);
    for (int64_t i = 0; i < ySize; ++i)
      slackBias[i] = slack[i] + ulp<kType>() * std::fabs(y[i]);
    expectWithinUlp<kType>(got[1], yBias, slackBias, what + " forward with bias");
    expectWithinUlp<kType>(got[2], dx, slackBack, what + " backward input");
    if (deterministic)
      EXPECT_EQ(run(), got) << what << ": a second run differs";
  }

  Gpu gpu;
};

using F16 = std::integral_constant<CastType, CastType::F16>;
using BF16 = std::integral_constant<CastType, CastType::BF16>;
using HalfTypes = ::testing::Types<F16, BF16>;
TYPED_TEST_SUITE(HalfLibrary, HalfTypes);

TYPED_TEST(HalfLibrary, AllTransposes) {
  int site = 0;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      this->checkGemm(ta, tb, 64, 128, 256, 1.0f, 0.0f, 0, site++); // tensor-core shapes
      this->checkGemm(ta, tb, 37, 23, 19, 1.0f, 0.0f, 0, site++);   // odd: 2-byte aligned
      this->checkGemm(ta, tb, 33, 45, 27, 1.5f, -0.5f, 3, site++);
      this->checkGemm(ta, tb, 16, 8, 2048, 1.0f, 1.0f, 0, site++); // long k: split-K
    }
}

TYPED_TEST(HalfLibrary, WithoutDepthScalesC) {
  this->checkGemm(false, false, 5, 6, 0, 1.0f, 0.5f, 2, 0);
  this->checkGemm(false, true, 5, 6, 0, 1.0f, 0.0f, 0, 1);
}

TYPED_TEST(HalfLibrary, Batched) {
  int site = 0;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      this->checkBatched(3, ta, tb, 16, 64, 32, false, site++);
      this->checkBatched(4, ta, tb, 9, 33, 20, true, site++);
    }
}

TYPED_TEST(HalfLibrary, LinearEpilogues) {
  int site = 0;
  for (bool bias : {false, true})
    for (bool relu : {false, true}) {
      this->checkLinear(64, 784, 256, bias, relu, site++);
      this->checkLinear(7, 13, 5, bias, relu, site++);
    }
  this->checkLinear(4, 0, 3, true, true, site++); // empty product: the bias, then relu
}

TYPED_TEST(HalfLibrary, Convolutions) {
  int site = 0;
  for (bool benchmark : {false, true})
    for (bool deterministic : {false, true}) {
      if (benchmark && deterministic)
        continue; // --deterministic takes cuDNN's heuristics
      // n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups (ho, wo set).
      this->checkConv({4, 16, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0}, benchmark,
                      deterministic, site += 3);
      this->checkConv({4, 1, 28, 28, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0}, benchmark,
                      deterministic, site += 3);
      this->checkConv({2, 6, 11, 9, 10, 3, 3, 2, 2, 1, 1, 1, 1, 2, 0, 0}, benchmark,
                      deterministic, site += 3);
    }
}

} // namespace
