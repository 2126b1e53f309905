//===- Conv.cpp - 2-D convolution, forward and backward -------------------===//
//
// im2col + GEMM, one group at a time, and one image at a time where the
// output plane is large; small planes put conv2dImagesPerGemm images into
// one product (Conv.h), whose column matrix [C/groups * kh * kw, images * ho
// * wo] the workspace holds. A 1x1, stride-1, unpadded convolution taken one
// image at a time already has its input in column layout and skips the
// copy. Threads split im2col and col2im by channel and each GEMM by rows or
// columns of its product, one single-threaded BLAS call per thread: the BLAS's own
// threading of these small products (one per image) was slower on two
// threads than one thread (ResNet-18 on 32x32 images).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Conv.h"

#include "runtime/kernels/Gemm.h"
#include "runtime/kernels/Parallel.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace cairn::kernels {

namespace {

/// Sizes derived once from the shape.
struct ConvDims {
  int64_t cg, og; // channels per group, in and out
  int64_t k;      // rows of the column matrix: cg * kh * kw
  int64_t hw, p;  // input and output plane sizes
  bool direct;    // x already is the column matrix (1x1, stride 1, no pad)

  explicit ConvDims(const Conv2dShape &s)
      : cg(s.c / s.groups), og(s.o / s.groups), k(cg * s.kh * s.kw),
        hw(s.h * s.w), p(s.ho * s.wo),
        direct(s.kh == 1 && s.kw == 1 && s.sh == 1 && s.sw == 1 && s.ph == 0 &&
               s.pw == 0 && s.ho == s.h && s.wo == s.w) {}
};

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Outputs [lo, hi) of `outSize` whose input index o * stride + offset falls
/// inside [0, inSize).
void validRange(int64_t offset, int64_t stride, int64_t inSize, int64_t outSize,
                int64_t &lo, int64_t &hi) {
  lo = offset >= 0 ? 0 : ceilDiv(-offset, stride);
  hi = inSize - offset <= 0 ? 0 : ceilDiv(inSize - offset, stride);
  hi = std::min(hi, outSize);
  lo = std::min(lo, hi);
}

/// col[(c*kh + i)*kw + j, oh*wo + ow] = x[c, oh*sh - ph + i*dh,
/// ow*sw - pw + j*dw], zero outside the input; col's rows are `ld` apart.
/// x is one group of one image.
template <typename T>
void im2col(const Conv2dShape &s, const T *x, int64_t channels, T *col,
            int64_t ld) {
  const int64_t p = s.ho * s.wo;
  parallelForEach(channels, s.kh * s.kw * p, [&](int64_t c) {
    const T *xc = x + c * s.h * s.w;
    for (int64_t i = 0; i < s.kh; ++i) {
      const int64_t hOff = i * s.dh - s.ph;
      int64_t ohLo, ohHi;
      validRange(hOff, s.sh, s.h, s.ho, ohLo, ohHi);
      for (int64_t j = 0; j < s.kw; ++j) {
        const int64_t wOff = j * s.dw - s.pw;
        int64_t owLo, owHi;
        validRange(wOff, s.sw, s.w, s.wo, owLo, owHi);
        T *row = col + ((c * s.kh + i) * s.kw + j) * ld;
        std::fill(row, row + ohLo * s.wo, T(0));
        for (int64_t oh = ohLo; oh < ohHi; ++oh) {
          T *out = row + oh * s.wo;
          const T *in = xc + (oh * s.sh + hOff) * s.w;
          std::fill(out, out + owLo, T(0));
          // A plain loop: rows are short, and a memcpy call per row costs
          // more than the copy.
          if (s.sw == 1) {
            for (int64_t ow = owLo; ow < owHi; ++ow)
              out[ow] = in[ow + wOff];
          } else {
            for (int64_t ow = owLo; ow < owHi; ++ow)
              out[ow] = in[ow * s.sw + wOff];
          }
          std::fill(out + owHi, out + s.wo, T(0));
        }
        std::fill(row + ohHi * s.wo, row + p, T(0));
      }
    }
  });
}

/// The adjoint of im2col: x[c, ih, iw] += every column entry taken from it.
template <typename T>
void col2im(const Conv2dShape &s, const T *col, int64_t channels, T *x,
            int64_t ld) {
  const int64_t p = s.ho * s.wo;
  // Channel c writes only its own input plane.
  parallelForEach(channels, s.kh * s.kw * p, [&](int64_t c) {
    T *xc = x + c * s.h * s.w;
    for (int64_t i = 0; i < s.kh; ++i) {
      const int64_t hOff = i * s.dh - s.ph;
      int64_t ohLo, ohHi;
      validRange(hOff, s.sh, s.h, s.ho, ohLo, ohHi);
      for (int64_t j = 0; j < s.kw; ++j) {
        const int64_t wOff = j * s.dw - s.pw;
        int64_t owLo, owHi;
        validRange(wOff, s.sw, s.w, s.wo, owLo, owHi);
        const T *row = col + ((c * s.kh + i) * s.kw + j) * ld;
        for (int64_t oh = ohLo; oh < ohHi; ++oh) {
          const T *in = row + oh * s.wo;
          T *out = xc + (oh * s.sh + hOff) * s.w;
          if (s.sw == 1) {
            for (int64_t ow = owLo; ow < owHi; ++ow)
              out[ow + wOff] += in[ow];
          } else {
            for (int64_t ow = owLo; ow < owHi; ++ow)
              out[ow * s.sw + wOff] += in[ow];
          }
        }
      }
    }
  });
}

/// C = alpha op(A) op(B) + beta C, as gemm(), with the rows or the columns
/// of C (whichever are more) split across threads: one single-threaded BLAS
/// call per thread (OpenBLAS's OpenMP build does not thread inside a
/// parallel region). Every element of C is the same dot product as in one
/// call, so where the BLAS core rounds a dot product alike wherever its row
/// or column falls, the result does not depend on the split.
template <typename T>
void splitGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
               T alpha, const T *a, int64_t lda, const T *b, int64_t ldb,
               T beta, T *c, int64_t ldc) {
  // A size the BLAS cannot take throws from gemm(), on this thread.
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (std::max({m, n, k, lda, ldb, ldc}) > kMax)
    return gemm<T>(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c,
                   ldc);
  if (m >= n) {
    // Rows of op(A): rows of A, or its columns when transposed.
    const int64_t step = transA ? 1 : lda;
    parallelFor(
        m, std::max<int64_t>(n * k / 16, 1),
        [&](int64_t begin, int64_t end) {
          gemm<T>(transA, transB, end - begin, n, k, alpha, a + begin * step,
                  lda, b, ldb, beta, c + begin * ldc, ldc);
        },
        /*align=*/16);
    return;
  }
  // Columns of op(B): columns of B, or its rows when transposed.
  const int64_t step = transB ? ldb : 1;
  parallelFor(
      n, std::max<int64_t>(m * k / 16, 1),
      [&](int64_t begin, int64_t end) {
        gemm<T>(transA, transB, m, end - begin, k, alpha, a, lda,
                b + begin * step, ldb, beta, c + begin, ldc);
      },
      /*align=*/16);
}

