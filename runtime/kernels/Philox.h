//===- Philox.h - Philox4x32-10 for the host and the device -----*- C++ -*-===//
//
// The counter-based generator behind dropout masks (Salmon et al., SC'11,
// "Parallel random numbers: as easy as 1, 2, 3"), header-only so the CPU
// kernels and the CUDA kernels draw the same words from one definition.
// Integer arithmetic only, so both sides agree bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_PHILOX_H
#define CAIRN_RUNTIME_KERNELS_PHILOX_H

#include <cstdint>

// As in ScalarOps.h, which includes this header.
#include "runtime/kernels/HostDevice.h"

namespace cairn::kernels {

/// Four 32-bit words: a counter going in, the random output coming out.
struct PhiloxWords {
  uint32_t w[4];
};

/// The 64-bit Philox key as its two words.
struct PhiloxKey {
  uint32_t k[2];
};

namespace philox_detail {

constexpr uint32_t kMul0 = 0xD2511F53;
constexpr uint32_t kMul1 = 0xCD9E8D57;
constexpr uint32_t kWeyl0 = 0x9E3779B9; // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85; // sqrt(3) - 1

CAIRN_HOST_DEVICE inline PhiloxWords philoxRound(const PhiloxWords &c,
                                                 const PhiloxKey &k) {
  uint64_t p0 = uint64_t(kMul0) * c.w[0];
  uint64_t p1 = uint64_t(kMul1) * c.w[2];
  uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
  uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
  return {{hi1 ^ c.w[1] ^ k.k[0], lo1, hi0 ^ c.w[3] ^ k.k[1], lo0}};
}

} // namespace philox_detail

/// Ten rounds of Philox4x32 on `counter` with `key`.
CAIRN_HOST_DEVICE inline PhiloxWords philox(PhiloxWords counter,
                                            PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key.k[0] += philox_detail::kWeyl0;
      key.k[1] += philox_detail::kWeyl1;
    }
    counter = philox_detail::philoxRound(counter, key);
  }
  return counter;
}

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_PHILOX_H
