//===- ScalarOps.h - Per-element math of the CPU and GPU --------*- C++ -*-===//
//
// The body of every element-wise kernel, written once: the CPU kernels of
// runtime/kernels loop over these, generated fused loops call them, and the
// CUDA kernels of runtime/cuda run them per thread. The optimizers update
// each element in double and round once per stored tensor (see
// Optimizer.h); dropout draws its mask from Philox.h.
//
// Transcendental activations of float on the CPU use FastMath.h's float
// exp, tanh and normal CDF (errors measured in FastMathTest), which the
// compiler vectorises: libm in double, one call per element, took a fifth
// of the transformer's step. Every other case (double, and the GPU) is
// evaluated in double with libm and rounded once to T.
//
// The CPU and the GPU agree to rounding rather than bit for bit: the GPU
// takes the double path, its exp/tanh/erf may differ from glibc's in the
// last bit, and nvcc contracts a * b + c into a fused multiply-add (its
// default, which Cairn keeps) while the host code is compiled without FMA.
// The GPU tests compare with a relative tolerance. On the CPU, a kernel of
// runtime/kernels and a generated fused loop give the same bits: both are
// compiled for the machine without contraction, and FastMath.h's results do
// not depend on vectorisation.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_SCALAROPS_H
#define CAIRN_RUNTIME_KERNELS_SCALAROPS_H

#include "runtime/kernels/HostDevice.h"

#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/FastMath.h"
#include "runtime/kernels/Philox.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace cairn::kernels::ops {

constexpr double kSqrtHalf = 0.70710678118654752440;    // 1 / sqrt(2)
constexpr double kSqrt2OverPi = 0.79788456080286535588; // sqrt(2 / pi)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)
constexpr double kGeluKappa = 0.044715;

/// True where T's activations take FastMath.h's float path: float, on the
/// host (in CUDA device code __CUDA_ARCH__ is defined).
template <typename T>
constexpr bool kFastFloat =
#ifdef __CUDA_ARCH__
    false;
#else
    std::is_same_v<T, float>;
#endif

//===----------------------------------------------------------------------===//
// Activations: forward(x) and backward(dy, saved), where `saved` is what
// the backward of that activation keeps (Elementwise.h).
//===----------------------------------------------------------------------===//

struct Relu {
  /// A select rather than max(), so NaN propagates as torch.relu does (the
  /// same as the emitted std::max(x, 0)).
  template <typename T> CAIRN_HOST_DEVICE static T forward(T v) {
    return v < T(0) ? T(0) : v;
  }
  /// `saved` may be x or relu's result: either is > 0 exactly when x is.
  template <typename T> CAIRN_HOST_DEVICE static T backward(T dy, T saved) {
    return saved > T(0) ? dy : T(0);
  }
};

struct Sigmoid {
  template <typename T> CAIRN_HOST_DEVICE static T forward(T v) {
    if constexpr (kFastFloat<T>)
      return 1.0f / (1.0f + fastmath::exp(-v));
    else
      return T(1 / (1 + std::exp(-double(v))));
  }
  /// `saved` is the forward output y.
  template <typename T> CAIRN_HOST_DEVICE static T backward(T dy, T y) {
    double yd = y;
    return T(double(dy) * (1 - yd) * yd);
  }
};

struct Tanh {
  template <typename T> CAIRN_HOST_DEVICE static T forward(T v) {
    if constexpr (kFastFloat<T>)
      return fastmath::tanh(v);
    else
      return T(std::tanh(double(v)));
  }
  /// `saved` is the forward output y.
  template <typename T> CAIRN_HOST_DEVICE static T backward(T dy, T y) {
    double yd = y;
    return T(double(dy) * (1 - yd * yd));
  }
};

struct GeluExact {
  template <typename T> CAIRN_HOST_DEVICE static T forward(T v) {
    if constexpr (kFastFloat<T>) {
      return v * fastmath::normalCdf(v);
    } else {
      double d = v;
      return T(0.5 * d * (1 + std::erf(d * kSqrtHalf)));
    }
  }
  /// `saved` is the forward input x.
  template <typename T> CAIRN_HOST_DEVICE static T backward(T dy, T x) {
    if constexpr (kFastFloat<T>) {
      // pdf = exp(-x^2 / 2) / sqrt(2 pi), with x^2 split exactly.
      float pdf = fastmath::detail::gaussTimes(fastmath::detail::absOf(x),
                                               0.5f, float(kInvSqrt2Pi));
      return dy * (fastmath::normalCdf(x) + x * pdf);
    } else {
      double d = x;
      double cdf = 0.5 * (1 + std::erf(d * kSqrtHalf));
      double pdf = kInvSqrt2Pi * std::exp(-0.5 * d * d);
      return T(double(dy) * (cdf + d * pdf));
    }
  }
};

