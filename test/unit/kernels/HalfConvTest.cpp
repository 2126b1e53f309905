//===- HalfConvTest.cpp - Convolutions of half tensors --------------------===//
//
// The half convolutions (HalfConv.h), through the generated code's entry
// points (ConvLibrary.h on F16/Bf16 storage), against the float im2col
// kernels (Conv.h) on widened copies of the whole batch, rounded as a cast
// rounds: the same bits, for the forward, the input gradient and the weight
// gradient. Shapes cover several image groups with a partial last one
// (small planes, several images a GEMM), one image a GEMM, strides,
// padding, dilation, groups, a 1x1 convolution read in place, a bias (and a
// transposed convolution's, rounded once with its sums), and weights taken a
// slice of channels at a time.
// A workspace smaller than the rule is refused.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/ConvLibrary.h"
#include "runtime/kernels/HalfConv.h"
#include "runtime/kernels/KernelError.h"

#include "ConvShapes.h"
#include "HalfBits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

const Conv2dShape kShapes[] = {
    shape(7, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1),          // 6x6 planes: 4 a GEMM
    shape(5, 4, 12, 12, 5, 3, 3, 2, 2, 1, 1),        // strided, 4 a GEMM
    shape(2, 2, 16, 16, 3, 3, 3, 1, 1, 2, 2, 2, 2),  // dilated, 1 a GEMM
    shape(5, 4, 5, 5, 6, 1, 1),                      // 1x1, read in place
    shape(4, 6, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 2), // two groups
    // Weights past kHalfConvWeightElements: output channels (the forward,
    // the weight gradient) and input channels (the input gradient) in
    // slices of 227, a partial last one; 4x4 planes, 3 images a GEMM.
    shape(3, 512, 4, 4, 512, 3, 3, 1, 1, 1, 1),
};

template <typename T> std::vector<uint16_t> halfWorkspace(const Conv2dShape &s,
                                                         ConvPass pass) {
  return std::vector<uint16_t>(
      size_t(2 * halfConv2dWorkspaceElements(s, pass)));
}

