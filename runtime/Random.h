//===- Random.h - SplitMix64, the runtime's one generator --------*- C++ -*-===//
//
// Shuffling (Dataset.h) and initialisation (Init.h) both draw from SplitMix64
// (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
// 2014): 64 bits of state, a fixed sequence anyone can reimplement in a few
// lines, unlike std::*_distribution whose output is implementation-defined.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_RANDOM_H
#define CAIRN_RUNTIME_RANDOM_H

#include <cstdint>

namespace cairn::runtime {

class SplitMix64 {
public:
  static constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;

  explicit SplitMix64(uint64_t state) : state(state) {}

  /// state += gamma, then the finaliser of the new state.
  uint64_t next() {
    state += kGamma;
    return mix(state);
  }

  /// A uniform double in [0, 1) from the top 53 bits of next().
  double nextUnit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  /// SplitMix64's finaliser (a bijection of 64-bit values).
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

private:
  uint64_t state;
};

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_RANDOM_H