struct GeluTanh {
  /// -2u for GELU's u = sqrt(2/pi) (x + 0.044715 x^3).
  CAIRN_HOST_DEVICE static float minusTwoU(float x) {
    return -2.0f * (float(kSqrt2OverPi) * (x + float(kGeluKappa) * x * x * x));
  }

  template <typename T> CAIRN_HOST_DEVICE static T forward(T v) {
    if constexpr (kFastFloat<T>) {
      // (1 + tanh(u)) / 2 = 1 / (1 + e^{-2u}): no cancellation for x < 0.
      // e^{-2u} overflows to +inf below x of about -10, where the result is
      // -0 as in PyTorch, and x = -inf gives -inf / inf = NaN as PyTorch's
      // 0.5 x (1 + tanh(u)) does.
      return v / (1.0f + fastmath::exp(minusTwoU(v)));
    } else {
      double d = v;
      double inner = kSqrt2OverPi * (d + kGeluKappa * d * d * d);
      return T(0.5 * d * (1 + std::tanh(inner)));
    }
  }
  /// `saved` is the forward input x.
  template <typename T> CAIRN_HOST_DEVICE static T backward(T dy, T x) {
    if constexpr (kFastFloat<T>) {
      // With e = e^{-2u} and s = 1 / (1 + e): (1 + t) / 2 = s and
      // (1 - t^2) / 2 = 2 s (1 - s) = 2 s e / (1 + e). The exponent is
      // capped at 88 so that e * s stays finite. x - x is 0 for a finite x
      // and NaN for x = +-inf, where PyTorch's gradient is NaN (inf * 0).
      float m = minusTwoU(x);
      float e = fastmath::exp(fastmath::detail::select(m > 88.0f, 88.0f, m));
      float s = 1.0f / (1.0f + e);
      float dInner =
          float(kSqrt2OverPi) * (1.0f + 3.0f * float(kGeluKappa) * x * x);
      return dy * ((s + (x - x)) + 2.0f * x * (s * (e * s)) * dInner);
    }
    double d = x;
    double t = std::tanh(kSqrt2OverPi * (d + kGeluKappa * d * d * d));
    double dInner = kSqrt2OverPi * (1 + 3 * kGeluKappa * d * d);
    return T(double(dy) * (0.5 * (1 + t) + 0.5 * d * (1 - t * t) * dInner));
  }
};

/// nn.SiLU: x * sigmoid(x), computed as PyTorch's CPU kernel does,
/// x / (1 + e^{-x}).
struct Silu {
  template <typename T> CAIRN_HOST_DEVICE static T forward(T v) {
    if constexpr (kFastFloat<T>)
      return v / (1.0f + fastmath::exp(-v));
    else
      return T(double(v) / (1 + std::exp(-double(v))));
  }
  /// `saved` is the forward input x: dy s (1 + x (1 - s)), s = sigmoid(x),
  /// PyTorch's silu_backward (NaN at x = -inf, as there).
  template <typename T> CAIRN_HOST_DEVICE static T backward(T dy, T x) {
    if constexpr (kFastFloat<T>) {
      float s = 1.0f / (1.0f + fastmath::exp(-x));
      return dy * s * (1.0f + x * (1.0f - s));
    } else {
      double d = x, s = 1 / (1 + std::exp(-d));
      return T(double(dy) * s * (1 + d * (1 - s)));
    }
  }
};

/// nn.Hardswish: x * relu6(x + 3) / 6, in T, in PyTorch's order of
/// operations (so float gives PyTorch's bits); NaN propagates.
struct Hardswish {
  template <typename T> CAIRN_HOST_DEVICE static T forward(T v) {
    T t = v + T(3);
    t = t < T(0) ? T(0) : t; // selects keep a NaN, as PyTorch's max/min do
    t = t > T(6) ? T(6) : t;
    return v * t / T(6);
  }
  /// `saved` is the forward input x: 0 up to -3, dy from 3 on, dy (x / 3 +
  /// 1/2) between (NaN for NaN), PyTorch 2's hardswish_backward (1.13 took
  /// the slope at -3).
  template <typename T> CAIRN_HOST_DEVICE static T backward(T dy, T x) {
    if (x <= T(-3))
      return T(0);
    if (x >= T(3))
      return dy;
    return dy * (x / T(3) + T(0.5));
  }
};

