//===- Pool.cpp - 2-D pooling, forward and backward -----------------------===//
//
// Direct loops over each (image, channel) plane, planes split across threads. Window bounds follow
// PyTorch's CPU kernels exactly, since they decide which element receives a
// max-pool gradient and what an average divides by.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Pool.h"

#include "runtime/kernels/Parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace cairn::kernels {

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }


/// The in-range taps of one max-pool window along one axis: `count` input
/// indices starting at `first`, `dilation` apart.
struct Taps {
  int64_t first, count;
};

/// Windows along one axis depend only on the output index, so they are
/// worked out once per call rather than once per plane.
std::vector<Taps> maxTaps(int64_t out, int64_t stride, int64_t pad,
                          int64_t dilation, int64_t taps, int64_t size) {
  std::vector<Taps> result(out);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = o * stride - pad;
    int64_t lo = start >= 0 ? 0 : ceilDiv(-start, dilation);
    int64_t hi = size - start <= 0 ? 0 : ceilDiv(size - start, dilation);
    hi = std::min(hi, taps);
    lo = std::min(lo, hi);
    result[o] = {start + lo * dilation, hi - lo};
  }
  return result;
}

/// Index in the plane of the max of a window, -1 when it misses the input.
/// Scans rows outer, columns inner; the first real element seeds the max, a
/// later one replaces it only when strictly greater or NaN (so NaN
/// propagates), as PyTorch. Compares in T's compute type.
template <typename T>
int64_t windowArgMax(const StoredAs<T> *plane, int64_t width, Taps rows,
                     Taps cols, int64_t dh, int64_t dw) {
  using S = Storage<T>;
  using C = typename S::Compute;
  if (rows.count <= 0 || cols.count <= 0)
    return -1;
  int64_t arg = rows.first * width + cols.first;
  C best = S::load(plane[arg]);
  for (int64_t i = 0; i < rows.count; ++i) {
    const int64_t rowBase = (rows.first + i * dh) * width + cols.first;
    for (int64_t j = 0; j < cols.count; ++j) {
      const int64_t idx = rowBase + j * dw;
      const C v = S::load(plane[idx]);
      // Selects rather than branches: which element wins is data-dependent
      // and mispredicts half the time.
      const bool take = v > best || std::isnan(v);
      best = take ? v : best;
      arg = take ? idx : arg;
    }
  }
  return arg;
}

/// The common 2x2, stride-2, unpadded window (every CNN's downsampling):
/// the same first-maximum rule as windowArgMax, unrolled, without the
/// per-window tap bookkeeping that dominates such small windows.
bool isPlain2x2(const Pool2dShape &s) {
  return s.kh == 2 && s.kw == 2 && s.sh == 2 && s.sw == 2 && s.ph == 0 &&
         s.pw == 0 && s.dh == 1 && s.dw == 1 && 2 * s.ho <= s.h &&
         2 * s.wo <= s.w;
}

/// One output row of the plain 2x2 pool: y[j] is the first maximum of
/// r0[2j], r0[2j+1], r1[2j], r1[2j+1] (NaN if one is NaN), windowArgMax's
/// rule. Written as selects over a row so that the compiler vectorises it.
template <typename T>
void maxRow2x2(int64_t wo, const StoredAs<T> *r0, const StoredAs<T> *r1,
               StoredAs<T> *y) {
  using S = Storage<T>;
  using C = typename S::Compute;
  for (int64_t j = 0; j < wo; ++j) {
    C best = S::load(r0[2 * j]);
    for (C v : {S::load(r0[2 * j + 1]), S::load(r1[2 * j]),
                S::load(r1[2 * j + 1])})
      best = (v > best || v != v) ? v : best;
    y[j] = S::store(best);
  }
}

/// The backward of maxRow2x2: each window's gradient g[j] goes to its
/// first maximum, and the window's three other elements get 0 (the plain
/// windows tile the rows, so this also clears them).
template <typename T>
void maxRowGrad2x2(int64_t wo, const StoredAs<T> *r0, const StoredAs<T> *r1,
                   const StoredAs<T> *g, StoredAs<T> *d0, StoredAs<T> *d1) {
  using S = Storage<T>;
  using C = typename S::Compute;
  // Unrolled by hand, and every value loaded before the selects: an
  // array or a load under a select keeps the loop scalar.
  for (int64_t j = 0; j < wo; ++j) {
    const C a = S::load(r0[2 * j]), b = S::load(r0[2 * j + 1]),
            c = S::load(r1[2 * j]), d = S::load(r1[2 * j + 1]),
            grad = S::load(g[j]);
    C best = a, which = C(0);
    bool take = b > best || b != b;
    best = take ? b : best;
    which = take ? C(1) : which;
    take = c > best || c != c;
    best = take ? c : best;
    which = take ? C(2) : which;
    take = d > best || d != d;
    which = take ? C(3) : which;
    d0[2 * j] = S::store(which == C(0) ? grad : C(0));
    d0[2 * j + 1] = S::store(which == C(1) ? grad : C(0));
    d1[2 * j] = S::store(which == C(2) ? grad : C(0));
    d1[2 * j + 1] = S::store(which == C(3) ? grad : C(0));
  }
}

