//===- HalfConv.h - Convolutions of half tensors on the CPU ------*- C++
//-*-===//
//
// A convolution (forward, input gradient, weight gradient) in f16 or bf16
// (Convert.h's storage tags; a tensor may be float32, rounded to the half
// type as it is read or written: HalfOperand.h), computed as autocast
// computes it: in float32 from the widened operands, each result rounded
// once. The
// images go a group at a time, the group the float im2col kernels (Conv.h)
// put in one GEMM: the group's operands are widened into float32 scratch,
// the float kernel runs on them, and its result is rounded into the half
// tensor. The weights are widened a slice of channels at a time (all of
// them but where they are large); a slice's weight gradient is summed in
// float32 over the groups and rounded at the end. So the scratch holds one
// group's images and one slice of the weights in float32, not float32
// copies of the whole batch and weights (what cairn.kernel.cast gave
// before); the memory plan holds it, sized by halfConv2dWorkspaceElements,
// the rule the compiler reads too.
//
// Each group's products are the float kernel's on the same images, a slice
// its rows of the same products (the same dot products where the BLAS
// rounds a row alike wherever it falls, as Conv.cpp's splitGemm assumes),
// and the weight gradient adds the groups into one sum as that kernel
// does, so the results are the float im2col kernels' bits on widened
// copies, rounded. The forward and the input gradient may run a group
// through oneDNN instead (ConvLibrary.h), as a float32 convolution does;
// the weight gradient's sums over the groups are im2col's.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_HALFCONV_H
#define CAIRN_RUNTIME_KERNELS_HALFCONV_H

#include "runtime/kernels/Conv.h"
#include "runtime/kernels/HalfOperand.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace cairn::kernels {

/// Floats of a slice of the weights in float32 at most (4 MiB): where the
/// weights are larger (ResNet-18's last stages: 9 MiB), a pass takes the
/// channels a slice at a time (output channels for the forward and the
/// weight gradient, input channels for the input gradient, so that no slice
/// splits a sum), and the scratch holds one slice. Its images are widened,
/// and their column matrices made, again for each slice, so slices of 1 MiB
/// cost ResNet-18's step more time than these for no smaller plan (neither
/// plan's peak holds a convolution's scratch).
constexpr int64_t kHalfConvWeightElements = int64_t(1) << 20;

/// The channels one slice of `pass` takes: all of them for a grouped
/// convolution, else as many as kHalfConvWeightElements holds (at least
/// one).
inline int64_t halfConv2dSliceWidth(const Conv2dShape &s, ConvPass pass) {
  const bool inputs = pass == ConvPass::BackwardInput;
  const int64_t channels = inputs ? s.c : s.o;
  if (s.groups != 1)
    return channels;
  const int64_t perChannel = (inputs ? s.o : s.c) * s.kh * s.kw;
  return std::clamp<int64_t>(kHalfConvWeightElements /
                                 std::max<int64_t>(perChannel, 1),
                             1, std::max<int64_t>(channels, 1));
}

/// The convolution one slice of `width` channels computes.
inline Conv2dShape halfConv2dSlice(const Conv2dShape &s, ConvPass pass,
                                   int64_t width) {
  Conv2dShape sliced = s;
  (pass == ConvPass::BackwardInput ? sliced.c : sliced.o) = width;
  return sliced;
}

/// Floats of scratch a half convolution's pass takes: one slice's weights,
/// the bias, one group of conv2dImagesPerGemm images' input and output (of
/// the slice), and the float kernel's own scratch for that group and slice.
/// A weight gradient written in float32 (`float32Result`: HalfOperand.h)
/// sums each slice in its result, and takes no weights.
inline int64_t halfConv2dWorkspaceElements(const Conv2dShape &s, ConvPass pass,
                                           bool float32Result = false) {
  const int64_t images = std::max<int64_t>(conv2dImagesPerGemm(s, pass), 1);
  const Conv2dShape t = halfConv2dSlice(s, pass, halfConv2dSliceWidth(s, pass));
  const int64_t weights = float32Result && pass == ConvPass::BackwardWeight
                              ? 0
                              : t.o * (t.c / t.groups) * t.kh * t.kw;
  return weights + s.o + images * (t.c * t.h * t.w + t.o * t.ho * t.wo) +
         conv2dWorkspaceElements(t, images);
}

class ConvLibrary;

/// y = conv(x, w) + bias (bias may be null), T F16 or Bf16, each tensor
/// stored in T or in float32 rounded to T (HalfOperand.h); `workspace`
/// holds at least halfConv2dWorkspaceElements(s, Forward) floats, which
/// `workspaceBytes` says. With a `library`, each group of a slice runs as
/// call site `site` of it (one part for each shape: whole or last slice,
/// whole or last group) where the library runs that shape in the float
/// kernel's scratch (oneDNN, whose forward and input gradient give the same
/// bits whatever the images a call: ConvLibrary.h); im2col otherwise.
template <typename T>
void halfConv2dForward(const Conv2dShape &s, HalfIn x, HalfIn w, HalfIn bias,
                       HalfOut y, float *workspace, size_t workspaceBytes,
                       ConvLibrary *library = nullptr, int site = 0);

/// dx from dy, overwritten; the library as for the forward. A transposed
/// convolution's `bias` (s.c elements, or null) is added to the float32
/// sums before they are rounded, as autocast's conv_transpose2d adds it.
template <typename T>
void halfConv2dBackwardInput(const Conv2dShape &s, HalfIn dy, HalfIn w,
                             HalfIn bias, HalfOut dx, float *workspace,
                             size_t workspaceBytes,
                             ConvLibrary *library = nullptr, int site = 0);

/// dw, overwritten (the bias gradient is a reduction of its own); a float32
/// dw takes the slices' sums itself, in halfConv2dWorkspaceElements(s,
/// BackwardWeight, true) floats of scratch.
template <typename T>
void halfConv2dBackwardWeight(const Conv2dShape &s, HalfIn dy, HalfIn x,
                              HalfOut dw, float *workspace,
                              size_t workspaceBytes);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_HALFCONV_H
