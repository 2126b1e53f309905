//===- ElementwiseTest.cpp - Activation and arithmetic kernel tests -------===//
//
// Forward results against the closed-form formulas, backward rules against
// finite differences, broadcasts against an index-by-index reference, and the
// gradient of a broadcast operand against reduceSum of the output gradient.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/Reduction.h"

#include "GradCheck.h"
#include "HalfBits.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

const Activation kAllActivations[] = {
    Activation::Relu,      Activation::Sigmoid,  Activation::Tanh,
    Activation::GeluExact, Activation::GeluTanh, Activation::Silu,
    Activation::Hardswish};

const char *name(Activation a) {
  switch (a) {
  case Activation::Relu:
    return "relu";
  case Activation::Sigmoid:
    return "sigmoid";
  case Activation::Tanh:
    return "tanh";
  case Activation::GeluExact:
    return "gelu";
  case Activation::GeluTanh:
    return "gelu_tanh";
  case Activation::Silu:
    return "silu";
  case Activation::Hardswish:
    return "hardswish";
  }
  return "";
}

double reference(Activation a, double x) {
  switch (a) {
  case Activation::Relu:
    return x > 0 ? x : 0;
  case Activation::Sigmoid:
    return 1 / (1 + std::exp(-x));
  case Activation::Tanh:
    return std::tanh(x);
  case Activation::GeluExact:
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case Activation::GeluTanh:
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  case Activation::Silu:
    return x / (1 + std::exp(-x));
  case Activation::Hardswish:
    return x * std::min(std::max(x + 3, 0.0), 6.0) / 6;
  }
  return 0;
}

bool savesOutput(Activation a) {
  return a == Activation::Sigmoid || a == Activation::Tanh;
}

/// Inputs over [-4, 4), kept away from relu's kink at 0 and hardswish's at
/// -3 and 3.
std::vector<double> activationInputs(size_t n, uint32_t seed) {
  std::vector<double> x = randomVector(n, seed, -4, 4);
  for (double &v : x)
    if (std::fabs(v) < 1e-3 || std::fabs(std::fabs(v) - 3) < 1e-3)
      v = 0.5;
  return x;
}

std::vector<float> toFloat(const std::vector<double> &v) {
  return std::vector<float>(v.begin(), v.end());
}

std::vector<int64_t> contiguous(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size());
  int64_t k = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = k;
    k *= shape[d];
  }
  return s;
}

/// Strides of `shape` (same rank as the output) broadcast over the output:
/// contiguous, with 0 where the size is 1.
std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s = contiguous(shape);
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] == 1)
      s[d] = 0;
  return s;
}

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

double apply(BinaryOp op, double a, double b) {
  switch (op) {
  case BinaryOp::Add:
    return a + b;
  case BinaryOp::Sub:
    return a - b;
  case BinaryOp::Mul:
    return a * b;
  case BinaryOp::Div:
    return a / b;
  }
  return 0;
}

/// out[i] = a[offset_a(i)] op b[offset_b(i)], one multi-index at a time.
std::vector<double> naiveBroadcast(BinaryOp op,
                                   const std::vector<int64_t> &shape,
                                   const std::vector<double> &a,
                                   const std::vector<int64_t> &as,
                                   const std::vector<double> &b,
                                   const std::vector<int64_t> &bs) {
  int64_t n = numel(shape);
  std::vector<double> out(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, ao = 0, bo = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      int64_t k = rest % shape[d];
      rest /= shape[d];
      ao += k * as[d];
      bo += k * bs[d];
    }
    out[i] = apply(op, a[ao], b[bo]);
  }
  return out;
}

const BinaryOp kAllOps[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul,
                            BinaryOp::Div};

/// Operands away from 0 so Div is well conditioned.
std::vector<double> operand(int64_t n, uint32_t seed) {
  std::vector<double> v = randomVector(n, seed, 0.5, 2);
  for (size_t i = 0; i < v.size(); i += 2)
    v[i] = -v[i];
  return v;
}

TEST(Activation, KnownValues) {
  // torch.nn.functional.gelu(torch.tensor([1.0, -0.5]), approximate=...).
  double x[] = {1.0, -0.5}, y[2];
  activationForward<double>(Activation::GeluExact, 2, x, y);
  EXPECT_NEAR(y[0], 0.8413447460685429, 1e-15);
  EXPECT_NEAR(y[1], -0.15426876936299344, 1e-15);
  activationForward<double>(Activation::GeluTanh, 2, x, y);
  EXPECT_NEAR(y[0], 0.8411919906082768, 1e-15);
  EXPECT_NEAR(y[1], -0.15428599017485606, 1e-15);
}

