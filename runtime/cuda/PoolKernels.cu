//===- PoolKernels.cu - 2-D pooling, direct forms and backward ------------===//
//
// The GPU twins of runtime/kernels/Pool.h, for NCHW tensors. The forward
// passes take a thread per output element (cuDNN serves most forward
// shapes, see Library.h; these serve dilation and ceil_mode). The window
// bounds, the max rule (first maximum in window order, NaN wins) and the
// divisors are those of Pool.cpp, so the forward results are the CPU's bits.
//
// The backward passes are gathers: a thread per input element visits, in
// the CPU's window order, the windows that cover it and adds what each sends
// it (for max pooling, the windows whose recomputed arg-max it is). Every dx
// element is written once by one thread, with no atomics, and receives the
// same additions in the same order as on the CPU: the same bits too.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"

#include "runtime/cuda/Launch.h"

#include <limits>

namespace cairn::cuda {

namespace {

using kernels::Pool2dShape;

__host__ __device__ __forceinline__ int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// The in-range taps of one max-pool window along one axis: `count` input
/// indices starting at `first`, `dilation` apart (Pool.cpp's maxTaps).
struct Taps {
  int64_t first, count;
};

__device__ __forceinline__ Taps maxTaps(int64_t o, int64_t stride, int64_t pad,
                                        int64_t dilation, int64_t taps, int64_t size) {
  const int64_t start = o * stride - pad;
  int64_t lo = start >= 0 ? 0 : ceilDiv(-start, dilation);
  int64_t hi = size - start <= 0 ? 0 : ceilDiv(size - start, dilation);
  hi = hi < taps ? hi : taps;
  lo = lo < hi ? lo : hi;
  return {start + lo * dilation, hi - lo};
}

/// Index in the plane of the max of a window, -1 when it misses the input.
/// Rows outer, columns inner; the first real element seeds the max, a later
/// one replaces it when strictly greater or NaN (v != v), as Pool.cpp.
/// T as maxPool2dForwardDirect's: a half element is compared widened.
template <typename T>
__device__ __forceinline__ int64_t windowArgMax(const kernels::StoredAs<T> *plane, int64_t width,
                                                Taps rows, Taps cols, int64_t dh, int64_t dw) {
  using S = kernels::Storage<T>;
  using C = kernels::ComputedIn<T>;
  if (rows.count <= 0 || cols.count <= 0)
    return -1;
  int64_t arg = rows.first * width + cols.first;
  C best = S::load(plane[arg]);
  for (int64_t i = 0; i < rows.count; ++i) {
    const int64_t rowBase = (rows.first + i * dh) * width + cols.first;
    for (int64_t j = 0; j < cols.count; ++j) {
      const int64_t idx = rowBase + j * dw;
      const C v = S::load(plane[idx]);
      if (v > best || v != v) {
        best = v;
        arg = idx;
      }
    }
  }
  return arg;
}

/// Pool.cpp's 2x2, stride-2, unpadded case, where windows do not overlap and
/// the CPU assigns each gradient rather than adding it to zero (which
/// differs only for -0).
bool isPlain2x2(const Pool2dShape &s) {
  return s.kh == 2 && s.kw == 2 && s.sh == 2 && s.sw == 2 && s.ph == 0 && s.pw == 0 &&
         s.dh == 1 && s.dw == 1 && 2 * s.ho <= s.h && 2 * s.wo <= s.w;
}

/// The output indices [lo, hi] along one axis whose windows may hold input
/// index `i` as a tap (o * stride - pad + a * dilation == i, 0 <= a < taps);
/// callers check the tap lands on i.
__device__ __forceinline__ void coveringWindows(int64_t i, int64_t out, int64_t stride,
                                                int64_t pad, int64_t dilation, int64_t taps,
                                                int64_t &lo, int64_t &hi) {
  const int64_t first = i + pad - (taps - 1) * dilation;
  lo = first <= 0 ? 0 : ceilDiv(first, stride);
  hi = (i + pad) / stride;
  hi = hi < out - 1 ? hi : out - 1;
}

/// An average-pool window along one axis: input indices [begin, end), and
/// its length before clipping away the padding (PyTorch's pool_size factor).
struct Span {
  int64_t begin, end, padded;
  __device__ int64_t length() const { return end > begin ? end - begin : 0; }
};

/// The windows of one axis of average pooling: PyTorch's AvgPool2d (clipped
/// to [-pad, size + pad), which gives the count_include_pad length, then to
/// the input) or AdaptiveAvgPool2d (window o covers [floor(o * in / out),
/// ceil((o + 1) * in / out))).
struct Axis {
  bool adaptive;
  int64_t in, out, stride, pad, taps;

