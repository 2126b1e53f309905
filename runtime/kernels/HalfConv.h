//===- HalfConv.h - Convolutions of half tensors on the CPU ------*- C++ -*-===//
//
// A convolution (forward, input gradient, weight gradient) whose tensors
// are f16 or bf16 (Convert.h's storage tags), computed as autocast computes
// it: in float32 from the widened operands, each result rounded once. The
// images go a group at a time, the group the float im2col kernels (Conv.h)
// put in one GEMM: the group's operands are widened into float32 scratch,
// the float kernel runs on them, and its result is rounded into the half
// tensor. The weights are widened once (or, for the weight gradient, summed
// in float32 over the groups and rounded at the end). So the scratch holds
// one group's images and the weights in float32, not float32 copies of the
// whole batch (what cairn.kernel.cast gave before); the memory plan holds
// it, sized by halfConv2dWorkspaceElements, the rule the compiler reads too.
//
// Each group's products are the float kernel's on the same images, and the
// weight gradient adds the groups into one sum as that kernel does, so the
// results are the float im2col kernels' bits on widened copies, rounded.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_HALFCONV_H
#define CAIRN_RUNTIME_KERNELS_HALFCONV_H

#include "runtime/kernels/Conv.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace cairn::kernels {

/// Floats of scratch a half convolution's pass takes: the weights, the
/// bias, one group of conv2dImagesPerGemm images' input and output, and the
/// float kernel's own scratch for that group.
inline int64_t halfConv2dWorkspaceElements(const Conv2dShape &s,
                                           ConvPass pass) {
  const int64_t images = std::max<int64_t>(conv2dImagesPerGemm(s, pass), 1);
  const int64_t weights = s.o * (s.c / s.groups) * s.kh * s.kw;
  return weights + s.o + images * (s.c * s.h * s.w + s.o * s.ho * s.wo) +
         conv2dWorkspaceElements(s, images);
}

/// y = conv(x, w) + bias (bias may be null), T F16 or Bf16; `workspace`
/// holds at least halfConv2dWorkspaceElements(s, Forward) floats, which
/// `workspaceBytes` says.
template <typename T>
void halfConv2dForward(const Conv2dShape &s, const uint16_t *x,
                       const uint16_t *w, const uint16_t *bias, uint16_t *y,
                       float *workspace, size_t workspaceBytes);

/// dx from dy, overwritten.
template <typename T>
void halfConv2dBackwardInput(const Conv2dShape &s, const uint16_t *dy,
                             const uint16_t *w, uint16_t *dx, float *workspace,
                             size_t workspaceBytes);

/// dw, overwritten (the bias gradient is a reduction of its own).
template <typename T>
void halfConv2dBackwardWeight(const Conv2dShape &s, const uint16_t *dy,
                              const uint16_t *x, uint16_t *dw,
                              float *workspace, size_t workspaceBytes);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_HALFCONV_H
