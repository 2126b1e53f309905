//===- HalfConv.cpp - Convolutions of half tensors on the CPU -------------===//
//
// The scratch, in floats: the weights (widened, or the weight gradient's
// sums), the bias, one group's input planes, one group's output planes, and
// the float kernel's own scratch for the group. A group of images is
// contiguous in every NCHW operand, so each widening and rounding is one
// cast of a run (Convert.h, threaded).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/HalfConv.h"

#include "runtime/kernels/Convert.h"
#include "runtime/kernels/KernelError.h"

#include <string>
#include <type_traits>

namespace cairn::kernels {

namespace {

template <typename T> constexpr CastType kHalfType =
    std::is_same_v<T, F16> ? CastType::F16 : CastType::BF16;

template <typename T> void widen(const uint16_t *in, float *out, int64_t n) {
  castElements(in, kHalfType<T>, out, CastType::F32, n);
}

template <typename T> void narrow(const float *in, uint16_t *out, int64_t n) {
  castElements(in, CastType::F32, out, kHalfType<T>, n);
}

/// The scratch of one pass, carved as halfConv2dWorkspaceElements counts it.
struct Scratch {
  float *weights, *bias, *in, *out, *kernel;
  int64_t images;

  Scratch(const Conv2dShape &s, ConvPass pass, float *workspace,
          size_t workspaceBytes) {
    const size_t need = size_t(halfConv2dWorkspaceElements(s, pass)) * 4;
    if (workspaceBytes < need)
      throw KernelError("a half convolution's workspace of " +
                        std::to_string(workspaceBytes) +
                        " bytes is smaller than its " + std::to_string(need));
    images = std::max<int64_t>(conv2dImagesPerGemm(s, pass), 1);
    weights = workspace;
    bias = weights + s.o * (s.c / s.groups) * s.kh * s.kw;
    in = bias + s.o;
    out = in + images * s.c * s.h * s.w;
    kernel = out + images * s.o * s.ho * s.wo;
  }
};

/// The shape of `count` images of the batch.
Conv2dShape group(const Conv2dShape &s, int64_t count) {
  Conv2dShape g = s;
  g.n = count;
  return g;
}

} // namespace

template <typename T>
void halfConv2dForward(const Conv2dShape &s, const uint16_t *x,
                       const uint16_t *w, const uint16_t *bias, uint16_t *y,
                       float *workspace, size_t workspaceBytes) {
  Scratch scratch(s, ConvPass::Forward, workspace, workspaceBytes);
  const int64_t plane = s.c * s.h * s.w, outPlane = s.o * s.ho * s.wo;
  widen<T>(w, scratch.weights, s.o * (s.c / s.groups) * s.kh * s.kw);
  if (bias)
    widen<T>(bias, scratch.bias, s.o);
  for (int64_t b = 0; b < s.n; b += scratch.images) {
    const int64_t count = std::min(scratch.images, s.n - b);
    widen<T>(x + b * plane, scratch.in, count * plane);
    conv2dForward<float>(group(s, count), scratch.in, scratch.weights,
                         bias ? scratch.bias : nullptr, scratch.out,
                         scratch.kernel, scratch.images);
    narrow<T>(scratch.out, y + b * outPlane, count * outPlane);
  }
}

template <typename T>
void halfConv2dBackwardInput(const Conv2dShape &s, const uint16_t *dy,
                             const uint16_t *w, uint16_t *dx, float *workspace,
                             size_t workspaceBytes) {
  Scratch scratch(s, ConvPass::BackwardInput, workspace, workspaceBytes);
  const int64_t plane = s.c * s.h * s.w, outPlane = s.o * s.ho * s.wo;
  widen<T>(w, scratch.weights, s.o * (s.c / s.groups) * s.kh * s.kw);
  for (int64_t b = 0; b < s.n; b += scratch.images) {
    const int64_t count = std::min(scratch.images, s.n - b);
    widen<T>(dy + b * outPlane, scratch.out, count * outPlane);
    conv2dBackwardInput<float>(group(s, count), scratch.out, scratch.weights,
                               scratch.in, scratch.kernel, scratch.images);
    narrow<T>(scratch.in, dx + b * plane, count * plane);
  }
}

template <typename T>
void halfConv2dBackwardWeight(const Conv2dShape &s, const uint16_t *dy,
                              const uint16_t *x, uint16_t *dw,
                              float *workspace, size_t workspaceBytes) {
  Scratch scratch(s, ConvPass::BackwardWeight, workspace, workspaceBytes);
  const int64_t plane = s.c * s.h * s.w, outPlane = s.o * s.ho * s.wo;
  const int64_t weights = s.o * (s.c / s.groups) * s.kh * s.kw;
  if (s.n == 0)
    std::fill(scratch.weights, scratch.weights + weights, 0.0f);
  for (int64_t b = 0; b < s.n; b += scratch.images) {
    const int64_t count = std::min(scratch.images, s.n - b);
    widen<T>(x + b * plane, scratch.in, count * plane);
    widen<T>(dy + b * outPlane, scratch.out, count * outPlane);
    // The groups after the first add to the float32 sums.
    conv2dBackwardWeight<float>(group(s, count), scratch.out, scratch.in,
                                scratch.weights, nullptr, scratch.kernel,
                                scratch.images, /*accumulate=*/b > 0);
  }
  narrow<T>(scratch.weights, dw, weights);
}

#define CAIRN_INSTANTIATE_HALF_CONV2D(T)                                       \
  template void halfConv2dForward<T>(const Conv2dShape &, const uint16_t *,   \
                                     const uint16_t *, const uint16_t *,      \
                                     uint16_t *, float *, size_t);            \
  template void halfConv2dBackwardInput<T>(const Conv2dShape &,               \
                                           const uint16_t *, const uint16_t *, \
                                           uint16_t *, float *, size_t);      \
  template void halfConv2dBackwardWeight<T>(const Conv2dShape &,              \
                                            const uint16_t *,                 \
                                            const uint16_t *, uint16_t *,     \
                                            float *, size_t);
CAIRN_INSTANTIATE_HALF_CONV2D(F16)
CAIRN_INSTANTIATE_HALF_CONV2D(Bf16)
#undef CAIRN_INSTANTIATE_HALF_CONV2D

} // namespace cairn::kernels