// torch.nn.functional.silu and hardswish (PyTorch 2.15, float64) and their
// gradients for dy = 1: hardswish is flat up to -3 and the identity from 3
// on, both ends included.
template <typename T> void checkSiluAndHardswishKnownValues() {
  const T x[] = {-4, -3, -1, 0.5, 3, 4};
  const double silu[] = {-0.07194483984836623, -0.14227761953270035,
                         -0.2689414213699951,  0.3112296656009273,
                         2.8577223804672998,   3.928055160151634};
  const double siluGrad[] = {-0.05266461489107291, -0.08810410601516962,
                             0.07232948812851325,  0.7399611873026519,
                             1.0881041060151693,   1.0526646148910728};
  const double hardswish[] = {0, 0, -1.0 / 3, 0.2916666666666667, 3, 4};
  const double hardswishGrad[] = {0, 0, 1.0 / 6, 2.0 / 3, 1, 1};
  const double tol = sizeof(T) == 4 ? 1e-6 : 1e-15;
  T y[6], dx[6];
  const T dy[] = {1, 1, 1, 1, 1, 1};
  activationForward<T>(Activation::Silu, 6, x, y);
  activationBackward<T>(Activation::Silu, 6, dy, x, dx);
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(double(y[i]), silu[i], tol) << "silu x=" << double(x[i]);
    EXPECT_NEAR(double(dx[i]), siluGrad[i], tol) << "silu' x=" << double(x[i]);
  }
  activationForward<T>(Activation::Hardswish, 6, x, y);
  activationBackward<T>(Activation::Hardswish, 6, dy, x, dx);
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(double(y[i]), hardswish[i], tol)
        << "hardswish x=" << double(x[i]);
    EXPECT_NEAR(double(dx[i]), hardswishGrad[i], tol)
        << "hardswish' x=" << double(x[i]);
  }
  // NaN propagates through both and their gradients; silu(-inf) is NaN
  // (-inf / inf) as in PyTorch, and so is its gradient.
  const T inf = std::numeric_limits<T>::infinity();
  const T odd[] = {T(NAN), -inf, inf}, ones[] = {1, 1, 1};
  T oy[3], odx[3];
  activationForward<T>(Activation::Silu, 3, odd, oy);
  activationBackward<T>(Activation::Silu, 3, ones, odd, odx);
  EXPECT_TRUE(std::isnan(oy[0]) && std::isnan(oy[1]) && oy[2] == inf);
  EXPECT_TRUE(std::isnan(odx[0]) && std::isnan(odx[1]));
  activationForward<T>(Activation::Hardswish, 3, odd, oy);
  activationBackward<T>(Activation::Hardswish, 3, ones, odd, odx);
  EXPECT_TRUE(std::isnan(oy[0]) && std::isnan(oy[1]) && oy[2] == inf);
  EXPECT_TRUE(std::isnan(odx[0]));
  EXPECT_EQ(odx[1], T(0));
  EXPECT_EQ(odx[2], T(1));
}

TEST(Activation, SiluAndHardswishMatchPyTorch) {
  checkSiluAndHardswishKnownValues<float>();
  checkSiluAndHardswishKnownValues<double>();
}

