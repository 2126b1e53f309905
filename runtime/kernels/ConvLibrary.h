//===- ConvLibrary.h - oneDNN's convolutions inside the plan ---*- C++ -*-===//
//
// The generated CPU code's convolutions, through oneDNN (the library
// PyTorch's CPU convolutions use) where it has an optimised implementation
// for the shape on this CPU and that implementation fits the workspace the
// plan gave the kernel, which the im2col rule (Conv.h) sizes, so that the
// arena does not change. As the CUDA backend picks cuDNN's algorithms, the
// choice is made on the machine that runs, per call site, on its first call:
//
// - oneDNN's fast kernels want blocked layouts (channels in blocks of 8 or
//   16); the call reorders its NCHW operands into them and its results back,
//   in the workspace, and takes the batch a chunk of images at a time, the
//   largest chunk whose blocked copies, weights and scratchpad fit; where
//   the weights' copy alone would not fit, it takes the channels a slice at
//   a time (ResNet-18's last stages: 9 MiB of weights, 2.5 MiB of im2col);
// - whether a site runs oneDNN, its slices, and a weight gradient's chunk,
//   are decided within im2col's bytes, which every plan of the model gives
//   the kernel, so that any two builds compute the same bits; the forward
//   and input gradient, whose bits do not depend on the chunk, also use the
//   spare bytes a plan has free above the workspace (cairn-grow-workspaces);
// - the library allocates nothing while a step runs (user scratchpad);
// - where nothing fits, or oneDNN has only its reference or GEMM kernels,
//   the site runs Cairn's im2col + GEMM.
//
// Results are not the im2col path's bits (another order of the sums), and
// a weight gradient's depend on the threads, as with OpenBLAS; the same
// machine and thread count give the same bits run after run.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_CONVLIBRARY_H
#define CAIRN_RUNTIME_KERNELS_CONVLIBRARY_H

#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Convert.h"
#include "runtime/kernels/HalfOperand.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace cairn::kernels {

/// The channels a pass splits into slices where the weights' blocked copy
/// outgrows the workspace, each slice one oneDNN call with its part of the
/// weights: output channels for the forward and the weight gradient, input
/// channels for the input gradient, so that no slice splits a sum.
inline int64_t conv2dSlicedChannels(const Conv2dShape &s, ConvPass pass) {
  return pass == ConvPass::BackwardInput ? s.c : s.o;
}

/// The convolution one slice of `slice` of those channels computes.
inline Conv2dShape conv2dSlicedShape(const Conv2dShape &s, ConvPass pass,
                                     int64_t slice) {
  Conv2dShape sliced = s;
  (pass == ConvPass::BackwardInput ? sliced.c : sliced.o) = slice;
  return sliced;
}

/// The slice widths a pass may take, widest first: all the channels, then
/// halves while they stay whole blocks of 16 (oneDNN's). A weight gradient
/// takes its channels whole: within its bytes (one image's column matrix)
/// slices leave it one or a few images a call, and it lost to im2col on
/// ResNet-18's profile (483870d's message has the figures).
inline std::vector<int64_t> conv2dChannelSlices(const Conv2dShape &s,
                                                ConvPass pass) {
  std::vector<int64_t> widths = {conv2dSlicedChannels(s, pass)};
  if (pass == ConvPass::BackwardWeight)
    return widths;
  while (widths.back() % 32 == 0)
    widths.push_back(widths.back() / 2);
  return widths;
}

/// The estimated bytes of one call's blocked copies for `images` images and
/// a slice of `slice` channels (channels padded to blocks of 16): the
/// per-image operands and the weights. The slice is the output's channels,
/// or the input gradient's.
inline int64_t conv2dLibraryCopyBytes(const Conv2dShape &s, ConvPass pass,
                                      int64_t images, int64_t slice) {
  auto padded = [](int64_t channels) { return (channels + 15) / 16 * 16; };
  const Conv2dShape sliced = conv2dSlicedShape(s, pass, slice);
  const int64_t in = padded(sliced.c) * s.h * s.w,
                out = padded(sliced.o) * s.ho * s.wo;
  const int64_t weights = padded(sliced.o) * padded(sliced.c) * s.kh * s.kw;
  return 4 * (images * (in + out) + weights);
}