/// torch.clamp (nn.Hardtanh, nn.ReLU6): bounds in T, as PyTorch converts
/// them to the tensor's type; an absent bound is not compared at all.
template <typename T> struct Clamp {
  bool hasMin, hasMax;
  T min, max;
  CAIRN_HOST_DEVICE Clamp(bool hasMin, double min, bool hasMax, double max)
      : hasMin(hasMin), hasMax(hasMax), min(T(min)), max(T(max)) {}
  /// Selects, so NaN stays NaN; min > max gives max.
  CAIRN_HOST_DEVICE T forward(T v) const {
    if (hasMin && v < min)
      v = min;
    if (hasMax && v > max)
      v = max;
    return v;
  }
  /// `saved` is the forward input x.
  CAIRN_HOST_DEVICE T backward(T dy, T x) const {
    bool inside = (!hasMin || x > min) && (!hasMax || x < max) && x == x;
    return inside ? dy : T(0);
  }
};

/// nn.LeakyReLU, the slope in T as in PyTorch.
template <typename T> struct LeakyRelu {
  T slope;
  CAIRN_HOST_DEVICE explicit LeakyRelu(double slope) : slope(T(slope)) {}
  CAIRN_HOST_DEVICE T forward(T v) const { return v > T(0) ? v : v * slope; }
  /// `saved` is the forward input x.
  CAIRN_HOST_DEVICE T backward(T dy, T x) const {
    return x > T(0) ? dy : dy * slope;
  }
};

/// Calls f with the functor for `kind`, so a loop is compiled per kind
/// instead of switching per element.
template <typename F> void withActivation(Activation kind, F &&f) {
  switch (kind) {
  case Activation::Relu:
    return f(Relu());
  case Activation::Sigmoid:
    return f(Sigmoid());
  case Activation::Tanh:
    return f(Tanh());
  case Activation::GeluExact:
    return f(GeluExact());
  case Activation::GeluTanh:
    return f(GeluTanh());
  case Activation::Silu:
    return f(Silu());
  case Activation::Hardswish:
    return f(Hardswish());
  }
}

//===----------------------------------------------------------------------===//
// Binary arithmetic, in T.
//===----------------------------------------------------------------------===//

struct Add {
  template <typename T> CAIRN_HOST_DEVICE T operator()(T a, T b) const {
    return a + b;
  }
};
struct Sub {
  template <typename T> CAIRN_HOST_DEVICE T operator()(T a, T b) const {
    return a - b;
  }
};
struct Mul {
  template <typename T> CAIRN_HOST_DEVICE T operator()(T a, T b) const {
    return a * b;
  }
};
struct Div {
  template <typename T> CAIRN_HOST_DEVICE T operator()(T a, T b) const {
    return a / b;
  }
};

/// Calls f with the functor for `op` (one loop per operator, as above).
template <typename F> void withBinaryOp(BinaryOp op, F &&f) {
  switch (op) {
  case BinaryOp::Add:
    return f(Add());
  case BinaryOp::Sub:
    return f(Sub());
  case BinaryOp::Mul:
    return f(Mul());
  case BinaryOp::Div:
    return f(Div());
  }
}

//===----------------------------------------------------------------------===//
// Optimizers: element i of one tensor, in place (Optimizer.h has the
// formulas). Scalars are doubles, as PyTorch's Python floats are.
//===----------------------------------------------------------------------===//

struct SgdHyper {
  double lr, momentum, dampening, weightDecay;
  bool nesterov;
};

/// momentumBuffer is read and written only when momentum != 0 (it may be
/// null otherwise); on the first step it starts from the gradient.
template <typename T>
CAIRN_HOST_DEVICE inline void sgdElement(const SgdHyper &h, bool firstStep,
                                         T *param, const T *grad,
                                         T *momentumBuffer, int64_t i) {
  double p = param[i];
  double g = grad[i];
  // Skipped at 0 as PyTorch does: 0 * inf would turn an infinite p to NaN.
  if (h.weightDecay != 0)
    g += h.weightDecay * p;
  if (h.momentum != 0) {
    double buf = firstStep ? g
                           : h.momentum * double(momentumBuffer[i]) +
                                 (1 - h.dampening) * g;
    momentumBuffer[i] = T(buf);
    g = h.nesterov ? g + h.momentum * buf : buf;
  }
  param[i] = T(p - h.lr * g);
}

/// clip_grad_norm_'s norm, in three pieces: each element's term, terms
/// combined (partials too), and the coefficient from the combination of all.
/// The infinity norm's terms are magnitudes combined by a max that keeps NaN.
CAIRN_HOST_DEVICE inline double gradNormTerm(double g, double normType) {
  double a = g < 0 ? -g : g;
  if (normType == 2)
    return g * g;
  if (normType == 1 || std::isinf(normType))
    return a;
  return std::pow(a, normType);
}