// torch.clamp, F.hardtanh, F.relu6 and F.leaky_relu (PyTorch 2.15): NaN
// stays NaN forward; the clamp gradient is dy strictly inside the bounds
// and 0 on them and for NaN; min > max clamps everything to max.
template <typename T> void checkClampAndLeakyRelu() {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T x[] = {nan, -1, 1, 0, 6, -2, 3};
  const T dy[] = {2, 2, 2, 2, 2, 2, 2};
  T y[7], dx[7];
  auto expectSame = [](const T *got, std::vector<double> want,
                       const char *what) {
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i]))
        EXPECT_TRUE(std::isnan(got[i])) << what << " element " << i;
      else
        EXPECT_EQ(double(got[i]), double(T(want[i])))
            << what << " element " << i;
    }
  };
  clampForward<T>(7, true, -1, true, 1, x, y);
  clampBackward<T>(7, true, -1, true, 1, dy, x, dx);
  expectSame(y, {NAN, -1, 1, 0, 1, -1, 1}, "hardtanh");
  expectSame(dx, {0, 0, 0, 2, 0, 0, 0}, "hardtanh'");
  clampForward<T>(7, true, 0, true, 6, x, y);
  clampBackward<T>(7, true, 0, true, 6, dy, x, dx);
  expectSame(y, {NAN, 0, 1, 0, 6, 0, 3}, "relu6");
  expectSame(dx, {0, 0, 2, 0, 0, 0, 2}, "relu6'");
  clampForward<T>(7, true, 0, false, 0, x, y);
  clampBackward<T>(7, true, 0, false, 0, dy, x, dx);
  expectSame(y, {NAN, 0, 1, 0, 6, 0, 3}, "clamp(min=0)");
  expectSame(dx, {0, 0, 2, 0, 2, 0, 2}, "clamp(min=0)'");
  clampForward<T>(7, false, 0, true, 1, x, y);
  clampBackward<T>(7, false, 0, true, 1, dy, x, dx);
  expectSame(y, {NAN, -1, 1, 0, 1, -2, 1}, "clamp(max=1)");
  expectSame(dx, {0, 2, 0, 2, 0, 2, 0}, "clamp(max=1)'");
  clampForward<T>(7, true, 1, true, -1, x, y);
  clampBackward<T>(7, true, 1, true, -1, dy, x, dx);
  expectSame(y, {NAN, -1, -1, -1, -1, -1, -1}, "clamp(1, -1)");
  expectSame(dx, {0, 0, 0, 0, 0, 0, 0}, "clamp(1, -1)'");
  leakyReluForward<T>(7, 0.1, x, y);
  leakyReluBackward<T>(7, 0.1, dy, x, dx);
  expectSame(y,
             {NAN, double(T(-1) * T(0.1)), 1, 0, 6, double(T(-2) * T(0.1)), 3},
             "leaky_relu");
  const double slope = double(T(2) * T(0.1));
  expectSame(dx, {slope, slope, 2, slope, 2, slope, 2}, "leaky_relu'");
  // In place, as the plan may write them.
  T inPlace[7];
  std::copy(x, x + 7, inPlace);
  clampForward<T>(7, true, 0, true, 6, inPlace, inPlace);
  clampForward<T>(7, true, 0, true, 6, x, y);
  for (int i = 1; i < 7; ++i)
    EXPECT_EQ(inPlace[i], y[i]);
}

TEST(Activation, ClampHardtanhRelu6AndLeakyReluMatchPyTorch) {
  checkClampAndLeakyRelu<float>();
  checkClampAndLeakyRelu<double>();
}

TEST(Activation, ForwardMatchesFormulas) {
  std::vector<double> x = activationInputs(1000, 1);
  std::vector<float> xf = toFloat(x);
  for (Activation a : kAllActivations) {
    std::vector<double> y(x.size());
    std::vector<float> yf(x.size());
    activationForward<double>(a, int64_t(x.size()), x.data(), y.data());
    activationForward<float>(a, int64_t(x.size()), xf.data(), yf.data());
    for (size_t i = 0; i < x.size(); ++i) {
      double want = reference(a, x[i]);
      EXPECT_NEAR(y[i], want, 1e-14 * std::max(1.0, std::fabs(want)))
          << name(a) << " x=" << x[i];
      double wantF = reference(a, double(xf[i]));
      EXPECT_NEAR(yf[i], wantF, 1e-6 * std::max(1e-3, std::fabs(wantF)))
          << name(a) << " float x=" << xf[i];
    }
  }
}

TEST(Activation, ReluPropagatesNaNAndSigmoidSaturates) {
  float x[] = {NAN, -1e30f, 1e30f, -200.0f};
  float y[4];
  activationForward<float>(Activation::Relu, 1, x, y);
  EXPECT_TRUE(std::isnan(y[0]));
  activationForward<float>(Activation::Sigmoid, 4, x, y);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], 0.0f);
}

