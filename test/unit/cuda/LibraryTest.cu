//===- LibraryTest.cu - cuBLASLt and cuDNN wrappers against the CPU -------===//
//
// Every wrapper of runtime/cuda/Library.h against its CPU twin in
// runtime/kernels/ on the same random inputs: GEMM in all four transposes,
// odd sizes, padded leading dimensions, operands off a 16-byte boundary,
// k = 0 and batches (one operand broadcast); linear with and without bias
// and relu; convolutions with stride, padding, dilation and groups in all
// three directions under cudnn.benchmark, heuristics and --deterministic;
// batch normalisation through cuDNN and through the kernels that serve
// layers without affine parameters; pooling through cuDNN and, for
// ceil_mode and dilation, through the direct kernels. fp32 sums in other
// orders than the CPU: results agree to 1e-4 relative (1e-10 in fp64).
// Sites decided once give the same bits when run again, and a site first
// reached while capturing is refused.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Check.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/cuda/Library.h"
#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Gemm.h"
#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Normalization.h"
#include "runtime/kernels/Pool.h"

#include "LibraryContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using cairn::cuda::testing::DeviceArray;
using cairn::cuda::testing::Gpu;
using cairn::cuda::testing::Workspace;
using cairn::kernels::Conv2dShape;
using cairn::kernels::KernelError;
using cairn::kernels::Pool2dShape;

constexpr size_t kWorkspaceBytes = size_t(64) << 20;

template <typename T>
std::vector<T> randomValues(size_t n, uint32_t seed, double lo = -1, double hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(n);
  for (T &x : v)
    x = T(dist(rng));
  return v;
}

template <typename T> double tolerance() { return sizeof(T) == 4 ? 1e-4 : 1e-10; }

/// |got - want| <= tol * max(1, |want|), NaN matching NaN.
template <typename T>
void expectClose(const std::vector<T> &got, const std::vector<T> &want, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t failures = 0;
  for (size_t i = 0; i < got.size() && failures < 10; ++i) {
    if (std::isnan(want[i]) || std::isnan(got[i])) {
      if (std::isnan(want[i]) != std::isnan(got[i])) {
        ++failures;
        ADD_FAILURE() << what << " at " << i << ": got " << got[i] << ", want " << want[i];
      }
      continue;
    }
    const double bound = tolerance<T>() * std::max(1.0, std::fabs(double(want[i])));
    if (!(std::fabs(double(got[i]) - double(want[i])) <= bound)) {
      ++failures;
      ADD_FAILURE() << what << " at " << i << ": got " << got[i] << ", want " << want[i];
    }
  }
}

template <typename T> bool sameBits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

int64_t convOut(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilation) {
  return (in + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
}

Conv2dShape convShape(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int64_t kh, int64_t kw,
                      int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                      int64_t groups) {
  Conv2dShape s{n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups, 0, 0};
  s.ho = convOut(h, kh, sh, ph, dh);
  s.wo = convOut(w, kw, sw, pw, dw);
  return s;
}

// Scratch for the CPU reference's three convolution kernels in turn.
int64_t cpuConvWorkspaceElements(const Conv2dShape &s) {
  using cairn::kernels::ConvPass;
  int64_t most = 0;
  for (ConvPass pass : {ConvPass::Forward, ConvPass::BackwardInput, ConvPass::BackwardWeight})
    most = std::max(most, cairn::kernels::conv2dWorkspaceElements(s, pass));
  return most;
}

std::string describe(const Conv2dShape &s) {
  return "n" + std::to_string(s.n) + " c" + std::to_string(s.c) + " " + std::to_string(s.h) + "x" +
         std::to_string(s.w) + " o" + std::to_string(s.o) + " k" + std::to_string(s.kh) + "x" +
         std::to_string(s.kw) + " s" + std::to_string(s.sh) + "," + std::to_string(s.sw) + " p" +
         std::to_string(s.ph) + "," + std::to_string(s.pw) + " d" + std::to_string(s.dh) + "," +
         std::to_string(s.dw) + " g" + std::to_string(s.groups);
}

/// PyTorch's pooling output size; a ceil_mode window must start inside the
/// input or the left padding.
int64_t poolOut(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceilMode) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t out = (ceilMode ? (span + s - 1) / s : span / s) + 1;
  if (ceilMode && (out - 1) * s >= in + p)
    --out;
  return out;
}

