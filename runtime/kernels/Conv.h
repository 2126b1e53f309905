//===- Conv.h - 2-D convolution, forward and backward ------------*- C++ -*-===//
//
// NCHW convolution as PyTorch's nn.Conv2d (weight [O, C/groups, kh, kw]),
// through im2col + GEMM. The caller owns the workspace (the memory plan
// holds it): conv2dWorkspaceElements() elements of T.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_CONV_H
#define CAIRN_RUNTIME_KERNELS_CONV_H

#include <algorithm>
#include <cstdint>

namespace cairn::kernels {

struct Conv2dShape {
  int64_t n, c, h, w;     // input
  int64_t o, kh, kw;      // output channels, kernel
  int64_t sh, sw;         // stride
  int64_t ph, pw;         // symmetric zero padding
  int64_t dh, dw;         // dilation
  int64_t groups;
  int64_t ho, wo;         // output spatial size

  bool operator==(const Conv2dShape &other) const {
    return n == other.n && c == other.c && h == other.h && w == other.w &&
           o == other.o && kh == other.kh && kw == other.kw && sh == other.sh &&
           sw == other.sw && ph == other.ph && pw == other.pw &&
           dh == other.dh && dw == other.dw && groups == other.groups &&
           ho == other.ho && wo == other.wo;
  }
};

/// The three kernels of a convolution, which size their scratch apart.
enum class ConvPass { Forward, BackwardInput, BackwardWeight };

/// Output columns below which a GEMM per image spends its time repacking the
/// weights (an og x k panel for every image): the forward pass and the input
/// gradient of smaller output planes put several images side by side in one
/// GEMM of at least this many columns. bench/conv_kernels/run.sh measures it
/// (bench/results/conv-kernels-2026-11-26-03ba65e.md, two threads, batch 32):
/// ResNet-18's 4x4 layer (512 channels) runs forward and input gradient in
/// 14.0 ms instead of 20.2 with 8 images a GEMM, and gains little beyond;
/// its 8x8 layer gains 4% with 2, and its 16x16 one loses from grouping.
constexpr int64_t kConvGemmColumns = 128;

/// How many images one GEMM takes: a rule of the shape alone, so that every
/// build of a model (any plan, any recomputation) runs the same products
/// and rounds alike. The weight gradient takes one image at a time: it would
/// gain as much, but it is where a ResNet's training step peaks (the
/// gradient of its widest weight is live), and its grown scratch would grow
/// the arena. So does a 1x1, stride-1, unpadded convolution, which reads its
/// input as the column matrix in place.
inline int64_t conv2dImagesPerGemm(const Conv2dShape &s, ConvPass pass) {
  const int64_t p = s.ho * s.wo;
  const bool direct = s.kh == 1 && s.kw == 1 && s.sh == 1 && s.sw == 1 &&
                      s.ph == 0 && s.pw == 0 && s.ho == s.h && s.wo == s.w;
  if (pass == ConvPass::BackwardWeight || direct || s.n <= 1 || p <= 0 ||
      p >= kConvGemmColumns)
    return 1;
  return std::min(s.n, (kConvGemmColumns + p - 1) / p);
}

/// Elements of T the three entry points below need as scratch for
/// `images` images per GEMM: their column matrix for one group, and above
/// one image, the group's output (or output gradient) of those images side
/// by side. Inline, so that the compiler sizes the planned workspace by
/// this same rule without linking the kernels.
inline int64_t conv2dWorkspaceElements(const Conv2dShape &s, int64_t images) {
  const int64_t rows = (s.c / s.groups) * s.kh * s.kw, p = s.ho * s.wo;
  if (images <= 1)
    return rows * p;
  return images * p * (rows + s.o / s.groups);
}
inline int64_t conv2dWorkspaceElements(const Conv2dShape &s, ConvPass pass) {
  return conv2dWorkspaceElements(s, conv2dImagesPerGemm(s, pass));
}

/// y[n, o, ho, wo] = conv(x, w) + bias (bias may be null).
template <typename T>
void conv2dForward(const Conv2dShape &s, const T *x, const T *w,
                   const T *bias, T *y, T *workspace, int64_t images);

/// dx = d(loss)/dx given dy; dx is overwritten.
template <typename T>
void conv2dBackwardInput(const Conv2dShape &s, const T *dy, const T *w, T *dx,
                         T *workspace, int64_t images);

/// dw (and dbias = sum of dy over n, ho, wo, when dbias is not null) are
/// overwritten; with `accumulate`, dw's products are added to it, as the
/// images after the first group's are (a batch given a group at a time).
template <typename T>
void conv2dBackwardWeight(const Conv2dShape &s, const T *dy, const T *x, T *dw,
                          T *dbias, T *workspace, int64_t images,
                          bool accumulate = false);

/// dx[n, c, h, w] += bias[c]: a transposed convolution's bias (it is
/// conv2dBackwardInput), added to its float sums.
template <typename T>
void conv2dAddInputBias(const Conv2dShape &s, const T *bias, T *dx);

/// dbias[o] = the sum of dy over n, ho and wo (in double), overwritten.
template <typename T>
void conv2dBackwardBias(const Conv2dShape &s, const T *dy, T *dbias);

/// The same, conv2dImagesPerGemm(s, pass) images per GEMM: what the
/// generated code calls, with conv2dWorkspaceElements(s, pass) elements of
/// workspace.
template <typename T>
void conv2dForward(const Conv2dShape &s, const T *x, const T *w,
                   const T *bias, T *y, T *workspace) {
  conv2dForward(s, x, w, bias, y, workspace,
                conv2dImagesPerGemm(s, ConvPass::Forward));
}
template <typename T>
void conv2dBackwardInput(const Conv2dShape &s, const T *dy, const T *w, T *dx,
                         T *workspace) {
  conv2dBackwardInput(s, dy, w, dx, workspace,
                      conv2dImagesPerGemm(s, ConvPass::BackwardInput));
}
template <typename T>
void conv2dBackwardWeight(const Conv2dShape &s, const T *dy, const T *x, T *dw,
                          T *dbias, T *workspace) {
  conv2dBackwardWeight(s, dy, x, dw, dbias, workspace,
                       conv2dImagesPerGemm(s, ConvPass::BackwardWeight));
}

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_CONV_H