// PyTorch's gelu(-inf) is NaN (0.5 x (1 + tanh(u)) = -inf * 0), and so are
// both gradients at +-inf; the float path (FastMath.h) and double agree, so a
// GPU step (double math) and a CPU step see the same NaN.
template <typename T> void checkGeluAtInfinity() {
  const T inf = std::numeric_limits<T>::infinity();
  const T x[] = {-inf, inf, T(-30), T(-11)}, dy[] = {1, 1, 1, 1};
  for (Activation a : {Activation::GeluExact, Activation::GeluTanh}) {
    T y[4], dx[4];
    activationForward<T>(a, 4, x, y);
    activationBackward<T>(a, 4, dy, x, dx);
    EXPECT_TRUE(std::isnan(y[0])) << name(a) << " " << y[0];
    EXPECT_EQ(y[1], inf) << name(a);
    EXPECT_EQ(y[2], T(0)) << name(a);
    EXPECT_TRUE(std::signbit(y[2])) << name(a);
    EXPECT_LE(std::fabs(y[3]), T(1e-25)) << name(a);
    EXPECT_TRUE(std::isnan(dx[0])) << name(a) << " " << dx[0];
    EXPECT_TRUE(std::isnan(dx[1])) << name(a) << " " << dx[1];
    EXPECT_LE(std::fabs(dx[2]), T(1e-30)) << name(a);
    EXPECT_LE(std::fabs(dx[3]), T(1e-20)) << name(a);
  }
}

TEST(Activation, GeluAtInfinityIsNaNAsInPyTorch) {
  checkGeluAtInfinity<float>();
  checkGeluAtInfinity<double>();
}

TEST(Activation, BackwardMatchesFiniteDifferences) {
  const int64_t n = 64;
  std::vector<double> x = activationInputs(n, 2);
  std::vector<double> probe = randomVector(n, 3);
  for (Activation a : kAllActivations) {
    auto forward = [&](const std::vector<double> &in) {
      std::vector<double> y(n);
      activationForward<double>(a, n, in.data(), y.data());
      return y;
    };
    std::vector<double> y = forward(x);
    std::vector<double> dx(n);
    activationBackward<double>(a, n, probe.data(),
                               savesOutput(a) ? y.data() : x.data(), dx.data());
    checkGradient(
        name(a), x,
        [&](const std::vector<double> &in) { return dot(forward(in), probe); },
        dx);
  }
}

TEST(Activation, FloatBackwardMatchesDouble) {
  const int64_t n = 500;
  std::vector<double> x = activationInputs(n, 4), dy = randomVector(n, 5);
  std::vector<float> xf = toFloat(x), dyf = toFloat(dy);
  for (Activation a : kAllActivations) {
    std::vector<double> y(n), dx(n);
    std::vector<float> yf(n), dxf(n);
    activationForward<double>(a, n, x.data(), y.data());
    activationForward<float>(a, n, xf.data(), yf.data());
    // The reference is evaluated at the float inputs the float path sees.
    std::vector<double> xr(xf.begin(), xf.end()), yr(yf.begin(), yf.end()),
        dyr(dyf.begin(), dyf.end());
    activationBackward<double>(
        a, n, dyr.data(), savesOutput(a) ? yr.data() : xr.data(), dx.data());
    activationBackward<float>(
        a, n, dyf.data(), savesOutput(a) ? yf.data() : xf.data(), dxf.data());
    // The float path (FastMath.h) rounds each term of f'(x) = cdf + x pdf to
    // a few float ulps; where the terms cancel (GELU's slope crosses 0 near
    // x = -0.75) that is an absolute error of a few ulps of dy, not of dx.
    for (int64_t i = 0; i < n; ++i)
      EXPECT_NEAR(dxf[i], dx[i],
                  1e-6 * std::max(1e-3, std::fabs(dx[i])) +
                      1e-6 * std::fabs(dy[i]))
          << name(a) << " at " << i;
  }
}

TEST(Activation, InPlace) {
  std::vector<double> x = activationInputs(100, 6), dy = randomVector(100, 7);
  for (Activation a : kAllActivations) {
    std::vector<double> y(x.size()), inPlace = x;
    activationForward<double>(a, 100, x.data(), y.data());
    activationForward<double>(a, 100, inPlace.data(), inPlace.data());
    EXPECT_EQ(inPlace, y) << name(a);
    std::vector<double> dx(x.size()), dyInPlace = dy;
    const double *saved = savesOutput(a) ? y.data() : x.data();
    activationBackward<double>(a, 100, dy.data(), saved, dx.data());
    activationBackward<double>(a, 100, dyInPlace.data(), saved,
                               dyInPlace.data());
    EXPECT_EQ(dyInPlace, dx) << name(a);
  }
}