/// Where plane (image i, channel c) of p elements lies, in planes: i * image
/// + c * channel. NCHW with `stride` channels an image is {stride, 1}; the
/// planes of one group of channels side by side ([channels, images * p]) are
/// {1, images}.
struct PlaneLayout {
  int64_t image, channel;
};

/// Copies `images` x `channels` planes of p elements from one layout to the
/// other: gathers a group's NCHW planes side by side for a GEMM, or scatters
/// its product back.
template <typename T>
void copyPlanes(const T *from, PlaneLayout in, T *to, PlaneLayout out,
                int64_t images, int64_t channels, int64_t p) {
  parallelForEach(channels, images * p, [&](int64_t c) {
    for (int64_t i = 0; i < images; ++i)
      std::copy_n(from + (i * in.image + c * in.channel) * p, p,
                  to + (i * out.image + c * out.channel) * p);
  });
}

} // namespace

// Images go through the GEMMs `images` at a time: their column matrices side
// by side ([k, images * p], image i in columns [i p, (i + 1) p)), and, above
// one image, the group's outputs (or output gradients) side by side after
// them in the workspace ([og, images * p]), copied from or to NCHW. Every
// entry of a product is the same dot product whatever the number of images
// beside it, and the bias seeds the output as when it is written in place.

template <typename T>
void conv2dForward(const Conv2dShape &s, const T *x, const T *w, const T *bias,
                   T *y, T *workspace, int64_t images) {
  const ConvDims d(s);
  images = std::max<int64_t>(images, 1);
  for (int64_t b0 = 0; b0 < s.n; b0 += images) {
    const int64_t nb = std::min(images, s.n - b0), cols = nb * d.p;
    for (int64_t g = 0; g < s.groups; ++g) {
      const T *xg = x + (b0 * s.c + g * d.cg) * d.hw;
      T *yg = y + (b0 * s.o + g * d.og) * d.p;
      // One image writes its output in place; several write theirs side by
      // side after the column matrix, then copy them out.
      T *out = images == 1 ? yg : workspace + d.k * images * d.p;
      // Seeding the output with the bias and accumulating (beta = 1) saves
      // the BLAS its separate pass that zeroes C for beta = 0.
      if (bias)
        for (int64_t o = 0; o < d.og; ++o)
          std::fill(out + o * cols, out + (o + 1) * cols, bias[g * d.og + o]);
      const T *col = xg;
      if (!d.direct || images > 1) {
        for (int64_t i = 0; i < nb; ++i)
          im2col(s, xg + i * s.c * d.hw, d.cg, workspace + i * d.p, cols);
        col = workspace;
      }
      splitGemm<T>(false, false, d.og, cols, d.k, T(1), w + g * d.og * d.k,
                   d.k, col, cols, bias ? T(1) : T(0), out, cols);
      if (images > 1)
        copyPlanes(out, {1, nb}, yg, {s.o, 1}, nb, d.og, d.p);
    }
  }
}