template <typename T> void checkPasses(bool specials) {
  const CastType type = T::kCastType;
  uint32_t seed = specials ? 500 : 100;
  for (const Conv2dShape &s : kShapes) {
    ConvLibrary library(/*enabled=*/false); // sites 0, 1, 2: a shape each
    const std::string what = describe(s);
    auto x = randomHalves<T>(size_t(xSize(s)), ++seed, specials);
    auto w = randomHalves<T>(size_t(wSize(s)), ++seed, false);
    auto bias = randomHalves<T>(size_t(s.o), ++seed, false, 1.0f);
    auto dy = randomHalves<T>(size_t(ySize(s)), ++seed, specials);
    std::vector<float> x32 = widen(x, type), w32 = widen(w, type),
                       b32 = widen(bias, type), dy32 = widen(dy, type);

    // Forward.
    std::vector<float> y32(size_t(ySize(s))),
        scratch(size_t(conv2dWorkspaceElements(s, ConvPass::Forward)));
    conv2dForward<float>(s, x32.data(), w32.data(), b32.data(), y32.data(),
                         scratch.data());
    std::vector<uint16_t> y(size_t(ySize(s)));
    auto ws = halfWorkspace<T>(s, ConvPass::Forward);
    conv2dForward<T>(library, 0, s, x.data(), w.data(), bias.data(), y.data(),
                     ws.data(), ws.size() * 2);
    EXPECT_EQ(y, narrow(y32, type)) << "forward " << what;

    // Input gradient.
    std::vector<float> dx32(size_t(xSize(s)));
    scratch.assign(
        size_t(conv2dWorkspaceElements(s, ConvPass::BackwardInput)), 0);
    conv2dBackwardInput<float>(s, dy32.data(), w32.data(), dx32.data(),
                               scratch.data());
    std::vector<uint16_t> dx(size_t(xSize(s)));
    ws = halfWorkspace<T>(s, ConvPass::BackwardInput);
    conv2dBackwardInput<T>(library, 1, s, dy.data(), w.data(), nullptr,
                           dx.data(), ws.data(), ws.size() * 2);
    EXPECT_EQ(dx, narrow(dx32, type)) << "input gradient " << what;

    // A transposed convolution (the input gradient) with its bias, of the
    // input's channels: added to the float32 sums, rounded once; the bias
    // in half, or a float32 master rounded as it is read (HalfOperand.h).
    auto inputBias = randomHalves<T>(size_t(s.c), ++seed, false, 1.0f);
    std::vector<float> inputBias32 = widen(inputBias, type);
    std::vector<float> biased32 = dx32;
    conv2dAddInputBias<float>(s, inputBias32.data(), biased32.data());
    for (int64_t i = 0; i < xSize(s); ++i) {
      const float expected = dx32[i] + inputBias32[(i / (s.h * s.w)) % s.c];
      ASSERT_TRUE(biased32[i] == expected ||
                  (std::isnan(biased32[i]) && std::isnan(expected)))
          << i;
    }
    std::vector<float> master(inputBias32);
    for (float &b : master) // between two halves: rounded to the nearest
      b = std::nextafter(b, 2 * b + 1);
    for (const bool float32Bias : {false, true}) {
      ws = halfWorkspace<T>(s, ConvPass::BackwardInput);
      conv2dBackwardInput<T>(library, 1, s, dy.data(), w.data(),
                             float32Bias ? HalfIn(master.data())
                                         : HalfIn(inputBias.data()),
                             dx.data(), ws.data(), ws.size() * 2);
      EXPECT_EQ(dx, narrow(biased32, type))
          << "transposed convolution with a "
          << (float32Bias ? "float32" : "half") << " bias " << what;
    }
    std::vector<float> floatBiased(size_t(xSize(s)));
    ConvLibrary im2col(/*enabled=*/false);
    scratch.assign(size_t(conv2dWorkspaceElements(s, ConvPass::BackwardInput)),
                   0);
    conv2dBackwardInput<float>(im2col, 0, s, dy32.data(), w32.data(),
                               inputBias32.data(), floatBiased.data(),
                               scratch.data(), scratch.size() * 4);
    EXPECT_EQ(std::memcmp(floatBiased.data(), biased32.data(),
                          biased32.size() * sizeof(float)),
              0)
        << "float transposed convolution " << what;

    // Weight gradient: the float kernel's sums over the whole batch.
    std::vector<float> dw32(size_t(wSize(s)));
    scratch.assign(
        size_t(conv2dWorkspaceElements(s, ConvPass::BackwardWeight)), 0);
    conv2dBackwardWeight<float>(s, dy32.data(), x32.data(), dw32.data(),
                                nullptr, scratch.data());
    std::vector<uint16_t> dw(size_t(wSize(s)));
    ws = halfWorkspace<T>(s, ConvPass::BackwardWeight);
    conv2dBackwardWeight<T>(library, 2, s, dy.data(), x.data(), dw.data(),
                            nullptr, ws.data(), ws.size() * 2);
    EXPECT_EQ(nanSignsCleared(dw, type),
              nanSignsCleared(narrow(dw32, type), type))
        << "weight gradient " << what;
  }
}

TEST(HalfConv, SameBitsAsFloatIm2colBetweenCastsF16) {
  checkPasses<F16>(false);
  checkPasses<F16>(true);
}
TEST(HalfConv, SameBitsAsFloatIm2colBetweenCastsBf16) {
  checkPasses<Bf16>(false);
  checkPasses<Bf16>(true);
}

