//===- HalfConv.cpp - Convolutions of half tensors on the CPU -------------===//
//
// The scratch, in floats: a slice's weights (widened, or the weight
// gradient's sums), the bias, one group's input planes, one group's output
// planes (of the slice), and the float kernel's own scratch for the group.
// A group of images is contiguous in every NCHW operand, and a slice of its
// channels one run an image, so each widening and rounding is a cast of a
// few runs (Convert.h, threaded).
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/HalfConv.h"

#include "runtime/kernels/ConvLibrary.h"
#include "runtime/kernels/Convert.h"
#include "runtime/kernels/KernelError.h"

#include <algorithm>
#include <string>
#include <vector>

namespace cairn::kernels {

namespace {

/// The scratch of one pass, carved as halfConv2dWorkspaceElements counts it
/// for its widest slice.
struct Scratch {
  float *weights, *bias, *in, *out, *kernel;
  int64_t images, width;

  /// `float32Result`: a weight gradient summed in its float32 result.
  Scratch(const Conv2dShape &s, ConvPass pass, float *workspace,
          size_t workspaceBytes, bool float32Result = false) {
    const size_t need =
        size_t(halfConv2dWorkspaceElements(s, pass, float32Result)) * 4;
    if (workspaceBytes < need)
      throw KernelError("a half convolution's workspace of " +
                        std::to_string(workspaceBytes) +
                        " bytes is smaller than its " + std::to_string(need));
    images = std::max<int64_t>(conv2dImagesPerGemm(s, pass), 1);
    width = halfConv2dSliceWidth(s, pass);
    const Conv2dShape t = halfConv2dSlice(s, pass, width);
    const bool sumsInResult = float32Result && pass == ConvPass::BackwardWeight;
    weights = sumsInResult ? nullptr : workspace;
    bias =
        workspace + (sumsInResult ? 0 : t.o * (t.c / t.groups) * t.kh * t.kw);
    in = bias + s.o;
    out = in + images * t.c * t.h * t.w;
    kernel = out + images * t.o * t.ho * t.wo;
  }
};

/// The bytes of the float kernel's scratch, from `kernel` to the end.
size_t kernelBytes(const float *workspace, size_t workspaceBytes,
                   const float *kernel) {
  return workspaceBytes - size_t(kernel - workspace) * sizeof(float);
}

/// The library's part (ConvLibrary.h) for a slice of `width` channels and a
/// group of `count` images: each of the up to four shapes a pass runs
/// (whole or last slice, whole or last group) its own.
int libraryPart(const Scratch &scratch, int64_t width, int64_t count) {
  return (width < scratch.width ? 2 : 0) + (count < scratch.images ? 1 : 0);
}

/// The shape of `count` images of `s`.
Conv2dShape group(const Conv2dShape &s, int64_t count) {
  Conv2dShape g = s;
  g.n = count;
  return g;
}

/// Widens `count` runs of `run` elements, `stride` apart, into one block.
template <typename T>
void widenRuns(HalfIn in, int64_t stride, int64_t count, int64_t run,
               float *out) {
  if (run == stride)
    return in.widen<T>(out, count * run);
  for (int64_t i = 0; i < count; ++i)
    (in + i * stride).widen<T>(out + i * run, run);
}

/// Rounds one block into `count` runs of `run` elements, `stride` apart.
template <typename T>
void narrowRuns(const float *in, int64_t count, int64_t run, HalfOut out,
                int64_t stride) {
  if (run == stride)
    return out.narrow<T>(in, count * run);
  for (int64_t i = 0; i < count; ++i)
    (out + i * stride).narrow<T>(in + i * run, run);
}

} // namespace

template <typename T>
void halfConv2dForward(const Conv2dShape &s, HalfIn x, HalfIn w, HalfIn bias,
                       HalfOut y, float *workspace, size_t workspaceBytes,
                       ConvLibrary *library, int site) {
  Scratch scratch(s, ConvPass::Forward, workspace, workspaceBytes);
  const size_t libraryBytes =
      kernelBytes(workspace, workspaceBytes, scratch.kernel);
  const int64_t plane = s.c * s.h * s.w, p = s.ho * s.wo;
  const int64_t perChannel = (s.c / s.groups) * s.kh * s.kw;
  if (bias)
    bias.widen<T>(scratch.bias, s.o);
  // Output channels [o0, o0 + width) a slice.
  for (int64_t o0 = 0; o0 < s.o; o0 += scratch.width) {
    const int64_t width = std::min(scratch.width, s.o - o0);
    const Conv2dShape t = halfConv2dSlice(s, ConvPass::Forward, width);
    (w + o0 * perChannel).widen<T>(scratch.weights, width * perChannel);
    for (int64_t b = 0; b < s.n; b += scratch.images) {
      const int64_t count = std::min(scratch.images, s.n - b);
      (x + b * plane).widen<T>(scratch.in, count * plane);
      const float *groupBias = bias ? scratch.bias + o0 : nullptr;
      if (!library ||
          !library->forward(site, group(t, count), scratch.in, scratch.weights,
                            groupBias, scratch.out, scratch.kernel,
                            libraryBytes, libraryPart(scratch, width, count)))
        conv2dForward<float>(group(t, count), scratch.in, scratch.weights,
                             groupBias, scratch.out, scratch.kernel,
                             scratch.images);
      narrowRuns<T>(scratch.out, count, width * p, y + (b * s.o + o0) * p,
                    s.o * p);
    }
  }
}

template <typename T>
void halfConv2dBackwardInput(const Conv2dShape &s, HalfIn dy, HalfIn w,
                             HalfIn bias, HalfOut dx, float *workspace,
                             size_t workspaceBytes, ConvLibrary *library,
                             int site) {
  Scratch scratch(s, ConvPass::BackwardInput, workspace, workspaceBytes);
  // The bias's float32 values (s.c of them; the scratch's bias slot holds
  // s.o, the forward's).
  std::vector<float> widenedBias(bias ? s.c : 0);
  if (bias)
    bias.widenRun<T>(widenedBias.data(), 0, s.c);
  const size_t libraryBytes =
      kernelBytes(workspace, workspaceBytes, scratch.kernel);
  const int64_t hw = s.h * s.w, outPlane = s.o * s.ho * s.wo;
  const int64_t kk = s.kh * s.kw, perOutput = (s.c / s.groups) * kk;
  // Input channels [c0, c0 + width) a slice: each output channel's weights
  // for them, gathered.
  for (int64_t c0 = 0; c0 < s.c; c0 += scratch.width) {
    const int64_t width = std::min(scratch.width, s.c - c0);
    const Conv2dShape t = halfConv2dSlice(s, ConvPass::BackwardInput, width);
    widenRuns<T>(w + c0 * kk, perOutput, s.o, (t.c / t.groups) * kk,
                 scratch.weights);
    for (int64_t b = 0; b < s.n; b += scratch.images) {
      const int64_t count = std::min(scratch.images, s.n - b);
      (dy + b * outPlane).widen<T>(scratch.out, count * outPlane);
      if (!library ||
          !library->backwardInput(
              site, group(t, count), scratch.out, scratch.weights, scratch.in,
              scratch.kernel, libraryBytes, libraryPart(scratch, width, count)))
        conv2dBackwardInput<float>(group(t, count), scratch.out,
                                   scratch.weights, scratch.in, scratch.kernel,
                                   scratch.images);
      if (bias)
        for (int64_t i = 0; i < count; ++i)
          for (int64_t c = 0; c < width; ++c) {
            float *plane = scratch.in + (i * width + c) * hw;
            const float add = widenedBias[c0 + c];
            for (int64_t p = 0; p < hw; ++p)
              plane[p] += add;
          }
      narrowRuns<T>(scratch.in, count, width * hw, dx + (b * s.c + c0) * hw,
                    s.c * hw);
    }
  }
}

template <typename T>
void halfConv2dBackwardWeight(const Conv2dShape &s, HalfIn dy, HalfIn x,
                              HalfOut dw, float *workspace,
                              size_t workspaceBytes) {
  Scratch scratch(s, ConvPass::BackwardWeight, workspace, workspaceBytes,
                  dw.float32() != nullptr);
  const int64_t plane = s.c * s.h * s.w, p = s.ho * s.wo;
  const int64_t perChannel = (s.c / s.groups) * s.kh * s.kw;
  // Output channels [o0, o0 + width) a slice, its sums over every group of
  // images before the next slice: in the scratch, or in a float32 result,
  // rounded there in place at the end.
  for (int64_t o0 = 0; o0 < s.o; o0 += scratch.width) {
    const int64_t width = std::min(scratch.width, s.o - o0);
    const Conv2dShape t = halfConv2dSlice(s, ConvPass::BackwardWeight, width);
    float *sums =
        dw.float32() ? dw.float32() + o0 * perChannel : scratch.weights;
    if (s.n == 0)
      std::fill(sums, sums + width * perChannel, 0.0f);
    for (int64_t b = 0; b < s.n; b += scratch.images) {
      const int64_t count = std::min(scratch.images, s.n - b);
      (x + b * plane).widen<T>(scratch.in, count * plane);
      widenRuns<T>(dy + (b * s.o + o0) * p, s.o * p, count, width * p,
                   scratch.out);
      // The groups after the first add to the float32 sums.
      conv2dBackwardWeight<float>(group(t, count), scratch.out, scratch.in,
                                  sums, nullptr, scratch.kernel, scratch.images,
                                  /*accumulate=*/b > 0);
    }
    (dw + o0 * perChannel).narrow<T>(sums, width * perChannel);
  }
}

#define CAIRN_INSTANTIATE_HALF_CONV2D(T)                                       \
  template void halfConv2dForward<T>(const Conv2dShape &, HalfIn, HalfIn,      \
                                     HalfIn, HalfOut, float *, size_t,         \
                                     ConvLibrary *, int);                      \
  template void halfConv2dBackwardInput<T>(const Conv2dShape &, HalfIn,        \
                                           HalfIn, HalfIn, HalfOut, float *,   \
                                           size_t, ConvLibrary *, int);        \
  template void halfConv2dBackwardWeight<T>(const Conv2dShape &, HalfIn,       \
                                            HalfIn, HalfOut, float *, size_t);
CAIRN_INSTANTIATE_HALF_CONV2D(F16)
CAIRN_INSTANTIATE_HALF_CONV2D(Bf16)
#undef CAIRN_INSTANTIATE_HALF_CONV2D

} // namespace cairn::kernels
