//===- Elementwise.cpp - Activations, arithmetic, fills -------------------===//
//
// Transcendental activations are evaluated in double and rounded once, so
// float results sit within an ulp of the formulas PyTorch uses. Broadcasts
// first drop size-1 dimensions and merge neighbours that are contiguous in
// every operand, so a bias add or a scalar operand becomes one long inner
// loop; the inner loop is specialised for unit and zero strides.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Elementwise.h"

#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/StridedWalk.h"

#include <cmath>
#include <string>

namespace cairn::kernels {

namespace {

constexpr double kSqrtHalf = 0.70710678118654752440;     // 1 / sqrt(2)
constexpr double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)
constexpr double kGeluKappa = 0.044715;
constexpr int kMaxRank = 8;
static_assert(kMaxRank <= kMaxWalkRank, "a walk must fit a StridedWalk");

template <typename T, typename F>
void mapUnary(int64_t n, const T *x, T *y, F f) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = f(x[i]);
}

template <typename T, typename F>
void mapBinary(int64_t n, const T *a, const T *b, T *out, F f) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = f(a[i], b[i]);
}

struct AddOp {
  template <typename T> T operator()(T a, T b) const { return a + b; }
};
struct SubOp {
  template <typename T> T operator()(T a, T b) const { return a - b; }
};
struct MulOp {
  template <typename T> T operator()(T a, T b) const { return a * b; }
};
struct DivOp {
  template <typename T> T operator()(T a, T b) const { return a / b; }
};

/// Calls f with the functor for `op`, so each loop is compiled per operator
/// instead of switching per element.
template <typename F> void withOp(BinaryOp op, F f) {
  switch (op) {
  case BinaryOp::Add:
    return f(AddOp());
  case BinaryOp::Sub:
    return f(SubOp());
  case BinaryOp::Mul:
    return f(MulOp());
  case BinaryOp::Div:
    return f(DivOp());
  }
}

/// The innermost dimension of a broadcast: out is contiguous; a and b have
/// strides as, bs, with unit and zero strides as the vectorisable cases.
template <typename T, typename Op>
void broadcastRow(Op f, int64_t n, const T *a, int64_t as, const T *b,
                  int64_t bs, T *out) {
  if (as == 1 && bs == 1) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(a[i], b[i]);
  } else if (as == 1 && bs == 0) {
    T bv = *b;
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(a[i], bv);
  } else if (as == 0 && bs == 1) {
    T av = *a;
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(a[i * as], b[i * bs]);
  }
}

} // namespace

template <typename T>
void activationForward(Activation kind, int64_t n, const T *x, T *y) {
  switch (kind) {
  case Activation::Relu:
    // Written so that NaN propagates, as torch.relu does.
    return mapUnary(n, x, y, [](T v) { return v < T(0) ? T(0) : v; });
  case Activation::Sigmoid:
    return mapUnary(n, x, y, [](T v) {
      return T(1 / (1 + std::exp(-double(v))));
    });
  case Activation::Tanh:
    return mapUnary(n, x, y, [](T v) { return T(std::tanh(double(v))); });
  case Activation::GeluExact:
    return mapUnary(n, x, y, [](T v) {
      double d = v;
      return T(0.5 * d * (1 + std::erf(d * kSqrtHalf)));
    });
  case Activation::GeluTanh:
    return mapUnary(n, x, y, [](T v) {
      double d = v;
      double inner = kSqrt2OverPi * (d + kGeluKappa * d * d * d);
      return T(0.5 * d * (1 + std::tanh(inner)));
    });
  }
}