CAIRN_HOST_DEVICE inline double combineGradNormTerms(double a, double b, double normType) {
  if (!std::isinf(normType))
    return a + b;
  return (b > a || b != b) ? b : a;
}

/// min(maxNorm / (norm + 1e-6), 1) as PyTorch computes it in T: the norm
/// rounded to T, then (1 / (norm + 1e-6)) * max_norm; NaN stays NaN.
template <typename T>
CAIRN_HOST_DEVICE inline T clipCoefficientOf(double combined, double normType, double maxNorm) {
  double norm = std::isinf(normType) || normType == 1 ? combined
                : normType == 2                     ? std::sqrt(combined)
                                                    : std::pow(combined, 1 / normType);
  T denominator = T(norm) + T(1e-6);
  T coefficient = (T(1) / denominator) * T(maxNorm);
  return coefficient > T(1) ? T(1) : coefficient;
}

struct AdamHyper {
  double lr, beta1, beta2, eps, weightDecay;
  /// AdamW: the decay scales the param (p *= 1 - lr * wd) instead of being
  /// added to the gradient.
  bool decoupledWeightDecay;
};

/// What Adam derives from the 1-based step number, once per step.
struct AdamBias {
  double stepSize;            // lr / (1 - beta1^t)
  double biasCorrection2Sqrt; // sqrt(1 - beta2^t)
};

CAIRN_HOST_DEVICE inline AdamBias adamBias(const AdamHyper &h, int64_t step) {
  double t = double(step);
  double biasCorrection1 = 1 - std::pow(h.beta1, t);
  double biasCorrection2Sqrt = std::sqrt(1 - std::pow(h.beta2, t));
  return {h.lr / biasCorrection1, biasCorrection2Sqrt};
}

template <typename T>
CAIRN_HOST_DEVICE inline void
adamElement(const AdamHyper &h, const AdamBias &bias, T *param, const T *grad,
            T *expAvg, T *expAvgSq, int64_t i) {
  double p = param[i];
  double g = grad[i];
  if (h.weightDecay != 0) {
    if (h.decoupledWeightDecay)
      p *= 1 - h.lr * h.weightDecay;
    else
      g += h.weightDecay * p;
  }
  double m = h.beta1 * double(expAvg[i]) + (1 - h.beta1) * g;
  double v = h.beta2 * double(expAvgSq[i]) + (1 - h.beta2) * g * g;
  expAvg[i] = T(m);
  expAvgSq[i] = T(v);
  double denom = std::sqrt(v) / bias.biasCorrection2Sqrt + h.eps;
  param[i] = T(p - bias.stepSize * m / denom);
}

//===----------------------------------------------------------------------===//
// Dropout (the layout is specified in Dropout.h).
//===----------------------------------------------------------------------===//

CAIRN_HOST_DEVICE inline PhiloxKey dropoutKey(uint64_t seed, uint64_t stream) {
  return {{uint32_t(seed), uint32_t(seed >> 32) ^ uint32_t(stream)}};
}

/// The words of elements 4 * group .. 4 * group + 3 at optimizer step `step`.
CAIRN_HOST_DEVICE inline PhiloxWords dropoutWords(PhiloxKey key, uint64_t step,
                                                  uint64_t group) {
  return philox({{uint32_t(group), uint32_t(group >> 32), uint32_t(step),
                  uint32_t(step >> 32)}},
                key);
}

/// The factor kept elements are multiplied by; infinite at p == 1.
template <typename T> CAIRN_HOST_DEVICE inline T dropoutScale(double p) {
  return T(1 / (1 - p));
}

/// An element's output given its Philox word: kept when the top 24 bits as
/// a uniform number in [0, 1) are >= p.
template <typename T>
CAIRN_HOST_DEVICE inline T dropoutElement(uint32_t word, double p, T x,
                                          T keepScale) {
  double u = double(word >> 8) * 0x1p-24;
  // A select, not x * mask * scale: at p == 1 the scale is infinite.
  return u >= p ? x * keepScale : T(0);
}

/// `kept` (x times the scale) where `keep` is 1, +0 where it is 0: dropout's
/// select (Dropout.h's kernel) as a mask of the bits, which an element-wise
/// chain's loop vectorizes where a branch around gelu's or erf's arithmetic
/// would keep it scalar.
template <typename T> inline T dropoutKept(uint8_t keep, T kept) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "float or double");
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  Bits bits;
  std::memcpy(&bits, &kept, sizeof bits);
  bits &= Bits(0) - Bits(keep);
  std::memcpy(&kept, &bits, sizeof bits);
  return kept;
}

} // namespace cairn::kernels::ops

#endif // CAIRN_RUNTIME_KERNELS_SCALAROPS_H
