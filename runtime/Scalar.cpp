//===- Scalar.cpp - One element in any dtype, to and from double ----------===//
#include "runtime/Scalar.h"

#include <cmath>
#include <cstring>

namespace cairn::runtime {

namespace {
uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

template <typename T> void put(void *dst, T value) { std::memcpy(dst, &value, sizeof(T)); }

template <typename T> T get(const void *src) {
  T value;
  std::memcpy(&value, src, sizeof(T));
  return value;
}
} // namespace

uint16_t floatToHalf(float value) {
  uint32_t bits = bitsOf(value);
  auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude >= 0x7f800000) // infinity or NaN
    return sign | (magnitude > 0x7f800000 ? 0x7e00 : 0x7c00);
  if (magnitude >= 0x477ff000) // 65520 and up round past 65504
    return sign | 0x7c00;
  if (magnitude < 0x38800000) {
    // Below 2^-14 the result is subnormal: count units of 2^-24. Scaling by a
    // power of two is exact and nearbyint rounds to nearest even; 1024 units
    // is the smallest normal, whose encoding is 0x0400 as well.
    float units = std::fabs(value) * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(units));
  }
  uint32_t odd = (magnitude >> 13) & 1;
  magnitude += 0xfff + odd;        // round to nearest even at bit 13
  magnitude -= uint32_t(112) << 23; // rebias the exponent from 127 to 15
  return sign | static_cast<uint16_t>(magnitude >> 13);
}

uint16_t floatToBFloat16(float value) {
  uint32_t bits = bitsOf(value);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((bits >> 16) | 0x0040);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0) {
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f)
    return floatOf(sign | 0x7f800000 | (mantissa << 13));
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

float bfloat16ToFloat(uint16_t bits) { return floatOf(uint32_t(bits) << 16); }

void storeScalar(DType dtype, double value, void *dst) {
  switch (dtype) {
  case DType::F32:
    return put(dst, static_cast<float>(value));
  case DType::F64:
    return put(dst, value);
  case DType::F16:
    return put(dst, floatToHalf(static_cast<float>(value)));
  case DType::BF16:
    return put(dst, floatToBFloat16(static_cast<float>(value)));
  case DType::I32:
    return put(dst, static_cast<int32_t>(value));
  case DType::I64:
    return put(dst, static_cast<int64_t>(value));
  case DType::U8:
    return put(dst, static_cast<uint8_t>(value));
  }
}

double loadScalar(DType dtype, const void *src) {
  switch (dtype) {
  case DType::F32:
    return get<float>(src);
  case DType::F64:
    return get<double>(src);
  case DType::F16:
    return halfToFloat(get<uint16_t>(src));
  case DType::BF16:
    return bfloat16ToFloat(get<uint16_t>(src));
  case DType::I32:
    return get<int32_t>(src);
  case DType::I64:
    return static_cast<double>(get<int64_t>(src));
  case DType::U8:
    return get<uint8_t>(src);
  }
  return 0;
}

} // namespace cairn::runtime
