//===- ConvTest.cpp - 2-D convolution -------------------------------------===//
//
// The forward pass against a direct seven-deep loop, the two backward rules
// against central differences of the (double) forward pass, over shapes that
// exercise stride, padding, dilation, groups, non-square kernels and the
// 1x1 path that skips im2col. The workspace carries a guard band that must
// stay untouched, and outputs start as NaN to show they are overwritten.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Conv.h"

#include "ConvShapes.h"
#include "GradCheck.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

constexpr int64_t kGuard = 64;

std::vector<Conv2dShape> testShapes() {
  return {
      shape(1, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1),          // same padding
      shape(3, 4, 7, 6, 6, 3, 2, 2, 1, 1, 2),          // stride 2, non-square
      shape(2, 2, 8, 7, 3, 3, 3, 1, 1, 2, 2, 2, 2),    // dilation 2
      shape(2, 4, 6, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2), // groups 2
      shape(2, 4, 9, 8, 4, 3, 2, 2, 3, 2, 1, 2, 1, 2), // everything at once
      shape(3, 4, 4, 5, 3, 1, 1),                      // 1x1 direct path
      shape(2, 4, 4, 3, 6, 1, 1, 1, 1, 0, 0, 1, 1, 2), // 1x1 direct, groups
      shape(2, 3, 7, 7, 2, 1, 1, 2, 2),                // 1x1, stride 2
      shape(1, 3, 6, 6, 3, 3, 3, 2, 2, 1, 1, 1, 1, 3), // depthwise
      shape(3, 2, 4, 4, 2, 5, 5, 1, 1, 2, 2),          // kernel > input
  };
}

template <typename T> std::vector<T> cast(const std::vector<double> &v) {
  return std::vector<T>(v.begin(), v.end());
}


std::vector<double> referenceForward(const Conv2dShape &s,
                                     const std::vector<double> &x,
                                     const std::vector<double> &w,
                                     const std::vector<double> *bias) {
  const int64_t cg = s.c / s.groups, og = s.o / s.groups;
  std::vector<double> y(ySize(s));
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t o = 0; o < s.o; ++o)
      for (int64_t oh = 0; oh < s.ho; ++oh)
        for (int64_t ow = 0; ow < s.wo; ++ow) {
          double sum = bias ? (*bias)[o] : 0.0;
          const int64_t g = o / og;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t i = 0; i < s.kh; ++i)
              for (int64_t j = 0; j < s.kw; ++j) {
                int64_t ih = oh * s.sh - s.ph + i * s.dh;
                int64_t iw = ow * s.sw - s.pw + j * s.dw;
                if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w)
                  continue;
                int64_t c = g * cg + ci;
                sum += x[((b * s.c + c) * s.h + ih) * s.w + iw] *
                       w[((o * cg + ci) * s.kh + i) * s.kw + j];
              }
          y[((b * s.o + o) * s.ho + oh) * s.wo + ow] = sum;
        }
  return y;
}

/// A workspace of exactly conv2dWorkspaceElements, followed by a guard band.
template <typename T> struct Workspace {
  std::vector<T> data;
  int64_t size;
  Workspace(const Conv2dShape &s, ConvPass pass)
      : size(conv2dWorkspaceElements(s, pass)) {
    data.assign(size + kGuard, T(12345));
  }
  Workspace(const Conv2dShape &s, int64_t images)
      : size(conv2dWorkspaceElements(s, images)) {
    data.assign(size + kGuard, T(12345));
  }
  T *get() { return data.data(); }
  bool guardIntact() const {
    for (int64_t i = size; i < size + kGuard; ++i)
      if (data[i] != T(12345))
        return false;
    return true;
  }
};

template <typename T> T nan() { return std::numeric_limits<T>::quiet_NaN(); }