  __device__ Span span(int64_t o) const {
    if (adaptive) {
      const int64_t begin = o * in / out, end = ceilDiv((o + 1) * in, out);
      return {begin, end, end - begin};
    }
    const int64_t begin = o * stride - pad;
    const int64_t end = begin + taps < in + pad ? begin + taps : in + pad;
    return {begin > 0 ? begin : 0, end < in ? end : in, end - begin};
  }
  /// Output indices [lo, hi] whose windows may cover input index i; callers
  /// check span(o) does.
  __device__ void covering(int64_t i, int64_t &lo, int64_t &hi) const {
    if (adaptive) {
      lo = i * out / in;
      hi = ceilDiv((i + 1) * out, in) - 1;
    } else {
      const int64_t first = i + pad - taps + 1;
      lo = first <= 0 ? 0 : ceilDiv(first, stride);
      hi = (i + pad) / stride;
    }
    hi = hi < out - 1 ? hi : out - 1;
  }
};

Axis poolAxis(int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t taps) {
  return {false, in, out, stride, pad, taps};
}
Axis adaptiveAxis(int64_t in, int64_t out) { return {true, in, out, 1, 0, 1}; }

/// Splits a flat NCHW index into its plane and the two inner indices.
__device__ __forceinline__ int64_t splitIndex(int64_t i, int64_t h, int64_t w, int64_t &row,
                                              int64_t &col) {
  const int64_t rest = i / w;
  col = i - rest * w;
  const int64_t plane = rest / h;
  row = rest - plane * h;
  return plane;
}

template <typename T>
__global__ void maxPoolForwardKernel(Pool2dShape s, int64_t count,
                                     const kernels::StoredAs<T> *__restrict__ x,
                                     kernels::StoredAs<T> *__restrict__ y) {
  using S = kernels::Storage<T>;
  using C = kernels::ComputedIn<T>;
  CAIRN_GRID_STRIDE_LOOP(i, count) {
    int64_t oh, ow;
    const int64_t pl = splitIndex(i, s.ho, s.wo, oh, ow);
    const kernels::StoredAs<T> *plane = x + pl * s.h * s.w;
    const int64_t arg = windowArgMax<T>(plane, s.w, maxTaps(oh, s.sh, s.ph, s.dh, s.kh, s.h),
                                        maxTaps(ow, s.sw, s.pw, s.dw, s.kw, s.w), s.dh, s.dw);
    y[i] = S::store(arg < 0 ? -std::numeric_limits<C>::infinity() : S::load(plane[arg]));
  }
}

/// dx[ih, iw] = the sum, in window order, of dy over the windows whose
/// arg-max is (ih, iw).
template <typename T>
__global__ void maxPoolBackwardKernel(Pool2dShape s, bool plain, int64_t count,
                                      const kernels::StoredAs<T> *__restrict__ dy,
                                      const kernels::StoredAs<T> *__restrict__ x,
                                      kernels::StoredAs<T> *__restrict__ dx) {
  using S = kernels::Storage<T>;
  using C = kernels::ComputedIn<T>;
  CAIRN_GRID_STRIDE_LOOP(i, count) {
    int64_t ih, iw;
    const int64_t pl = splitIndex(i, s.h, s.w, ih, iw);
    const kernels::StoredAs<T> *plane = x + pl * s.h * s.w;
    const kernels::StoredAs<T> *g = dy + pl * s.ho * s.wo;
    const int64_t self = ih * s.w + iw;
    int64_t ohLo, ohHi, owLo, owHi;
    coveringWindows(ih, s.ho, s.sh, s.ph, s.dh, s.kh, ohLo, ohHi);
    coveringWindows(iw, s.wo, s.sw, s.pw, s.dw, s.kw, owLo, owHi);
    C acc = C(0);
    for (int64_t oh = ohLo; oh <= ohHi; ++oh) {
      if ((ih + s.ph - oh * s.sh) % s.dh != 0)
        continue;
      const Taps rows = maxTaps(oh, s.sh, s.ph, s.dh, s.kh, s.h);
      for (int64_t ow = owLo; ow <= owHi; ++ow) {
        if ((iw + s.pw - ow * s.sw) % s.dw != 0)
          continue;
        const Taps cols = maxTaps(ow, s.sw, s.pw, s.dw, s.kw, s.w);
        if (windowArgMax<T>(plane, s.w, rows, cols, s.dh, s.dw) == self)
          // Rounded after each add, as Pool.cpp's half kernel adds into dx
          // (the identity for float and double).
          acc = plain ? S::load(g[oh * s.wo + ow])
                      : S::load(S::store(acc + S::load(g[oh * s.wo + ow])));
      }
    }
    dx[i] = S::store(acc);
  }
}

/// y = the window's sum (in double, rows outer) over the padded area or the
/// clipped one; an empty window gives 0, as PyTorch.
template <typename T>
__global__ void averageForwardKernel(Axis rows, Axis cols, bool padded, int64_t count,
                                     const T *__restrict__ x, T *__restrict__ y) {
  CAIRN_GRID_STRIDE_LOOP(i, count) {
    int64_t oh, ow;
    const int64_t pl = splitIndex(i, rows.out, cols.out, oh, ow);
    const T *plane = x + pl * rows.in * cols.in;
    const Span r = rows.span(oh), c = cols.span(ow);
    const int64_t area = r.length() * c.length();
    double sum = 0;
    for (int64_t ih = r.begin; ih < r.end; ++ih)
      for (int64_t iw = c.begin; iw < c.end; ++iw)
        sum += plane[ih * cols.in + iw];
    y[i] = area <= 0 ? T(0) : T(sum / double(padded ? r.padded * c.padded : area));
  }
}

/// The adjoint: dx[ih, iw] = the sum, in window order, of each covering
/// window's gradient divided (in T, as Pool.cpp) by its divisor.
template <typename T>
__global__ void averageBackwardKernel(Axis rows, Axis cols, bool padded, int64_t count,
                                      const T *__restrict__ dy, T *__restrict__ dx) {
  CAIRN_GRID_STRIDE_LOOP(i, count) {
    int64_t ih, iw;
    const int64_t pl = splitIndex(i, rows.in, cols.in, ih, iw);
    const T *g = dy + pl * rows.out * cols.out;
    int64_t ohLo, ohHi, owLo, owHi;
    rows.covering(ih, ohLo, ohHi);
    cols.covering(iw, owLo, owHi);
    T acc = T(0);
    for (int64_t oh = ohLo; oh <= ohHi; ++oh) {
      const Span r = rows.span(oh);
      if (ih < r.begin || ih >= r.end)
        continue;
      for (int64_t ow = owLo; ow <= owHi; ++ow) {
        const Span c = cols.span(ow);
        if (iw < c.begin || iw >= c.end)
          continue;
        const int64_t area = r.length() * c.length();
        acc += g[oh * cols.out + ow] / T(padded ? r.padded * c.padded : area);
      }
    }
    dx[i] = acc;
  }
}

template <typename T>
void averageForward(Context &cx, int64_t planes, const Axis &rows, const Axis &cols, bool padded,
                    const T *x, T *y) {
  const int64_t count = planes * rows.out * cols.out;
  if (count == 0)
    return;
  averageForwardKernel<T><<<blocksFor(count), kThreadsPerBlock, 0, cx.stream>>>(
      rows, cols, padded, count, x, y);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void averageBackward(Context &cx, int64_t planes, const Axis &rows, const Axis &cols,
                     bool padded, const T *dy, T *dx) {
  const int64_t count = planes * rows.in * cols.in;
  if (count == 0)
    return;
  averageBackwardKernel<T><<<blocksFor(count), kThreadsPerBlock, 0, cx.stream>>>(
      rows, cols, padded, count, dy, dx);
  CAIRN_CUDA_CHECK_LAUNCH();
}

} // namespace

template <typename T>
void maxPool2dForwardDirect(Context &cx, const Pool2dShape &s, const StoredAs<T> *x,
                            StoredAs<T> *y) {
  const int64_t count = s.n * s.c * s.ho * s.wo;
  if (count == 0)
    return;
  maxPoolForwardKernel<T><<<blocksFor(count), kThreadsPerBlock, 0, cx.stream>>>(s, count, x, y);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void avgPool2dForwardDirect(Context &cx, const Pool2dShape &s, bool countIncludePad,
                            const T *x, T *y) {
  averageForward(cx, s.n * s.c, poolAxis(s.h, s.ho, s.sh, s.ph, s.kh),
                 poolAxis(s.w, s.wo, s.sw, s.pw, s.kw), countIncludePad, x, y);
}

template <typename T>
void maxPool2dBackward(Context &cx, const Pool2dShape &s, const StoredAs<T> *dy,
                       const StoredAs<T> *x, StoredAs<T> *dx) {
  const int64_t count = s.n * s.c * s.h * s.w;
  if (count == 0)
    return;
  maxPoolBackwardKernel<T><<<blocksFor(count), kThreadsPerBlock, 0, cx.stream>>>(
      s, isPlain2x2(s), count, dy, x, dx);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void avgPool2dBackward(Context &cx, const Pool2dShape &s, bool countIncludePad, const T *dy,
                       T *dx) {
  averageBackward(cx, s.n * s.c, poolAxis(s.h, s.ho, s.sh, s.ph, s.kh),
                  poolAxis(s.w, s.wo, s.sw, s.pw, s.kw), countIncludePad, dy, dx);
}

template <typename T>
void adaptiveAvgPool2dForward(Context &cx, int64_t n, int64_t c, int64_t h, int64_t w,
                              int64_t oh, int64_t ow, const T *x, T *y) {
  averageForward(cx, n * c, adaptiveAxis(h, oh), adaptiveAxis(w, ow), false, x, y);
}

template <typename T>
void adaptiveAvgPool2dBackward(Context &cx, int64_t n, int64_t c, int64_t h, int64_t w,
                               int64_t oh, int64_t ow, const T *dy, T *dx) {
  averageBackward(cx, n * c, adaptiveAxis(h, oh), adaptiveAxis(w, ow), false, dy, dx);
}

#define CAIRN_INSTANTIATE(T)                                                                 \
  template void maxPool2dForwardDirect<T>(Context &, const Pool2dShape &, const T *, T *);   \
  template void avgPool2dForwardDirect<T>(Context &, const Pool2dShape &, bool, const T *,   \
                                          T *);                                              \
  template void maxPool2dBackward<T>(Context &, const Pool2dShape &, const T *, const T *,   \
                                     T *);                                                   \
  template void avgPool2dBackward<T>(Context &, const Pool2dShape &, bool, const T *, T *);  \
  template void adaptiveAvgPool2dForward<T>(Context &, int64_t, int64_t, int64_t, int64_t,   \
                                            int64_t, int64_t, const T *, T *);               \
  template void adaptiveAvgPool2dBackward<T>(Context &, int64_t, int64_t, int64_t, int64_t,  \
                                             int64_t, int64_t, const T *, T *);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
#undef CAIRN_INSTANTIATE
// Max pooling on f16 and bf16 storage (as Pool.h): compared widened, the
// result one of the inputs; the gradient rounded after each add, as the
// CPU's (the passes give half only windows that do not overlap, where each
// gradient lands alone).
#define CAIRN_INSTANTIATE_STORED(T)                                                                \
  template void maxPool2dForwardDirect<T>(Context &, const Pool2dShape &, const uint16_t *,        \
                                          uint16_t *);                                             \
  template void maxPool2dBackward<T>(Context &, const Pool2dShape &, const uint16_t *,             \
                                     const uint16_t *, uint16_t *);
CAIRN_INSTANTIATE_STORED(kernels::F16)
CAIRN_INSTANTIATE_STORED(kernels::Bf16)
#undef CAIRN_INSTANTIATE_STORED

} // namespace cairn::cuda