template <typename T>
void conv2dBackwardInput(const Conv2dShape &s, const T *dy, const T *w, T *dx,
                         T *workspace, int64_t images) {
  const ConvDims d(s);
  images = std::max<int64_t>(images, 1);
  const bool direct = d.direct && images == 1;
  if (!direct)
    std::fill(dx, dx + s.n * s.c * d.hw, T(0));
  for (int64_t b0 = 0; b0 < s.n; b0 += images) {
    const int64_t nb = std::min(images, s.n - b0), cols = nb * d.p;
    for (int64_t g = 0; g < s.groups; ++g) {
      const T *dyg = dy + (b0 * s.o + g * d.og) * d.p;
      T *dxg = dx + (b0 * s.c + g * d.cg) * d.hw;
      const T *wg = w + g * d.og * d.k;
      if (images > 1) {
        T *gathered = workspace + d.k * images * d.p;
        copyPlanes(dyg, {s.o, 1}, gathered, {1, nb}, nb, d.og, d.p);
        dyg = gathered;
      }
      // dcol[k, cols] = W_g^T dY_g; in the direct case dcol is dx itself.
      T *dcol = direct ? dxg : workspace;
      splitGemm<T>(true, false, d.k, cols, d.og, T(1), wg, d.k, dyg, cols,
                   T(0), dcol, cols);
      if (!direct)
        for (int64_t i = 0; i < nb; ++i)
          col2im(s, dcol + i * d.p, d.cg, dxg + i * s.c * d.hw, cols);
    }
  }
}