template <typename T>
void activationBackward(Activation kind, int64_t n, const T *dy,
                        const T *saved, T *dx) {
  switch (kind) {
  case Activation::Relu:
    return mapBinary(n, dy, saved, dx,
                     [](T g, T x) { return x > T(0) ? g : T(0); });
  case Activation::Sigmoid:
    return mapBinary(n, dy, saved, dx, [](T g, T y) {
      double yd = y;
      return T(double(g) * (1 - yd) * yd);
    });
  case Activation::Tanh:
    return mapBinary(n, dy, saved, dx, [](T g, T y) {
      double yd = y;
      return T(double(g) * (1 - yd * yd));
    });
  case Activation::GeluExact:
    return mapBinary(n, dy, saved, dx, [](T g, T x) {
      double d = x;
      double cdf = 0.5 * (1 + std::erf(d * kSqrtHalf));
      double pdf = kInvSqrt2Pi * std::exp(-0.5 * d * d);
      return T(double(g) * (cdf + d * pdf));
    });
  case Activation::GeluTanh:
    return mapBinary(n, dy, saved, dx, [](T g, T x) {
      double d = x;
      double t = std::tanh(kSqrt2OverPi * (d + kGeluKappa * d * d * d));
      double dInner = kSqrt2OverPi * (1 + 3 * kGeluKappa * d * d);
      return T(double(g) * (0.5 * (1 + t) + 0.5 * d * (1 - t * t) * dInner));
    });
  }
}

template <typename T>
void binarySameShape(BinaryOp op, int64_t n, const T *a, const T *b, T *out) {
  withOp(op, [&](auto f) { mapBinary(n, a, b, out, f); });
}

template <typename T>
void binaryBroadcast(BinaryOp op, int rank, const int64_t *outShape,
                     const T *a, const int64_t *aStrides, const T *b,
                     const int64_t *bStrides, T *out) {
  // Coalesce, outermost first. out is contiguous, so a dimension merges into
  // the previous one when a and b are also contiguous across the pair.
  int64_t shape[kMaxRank], as[kMaxRank], bs[kMaxRank];
  int m = 0;
  for (int d = 0; d < rank; ++d) {
    if (outShape[d] == 0)
      return;
    if (outShape[d] == 1)
      continue;
    if (m > 0 && as[m - 1] == aStrides[d] * outShape[d] &&
        bs[m - 1] == bStrides[d] * outShape[d]) {
      shape[m - 1] *= outShape[d];
      as[m - 1] = aStrides[d];
      bs[m - 1] = bStrides[d];
      continue;
    }
    if (m == kMaxRank)
      throw KernelError("binary broadcast needs more than " +
                        std::to_string(kMaxRank) + " dimensions");
    shape[m] = outShape[d];
    as[m] = aStrides[d];
    bs[m] = bStrides[d];
    ++m;
  }
  withOp(op, [&](auto f) {
    if (m == 0) {
      out[0] = f(a[0], b[0]);
      return;
    }
    int64_t inner = shape[m - 1];
    StridedWalk<2> rows;
    for (int d = 0; d < m - 1; ++d)
      rows.add(shape[d], {as[d], bs[d]});
    int64_t outer = rows.count();
    for (int64_t o = 0; o < outer; ++o, rows.next())
      broadcastRow(f, inner, a + rows.offset[0], as[m - 1],
                   b + rows.offset[1], bs[m - 1], out + o * inner);
  });
}

template <typename T> void scale(int64_t n, T alpha, const T *x, T *y) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = alpha * x[i];
}

template <typename T> void accumulate(int64_t n, const T *src, T *dst) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] += src[i];
}

template <typename T> void fill(int64_t n, T value, T *out) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = value;
}

#define CAIRN_INSTANTIATE(T)                                                   \
  template void activationForward<T>(Activation, int64_t, const T *, T *);    \
  template void activationBackward<T>(Activation, int64_t, const T *,         \
                                      const T *, T *);                        \
  template void binarySameShape<T>(BinaryOp, int64_t, const T *, const T *,   \
                                   T *);                                      \
  template void binaryBroadcast<T>(BinaryOp, int, const int64_t *, const T *, \
                                   const int64_t *, const T *,                \
                                   const int64_t *, T *);                     \
  template void scale<T>(int64_t, T, const T *, T *);                         \
  template void accumulate<T>(int64_t, const T *, T *);                       \
  template void fill<T>(int64_t, T, T *);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
#undef CAIRN_INSTANTIATE

} // namespace cairn::kernels