TEST(Binary, SameShape) {
  const int64_t n = 37;
  std::vector<double> a = operand(n, 8), b = operand(n, 9);
  std::vector<float> af = toFloat(a), bf = toFloat(b);
  for (BinaryOp op : kAllOps) {
    std::vector<double> out(n);
    std::vector<float> outF(n);
    binarySameShape(op, n, a.data(), b.data(), out.data());
    binarySameShape(op, n, af.data(), bf.data(), outF.data());
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_EQ(out[i], apply(op, a[i], b[i]));
      EXPECT_EQ(outF[i], float(apply(op, af[i], bf[i])));
    }
    // In place over the first operand.
    std::vector<double> inPlace = a;
    binarySameShape(op, n, inPlace.data(), b.data(), inPlace.data());
    EXPECT_EQ(inPlace, out);
  }
}

struct BroadcastCase {
  std::vector<int64_t> out, a, b;
};

const BroadcastCase kBroadcastCases[] = {
    {{4, 5}, {4, 5}, {1, 5}},              // bias over rows
    {{4, 5}, {4, 1}, {4, 5}},              // per-row scalar on the left
    {{2, 3, 4, 5}, {2, 3, 4, 5}, {1, 3, 1, 1}}, // per-channel (NCHW)
    {{2, 3, 4, 5}, {2, 1, 4, 1}, {1, 3, 1, 5}}, // both sides broadcast
    {{3, 4}, {1, 1}, {3, 4}},              // scalar operand
    {{3, 1, 4}, {3, 1, 4}, {1, 1, 4}},     // size-1 output dimension
    {{2, 2, 2, 2, 2, 2, 2, 3}, {2, 1, 2, 1, 2, 1, 2, 1},
     {1, 2, 1, 2, 1, 2, 1, 3}},            // rank 8, alternating
    {{1}, {1}, {1}},
};

TEST(Binary, BroadcastMatchesNaive) {
  uint32_t seed = 10;
  for (const BroadcastCase &c : kBroadcastCases) {
    std::vector<double> a = operand(numel(c.a), seed++),
                        b = operand(numel(c.b), seed++);
    std::vector<int64_t> as = broadcastStrides(c.a), bs = broadcastStrides(c.b);
    for (BinaryOp op : kAllOps) {
      std::vector<double> want = naiveBroadcast(op, c.out, a, as, b, bs);
      std::vector<double> out(want.size());
      int rank = int(c.out.size());
      binaryBroadcast<double>(op, rank, c.out.data(), a.data(), as.data(),
                              b.data(), bs.data(), out.data());
      EXPECT_EQ(out, want) << "rank " << rank;
    }
  }
}

TEST(Binary, BroadcastFloatMatchesNaive) {
  BroadcastCase c = {{2, 3, 4, 5}, {2, 1, 4, 1}, {1, 3, 1, 5}};
  std::vector<double> a = operand(numel(c.a), 30), b = operand(numel(c.b), 31);
  std::vector<float> af = toFloat(a), bf = toFloat(b);
  std::vector<int64_t> as = broadcastStrides(c.a), bs = broadcastStrides(c.b);
  for (BinaryOp op : kAllOps) {
    std::vector<double> want = naiveBroadcast(
        op, c.out, std::vector<double>(af.begin(), af.end()), as,
        std::vector<double>(bf.begin(), bf.end()), bs);
    std::vector<float> out(want.size());
    binaryBroadcast<float>(op, 4, c.out.data(), af.data(), as.data(), bf.data(),
                           bs.data(), out.data());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(out[i], float(want[i]));
  }
}

TEST(Binary, BroadcastThroughNonContiguousStrides) {
  // a is the transpose of a stored [4, 3]; b is a [3, 4] window of a [3, 6]
  // buffer.
  std::vector<int64_t> shape = {3, 4}, as = {1, 3}, bs = {6, 1};
  std::vector<double> a = operand(12, 40), b = operand(18, 41);
  for (BinaryOp op : kAllOps) {
    std::vector<double> want = naiveBroadcast(op, shape, a, as, b, bs);
    std::vector<double> out(12);
    binaryBroadcast<double>(op, 2, shape.data(), a.data(), as.data(), b.data(),
                            bs.data(), out.data());
    EXPECT_EQ(out, want);
    // And with the strided operand on the right.
    want = naiveBroadcast(op, shape, b, bs, a, as);
    binaryBroadcast<double>(op, 2, shape.data(), b.data(), bs.data(), a.data(),
                            as.data(), out.data());
    EXPECT_EQ(out, want);
  }
}