Pool2dShape poolShape(int64_t n, int64_t c, int64_t h, int64_t w, int64_t kh, int64_t kw,
                      int64_t sh, int64_t sw, int64_t ph, int64_t pw, int64_t dh, int64_t dw,
                      bool ceilMode) {
  Pool2dShape s{n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, 0, 0};
  s.ho = poolOut(h, kh, sh, ph, dh, ceilMode);
  s.wo = poolOut(w, kw, sw, pw, dw, ceilMode);
  return s;
}

std::string describe(const Pool2dShape &s) {
  return "n" + std::to_string(s.n) + " c" + std::to_string(s.c) + " " + std::to_string(s.h) + "x" +
         std::to_string(s.w) + " k" + std::to_string(s.kh) + "x" + std::to_string(s.kw) + " s" +
         std::to_string(s.sh) + "," + std::to_string(s.sw) + " p" + std::to_string(s.ph) + "," +
         std::to_string(s.pw) + " d" + std::to_string(s.dh) + "," + std::to_string(s.dw) + " out " +
         std::to_string(s.ho) + "x" + std::to_string(s.wo);
}

constexpr double kEps = 1e-5;

template <typename T> class Library : public ::testing::Test {
protected:
  /// One GEMM of kernels::gemm's arguments, row strides padded by `pad`,
  /// operands starting `offset` elements into their buffers.
  void checkGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, T alpha, T beta,
                 int64_t pad, int64_t offset, size_t workspaceBytes, int site) {
    const std::string what = std::string("gemm ") + (transA ? "T" : "N") + (transB ? "T" : "N") +
                             " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                             std::to_string(k) + " pad " + std::to_string(pad) + " offset " +
                             std::to_string(offset) + " ws " + std::to_string(workspaceBytes);
    const int64_t lda = (transA ? m : k) + pad, ldb = (transB ? k : n) + pad, ldc = n + pad;
    const int64_t aRows = transA ? k : m, bRows = transB ? n : k;
    const std::vector<T> a = randomValues<T>(offset + aRows * lda, site * 10 + 1),
                         b = randomValues<T>(offset + bRows * ldb, site * 10 + 2),
                         c = randomValues<T>(offset + m * ldc, site * 10 + 3);
    std::vector<T> want = c;
    cairn::kernels::gemm<T>(transA, transB, m, n, k, alpha, a.data() + offset, lda,
                            b.data() + offset, ldb, beta, want.data() + offset, ldc);
    DeviceArray<T> dA(a), dB(b);
    Workspace ws(workspaceBytes);
    auto run = [&] {
      DeviceArray<T> dC(c);
      cairn::cuda::gemm<T>(gpu.cx, site, transA, transB, m, n, k, alpha, dA.get() + offset, lda,
                           dB.get() + offset, ldb, beta, dC.get() + offset, ldc, ws.data, ws.bytes);
      return dC.read(gpu);
    };
    const std::vector<T> got = run();
    expectClose(got, want, what);
    EXPECT_TRUE(sameBits(run(), got)) << what << ": a second run differs";
  }

  void checkBatchedGemm(int64_t batch, bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                        bool broadcastA, int site) {
    const std::string what = std::string("batchedGemm ") + (transA ? "T" : "N") +
                             (transB ? "T" : "N") + " " + std::to_string(batch) + " x " +
                             std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                             (broadcastA ? " A broadcast" : "");
    const int64_t lda = (transA ? m : k) + 1, ldb = transB ? k : n, ldc = n + 2;
    const int64_t strideA = broadcastA ? 0 : (transA ? k : m) * lda + 3,
                  strideB = (transB ? n : k) * ldb, strideC = m * ldc + 5;
    const std::vector<T> a = randomValues<T>((transA ? k : m) * lda + strideA * (batch - 1),
                                             site * 10 + 1),
                         b = randomValues<T>(strideB * batch, site * 10 + 2),
                         c = randomValues<T>(strideC * batch, site * 10 + 3);
    const T alpha = T(0.75), beta = T(0.5);
    std::vector<T> want = c;
    cairn::kernels::batchedGemm<T>(batch, transA, transB, m, n, k, alpha, a.data(), lda, strideA,
                                   b.data(), ldb, strideB, beta, want.data(), ldc, strideC);
    DeviceArray<T> dA(a), dB(b), dC(c);
    Workspace ws(kWorkspaceBytes);
    cairn::cuda::batchedGemm<T>(gpu.cx, site, batch, transA, transB, m, n, k, alpha, dA.get(), lda,
                                strideA, dB.get(), ldb, strideB, beta, dC.get(), ldc, strideC,
                                ws.data, ws.bytes);
    expectClose(dC.read(gpu), want, what);
  }

  void checkLinear(int64_t rows, int64_t in, int64_t out, bool withBias, bool relu, int site) {
    const std::string what = "linear " + std::to_string(rows) + "x" + std::to_string(in) + " -> " +
                             std::to_string(out) + (withBias ? " bias" : "") +
                             (relu ? " relu" : "");
    const std::vector<T> x = randomValues<T>(rows * in, site * 10 + 1),
                         w = randomValues<T>(out * in, site * 10 + 2),
                         bias = randomValues<T>(out, site * 10 + 3);
    std::vector<T> want(rows * out);
    if (in > 0)
      cairn::kernels::gemm<T>(false, true, rows, out, in, T(1), x.data(), in, w.data(), in, T(0),
                              want.data(), out);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < out; ++o) {
        T &v = want[r * out + o];
        if (withBias)
          v += bias[o];
        if (relu && v < T(0))
          v = T(0);
      }
    DeviceArray<T> dX(x), dW(w), dBias(bias), dY(std::vector<T>(rows * out, T(-99)));
    Workspace ws(kWorkspaceBytes);
    auto run = [&] {
      cairn::cuda::linearForward<T>(gpu.cx, site, rows, in, out, dX.get(), dW.get(),
                                    withBias ? dBias.get() : nullptr, relu, dY.get(), ws.data,
                                    ws.bytes);
      return dY.read(gpu);
    };
    const std::vector<T> got = run();
    expectClose(got, want, what);
    EXPECT_TRUE(sameBits(run(), got)) << what << ": a second run differs";
  }

  /// All three directions of one convolution, sites `site` .. `site + 2`.
  void checkConv(const Conv2dShape &s, bool benchmark, bool deterministic, size_t workspaceBytes,
                 int site) {
    const std::string what = describe(s) + (benchmark ? " benchmark" : " heuristics") +
                             (deterministic ? " deterministic" : "") + " ws " +
                             std::to_string(workspaceBytes);
    gpu.cx.benchmark = benchmark;
    gpu.cx.deterministic = deterministic;
    const int64_t xSize = s.n * s.c * s.h * s.w, ySize = s.n * s.o * s.ho * s.wo,
                  wSize = s.o * (s.c / s.groups) * s.kh * s.kw;
    const std::vector<T> x = randomValues<T>(xSize, site * 10 + 1),
                         w = randomValues<T>(wSize, site * 10 + 2),
                         bias = randomValues<T>(s.o, site * 10 + 3),
                         dy = randomValues<T>(ySize, site * 10 + 4);
    std::vector<T> cpuWs(cpuConvWorkspaceElements(s));
    std::vector<T> y(ySize), dx(xSize), dw(wSize), dbias(s.o);
    cairn::kernels::conv2dForward<T>(s, x.data(), w.data(), bias.data(), y.data(), cpuWs.data());
    cairn::kernels::conv2dBackwardInput<T>(s, dy.data(), w.data(), dx.data(), cpuWs.data());
    cairn::kernels::conv2dBackwardWeight<T>(s, dy.data(), x.data(), dw.data(), dbias.data(),
                                            cpuWs.data());

    DeviceArray<T> dX(x), dW(w), dBias(bias), dDy(dy);
    DeviceArray<T> dY(std::vector<T>(ySize, T(-99))), dDx(std::vector<T>(xSize, T(-99))),
        dDw(std::vector<T>(wSize, T(-99))), dDbias(std::vector<T>(s.o, T(-99)));
    Workspace ws(workspaceBytes);
    auto run = [&] {
      cairn::cuda::conv2dForward<T>(gpu.cx, site, s, dX.get(), dW.get(), dBias.get(), dY.get(),
                                    ws.data, ws.bytes);
      cairn::cuda::conv2dBackwardInput<T>(gpu.cx, site + 1, s, dDy.get(),
                                          dW.get(), nullptr, dDx.get(), ws.data,
                                          ws.bytes);
      cairn::cuda::conv2dBackwardWeight<T>(gpu.cx, site + 2, s, dDy.get(), dX.get(), dDw.get(),
                                           dDbias.get(), ws.data, ws.bytes);
      return std::vector<std::vector<T>>{dY.read(gpu), dDx.read(gpu), dDw.read(gpu),
                                         dDbias.read(gpu)};
    };
    const std::vector<std::vector<T>> got = run();
    expectClose(got[0], y, what + " forward");
    expectClose(got[1], dx, what + " backward input");
    expectClose(got[2], dw, what + " backward weight");
    expectClose(got[3], dbias, what + " backward bias");
    if (deterministic) {
      const std::vector<std::vector<T>> again = run();
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_TRUE(sameBits(again[i], got[i])) << what << ": a second run differs (" << i << ")";
    }
  }

  /// The three batch-norm wrappers; `affine` false passes no gamma / beta,
  /// `paramGrads` false no dgamma / dbeta.
  void checkBatchNorm(int64_t n, int64_t c, int64_t spatial, bool affine, bool paramGrads,
                      int site) {
    const std::string what = "batchNorm n" + std::to_string(n) + " c" + std::to_string(c) +
                             " spatial" + std::to_string(spatial) + (affine ? " affine" : "") +
                             (paramGrads ? " dgamma dbeta" : "");
    const int64_t size = n * c * spatial;
    // Channels off zero mean and unit spread, as real activations are.
    const std::vector<T> x = randomValues<T>(size, site * 10 + 1, -0.5, 2.5),
                         dy = randomValues<T>(size, site * 10 + 2),
                         gamma = randomValues<T>(c, site * 10 + 3, 0.5, 1.5),
                         beta = randomValues<T>(c, site * 10 + 4),
                         runningMean = randomValues<T>(c, site * 10 + 5),
                         runningVar = randomValues<T>(c, site * 10 + 6, 0.5, 2);
    const T *g = affine ? gamma.data() : nullptr, *b = affine ? beta.data() : nullptr;
    std::vector<T> y(size), yInf(size), dx(size), dgamma(c, T(-99)), dbeta(c, T(-99));
    cairn::kernels::batchNormTrainingForward<T>(n, c, spatial, x.data(), g, b, kEps, y.data());
    cairn::kernels::batchNormInferenceForward<T>(n, c, spatial, x.data(), g, b, runningMean.data(),
                                                 runningVar.data(), kEps, yInf.data());
    cairn::kernels::batchNormBackward<T>(n, c, spatial, dy.data(), x.data(), g, kEps, dx.data(),
                                         paramGrads ? dgamma.data() : nullptr,
                                         paramGrads ? dbeta.data() : nullptr);

    DeviceArray<T> dX(x), dDy(dy), dGamma(gamma), dBeta(beta), dMean(runningMean), dVar(runningVar);
    DeviceArray<T> dY(std::vector<T>(size, T(-99))), dYInf(std::vector<T>(size, T(-99))),
        dDx(std::vector<T>(size, T(-99))), dDgamma(std::vector<T>(c, T(-99))),
        dDbeta(std::vector<T>(c, T(-99)));
    const T *gg = affine ? dGamma.get() : nullptr, *gb = affine ? dBeta.get() : nullptr;
    auto run = [&] {
      cairn::cuda::batchNormTrainingForward<T>(gpu.cx, site, n, c, spatial, dX.get(), gg, gb, kEps,
                                               dY.get());
      cairn::cuda::batchNormInferenceForward<T>(gpu.cx, site + 1, n, c, spatial, dX.get(), gg, gb,
                                                dMean.get(), dVar.get(), kEps, dYInf.get());
      cairn::cuda::batchNormBackward<T>(gpu.cx, site + 2, n, c, spatial, dDy.get(), dX.get(), gg,
                                        kEps, dDx.get(), paramGrads ? dDgamma.get() : nullptr,
                                        paramGrads ? dDbeta.get() : nullptr);
      return std::vector<std::vector<T>>{dY.read(gpu), dYInf.read(gpu), dDx.read(gpu),
                                         dDgamma.read(gpu), dDbeta.read(gpu)};
    };
    const std::vector<std::vector<T>> got = run();
    expectClose(got[0], y, what + " training forward");
    expectClose(got[1], yInf, what + " inference forward");
    expectClose(got[2], dx, what + " backward dx");
    // Untouched (-99) when left out.
    expectClose(got[3], dgamma, what + " dgamma");
    expectClose(got[4], dbeta, what + " dbeta");
    const std::vector<std::vector<T>> again = run();
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_TRUE(sameBits(again[i], got[i])) << what << ": a second run differs (" << i << ")";
  }

  /// Max pooling, then average pooling counting and not counting padding.
  void checkPool(const Pool2dShape &s, bool withNaN, int site) {
    const std::string what = describe(s) + (withNaN ? " NaN" : "");
    std::vector<T> x = randomValues<T>(s.n * s.c * s.h * s.w, site * 10 + 1);
    if (withNaN)
      for (size_t i = 3; i < x.size(); i += 17)
        x[i] = std::numeric_limits<T>::quiet_NaN();
    const int64_t ySize = s.n * s.c * s.ho * s.wo;
    DeviceArray<T> dX(x);
    {
      std::vector<T> want(ySize);
      cairn::kernels::maxPool2dForward<T>(s, x.data(), want.data());
      DeviceArray<T> dY(std::vector<T>(ySize, T(-99)));
      cairn::cuda::maxPool2dForward<T>(gpu.cx, site, s, dX.get(), dY.get());
      expectClose(dY.read(gpu), want, what + " max");
    }
    if (s.dh != 1 || s.dw != 1 || withNaN)
      return; // average pooling has no dilation
    for (bool includePad : {true, false}) {
      std::vector<T> want(ySize);
      cairn::kernels::avgPool2dForward<T>(s, includePad, x.data(), want.data());
      DeviceArray<T> dY(std::vector<T>(ySize, T(-99)));
      cairn::cuda::avgPool2dForward<T>(gpu.cx, site + (includePad ? 1 : 2), s, includePad, dX.get(),
                                       dY.get());
      expectClose(dY.read(gpu), want,
                  what + (includePad ? " avg count_include_pad" : " avg exclude pad"));
    }
  }

  Gpu gpu;
};