/// An average-pool window along one axis: input indices [begin, end), and
/// its length before clipping away the padding (PyTorch's pool_size factor).
struct Span {
  int64_t begin, end, padded;
  int64_t length() const { return std::max<int64_t>(end - begin, 0); }
};

/// PyTorch's rule: the window is first clipped to [-pad, size + pad), which
/// gives the count_include_pad length, then to the input.
std::vector<Span> avgSpans(int64_t out, int64_t stride, int64_t pad,
                           int64_t taps, int64_t size) {
  std::vector<Span> result(out);
  for (int64_t o = 0; o < out; ++o) {
    const int64_t begin = o * stride - pad;
    const int64_t end = std::min(begin + taps, size + pad);
    result[o] = {std::max<int64_t>(begin, 0), std::min(end, size), end - begin};
  }
  return result;
}

/// Window i covers [floor(i * in / out), ceil((i + 1) * in / out)).
std::vector<Span> adaptiveSpans(int64_t out, int64_t in) {
  std::vector<Span> result(out);
  for (int64_t i = 0; i < out; ++i) {
    const int64_t begin = i * in / out, end = ceilDiv((i + 1) * in, out);
    result[i] = {begin, end, end - begin};
  }
  return result;
}

/// y[r, c] = mean of the plane over rows[r] x cols[c]; the divisor is the
/// padded area or the clipped one. An empty window gives 0, as PyTorch.
template <typename T>
void averageForward(int64_t planes, int64_t h, int64_t w,
                    const std::vector<Span> &rows,
                    const std::vector<Span> &cols, bool padded, const T *x,
                    T *y) {
  const int64_t oh = rows.size(), ow = cols.size();
  parallelForEach(planes, h * w, [&](int64_t pl) {
    const T *plane = x + pl * h * w;
    T *out = y + pl * oh * ow;
    for (const Span &r : rows)
      for (const Span &c : cols) {
        const int64_t area = r.length() * c.length();
        double sum = 0;
        for (int64_t ih = r.begin; ih < r.end; ++ih)
          for (int64_t iw = c.begin; iw < c.end; ++iw)
            sum += plane[ih * w + iw];
        *out++ = area <= 0
                     ? T(0)
                     : T(sum / double(padded ? r.padded * c.padded : area));
      }
  });
}

/// The adjoint of averageForward; dx is overwritten.
template <typename T>
void averageBackward(int64_t planes, int64_t h, int64_t w,
                     const std::vector<Span> &rows,
                     const std::vector<Span> &cols, bool padded, const T *dy,
                     T *dx) {
  const int64_t oh = rows.size(), ow = cols.size();
  parallelForEach(planes, h * w, [&](int64_t pl) {
    const T *g = dy + pl * oh * ow;
    T *d = dx + pl * h * w;
    std::fill(d, d + h * w, T(0));
    for (const Span &r : rows)
      for (const Span &c : cols) {
        const int64_t area = r.length() * c.length();
        const T grad = *g++;
        if (area <= 0)
          continue;
        const T share = grad / T(padded ? r.padded * c.padded : area);
        for (int64_t ih = r.begin; ih < r.end; ++ih)
          for (int64_t iw = c.begin; iw < c.end; ++iw)
            d[ih * w + iw] += share;
      }
  });
}

} // namespace

template <typename T>
void maxPool2dForward(const Pool2dShape &s, const StoredAs<T> *x,
                      StoredAs<T> *y) {
  using S = Storage<T>;
  using C = typename S::Compute;
  if (isPlain2x2(s)) {
    parallelForEach(s.n * s.c, s.h * s.w, [&](int64_t pl) {
      const StoredAs<T> *plane = x + pl * s.h * s.w;
      StoredAs<T> *out = y + pl * s.ho * s.wo;
      for (int64_t i = 0; i < s.ho; ++i)
        maxRow2x2<T>(s.wo, plane + 2 * i * s.w, plane + (2 * i + 1) * s.w,
                     out + i * s.wo);
    });
    return;
  }
  const auto rows = maxTaps(s.ho, s.sh, s.ph, s.dh, s.kh, s.h);
  const auto cols = maxTaps(s.wo, s.sw, s.pw, s.dw, s.kw, s.w);
  parallelForEach(s.n * s.c, s.ho * s.wo * s.kh * s.kw, [&](int64_t pl) {
    const StoredAs<T> *plane = x + pl * s.h * s.w;
    StoredAs<T> *out = y + pl * s.ho * s.wo;
    for (const Taps &r : rows)
      for (const Taps &c : cols) {
        const int64_t arg = windowArgMax<T>(plane, s.w, r, c, s.dh, s.dw);
        *out++ = S::store(arg < 0 ? -std::numeric_limits<C>::infinity()
                                  : S::load(plane[arg]));
      }
  });
}

