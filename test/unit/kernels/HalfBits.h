//===- HalfBits.h - Half inputs for half-storage kernel tests ---*- C++ -*-===//
//
// A kernel on F16 or Bf16 storage (Convert.h) must give the bits of its
// float instantiation on widened copies followed by a cast: what
// cairn-compute-half-in-float32 would make of the op. These make the half
// inputs and the two casts.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_TEST_UNIT_KERNELS_HALFBITS_H
#define CAIRN_TEST_UNIT_KERNELS_HALFBITS_H

#include "runtime/kernels/Convert.h"

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace cairn::kernels::testing {

/// Random 16-bit patterns of type T: values `offset + k / 16` for k in
/// [-64, 64) (with repeats, so ties), and with `specials` some NaN (one with
/// a payload and the sign bit, which a cast does not keep), infinities,
/// zeros of both signs and subnormals.
template <typename T>
std::vector<uint16_t> randomHalves(size_t n, uint32_t seed,
                                   bool specials = true, float offset = 0) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> kind(0, 20);
  std::uniform_int_distribution<int> small(-64, 63);
  const float special[] = {std::numeric_limits<float>::quiet_NaN(),
                           -std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           0.0f,
                           -0.0f,
                           1e-7f,
                           -3e-41f};
  std::vector<uint16_t> v(n);
  for (uint16_t &bits : v) {
    int k = specials ? kind(rng) : 9;
    bits = k == 8 ? uint16_t(0xffc1) // a NaN in both types
                  : T::store(k < 8 ? special[k] : offset + small(rng) / 16.0f);
  }
  return v;
}

/// The float32 values of half bits `v` of `type`.
inline std::vector<float> widen(const std::vector<uint16_t> &v, CastType type) {
  std::vector<float> out(v.size());
  castElements(v.data(), type, out.data(), CastType::F32, int64_t(v.size()));
  return out;
}

/// `v` rounded to `type`, as a cast writes it.
inline std::vector<uint16_t> narrow(const std::vector<float> &v,
                                    CastType type) {
  std::vector<uint16_t> out(v.size());
  castElements(v.data(), CastType::F32, out.data(), type, int64_t(v.size()));
  return out;
}

/// `v` with every NaN's sign bit cleared: a loop's NaN takes its sign from
/// whichever operand the instructions the compiler chose pass on, which
/// differs between a float loop and its half-storage twin (F16 keeps the
/// sign through the cast; bf16's cast writes one NaN).
inline std::vector<uint16_t> nanSignsCleared(std::vector<uint16_t> v,
                                             CastType type) {
  const uint16_t exponent = type == CastType::F16 ? 0x7c00 : 0x7f80;
  for (uint16_t &bits : v)
    if ((bits & exponent) == exponent && (bits & ~exponent & 0x7fff))
      bits &= 0x7fff;
  return v;
}

} // namespace cairn::kernels::testing

#endif // CAIRN_TEST_UNIT_KERNELS_HALFBITS_H
