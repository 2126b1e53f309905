//===- ScalarTest.cpp - Element conversions between dtypes ----------------===//
#include "runtime/Scalar.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace cairn::runtime;

namespace {

TEST(Scalar, HalfEncodings) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00); // the tie above the largest rounds to inf
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400); // smallest normal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -26)), 0x0000);
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: to even (1).
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(floatToHalf(std::nanf("")) & 0x7E00, 0x7E00);
}

TEST(Scalar, HalfRoundTripsEveryFiniteValue) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    auto half = static_cast<uint16_t>(bits);
    if ((half & 0x7C00) == 0x7C00)
      continue;
    ASSERT_EQ(floatToHalf(halfToFloat(half)), half) << bits;
  }
}

TEST(Scalar, BFloat16Encodings) {
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3F80);
  EXPECT_EQ(bfloat16ToFloat(0xC040), -3.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to even (1).
  EXPECT_EQ(floatToBFloat16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBFloat16(std::nanf("")))));
}

TEST(Scalar, StoreAndLoadEachDType) {
  unsigned char buffer[8];
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I32, DType::I64,
                      DType::U8}) {
    storeScalar(dtype, 3.0, buffer);
    EXPECT_EQ(loadScalar(dtype, buffer), 3.0) << dtypeName(dtype);
  }
  storeScalar(DType::F32, 0.1, buffer);
  EXPECT_EQ(loadScalar(DType::F32, buffer), static_cast<double>(0.1f));
}

} // namespace