using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Library, Types);

TYPED_TEST(Library, GemmAllTransposes) {
  using T = TypeParam;
  int site = 0;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      this->checkGemm(ta, tb, 37, 23, 19, T(1), T(0), 0, 0, kWorkspaceBytes, site++);
      this->checkGemm(ta, tb, 37, 23, 19, T(1.5), T(-0.5), 3, 0, kWorkspaceBytes, site++);
      this->checkGemm(ta, tb, 1, 1, 1, T(1), T(0), 0, 0, kWorkspaceBytes, site++);
      this->checkGemm(ta, tb, 128, 96, 200, T(1), T(1), 0, 0, kWorkspaceBytes, site++);
      this->checkGemm(ta, tb, 65, 7, 513, T(0.5), T(0), 1, 0, 0, site++); // no workspace
    }
}

TYPED_TEST(Library, GemmOperandsOffAlignment) {
  using T = TypeParam;
  // One element in: 4 or 8 bytes aligned, not the 256 cuBLASLt assumes.
  this->checkGemm(false, false, 33, 45, 27, T(1), T(0.25), 1, 1, kWorkspaceBytes, 0);
  this->checkGemm(true, true, 64, 64, 64, T(1), T(0), 0, 1, kWorkspaceBytes, 1);
}

TYPED_TEST(Library, GemmWithoutDepthScalesC) {
  using T = TypeParam;
  this->checkGemm(false, false, 5, 6, 0, T(1), T(0.5), 2, 0, kWorkspaceBytes, 0);
  this->checkGemm(false, true, 5, 6, 0, T(1), T(0), 0, 0, kWorkspaceBytes, 1);
}

