//===- Convert.h - float32 to and from f16 and bf16 -------------*- C++ -*-===//
//
// Half tensors are stored as their 16 bits (uint16_t) and computed in
// float32: the CPU's kernels templated on a storage tag (F16, Bf16 below:
// the GEMMs and convolutions, HalfGemm.h and HalfConv.h, a panel or a group
// of images at a time; pooling, batch norm, the element-wise ops, dropout,
// one element at a time) widen what they read and round what they write. The conversions are PyTorch's `.to()`: round to
// nearest even, overflow to infinity, NaN to PyTorch's quiet NaN, f16
// subnormals kept. Exact bit manipulation, so every machine rounds alike;
// the scalar forms are for the host and the device.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_CONVERT_H
#define CAIRN_RUNTIME_KERNELS_CONVERT_H

#include "runtime/kernels/HostDevice.h"

#include <cstdint>
#include <cstring>

namespace cairn::kernels {

CAIRN_HOST_DEVICE inline uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

CAIRN_HOST_DEVICE inline float floatFromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// IEEE binary16 bits of `value`, rounded to nearest even.
CAIRN_HOST_DEVICE inline uint16_t halfFromFloat(float value) {
  uint32_t bits = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN: PyTorch's quiet NaN, with the sign
    return static_cast<uint16_t>(sign | 0x7e00u);
  if (magnitude >= 0x477ff000u) // rounds to 65520 or more: infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude < 0x38800000u) { // below 2^-14: a subnormal half, or 0
    if (magnitude < 0x33000001u) // at most 2^-25 (a tie with 0): 0
      return sign;
    int shift = 126 - static_cast<int>(magnitude >> 23); // 14 to 24
    uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    uint32_t half = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t tie = 1u << (shift - 1);
    if (rest > tie || (rest == tie && (half & 1u)))
      ++half;
    return static_cast<uint16_t>(sign | half);
  }
  // A normal half: rebias the exponent (127 to 15), round the 13 dropped bits.
  uint32_t rebased = magnitude - 0x38000000u;
  uint32_t half = rebased >> 13;
  uint32_t rest = rebased & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
    ++half; // a carry into the exponent is the right result
  return static_cast<uint16_t>(sign | half);
}

/// The float32 value of IEEE binary16 bits (exact).
CAIRN_HOST_DEVICE inline float floatFromHalf(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  uint32_t exponent = (half >> 10) & 0x1fu;
  uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1fu) // infinity or NaN
    return floatFromBits(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0)
    return floatFromBits(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or a subnormal: mantissa * 2^-24.
  float value = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
  return sign ? -value : value;
}

/// bfloat16 bits of `value`: the top 16 bits, rounded to nearest even.
CAIRN_HOST_DEVICE inline uint16_t bfloat16FromFloat(float value) {
  uint32_t bits = floatBits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: PyTorch's quiet NaN
    return 0x7fc0u;
  bits += 0x7fffu + ((bits >> 16) & 1u); // overflow carries into infinity
  return static_cast<uint16_t>(bits >> 16);
}

/// The float32 value of bfloat16 bits (exact).
CAIRN_HOST_DEVICE inline float floatFromBfloat16(uint16_t bits) {
  return floatFromBits(static_cast<uint32_t>(bits) << 16);
}

/// Element types a cast kernel converts between.
enum class CastType { F32, F16, BF16 };

/// 16-bit float storage as a kernel's template argument: the tensors are
/// uint16_t bit patterns, read widened to float (exact) and written rounded
/// as a cast writes them, so a kernel computing in float between the two
/// gives the bits of the float kernel on widened copies followed by a cast.
/// `kCastType` names it for castElements; `kExponentBits` is the exponent
/// field, all ones in an infinity or a NaN.
struct F16 {
  static constexpr CastType kCastType = CastType::F16;
  static constexpr uint16_t kExponentBits = 0x7c00u;
  CAIRN_HOST_DEVICE static float load(uint16_t bits) { return floatFromHalf(bits); }
  CAIRN_HOST_DEVICE static uint16_t store(float value) { return halfFromFloat(value); }
};
struct Bf16 {
  static constexpr CastType kCastType = CastType::BF16;
  static constexpr uint16_t kExponentBits = 0x7f80u;
  CAIRN_HOST_DEVICE static float load(uint16_t bits) { return floatFromBfloat16(bits); }
  CAIRN_HOST_DEVICE static uint16_t store(float value) { return bfloat16FromFloat(value); }
};

/// How a kernel templated on T stores its tensors (`Bits`) and computes
/// (`Compute`): float and double as themselves, F16 and Bf16 as above.
template <typename T> struct Storage {
  using Bits = T;
  using Compute = T;
  CAIRN_HOST_DEVICE static T load(T value) { return value; }
  CAIRN_HOST_DEVICE static T store(T value) { return value; }
};
template <> struct Storage<F16> : F16 {
  using Bits = uint16_t;
  using Compute = float;
};
template <> struct Storage<Bf16> : Bf16 {
  using Bits = uint16_t;
  using Compute = float;
};
template <typename T> using StoredAs = typename Storage<T>::Bits;
template <typename T> using ComputedIn = typename Storage<T>::Compute;

/// Converts `n` elements at `in` (of type `from`) into `out` (of type `to`):
/// float32 to or from f16 or bf16; the same type copies.
void castElements(const void *in, CastType from, void *out, CastType to, int64_t n);

/// Elements [begin, end) of the same, on the calling thread: for kernels
/// whose own loops convert many short runs (HalfGemm.cpp's panels). float32
/// to or from f16 or bf16 only.
void castRun(const void *in, CastType from, void *out, CastType to, int64_t begin, int64_t end);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_CONVERT_H