/// The most bytes of workspace oneDNN's call of a float32 convolution can
/// use: the blocked copies of the whole batch in the widest slice whose one
/// image fits im2col's bytes (ConvLibrary decides the slice within those),
/// room for twice the weights' copy again (a scratchpad of partial sums)
/// and 64 KiB of scratchpad besides. The plan gives a convolution up to
/// this much where the bytes are free anyway (cairn-grow-workspaces); its
/// forward and input gradient take the largest chunk of the batch that fits
/// what they get. A weight gradient keeps to im2col's bytes (its chunks'
/// sums would round otherwise in another plan), and so asks for none; so
/// does a site whose one image outgrows them in every slice.
inline int64_t conv2dLibraryWorkspaceBytes(const Conv2dShape &s,
                                           ConvPass pass) {
  if (s.groups != 1 || pass == ConvPass::BackwardWeight)
    return 0; // im2col's
  const int64_t planned = conv2dWorkspaceElements(s, pass) * 4;
  for (int64_t slice : conv2dChannelSlices(s, pass))
    if (conv2dLibraryCopyBytes(s, pass, 1, slice) <= planned)
      return conv2dLibraryCopyBytes(s, pass, s.n, slice) +
             2 * conv2dLibraryCopyBytes(s, pass, 0, slice) +
             (int64_t(64) << 10);
  // Spare bytes would idle: the site runs im2col in every plan.
  return 0;
}

class ConvLibrary {
public:
  /// `enabled` false: every site runs im2col (CAIRN_CPU_CONV=im2col).
  explicit ConvLibrary(bool enabled = true);
  ~ConvLibrary();
  ConvLibrary(const ConvLibrary &) = delete;
  ConvLibrary &operator=(const ConvLibrary &) = delete;

  /// Runs call site `site`'s convolution through oneDNN within the
  /// `workspaceBytes` at `workspace`: false, having written nothing, where
  /// the site cannot (the caller then runs im2col). A site is one kernel of
  /// the program: the same pass and shape on every call; a kernel that
  /// runs a few shapes (a half convolution's groups and slices, HalfConv.h)
  /// numbers them `part`, each its own shape and choice.
  bool forward(int site, const Conv2dShape &s, const float *x, const float *w,
               const float *bias, float *y, void *workspace,
               size_t workspaceBytes, int part = 0);
  bool backwardInput(int site, const Conv2dShape &s, const float *dy,
                     const float *w, float *dx, void *workspace,
                     size_t workspaceBytes, int part = 0);
  /// dw is overwritten; the bias gradient is the caller's.
  bool backwardWeight(int site, const Conv2dShape &s, const float *dy,
                      const float *x, float *dw, void *workspace,
                      size_t workspaceBytes);

  /// What site `site` (its part `part`) runs: "oneDNN jit:avx512_core, 4
  /// images a call", with "in 4 slices of 128 output channels" where it
  /// slices, or "im2col (...why)"; empty before its first call.
  std::string describe(int site, int part = 0) const;

  /// Called with describe(site) on every call of a site while set (a
  /// profile's note of how the kernel ran; null: nothing).
  using Listener = void (*)(void *context, const std::string &description);
  void setListener(Listener listener, void *context) {
    this->listener = listener;
    listenerContext = context;
  }

  struct Site; // ConvLibrary.cpp: a site's primitives, or why it has none

private:
  struct Engine;
  /// The three passes' common path: `in` is the first per-image operand
  /// (x, dy, x), `other` the weights or, for the weight gradient, dy; `out`
  /// the result.
  bool run(int site, int part, ConvPass pass, const Conv2dShape &s,
           const float *in, const float *other, float *out, const float *bias,
           void *workspace, size_t workspaceBytes);
  Site &getSite(int site, int part, ConvPass pass, const Conv2dShape &s,
                bool bias, size_t workspaceBytes);

  bool enabled;
  Listener listener = nullptr;
  void *listenerContext = nullptr;
  std::unique_ptr<Engine> engine;
  /// By site, then part.
  std::vector<std::vector<std::unique_ptr<Site>>> sites;
};

/// The generated code's convolutions: call site `site` through `library`
/// where it can run it within the workspace (float only), im2col otherwise.
/// The workspace holds `workspaceBytes`: at least im2col's
/// conv2dWorkspaceElements(s, pass) elements, more where the plan had them
/// free (cairn-grow-workspaces). For F16 or Bf16 (the workspace is uint16_t,
/// each tensor half or float32 rounded to T: HalfOperand.h) the convolution
/// is HalfConv.h's, im2col in float32 a group of images at a time, in
/// halfConv2dWorkspaceElements(s, pass) floats.
template <typename T>
void conv2dForward(ConvLibrary &library, int site, const Conv2dShape &s,
                   ProductIn<T> x, ProductIn<T> w, ProductIn<T> bias,
                   ProductOut<T> y, StoredAs<T> *workspace,
                   size_t workspaceBytes);
template <typename T>
void conv2dBackwardInput(ConvLibrary &library, int site, const Conv2dShape &s,
                         ProductIn<T> dy, ProductIn<T> w, ProductIn<T> bias,
                         ProductOut<T> dx, StoredAs<T> *workspace,
                         size_t workspaceBytes);
template <typename T>
void conv2dBackwardWeight(ConvLibrary &library, int site, const Conv2dShape &s,
                          ProductIn<T> dy, ProductIn<T> x, ProductOut<T> dw,
                          ProductOut<T> dbias, StoredAs<T> *workspace,
                          size_t workspaceBytes);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_CONVLIBRARY_H
