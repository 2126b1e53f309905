//===- Conv.h - 2-D convolution, forward and backward ------------*- C++ -*-===//
//
// NCHW convolution as PyTorch's nn.Conv2d (weight [O, C/groups, kh, kw]),
// through im2col + GEMM. The caller owns the workspace (the memory plan
// holds it): conv2dWorkspaceElements() elements of T.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_CONV_H
#define CAIRN_RUNTIME_KERNELS_CONV_H

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
};

/// Elements of T the three entry points below need as scratch: one image's
/// column matrix for one group. Inline, so that the compiler sizes the
/// planned workspace by this same rule without linking the kernels.
inline int64_t conv2dWorkspaceElements(const Conv2dShape &s) {
  return (s.c / s.groups) * s.kh * s.kw * s.ho * s.wo;
}

/// y[n, o, ho, wo] = conv(x, w) + bias (bias may be null).
template <typename T>
void conv2dForward(const Conv2dShape &s, const T *x, const T *w,
                   const T *bias, T *y, T *workspace);

/// dx = d(loss)/dx given dy; dx is overwritten.
template <typename T>
void conv2dBackwardInput(const Conv2dShape &s, const T *dy, const T *w, T *dx,
                         T *workspace);

/// dw (and dbias = sum of dy over n, ho, wo, when dbias is not null) are
/// overwritten.
template <typename T>
void conv2dBackwardWeight(const Conv2dShape &s, const T *dy, const T *x, T *dw,
                          T *dbias, T *workspace);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_CONV_H
