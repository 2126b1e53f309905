//===- Scalar.cpp - One element in any dtype, to and from double ----------===//
#include "runtime/Scalar.h"

#include "runtime/kernels/Convert.h"

#include <cmath>
#include <cstring>

namespace cairn::runtime {

namespace {
template <typename T> void put(void *dst, T value) { std::memcpy(dst, &value, sizeof(T)); }

template <typename T> T get(const void *src) {
  T value;
  std::memcpy(&value, src, sizeof(T));
  return value;
}
} // namespace

// One conversion for the whole runtime: the cast kernels' (kernels/Convert.h).
uint16_t floatToHalf(float value) { return kernels::halfFromFloat(value); }
uint16_t floatToBFloat16(float value) { return kernels::bfloat16FromFloat(value); }
float halfToFloat(uint16_t bits) { return kernels::floatFromHalf(bits); }
float bfloat16ToFloat(uint16_t bits) { return kernels::floatFromBfloat16(bits); }

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