TYPED_TEST(Library, BatchedGemm) {
  int site = 0;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      this->checkBatchedGemm(3, ta, tb, 13, 17, 11, false, site++);
      this->checkBatchedGemm(4, ta, tb, 9, 33, 20, true, site++);
    }
  this->checkBatchedGemm(1, false, false, 31, 29, 7, false, site++);
}

TYPED_TEST(Library, BatchedGemmRefusesAliasedOutputs) {
  using T = TypeParam;
  DeviceArray<T> d(std::vector<T>(16, T(0)));
  EXPECT_THROW(cairn::cuda::batchedGemm<T>(this->gpu.cx, 0, 2, false, false, 2, 2, 2, T(1), d.get(),
                                           2, 4, d.get(), 2, 4, T(0), d.get(), 2, 0, nullptr, 0),
               KernelError);
}

TYPED_TEST(Library, Linear) {
  int site = 0;
  for (bool bias : {false, true})
    for (bool relu : {false, true}) {
      this->checkLinear(33, 27, 19, bias, relu, site++);
      this->checkLinear(64, 128, 96, bias, relu, site++);
      this->checkLinear(1, 5, 3, bias, relu, site++);
      this->checkLinear(4, 0, 3, bias, relu, site++); // no inputs: the bias alone
    }
}

