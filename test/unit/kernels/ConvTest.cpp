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

#include "GradCheck.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

constexpr int64_t kGuard = 64;

/// A shape with ho/wo from PyTorch's formula.
Conv2dShape shape(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o,
                  int64_t kh, int64_t kw, int64_t sh = 1, int64_t sw = 1,
                  int64_t ph = 0, int64_t pw = 0, int64_t dh = 1,
                  int64_t dw = 1, int64_t groups = 1) {
  Conv2dShape s{n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups, 0, 0};
  s.ho = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1;
  s.wo = (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
  return s;
}

std::string describe(const Conv2dShape &s) {
  return "n" + std::to_string(s.n) + " c" + std::to_string(s.c) + " " +
         std::to_string(s.h) + "x" + std::to_string(s.w) + " o" +
         std::to_string(s.o) + " k" + std::to_string(s.kh) + "x" +
         std::to_string(s.kw) + " s" + std::to_string(s.sh) + "," +
         std::to_string(s.sw) + " p" + std::to_string(s.ph) + "," +
         std::to_string(s.pw) + " d" + std::to_string(s.dh) + "," +
         std::to_string(s.dw) + " g" + std::to_string(s.groups);
}

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

int64_t xSize(const Conv2dShape &s) { return s.n * s.c * s.h * s.w; }
int64_t wSize(const Conv2dShape &s) {
  return s.o * (s.c / s.groups) * s.kh * s.kw;
}
int64_t ySize(const Conv2dShape &s) { return s.n * s.o * s.ho * s.wo; }

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
  explicit Workspace(const Conv2dShape &s) : size(conv2dWorkspaceElements(s)) {
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
  Workspace<T> ws(s);
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
  Workspace<double> ws(s);
  conv2dForward<double>(s, x.data(), w.data(), bias.data(), y.data(), ws.get());
  return dot(y, probe);
}

TEST(Conv2d, BackwardMatchesFiniteDifferences) {
  for (const Conv2dShape &s : testShapes()) {
    SCOPED_TRACE(describe(s));
    auto x = randomVector(xSize(s), 21), w = randomVector(wSize(s), 22);
    auto bias = randomVector(s.o, 23), probe = randomVector(ySize(s), 24);

    std::vector<double> dx(xSize(s), nan<double>());
    Workspace<double> ws(s);
    conv2dBackwardInput<double>(s, probe.data(), w.data(), dx.data(), ws.get());
    EXPECT_TRUE(ws.guardIntact());
    checkGradient(
        "dx", x,
        [&](const std::vector<double> &v) {
          return loss(s, v, w, bias, probe);
        },
        dx);

    std::vector<double> dw(wSize(s), nan<double>()), db(s.o, nan<double>());
    conv2dBackwardWeight<double>(s, probe.data(), x.data(), dw.data(),
                                 db.data(), ws.get());
    EXPECT_TRUE(ws.guardIntact());
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
                                 ws.get());
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
    Workspace<double> wsd(s);
    conv2dBackwardInput<double>(s, dy.data(), w.data(), dx.data(), wsd.get());
    conv2dBackwardWeight<double>(s, dy.data(), x.data(), dw.data(), db.data(),
                                 wsd.get());

    std::vector<float> fx = cast<float>(x), fw = cast<float>(w),
                       fdy = cast<float>(dy);
    std::vector<float> fdx(xSize(s), nan<float>()), fdw(wSize(s), nan<float>()),
        fdb(s.o, nan<float>());
    Workspace<float> wsf(s);
    conv2dBackwardInput<float>(s, fdy.data(), fw.data(), fdx.data(), wsf.get());
    conv2dBackwardWeight<float>(s, fdy.data(), fx.data(), fdw.data(),
                                fdb.data(), wsf.get());
    EXPECT_TRUE(wsf.guardIntact());
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

TEST(Conv2d, WorkspaceIsOneColumnMatrix) {
  Conv2dShape s = shape(8, 6, 10, 12, 4, 3, 5, 2, 1, 1, 2, 1, 1, 2);
  EXPECT_EQ(conv2dWorkspaceElements(s), 3 * 3 * 5 * s.ho * s.wo);
}

} // namespace