template <typename T>
void conv2dBackwardWeight(const Conv2dShape &s, const T *dy, const T *x, T *dw,
                          T *dbias, T *workspace, int64_t images,
                          bool accumulate) {
  const ConvDims d(s);
  images = std::max<int64_t>(images, 1);
  if (s.n == 0 && !accumulate)
    std::fill(dw, dw + s.o * d.k, T(0));
  for (int64_t b0 = 0; b0 < s.n; b0 += images) {
    const int64_t nb = std::min(images, s.n - b0), cols = nb * d.p;
    for (int64_t g = 0; g < s.groups; ++g) {
      const T *xg = x + (b0 * s.c + g * d.cg) * d.hw;
      const T *dyg = dy + (b0 * s.o + g * d.og) * d.p;
      const T *col = xg;
      if (!d.direct || images > 1) {
        for (int64_t i = 0; i < nb; ++i)
          im2col(s, xg + i * s.c * d.hw, d.cg, workspace + i * d.p, cols);
        col = workspace;
      }
      if (images > 1) {
        T *gathered = workspace + d.k * images * d.p;
        copyPlanes(dyg, {s.o, 1}, gathered, {1, nb}, nb, d.og, d.p);
        dyg = gathered;
      }
      // dW_g += dY_g col^T over these images; the first images overwrite
      // (unless accumulating).
      splitGemm<T>(false, true, d.og, d.k, cols, T(1), dyg, cols, col, cols,
                   b0 == 0 && !accumulate ? T(0) : T(1), dw + g * d.og * d.k,
                   d.k);
    }
  }
  if (dbias)
    conv2dBackwardBias(s, dy, dbias);
}

template <typename T>
void conv2dBackwardBias(const Conv2dShape &s, const T *dy, T *dbias) {
  const int64_t p = s.ho * s.wo;
  parallelForEach(s.o, s.n * p, [&](int64_t o) {
    // Summed in double (n * ho * wo terms drift in float), in independent
    // lanes so the adds vectorize instead of forming one long chain.
    constexpr int64_t kLanes = 8;
    double lanes[kLanes] = {};
    for (int64_t b = 0; b < s.n; ++b) {
      const T *plane = dy + (b * s.o + o) * p;
      int64_t i = 0;
      for (; i + kLanes <= p; i += kLanes)
        for (int64_t l = 0; l < kLanes; ++l)
          lanes[l] += plane[i + l];
      for (; i < p; ++i)
        lanes[i % kLanes] += plane[i];
    }
    double sum = 0;
    for (double lane : lanes)
      sum += lane;
    dbias[o] = T(sum);
  });
}

template <typename T>
void conv2dAddInputBias(const Conv2dShape &s, const T *bias, T *dx) {
  const int64_t p = s.h * s.w;
  parallelForEach(s.n * s.c, p, [&](int64_t plane) {
    const T add = bias[plane % s.c];
    T *out = dx + plane * p;
    for (int64_t i = 0; i < p; ++i)
      out[i] += add;
  });
}

#define CAIRN_INSTANTIATE_CONV2D(T)                                            \
  template void conv2dForward<T>(const Conv2dShape &, const T *, const T *,    \
                                 const T *, T *, T *, int64_t);                \
  template void conv2dBackwardInput<T>(const Conv2dShape &, const T *,         \
                                       const T *, T *, T *, int64_t);          \
  template void conv2dBackwardWeight<T>(const Conv2dShape &, const T *,        \
                                        const T *, T *, T *, T *, int64_t,     \
                                        bool);                                 \
  template void conv2dBackwardBias<T>(const Conv2dShape &, const T *, T *);    \
  template void conv2dAddInputBias<T>(const Conv2dShape &, const T *, T *);
CAIRN_INSTANTIATE_CONV2D(float)
CAIRN_INSTANTIATE_CONV2D(double)
#undef CAIRN_INSTANTIATE_CONV2D

} // namespace cairn::kernels