TYPED_TEST(Library, GemmSiteNotChosenBeforeCaptureIsRefused) {
  using T = TypeParam;
  DeviceArray<T> a(randomValues<T>(16, 1)), c(std::vector<T>(16, T(0)));
  auto call = [&] {
    cairn::cuda::gemm<T>(this->gpu.cx, 7, false, false, 4, 4, 4, T(1), a.get(), 4, a.get(), 4, T(0),
                         c.get(), 4, nullptr, 0);
  };
  this->gpu.cx.capturing = true;
  try {
    call();
    ADD_FAILURE() << "an undecided site ran while capturing";
  } catch (const KernelError &e) {
    EXPECT_NE(std::string(e.what()).find("before capture"), std::string::npos) << e.what();
  }
  // Decided eagerly, the same site then runs while capturing.
  this->gpu.cx.capturing = false;
  call();
  this->gpu.cx.capturing = true;
  EXPECT_NO_THROW(call());
  CAIRN_CUDA_CHECK(cudaStreamSynchronize(this->gpu.cx.stream));
}

const Conv2dShape kConvShapes[] = {
    convShape(2, 4, 9, 11, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1),    // padded 3x3
    convShape(2, 6, 10, 9, 4, 3, 2, 2, 1, 1, 0, 1, 1, 2),    // strided, 2 groups
    convShape(1, 3, 12, 13, 5, 3, 3, 1, 2, 2, 1, 2, 2, 1),   // dilated
    convShape(3, 8, 7, 7, 8, 3, 3, 2, 2, 1, 1, 1, 1, 8),     // depthwise
    convShape(4, 16, 5, 6, 12, 1, 1, 1, 1, 0, 0, 1, 1, 1),   // 1x1
    convShape(2, 16, 16, 16, 32, 5, 5, 1, 1, 2, 2, 1, 1, 1), // larger
};