/// With oneDNN (where it runs the shape), the forward and the input
/// gradient are the float32 library's results on widened copies, within one
/// rounding of the half type (oneDNN's sums do not depend on the images a
/// call, but a slice's may be summed otherwise than the whole weights').
template <typename T> void checkLibrary() {
  const CastType type = T::kCastType;
  uint32_t seed = 900;
  for (const Conv2dShape &s : kShapes) {
    ConvLibrary half, full;
    const std::string what = describe(s);
    auto x = randomHalves<T>(size_t(xSize(s)), ++seed, false);
    auto w = randomHalves<T>(size_t(wSize(s)), ++seed, false);
    auto dy = randomHalves<T>(size_t(ySize(s)), ++seed, false);
    std::vector<float> x32 = widen(x, type), w32 = widen(w, type),
                       dy32 = widen(dy, type);
    auto closeTo = [&](const std::vector<uint16_t> &got,
                       const std::vector<float> &want, const char *pass) {
      std::vector<float> wide = widen(got, type);
      const float ulp = type == CastType::F16 ? 1.0f / 1024 : 1.0f / 128;
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_LE(std::fabs(wide[i] - want[i]),
                  ulp * std::max(std::fabs(want[i]), 1e-3f))
            << pass << " " << what << " at " << i;
    };
    std::vector<float> y32(size_t(ySize(s))),
        scratch(size_t(conv2dWorkspaceElements(s, ConvPass::Forward)));
    conv2dForward<float>(full, 0, s, x32.data(), w32.data(), nullptr,
                         y32.data(), scratch.data(), scratch.size() * 4);
    std::vector<uint16_t> y(size_t(ySize(s)));
    auto ws = halfWorkspace<T>(s, ConvPass::Forward);
    conv2dForward<T>(half, 0, s, x.data(), w.data(), nullptr, y.data(),
                     ws.data(), ws.size() * 2);
    closeTo(y, y32, "forward");
    std::vector<float> dx32(size_t(xSize(s)));
    scratch.assign(size_t(conv2dWorkspaceElements(s, ConvPass::BackwardInput)),
                   0);
    conv2dBackwardInput<float>(full, 1, s, dy32.data(), w32.data(), nullptr,
                               dx32.data(), scratch.data(), scratch.size() * 4);
    std::vector<uint16_t> dx(size_t(xSize(s)));
    ws = halfWorkspace<T>(s, ConvPass::BackwardInput);
    conv2dBackwardInput<T>(half, 1, s, dy.data(), w.data(), nullptr, dx.data(),
                           ws.data(), ws.size() * 2);
    closeTo(dx, dx32, "input gradient");
  }
}

TEST(HalfConv, ThroughOneDnnAsFloat32WithinARoundingF16) {
  checkLibrary<F16>();
}
TEST(HalfConv, ThroughOneDnnAsFloat32WithinARoundingBf16) {
  checkLibrary<Bf16>();
}

TEST(HalfConv, RefusesASmallerWorkspace) {
  ConvLibrary library(false);
  const Conv2dShape s = kShapes[0];
  std::vector<uint16_t> x(size_t(xSize(s))), w(size_t(wSize(s))),
      y(size_t(ySize(s)));
  auto ws = halfWorkspace<Bf16>(s, ConvPass::Forward);
  EXPECT_THROW(conv2dForward<Bf16>(library, 0, s, x.data(), w.data(), nullptr,
                                   y.data(), ws.data(), ws.size() * 2 - 4),
               KernelError);
}

TEST(HalfConv, WorkspaceIsOneGroupAndOneSliceOfTheWeights) {
  // ResNet-18's first 3x3 convolution at batch 64: 56x56 planes, one image
  // a GEMM: the weights, the bias, one image in and out, one column matrix.
  Conv2dShape s = shape(64, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1);
  EXPECT_EQ(halfConv2dSliceWidth(s, ConvPass::Forward), 64);
  EXPECT_EQ(halfConv2dWorkspaceElements(s, ConvPass::Forward),
            64 * 64 * 9 + 64 + (64 * 56 * 56 + 64 * 56 * 56) +
                64 * 9 * 56 * 56);
  // Its last (512 channels, 4x4 planes at 128x128 images): 9 MiB of
  // weights, taken 227 output channels or 227 input channels a slice; the
  // scratch is under 3/4 of them (their float32 copy alone took all).
  s = shape(64, 512, 4, 4, 512, 3, 3, 1, 1, 1, 1);
  EXPECT_EQ(halfConv2dSliceWidth(s, ConvPass::Forward), 227);
  EXPECT_EQ(halfConv2dSliceWidth(s, ConvPass::BackwardInput), 227);
  for (ConvPass pass :
       {ConvPass::Forward, ConvPass::BackwardInput, ConvPass::BackwardWeight})
    EXPECT_LT(halfConv2dWorkspaceElements(s, pass), 512 * 512 * 9 * 3 / 4);
}

} // namespace