template <typename T>
void maxPool2dBackward(const Pool2dShape &s, const StoredAs<T> *dy,
                       const StoredAs<T> *x, StoredAs<T> *dx) {
  using S = Storage<T>;
  using C = typename S::Compute;
  const auto rows = maxTaps(s.ho, s.sh, s.ph, s.dh, s.kh, s.h);
  const auto cols = maxTaps(s.wo, s.sw, s.pw, s.dw, s.kw, s.w);
  const StoredAs<T> zero = S::store(C(0));
  if (isPlain2x2(s)) {
    // Windows do not overlap: each gradient lands on one element.
    // A row or column past the last window (odd sizes) gets no gradient.
    const bool tiled = 2 * s.ho == s.h && 2 * s.wo == s.w;
    parallelForEach(s.n * s.c, 2 * s.h * s.w, [&](int64_t pl) {
      const StoredAs<T> *plane = x + pl * s.h * s.w;
      const StoredAs<T> *g = dy + pl * s.ho * s.wo;
      StoredAs<T> *d = dx + pl * s.h * s.w;
      if (!tiled)
        std::fill(d, d + s.h * s.w, zero);
      for (int64_t i = 0; i < s.ho; ++i)
        maxRowGrad2x2<T>(s.wo, plane + 2 * i * s.w,
                         plane + (2 * i + 1) * s.w, g + i * s.wo,
                         d + 2 * i * s.w, d + (2 * i + 1) * s.w);
    });
    return;
  }
  parallelForEach(s.n * s.c, s.h * s.w + s.ho * s.wo * s.kh * s.kw,
               [&](int64_t pl) {
    const StoredAs<T> *plane = x + pl * s.h * s.w;
    const StoredAs<T> *g = dy + pl * s.ho * s.wo;
    StoredAs<T> *d = dx + pl * s.h * s.w;
    std::fill(d, d + s.h * s.w, zero);
    for (const Taps &r : rows)
      for (const Taps &c : cols) {
        const int64_t arg = windowArgMax<T>(plane, s.w, r, c, s.dh, s.dw);
        const C grad = S::load(*g++);
        if (arg >= 0)
          d[arg] = S::store(S::load(d[arg]) + grad);
      }
  });
}

template <typename T>
void avgPool2dForward(const Pool2dShape &s, bool countIncludePad, const T *x,
                      T *y) {
  averageForward(s.n * s.c, s.h, s.w, avgSpans(s.ho, s.sh, s.ph, s.kh, s.h),
                 avgSpans(s.wo, s.sw, s.pw, s.kw, s.w), countIncludePad, x, y);
}

template <typename T>
void avgPool2dBackward(const Pool2dShape &s, bool countIncludePad, const T *dy,
                       T *dx) {
  averageBackward(s.n * s.c, s.h, s.w, avgSpans(s.ho, s.sh, s.ph, s.kh, s.h),
                  avgSpans(s.wo, s.sw, s.pw, s.kw, s.w), countIncludePad, dy,
                  dx);
}

template <typename T>
void adaptiveAvgPool2dForward(int64_t n, int64_t c, int64_t h, int64_t w,
                              int64_t oh, int64_t ow, const T *x, T *y) {
  averageForward(n * c, h, w, adaptiveSpans(oh, h), adaptiveSpans(ow, w), false,
                 x, y);
}

template <typename T>
void adaptiveAvgPool2dBackward(int64_t n, int64_t c, int64_t h, int64_t w,
                               int64_t oh, int64_t ow, const T *dy, T *dx) {
  averageBackward(n * c, h, w, adaptiveSpans(oh, h), adaptiveSpans(ow, w),
                  false, dy, dx);
}

#define CAIRN_INSTANTIATE_POOL(T)                                              \
  template void maxPool2dForward<T>(const Pool2dShape &, const T *, T *);      \
  template void maxPool2dBackward<T>(const Pool2dShape &, const T *,           \
                                     const T *, T *);                          \
  template void avgPool2dForward<T>(const Pool2dShape &, bool, const T *,      \
                                    T *);                                      \
  template void avgPool2dBackward<T>(const Pool2dShape &, bool, const T *,     \
                                     T *);                                     \
  template void adaptiveAvgPool2dForward<T>(                                   \
      int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, const T *, T *);   \
  template void adaptiveAvgPool2dBackward<T>(                                  \
      int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, const T *, T *);
CAIRN_INSTANTIATE_POOL(float)
CAIRN_INSTANTIATE_POOL(double)
#undef CAIRN_INSTANTIATE_POOL

// Max pooling on half storage (the CPU's cairn-compute-half-in-float32 leaves
// it half: isHalfStorageOp).
#define CAIRN_INSTANTIATE_HALF_MAX_POOL(T)                                     \
  template void maxPool2dForward<T>(const Pool2dShape &, const uint16_t *,     \
                                    uint16_t *);                               \
  template void maxPool2dBackward<T>(const Pool2dShape &, const uint16_t *,    \
                                     const uint16_t *, uint16_t *);
CAIRN_INSTANTIATE_HALF_MAX_POOL(F16)
CAIRN_INSTANTIATE_HALF_MAX_POOL(Bf16)
#undef CAIRN_INSTANTIATE_HALF_MAX_POOL

} // namespace cairn::kernels