TYPED_TEST(Library, ConvolutionBenchmark) {
  int site = 0;
  for (const Conv2dShape &s : kConvShapes)
    this->checkConv(s, true, false, kWorkspaceBytes, site += 3);
}

TYPED_TEST(Library, ConvolutionHeuristics) {
  int site = 0;
  for (const Conv2dShape &s : kConvShapes)
    this->checkConv(s, false, false, kWorkspaceBytes, site += 3);
}

TYPED_TEST(Library, ConvolutionDeterministic) {
  int site = 0;
  for (const Conv2dShape &s : kConvShapes) {
    this->checkConv(s, false, true, kWorkspaceBytes, site += 3);
    // --deterministic wins over cudnn.benchmark: heuristics, no timing.
    this->checkConv(s, true, true, kWorkspaceBytes, site += 3);
  }
}

// The plan gives a convolution the CPU's im2col size; cuDNN's deterministic
// weight-gradient algorithms often want more (cnn's 3x3 over 32 channels on
// 14x14, ResNet-18's 3x3 layers), so those sites run Cairn's own kernel.
// Every direction must work in that workspace and in none.
TYPED_TEST(Library, ConvolutionDeterministicInThePlannedWorkspace) {
  using T = TypeParam;
  std::vector<Conv2dShape> shapes(std::begin(kConvShapes), std::end(kConvShapes));
  shapes.push_back(convShape(4, 32, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1)); // cnn's conv2
  shapes.push_back(convShape(2, 128, 8, 8, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1)); // a ResNet-18 3x3
  int site = 0;
  for (const Conv2dShape &s : shapes) {
    // The smallest of the three kernels' planned scratch (the weight
    // gradient's, one image's column matrix), for all three.
    const size_t planned =
        cairn::kernels::conv2dWorkspaceElements(s, cairn::kernels::ConvPass::BackwardWeight) *
        sizeof(T);
    for (size_t bytes : {planned, size_t(0)})
      for (bool benchmark : {false, true}) {
        SCOPED_TRACE(describe(s) + " workspace " + std::to_string(bytes));
        this->checkConv(s, benchmark, /*deterministic=*/true, bytes, site += 3);
      }
  }
}

