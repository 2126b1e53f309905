//===- HalfOperandTest.cpp - Half products on float32 tensors -------------===//
//
// A half product (HalfGemm.h, HalfConv.h) reading a float32 operand rounds
// it to the half type as a cast would, and writing a float32 result rounds
// it to the half type and widens it, as its half result followed by a cast
// would (HalfOperand.h). Each case runs the product on half copies made by
// castElements and widens the result, and again on the float32 tensors
// themselves: the bits must be equal, for every choice of which tensors are
// float32. The float32 values are not all representable in half: fractions
// that round (ties included), values past f16's range, subnormals, NaN and
// infinities.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/ConvLibrary.h"
#include "runtime/kernels/HalfConv.h"
#include "runtime/kernels/HalfGemm.h"

#include "ConvShapes.h"
#include "HalfBits.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

/// Random float32 values, most of them not a half's: normals, some ties of
/// both half types (a bf16 tie at 1 + 2^-8, an f16 tie at 1 + 2^-11), and
/// with `specials` (one in 11) values past f16's range, subnormals of both,
/// NaN and infinities. A sum over a special is not finite: only short sums
/// take them, so that most results stay finite.
std::vector<float> randomFloats(size_t n, uint32_t seed, bool specials) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> kind(0, 63);
  const float special[] = {std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           70000.0f,
                           -1e-6f,
                           3e-39f,
                           1.0f + 0x1p-8f,
                           1.0f + 0x1p-11f};
  std::vector<float> v(n);
  for (float &value : v) {
    int k = kind(rng);
    value = specials && k < 6  ? special[k]
            : k >= 6 && k < 10 ? special[6 + k % 2]
                               : normal(rng);
  }
  return v;
}

