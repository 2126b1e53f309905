//===- ConvertTest.cpp - float32 to and from f16 and bf16 -----------------===//
//
// The conversions against PyTorch's values (torch.tensor(x).half() and
// .bfloat16(), their bits written out), every 16-bit pattern round-tripped,
// and f16 against the compiler's own _Float16 conversion on random floats.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace cairn::kernels;

namespace {

TEST(Convert, HalfAsTorch) {
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    float value;
    uint16_t bits;
  } cases[] = {
      {1.0f, 0x3c00},
      {-2.5f, 0xc100},
      {0.1f, 0x2e66},
      {65504.0f, 0x7bff},
      {65519.99f, 0x7bff},
      {65520.0f, 0x7c00}, // the tie goes to infinity
      {1e6f, 0x7c00},
      {-inf, 0xfc00},
      {1.0f + 0x1p-11f, 0x3c00}, // a tie: to the even 1.0
      {1.0f + 0x3p-11f, 0x3c02}, // a tie: to the even 1 + 2^-9
      {0x1p-14f, 0x0400},        // the smallest normal
      {0x1p-24f, 0x0001},        // the smallest subnormal
      {0x1p-25f, 0x0000},        // a tie with 0: to 0
      {0x3p-25f, 0x0002},        // 1.5 units: to the even 2
      {1e-8f, 0x0000},
      {-0.0f, 0x8000},
      {0x1.ffcp-15f, 0x0400}, // rounds up into the normals
  };
  for (const Case &c : cases)
    EXPECT_EQ(halfFromFloat(c.value), c.bits) << c.value;
  EXPECT_EQ(halfFromFloat(std::nanf("")), 0x7e00);
  EXPECT_EQ(floatFromHalf(0x7bff), 65504.0f);
  EXPECT_EQ(floatFromHalf(0x0001), 0x1p-24f);
  EXPECT_EQ(floatFromHalf(0x8000), -0.0f);
  EXPECT_TRUE(std::signbit(floatFromHalf(0x8000)));
  EXPECT_TRUE(std::isnan(floatFromHalf(0x7e00)));
}

TEST(Convert, BFloat16AsTorch) {
  EXPECT_EQ(bfloat16FromFloat(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16FromFloat(1.0f + 0x1p-8f), 0x3f80); // a tie: to the even
  EXPECT_EQ(bfloat16FromFloat(1.0f + 0x3p-8f), 0x3f82);
  EXPECT_EQ(bfloat16FromFloat(0.1f), 0x3dcd);
  EXPECT_EQ(bfloat16FromFloat(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(bfloat16FromFloat(std::nanf("")), 0x7fc0);
  EXPECT_EQ(floatFromBfloat16(0x3dcd), 0.10009765625f);
}

TEST(Convert, EveryPatternRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    auto b = static_cast<uint16_t>(bits);
    float h = floatFromHalf(b);
    if (std::isnan(h))
      EXPECT_EQ(halfFromFloat(h) & 0x7fff, 0x7e00) << bits;
    else
      EXPECT_EQ(halfFromFloat(h), b) << bits;
    float f = floatFromBfloat16(b);
    if (std::isnan(f))
      EXPECT_EQ(bfloat16FromFloat(f), 0x7fc0) << bits;
    else
      EXPECT_EQ(bfloat16FromFloat(f), b) << bits;
  }
}

#ifdef __FLT16_MAX__
TEST(Convert, HalfAsTheCompilersFloat16) {
  std::mt19937 random(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 1000000; ++i) {
    float value = floatFromBits(bits(random));
    if (std::isnan(value))
      continue;
    _Float16 reference = static_cast<_Float16>(value);
    uint16_t expected;
    std::memcpy(&expected, &reference, sizeof(expected));
    ASSERT_EQ(halfFromFloat(value), expected) << value;
  }
}
#endif

// The vector paths (F16C where the machine has it) give the scalar
// functions' bits on every half pattern and on random float32 bit patterns,
// NaNs with payloads, infinities and subnormals among them.
TEST(Convert, CastElementsIsTheScalarConversionBitForBit) {
  std::vector<uint16_t> halves(65536);
  for (int64_t i = 0; i < 65536; ++i)
    halves[i] = static_cast<uint16_t>(i);
  std::vector<float> floats(65536);
  castElements(halves.data(), CastType::F16, floats.data(), CastType::F32,
               65536);
  for (int64_t i = 0; i < 65536; ++i)
    ASSERT_EQ(floatBits(floats[i]), floatBits(floatFromHalf(halves[i]))) << i;

  std::mt19937 random(7);
  const int64_t n = 1 << 20;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = floatFromBits(static_cast<uint32_t>(random()));
  for (float special : {std::numeric_limits<float>::infinity(), 65504.0f,
                        65520.0f, 6.1e-5f, 5.96e-8f, 2.98e-8f, -0.0f})
    x[random() % n] = special;
  std::vector<uint16_t> h(n);
  for (CastType half : {CastType::F16, CastType::BF16}) {
    castElements(x.data(), CastType::F32, h.data(), half, n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(h[i], half == CastType::F16 ? halfFromFloat(x[i])
                                            : bfloat16FromFloat(x[i]))
          << i << " " << x[i];
  }
}

TEST(Convert, CastElementsBothWays) {
  // Long enough to be split across threads.
  const int64_t n = 100003;
  std::vector<float> x(n), back(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = std::sin(0.001f * static_cast<float>(i)) * 1000.0f;
  std::vector<uint16_t> h(n);
  for (CastType half : {CastType::F16, CastType::BF16}) {
    castElements(x.data(), CastType::F32, h.data(), half, n);
    castElements(h.data(), half, back.data(), CastType::F32, n);
    for (int64_t i = 0; i < n; i += 997) {
      uint16_t one =
          half == CastType::F16 ? halfFromFloat(x[i]) : bfloat16FromFloat(x[i]);
      ASSERT_EQ(h[i], one) << i;
      ASSERT_EQ(back[i], half == CastType::F16 ? floatFromHalf(one)
                                               : floatFromBfloat16(one));
    }
  }
  std::vector<float> copy(n);
  castElements(x.data(), CastType::F32, copy.data(), CastType::F32, n);
  EXPECT_EQ(copy, x);
}

} // namespace