// Cairn's weight gradient on its own, with the sum in one range (no
// workspace) and split over blocks (a workspace of several copies of dw):
// the CPU's values, and the same bits on a second run.
TYPED_TEST(Library, ConvolutionWeightGradientDirect) {
  using T = TypeParam;
  std::vector<Conv2dShape> shapes(std::begin(kConvShapes), std::end(kConvShapes));
  shapes.push_back(convShape(4, 3, 32, 32, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1)); // few filters, 4096 rows
  shapes.push_back(convShape(3, 40, 6, 6, 36, 3, 3, 1, 1, 1, 1, 1, 1, 2)); // partial tiles, groups
  int seed = 0;
  for (const Conv2dShape &s : shapes) {
    const int64_t xSize = s.n * s.c * s.h * s.w, ySize = s.n * s.o * s.ho * s.wo,
                  wSize = s.o * (s.c / s.groups) * s.kh * s.kw;
    const std::vector<T> x = randomValues<T>(xSize, ++seed), dy = randomValues<T>(ySize, ++seed);
    std::vector<T> cpuWs(cpuConvWorkspaceElements(s)), want(wSize);
    cairn::kernels::conv2dBackwardWeight<T>(s, dy.data(), x.data(), want.data(), nullptr,
                                            cpuWs.data());
    DeviceArray<T> dX(x), dDy(dy);
    for (size_t bytes : {size_t(0), size_t(64) * wSize * sizeof(T)}) {
      const std::string what = describe(s) + " direct weight gradient, workspace " +
                               std::to_string(bytes);
      Workspace ws(bytes);
      DeviceArray<T> dDw(std::vector<T>(wSize, T(-99)));
      auto run = [&] {
        cairn::cuda::conv2dBackwardWeightDirect<T>(this->gpu.cx, s, dDy.get(), dX.get(),
                                                   dDw.get(), ws.data, ws.bytes);
        return dDw.read(this->gpu);
      };
      const std::vector<T> got = run();
      expectClose(got, want, what);
      EXPECT_TRUE(sameBits(run(), got)) << what << ": a second run differs";
    }
  }
}