TEST(Binary, BroadcastRankZeroEmptyAndInPlace) {
  double a = 3, b = 4, out = 0;
  int64_t unused = 0;
  binaryBroadcast<double>(BinaryOp::Sub, 0, &unused, &a, &unused, &b, &unused,
                          &out);
  EXPECT_EQ(out, -1);

  std::vector<int64_t> empty = {3, 0}, strides = {0, 1};
  double untouched = 7;
  binaryBroadcast<double>(BinaryOp::Add, 2, empty.data(), &a, strides.data(),
                          &b, strides.data(), &untouched);
  EXPECT_EQ(untouched, 7);

  std::vector<int64_t> shape = {4, 5}, full = contiguous(shape),
                       row = {0, 1};
  std::vector<double> x = operand(20, 42), bias = operand(5, 43);
  std::vector<double> want = naiveBroadcast(BinaryOp::Mul, shape, x, full,
                                            bias, row);
  binaryBroadcast<double>(BinaryOp::Mul, 2, shape.data(), x.data(), full.data(),
                          bias.data(), row.data(), x.data());
  EXPECT_EQ(x, want);
}

/// `v` (strides `s`) expanded to a contiguous tensor of `shape`.
std::vector<double> expand(const std::vector<int64_t> &shape,
                           const std::vector<double> &v,
                           const std::vector<int64_t> &s) {
  return naiveBroadcast(BinaryOp::Add, shape, v, s,
                        std::vector<double>{0.0}, std::vector<int64_t>(
                                                      shape.size(), 0));
}

TEST(Binary, BroadcastGradientIsReduceSumOfOutputGradient) {
  std::vector<int64_t> out = {2, 3, 4}, aShape = {2, 1, 4}, bShape = {1, 3, 1};
  std::vector<int64_t> as = broadcastStrides(aShape),
                       bs = broadcastStrides(bShape);
  std::vector<double> a = operand(numel(aShape), 50),
                      b = operand(numel(bShape), 51),
                      probe = randomVector(numel(out), 52);
  bool aReduced[] = {false, true, false}, bReduced[] = {true, false, true};
  for (BinaryOp op : kAllOps) {
    auto loss = [&](const std::vector<double> &av,
                    const std::vector<double> &bv) {
      std::vector<double> y(probe.size());
      binaryBroadcast<double>(op, 3, out.data(), av.data(), as.data(),
                              bv.data(), bs.data(), y.data());
      return dot(y, probe);
    };
    std::vector<double> ea = expand(out, a, as), eb = expand(out, b, bs);
    std::vector<double> ga(probe.size()), gb(probe.size());
    for (size_t i = 0; i < probe.size(); ++i) {
      double pa = 1, pb = 1; // d(a op b)/da, d(a op b)/db
      switch (op) {
      case BinaryOp::Add:
        break;
      case BinaryOp::Sub:
        pb = -1;
        break;
      case BinaryOp::Mul:
        pa = eb[i];
        pb = ea[i];
        break;
      case BinaryOp::Div:
        pa = 1 / eb[i];
        pb = -ea[i] / (eb[i] * eb[i]);
        break;
      }
      ga[i] = probe[i] * pa;
      gb[i] = probe[i] * pb;
    }
    std::vector<double> da(a.size()), db(b.size());
    reduceSum<double>(3, out.data(), aReduced, 1.0, ga.data(), da.data());
    reduceSum<double>(3, out.data(), bReduced, 1.0, gb.data(), db.data());
    checkGradient(
        "grad a", a,
        [&](const std::vector<double> &av) { return loss(av, b); }, da);
    checkGradient(
        "grad b", b,
        [&](const std::vector<double> &bv) { return loss(a, bv); }, db);
  }
}