bool sameBits(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

//===----------------------------------------------------------------------===//
// halfGemm
//===----------------------------------------------------------------------===//

/// Bit `t` of `mask`: whether tensor t (A, B, the bias, C) is float32.
template <typename T>
void checkGemm(int64_t m, int64_t n, int64_t k, uint32_t seed, bool specials) {
  const CastType type = T::kCastType;
  for (bool transA : {false, true})
    for (bool transB : {false, true})
      for (int mask = 0; mask < 16; ++mask) {
        const bool floatA = mask & 1, floatB = mask & 2, floatBias = mask & 4,
                   floatC = mask & 8;
        const bool relu = mask & 1;
        const int64_t lda = (transA ? m : k) + 2, ldb = (transB ? k : n) + 1;
        const int64_t ldc = n + 3;
        auto a32 = randomFloats(size_t((transA ? k : m) * lda), seed, specials);
        auto b32 =
            randomFloats(size_t((transB ? n : k) * ldb), seed + 1, false);
        auto bias32 = randomFloats(size_t(n), seed + 2, false);
        auto a = narrow(a32, type), b = narrow(b32, type),
             bias = narrow(bias32, type);
        std::vector<float> workspace(
            size_t(halfGemmWorkspaceElements(m, n, k)));

        // The casts, then the half product, then the cast of its result
        // (the padding of C between rows is written by neither).
        std::vector<uint16_t> c(size_t(m * ldc), 0x1234);
        halfGemm<T>(transA, transB, m, n, k, a.data(), lda, b.data(), ldb,
                    bias.data(), relu, c.data(), ldc, workspace.data());
        std::vector<float> want = widen(c, type);

        auto in = [](bool single, const std::vector<float> &f,
                     const std::vector<uint16_t> &h) {
          return single ? HalfIn(f.data()) : HalfIn(h.data());
        };
        std::vector<uint16_t> cHalf(size_t(m * ldc), 0x1234);
        std::vector<float> cFloat(size_t(m * ldc), widen({0x1234}, type)[0]);
        halfGemm<T>(transA, transB, m, n, k, in(floatA, a32, a), lda,
                    in(floatB, b32, b), ldb, in(floatBias, bias32, bias), relu,
                    floatC ? HalfOut(cFloat.data()) : HalfOut(cHalf.data()),
                    ldc, workspace.data());
        EXPECT_TRUE(sameBits(floatC ? cFloat : widen(cHalf, type), want))
            << m << "x" << n << "x" << k << " transA " << transA << " transB "
            << transB << " float32 tensors (A, B, bias, C) " << floatA << floatB
            << floatBias << floatC;
      }
}

TEST(HalfOperand, GemmRoundsFloat32AsItsCastsF16) {
  checkGemm<F16>(5, 3, 7, 10, true);
  checkGemm<F16>(70, 90, 300, 20, false); // past a tile each way, K sliced
}
TEST(HalfOperand, GemmRoundsFloat32AsItsCastsBf16) {
  checkGemm<Bf16>(5, 3, 7, 30, true);
  checkGemm<Bf16>(70, 90, 300, 40, false);
}

//===----------------------------------------------------------------------===//
// The half convolutions, through ConvLibrary.h's entry points
//===----------------------------------------------------------------------===//

const Conv2dShape kShapes[] = {
    shape(7, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1),          // several image groups
    shape(4, 6, 7, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 2), // two groups
    // Weights taken a slice of channels at a time.
    shape(3, 512, 4, 4, 512, 3, 3, 1, 1, 1, 1),
};

template <typename T> void checkConv(uint32_t seed) {
  const CastType type = T::kCastType;
  for (const Conv2dShape &s : kShapes) {
    ConvLibrary library(/*enabled=*/false); // a site per pass and bias
    const std::string what = describe(s);
    const bool specials = s.c < 16; // the short sums
    auto x32 = randomFloats(size_t(xSize(s)), ++seed, specials);
    auto w32 = randomFloats(size_t(wSize(s)), ++seed, false);
    auto b32 = randomFloats(size_t(s.o), ++seed, false);
    auto dy32 = randomFloats(size_t(ySize(s)), ++seed, specials);
    auto x = narrow(x32, type), w = narrow(w32, type), b = narrow(b32, type),
         dy = narrow(dy32, type);
    std::vector<uint16_t> workspace(size_t(
        2 *
        std::max({halfConv2dWorkspaceElements(s, ConvPass::Forward),
                  halfConv2dWorkspaceElements(s, ConvPass::BackwardInput),
                  halfConv2dWorkspaceElements(s, ConvPass::BackwardWeight)})));
    const size_t bytes = workspace.size() * 2;

    // The forward reads the input batch, the weights and the bias in
    // float32 (conv1 of a model in half precision), into a half result and
    // a float32 one.
    std::vector<uint16_t> y(size_t(ySize(s)));
    conv2dForward<T>(library, 0, s, x.data(), w.data(), b.data(), y.data(),
                     workspace.data(), bytes);
    std::vector<uint16_t> yMixed(y.size());
    conv2dForward<T>(library, 0, s, x32.data(), w32.data(), b32.data(),
                     yMixed.data(), workspace.data(), bytes);
    EXPECT_EQ(yMixed, y) << "forward " << what;
    std::vector<float> yFloat(y.size());
    conv2dForward<T>(library, 3, s, x.data(), w32.data(), nullptr,
                     yFloat.data(), workspace.data(), bytes);
    std::vector<uint16_t> yNoBias(y.size());
    conv2dForward<T>(library, 3, s, x.data(), w.data(), nullptr, yNoBias.data(),
                     workspace.data(), bytes);
    EXPECT_TRUE(sameBits(yFloat, widen(yNoBias, type)))
        << "forward into float32 " << what;

    // The input gradient reads the float32 weights.
    std::vector<uint16_t> dx(size_t(xSize(s))), dxMixed(dx.size());
    conv2dBackwardInput<T>(library, 1, s, dy.data(), w.data(), nullptr,
                           dx.data(), workspace.data(), bytes);
    conv2dBackwardInput<T>(library, 1, s, dy.data(), w32.data(), nullptr,
                           dxMixed.data(), workspace.data(), bytes);
    EXPECT_EQ(dxMixed, dx) << "input gradient " << what;

    // The weight gradient reads the float32 input batch and writes the
    // float32 master's gradient.
    std::vector<uint16_t> dw(size_t(wSize(s)));
    conv2dBackwardWeight<T>(library, 2, s, dy.data(), x.data(), dw.data(),
                            nullptr, workspace.data(), bytes);
    // Its sums are the result's floats: the scratch holds no weights.
    std::vector<uint16_t> smaller(size_t(
        2 * halfConv2dWorkspaceElements(s, ConvPass::BackwardWeight, true)));
    EXPECT_LT(smaller.size(), workspace.size()) << what;
    std::vector<float> dwFloat(dw.size());
    conv2dBackwardWeight<T>(library, 2, s, dy.data(), x32.data(),
                            dwFloat.data(), nullptr, smaller.data(),
                            smaller.size() * 2);
    EXPECT_TRUE(sameBits(dwFloat, widen(dw, type)))
        << "weight gradient " << what;
  }
}

TEST(HalfOperand, ConvolutionsRoundFloat32AsTheirCastsF16) {
  checkConv<F16>(50);
}
TEST(HalfOperand, ConvolutionsRoundFloat32AsTheirCastsBf16) {
  checkConv<Bf16>(60);
}

} // namespace