TYPED_TEST(Library, ConvolutionForwardWithoutWorkspace) {
  using T = TypeParam;
  for (bool benchmark : {true, false}) {
    Gpu gpu;
    gpu.cx.benchmark = benchmark;
    const Conv2dShape s = kConvShapes[0];
    const std::vector<T> x = randomValues<T>(s.n * s.c * s.h * s.w, 1),
                         w = randomValues<T>(s.o * s.c * s.kh * s.kw, 2);
    std::vector<T> cpuWs(cpuConvWorkspaceElements(s)), want(s.n * s.o * s.ho * s.wo);
    cairn::kernels::conv2dForward<T>(s, x.data(), w.data(), nullptr, want.data(), cpuWs.data());
    DeviceArray<T> dX(x), dW(w), dY(std::vector<T>(want.size(), T(-99)));
    cairn::cuda::conv2dForward<T>(gpu.cx, 0, s, dX.get(), dW.get(), nullptr, dY.get(), nullptr, 0);
    expectClose(dY.read(gpu), want, describe(s) + " forward without workspace");
  }
}

TYPED_TEST(Library, ConvolutionSiteNotChosenBeforeCaptureIsRefused) {
  using T = TypeParam;
  const Conv2dShape s = kConvShapes[0];
  DeviceArray<T> x(std::vector<T>(s.n * s.c * s.h * s.w, T(0))),
      w(std::vector<T>(s.o * s.c * s.kh * s.kw, T(0))),
      y(std::vector<T>(s.n * s.o * s.ho * s.wo, T(0)));
  this->gpu.cx.capturing = true;
  try {
    cairn::cuda::conv2dForward<T>(this->gpu.cx, 3, s, x.get(), w.get(), nullptr, y.get(), nullptr,
                                  0);
    ADD_FAILURE() << "an undecided site ran while capturing";
  } catch (const KernelError &e) {
    EXPECT_NE(std::string(e.what()).find("before capture"), std::string::npos) << e.what();
  }
}

TYPED_TEST(Library, BatchNorm) {
  int site = 0;
  const int64_t shapes[][3] = {{4, 3, 30}, {2, 300, 5}, {16, 7, 1}, {3, 5, 64 * 7}};
  for (const auto &s : shapes)
    for (int flags = 0; flags < 4; ++flags)
      this->checkBatchNorm(s[0], s[1], s[2], flags & 1, flags & 2, site += 3);
}

TYPED_TEST(Library, Pooling) {
  int site = 0;
  // cuDNN: plain, padded and overlapping windows.
  this->checkPool(poolShape(2, 3, 11, 10, 3, 3, 2, 2, 1, 1, 1, 1, false), false, site += 3);
  this->checkPool(poolShape(2, 3, 8, 8, 2, 2, 2, 2, 0, 0, 1, 1, false), false, site += 3);
  this->checkPool(poolShape(1, 4, 9, 7, 3, 2, 1, 2, 1, 1, 1, 1, false), false, site += 3);
  this->checkPool(poolShape(2, 2, 11, 11, 3, 3, 2, 2, 1, 1, 1, 1, true), false,
                  site += 3); // ceil_mode, same size as floor's
  // Direct kernels: ceil_mode's extra window, dilation.
  this->checkPool(poolShape(2, 3, 10, 10, 3, 3, 2, 2, 0, 0, 1, 1, true), false, site += 3);
  this->checkPool(poolShape(2, 3, 10, 11, 3, 3, 2, 2, 1, 1, 1, 1, true), false, site += 3);
  this->checkPool(poolShape(1, 3, 12, 12, 3, 3, 1, 1, 1, 1, 2, 2, false), false, site += 3);
  // NaN propagates through max pooling on both paths.
  this->checkPool(poolShape(2, 3, 11, 10, 3, 3, 2, 2, 1, 1, 1, 1, false), true, site += 3);
  this->checkPool(poolShape(1, 3, 12, 12, 3, 3, 1, 1, 1, 1, 2, 2, false), true, site += 3);
}

TEST(LibraryVersion, NamesBothLibraries) {
  const std::string version = cairn::cuda::librariesVersion();
  EXPECT_EQ(version.rfind("cuDNN 9.", 0), 0u) << version;
  EXPECT_NE(version.find(", cuBLASLt 13."), std::string::npos) << version;
}

} // namespace