TEST(Arithmetic, ScaleAccumulateFill) {
  std::vector<float> x = {1, -2, 3.5f}, y(3);
  scale(3, 2.0f, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{2, -4, 7}));
  scale(3, -1.0f, y.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{-2, 4, -7}));
  accumulate(3, x.data(), y.data());
  EXPECT_EQ(y, (std::vector<float>{-1, 2, -3.5f}));
  std::vector<double> z(5, 1);
  fill(4, 0.25, z.data());
  EXPECT_EQ(z, (std::vector<double>{0.25, 0.25, 0.25, 0.25, 1}));
}

/// Every activation and its gradient on F16 or Bf16 storage has the bits of
/// the float kernel on widened copies followed by a cast, NaN's sign aside
/// (NaN, infinities, zeros of both signs and subnormals among the inputs),
/// in place too.
template <typename T> void checkHalfActivations(CastType type) {
  const int64_t n = 1001; // not a multiple of a vector
  const std::vector<uint16_t> x = randomHalves<T>(n, 11),
                              dy = randomHalves<T>(n, 12);
  const std::vector<float> x32 = widen(x, type), dy32 = widen(dy, type);
  for (Activation a : kAllActivations) {
    SCOPED_TRACE(name(a));
    std::vector<float> y32(n), dx32(n);
    activationForward<float>(a, n, x32.data(), y32.data());
    std::vector<uint16_t> y(n, 0x1234); // overwritten
    activationForward<T>(a, n, x.data(), y.data());
    ASSERT_EQ(nanSignsCleared(y, type),
              nanSignsCleared(narrow(y32, type), type))
        << "forward";
    // The gradient reads the forward's rounded result where it saves it.
    const std::vector<uint16_t> &saved = savesOutput(a) ? y : x;
    activationBackward<float>(a, n, dy32.data(), widen(saved, type).data(),
                              dx32.data());
    std::vector<uint16_t> dx = dy;
    activationBackward<T>(a, n, dx.data(), saved.data(), dx.data());
    ASSERT_EQ(nanSignsCleared(dx, type),
              nanSignsCleared(narrow(dx32, type), type))
        << "backward, in place over dy";
  }
}

TEST(ActivationHalfStorage, SameBitsAsFloatBetweenCastsF16) {
  checkHalfActivations<F16>(CastType::F16);
}

TEST(ActivationHalfStorage, SameBitsAsFloatBetweenCastsBf16) {
  checkHalfActivations<Bf16>(CastType::BF16);
}

/// binaryBroadcast on half storage: the float kernel on widened copies,
/// rounded as a cast rounds (a residual add, a bias, a scalar factor), with
/// NaN, infinities, zeros of both signs and subnormals among the operands.
template <typename T> void checkHalfBinary(CastType type) {
  const BroadcastCase cases[] = {
      {{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}}, // same shapes
      {{2, 3, 4, 5}, {2, 1, 4, 1}, {1, 3, 1, 5}}, // both broadcast
      {{64, 7}, {64, 7}, {1, 1}},                 // by one element
  };
  uint32_t seed = 70;
  for (const BroadcastCase &c : cases) {
    std::vector<uint16_t> a = randomHalves<T>(size_t(numel(c.a)), seed++),
                          b = randomHalves<T>(size_t(numel(c.b)), seed++, true,
                                              1.0f);
    std::vector<float> wa = widen(a, type), wb = widen(b, type);
    std::vector<int64_t> as = broadcastStrides(c.a), bs = broadcastStrides(c.b);
    const int rank = int(c.out.size());
    for (BinaryOp op : kAllOps) {
      std::vector<float> want(size_t(numel(c.out)));
      binaryBroadcast<float>(op, rank, c.out.data(), wa.data(), as.data(),
                             wb.data(), bs.data(), want.data());
      std::vector<uint16_t> out(want.size());
      binaryBroadcast<T>(op, rank, c.out.data(), a.data(), as.data(), b.data(),
                         bs.data(), out.data());
      EXPECT_EQ(nanSignsCleared(out, type),
                nanSignsCleared(narrow(want, type), type))
          << "op " << int(op) << " rank " << rank;
    }
  }
}

TEST(BinaryHalfStorage, SameBitsAsFloatBetweenCastsF16) {
  checkHalfBinary<F16>(CastType::F16);
}

TEST(BinaryHalfStorage, SameBitsAsFloatBetweenCastsBf16) {
  checkHalfBinary<Bf16>(CastType::BF16);
}

} // namespace