template <typename T> void checkForward(const Conv2dShape &s, bool withBias) {
  auto x = randomVector(xSize(s), 11), w = randomVector(wSize(s), 12);
  auto bias = randomVector(s.o, 13);
  auto want = referenceForward(s, x, w, withBias ? &bias : nullptr);
  std::vector<T> tx = cast<T>(x), tw = cast<T>(w), tb = cast<T>(bias);
  std::vector<T> y(ySize(s), nan<T>());
  Workspace<T> ws(s, ConvPass::Forward);
  conv2dForward<T>(s, tx.data(), tw.data(), withBias ? tb.data() : nullptr,
                   y.data(), ws.get());
  EXPECT_TRUE(ws.guardIntact()) << describe(s);
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  for (size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(double(y[i]), want[i], tol * std::max(1.0, std::fabs(want[i])))
        << describe(s) << " bias=" << withBias << " element " << i;
}

TEST(Conv2d, ForwardMatchesReference) {
  for (const Conv2dShape &s : testShapes())
    for (bool withBias : {true, false}) {
      checkForward<float>(s, withBias);
      checkForward<double>(s, withBias);
    }
}

/// L = sum((conv(x, w) + bias) * probe), in double through the kernel itself
/// (whose forward pass is checked above).
double loss(const Conv2dShape &s, const std::vector<double> &x,
            const std::vector<double> &w, const std::vector<double> &bias,
            const std::vector<double> &probe) {
  std::vector<double> y(ySize(s));
  Workspace<double> ws(s, ConvPass::Forward);
  conv2dForward<double>(s, x.data(), w.data(), bias.data(), y.data(), ws.get());
  return dot(y, probe);
}

TEST(Conv2d, BackwardMatchesFiniteDifferences) {
  for (const Conv2dShape &s : testShapes()) {
    SCOPED_TRACE(describe(s));
    auto x = randomVector(xSize(s), 21), w = randomVector(wSize(s), 22);
    auto bias = randomVector(s.o, 23), probe = randomVector(ySize(s), 24);

    std::vector<double> dx(xSize(s), nan<double>());
    Workspace<double> ws(s, ConvPass::BackwardInput);
    conv2dBackwardInput<double>(s, probe.data(), w.data(), dx.data(), ws.get());
    EXPECT_TRUE(ws.guardIntact());
    checkGradient(
        "dx", x,
        [&](const std::vector<double> &v) {
          return loss(s, v, w, bias, probe);
        },
        dx);

    std::vector<double> dw(wSize(s), nan<double>()), db(s.o, nan<double>());
    Workspace<double> wsw(s, ConvPass::BackwardWeight);
    conv2dBackwardWeight<double>(s, probe.data(), x.data(), dw.data(),
                                 db.data(), wsw.get());
    EXPECT_TRUE(wsw.guardIntact());
    checkGradient(
        "dw", w,
        [&](const std::vector<double> &v) {
          return loss(s, x, v, bias, probe);
        },
        dw);
    checkGradient(
        "dbias", bias,
        [&](const std::vector<double> &v) { return loss(s, x, w, v, probe); },
        db);

    // Without a bias gradient, dw is the same.
    std::vector<double> dw2(wSize(s), nan<double>());
    conv2dBackwardWeight<double>(s, probe.data(), x.data(), dw2.data(), nullptr,
                                 wsw.get());
    EXPECT_EQ(dw, dw2);
  }
}

/// The float instantiations agree with the (finite-difference checked)
/// double ones.
TEST(Conv2d, FloatBackwardMatchesDouble) {
  for (const Conv2dShape &s : testShapes()) {
    SCOPED_TRACE(describe(s));
    auto x = randomVector(xSize(s), 31), w = randomVector(wSize(s), 32);
    auto dy = randomVector(ySize(s), 33);
    std::vector<double> dx(xSize(s)), dw(wSize(s)), db(s.o);
    Workspace<double> wsd(s, ConvPass::BackwardInput),
        wsdw(s, ConvPass::BackwardWeight);
    conv2dBackwardInput<double>(s, dy.data(), w.data(), dx.data(), wsd.get());
    conv2dBackwardWeight<double>(s, dy.data(), x.data(), dw.data(), db.data(),
                                 wsdw.get());

    std::vector<float> fx = cast<float>(x), fw = cast<float>(w),
                       fdy = cast<float>(dy);
    std::vector<float> fdx(xSize(s), nan<float>()), fdw(wSize(s), nan<float>()),
        fdb(s.o, nan<float>());
    Workspace<float> wsf(s, ConvPass::BackwardInput),
        wsfw(s, ConvPass::BackwardWeight);
    conv2dBackwardInput<float>(s, fdy.data(), fw.data(), fdx.data(), wsf.get());
    conv2dBackwardWeight<float>(s, fdy.data(), fx.data(), fdw.data(),
                                fdb.data(), wsfw.get());
    EXPECT_TRUE(wsf.guardIntact());
    EXPECT_TRUE(wsfw.guardIntact());
    auto expectNear = [](const std::vector<float> &got,
                         const std::vector<double> &want, const char *what) {
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(double(got[i]), want[i],
                    1e-5 * std::max(1.0, std::fabs(want[i])))
            << what << " element " << i;
    };
    expectNear(fdx, dx, "dx");
    expectNear(fdw, dw, "dw");
    expectNear(fdb, db, "dbias");
  }
}

/// The test shapes' planes are small, so the rule puts all their images in
/// one GEMM in the forward pass and the input gradient; one image at a time,
/// groups of two (the last one short) and all images give the same results
/// in all three kernels, and stay inside their own workspace.
TEST(Conv2d, AnyNumberOfImagesPerGemmGivesTheSameResult) {
  for (const Conv2dShape &s : testShapes()) {
    auto x = randomVector(xSize(s), 41), w = randomVector(wSize(s), 42);
    auto bias = randomVector(s.o, 43), dy = randomVector(ySize(s), 44);
    auto run = [&](int64_t images) {
      std::vector<std::vector<double>> out = {
          std::vector<double>(ySize(s), nan<double>()),
          std::vector<double>(xSize(s), nan<double>()),
          std::vector<double>(wSize(s), nan<double>()),
          std::vector<double>(s.o, nan<double>())};
      Workspace<double> ws(s, images);
      conv2dForward<double>(s, x.data(), w.data(), bias.data(), out[0].data(),
                            ws.get(), images);
      conv2dBackwardInput<double>(s, dy.data(), w.data(), out[1].data(),
                                  ws.get(), images);
      conv2dBackwardWeight<double>(s, dy.data(), x.data(), out[2].data(),
                                   out[3].data(), ws.get(), images);
      EXPECT_TRUE(ws.guardIntact()) << describe(s) << " images " << images;
      return out;
    };
    const auto want = run(1);
    for (int64_t images : {int64_t(2), s.n}) {
      const auto got = run(images);
      for (size_t t = 0; t < want.size(); ++t)
        for (size_t i = 0; i < want[t].size(); ++i)
          ASSERT_NEAR(got[t][i], want[t][i],
                      1e-12 * std::max(1.0, std::fabs(want[t][i])))
              << describe(s) << " images " << images << " output " << t
              << " element " << i;
    }
  }
}

TEST(Conv2d, LargeShapesMatchTheReferenceWithTheSameBitsOnAnyThreads) {
  // Big enough that the passes split across threads, with padding, stride,
  // dilation, groups and several images a GEMM. The forward and the input gradient have the same bits on any
  // number of threads; the weight gradient does not yet (OpenBLAS rounds
  // the dot products of a slice of dW's columns otherwise than the whole
  // product's for some widths: the first shape's 27 columns as 16 + 11).
  const std::vector<Conv2dShape> shapes = {
      shape(3, 6, 23, 21, 8, 3, 3, 2, 2, 1, 1, 2, 2, 2),
      shape(5, 8, 9, 9, 16, 3, 3, 1, 1, 1, 1),
      shape(2, 16, 40, 40, 8, 3, 3, 1, 1, 1, 1),
  };
  const int threads = omp_get_max_threads();
  for (const Conv2dShape &s : shapes) {
    SCOPED_TRACE(describe(s));
    auto x = randomVector(xSize(s), 61), w = randomVector(wSize(s), 62);
    auto bias = randomVector(s.o, 63), dy = randomVector(ySize(s), 64);
    auto run = [&](int count) {
      omp_set_num_threads(count);
      std::vector<std::vector<float>> out = {std::vector<float>(ySize(s), nan<float>()),
                                             std::vector<float>(xSize(s), nan<float>()),
                                             std::vector<float>(wSize(s), nan<float>()),
                                             std::vector<float>(s.o, nan<float>())};
      std::vector<float> fx = cast<float>(x), fw = cast<float>(w), fb = cast<float>(bias),
                         fdy = cast<float>(dy);
      Workspace<float> forward(s, ConvPass::Forward), input(s, ConvPass::BackwardInput),
          weight(s, ConvPass::BackwardWeight);
      conv2dForward<float>(s, fx.data(), fw.data(), fb.data(), out[0].data(), forward.get());
      conv2dBackwardInput<float>(s, fdy.data(), fw.data(), out[1].data(), input.get());
      conv2dBackwardWeight<float>(s, fdy.data(), fx.data(), out[2].data(), out[3].data(),
                                  weight.get());
      EXPECT_TRUE(forward.guardIntact() && input.guardIntact() && weight.guardIntact());
      return out;
    };
    const auto one = run(1), many = run(std::max(threads, 3));
    omp_set_num_threads(threads);
    for (size_t t = 0; t < 2; ++t)
      for (size_t i = 0; i < one[t].size(); ++i)
        ASSERT_EQ(one[t][i], many[t][i]) << "output " << t << " element " << i;
    const auto want = referenceForward(s, x, w, &bias);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(double(many[0][i]), want[i], 1e-4 * std::max(1.0, std::fabs(want[i])))
          << "element " << i;
  }
}

TEST(Conv2d, SmallPlanesShareAGemmAndLargeOnesDoNot) {
  const ConvPass fwd = ConvPass::Forward, input = ConvPass::BackwardInput,
                 weight = ConvPass::BackwardWeight;
  // 8 images of 5x12 outputs: three a GEMM (180 columns, at least 128);
  // the workspace holds their column matrix and their outputs for one group.
  Conv2dShape s = shape(8, 6, 10, 12, 4, 3, 5, 2, 1, 1, 2, 1, 1, 2);
  EXPECT_EQ(conv2dImagesPerGemm(s, fwd), 3);
  EXPECT_EQ(conv2dImagesPerGemm(s, input), 3);
  EXPECT_EQ(conv2dWorkspaceElements(s, fwd), 3 * 5 * 12 * (3 * 3 * 5 + 4 / 2));
  // The weight gradient takes one image at a time, with one column matrix.
  EXPECT_EQ(conv2dImagesPerGemm(s, weight), 1);
  EXPECT_EQ(conv2dWorkspaceElements(s, weight), 3 * 3 * 5 * 5 * 12);
  // ResNet-18's 4x4 layer at batch 32: 8 images a GEMM.
  EXPECT_EQ(
      conv2dImagesPerGemm(shape(32, 512, 4, 4, 512, 3, 3, 1, 1, 1, 1), fwd), 8);
  // A 16x16 plane is a GEMM of its own; so is a batch of one.
  Conv2dShape large = shape(32, 128, 16, 16, 128, 3, 3, 1, 1, 1, 1);
  EXPECT_EQ(conv2dImagesPerGemm(large, fwd), 1);
  EXPECT_EQ(conv2dWorkspaceElements(large, fwd), 128 * 9 * 256);
  EXPECT_EQ(conv2dImagesPerGemm(shape(1, 4, 4, 4, 4, 3, 3, 1, 1, 1, 1), fwd),
            1);
  // A direct 1x1 convolution reads its input in place, one image at a time.
  EXPECT_EQ(conv2dImagesPerGemm(shape(8, 4, 4, 5, 3, 1, 1), fwd), 1);
}

} // namespace
