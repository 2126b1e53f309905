//===- Elementwise.cpp - Activations, arithmetic, fills -------------------===//
//
// The per-element bodies are those of ScalarOps.h, shared with the
// generated fused loops and the CUDA kernels (float activations through
// FastMath.h, double through libm). Broadcasts first drop size-1 dimensions
// and merge neighbours that are contiguous in every operand, so a bias add
// or a scalar operand becomes one long inner loop; the inner loop is
// specialised for unit and zero strides. Loops split across threads by
// element (or by broadcast row), so results do not depend on the count.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Elementwise.h"

#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Parallel.h"
#include "runtime/kernels/ScalarOps.h"
#include "runtime/kernels/StridedWalk.h"

#include <algorithm>
#include <string>

namespace cairn::kernels {

namespace {

constexpr int kMaxRank = 8;
static_assert(kMaxRank <= kMaxWalkRank, "a walk must fit a StridedWalk");

/// The cost per element parallelFor weighs: transcendental activations cost
/// tens of simple operations.
constexpr int64_t kCheap = 1, kTranscendental = 16;

int64_t getActivationCost(Activation kind) {
  return kind == Activation::Relu || kind == Activation::Hardswish
             ? kCheap
             : kTranscendental;
}

template <typename T, typename F>
void mapUnary(int64_t n, const T *x, T *y, F f, int64_t cost = kCheap) {
  parallelFor(n, cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      y[i] = f(x[i]);
  });
}

template <typename T, typename F>
void mapBinary(int64_t n, const T *a, const T *b, T *out, F f,
               int64_t cost = kCheap) {
  parallelFor(n, cost, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      out[i] = f(a[i], b[i]);
  });
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

// On half storage each element is widened as it is read and rounded as it
// is written (Convert.h): the float kernel's bits between casts.
template <typename T>
void activationForward(Activation kind, int64_t n, const StoredAs<T> *x,
                       StoredAs<T> *y) {
  using S = Storage<T>;
  ops::withActivation(kind, [&](auto act) {
    mapUnary(
        n, x, y,
        [](StoredAs<T> v) {
          return S::store(decltype(act)::forward(S::load(v)));
        },
        getActivationCost(kind));
  });
}

template <typename T>
void activationBackward(Activation kind, int64_t n, const StoredAs<T> *dy,
                        const StoredAs<T> *saved, StoredAs<T> *dx) {
  using S = Storage<T>;
  ops::withActivation(kind, [&](auto act) {
    mapBinary(
        n, dy, saved, dx,
        [](StoredAs<T> g, StoredAs<T> s) {
          return S::store(decltype(act)::backward(S::load(g), S::load(s)));
        },
        getActivationCost(kind));
  });
}

template <typename T>
void clampForward(int64_t n, bool hasMin, double min, bool hasMax, double max,
                  const T *x, T *y) {
  const ops::Clamp<T> f(hasMin, min, hasMax, max);
  mapUnary(n, x, y, [f](T v) { return f.forward(v); });
}

template <typename T>
void clampBackward(int64_t n, bool hasMin, double min, bool hasMax, double max,
                   const T *dy, const T *x, T *dx) {
  const ops::Clamp<T> f(hasMin, min, hasMax, max);
  mapBinary(n, dy, x, dx, [f](T g, T v) { return f.backward(g, v); });
}

template <typename T>
void leakyReluForward(int64_t n, double slope, const T *x, T *y) {
  const ops::LeakyRelu<T> f(slope);
  mapUnary(n, x, y, [f](T v) { return f.forward(v); });
}

template <typename T>
void leakyReluBackward(int64_t n, double slope, const T *dy, const T *x,
                       T *dx) {
  const ops::LeakyRelu<T> f(slope);
  mapBinary(n, dy, x, dx, [f](T g, T v) { return f.backward(g, v); });
}

template <typename T>
void binarySameShape(BinaryOp op, int64_t n, const T *a, const T *b, T *out) {
  ops::withBinaryOp(op, [&](auto f) { mapBinary(n, a, b, out, f); });
}

template <typename T>
void binaryBroadcast(BinaryOp op, int rank, const int64_t *outShape,
                     const StoredAs<T> *a, const int64_t *aStrides,
                     const StoredAs<T> *b, const int64_t *bStrides,
                     StoredAs<T> *out) {
  using S = Storage<T>;
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
  ops::withBinaryOp(op, [&](auto apply) {
    auto f = [apply](StoredAs<T> x, StoredAs<T> y) {
      return S::store(apply(S::load(x), S::load(y)));
    };
    if (m == 0) {
      out[0] = f(a[0], b[0]);
      return;
    }
    int64_t inner = shape[m - 1];
    StridedWalk<2> rows;
    for (int d = 0; d < m - 1; ++d)
      rows.add(shape[d], {as[d], bs[d]});
    int64_t outer = rows.count();
    parallelFor(outer, inner, [&](int64_t begin, int64_t end) {
      StridedWalk<2> walk = rows;
      walk.seek(begin);
      for (int64_t o = begin; o < end; ++o, walk.next())
        broadcastRow(f, inner, a + walk.offset[0], as[m - 1],
                     b + walk.offset[1], bs[m - 1], out + o * inner);
    });
  });
}

template <typename T> void scale(int64_t n, T alpha, const T *x, T *y) {
  mapUnary(n, x, y, [alpha](T v) { return alpha * v; });
}

template <typename T> void accumulate(int64_t n, const T *src, T *dst) {
  mapBinary(n, dst, src, dst, [](T d, T s) { return d + s; });
}

template <typename T> void fill(int64_t n, T value, T *out) {
  parallelFor(n, kCheap, [&](int64_t begin, int64_t end) {
    std::fill(out + begin, out + end, value);
  });
}

#define CAIRN_INSTANTIATE_ACTIVATIONS(T)                                       \
  template void activationForward<T>(Activation, int64_t, const StoredAs<T> *, \
                                     StoredAs<T> *);                           \
  template void activationBackward<T>(Activation, int64_t,                     \
                                      const StoredAs<T> *,                     \
                                      const StoredAs<T> *, StoredAs<T> *);
CAIRN_INSTANTIATE_ACTIVATIONS(float)
CAIRN_INSTANTIATE_ACTIVATIONS(double)
CAIRN_INSTANTIATE_ACTIVATIONS(F16)
CAIRN_INSTANTIATE_ACTIVATIONS(Bf16)
#undef CAIRN_INSTANTIATE_ACTIVATIONS

#define CAIRN_INSTANTIATE(T)                                                   \
  template void clampForward<T>(int64_t, bool, double, bool, double,           \
                                const T *, T *);                               \
  template void clampBackward<T>(int64_t, bool, double, bool, double,          \
                                 const T *, const T *, T *);                   \
  template void leakyReluForward<T>(int64_t, double, const T *, T *);          \
  template void leakyReluBackward<T>(int64_t, double, const T *, const T *,    \
                                     T *);                                     \
  template void binarySameShape<T>(BinaryOp, int64_t, const T *, const T *,    \
                                   T *);                                       \
  template void scale<T>(int64_t, T, const T *, T *);                          \
  template void accumulate<T>(int64_t, const T *, T *);                        \
  template void fill<T>(int64_t, T, T *);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
#undef CAIRN_INSTANTIATE

#define CAIRN_INSTANTIATE_BINARY(T)                                            \
  template void binaryBroadcast<T>(                                            \
      BinaryOp, int, const int64_t *, const StoredAs<T> *, const int64_t *,    \
      const StoredAs<T> *, const int64_t *, StoredAs<T> *);
CAIRN_INSTANTIATE_BINARY(float)
CAIRN_INSTANTIATE_BINARY(double)
CAIRN_INSTANTIATE_BINARY(F16)
CAIRN_INSTANTIATE_BINARY(Bf16)
#undef CAIRN_INSTANTIATE_BINARY

} // namespace cairn::kernels
