//===- Dropout.cpp - Counter-based dropout masks --------------------------===//
//
// One Philox call yields the mask bits of four consecutive elements, so the
// loop runs over groups of four; element i's mask depends only on i (not on
// n), and y may alias x because each element is read before it is written.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dropout.h"

namespace cairn::kernels {

namespace {

constexpr uint32_t kMul0 = 0xD2511F53;
constexpr uint32_t kMul1 = 0xCD9E8D57;
constexpr uint32_t kWeyl0 = 0x9E3779B9; // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85; // sqrt(3) - 1

std::array<uint32_t, 4> philoxRound(const std::array<uint32_t, 4> &c,
                                    const std::array<uint32_t, 2> &k) {
  uint64_t p0 = uint64_t(kMul0) * c[0];
  uint64_t p1 = uint64_t(kMul1) * c[2];
  uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
  uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
  return {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}

} // namespace

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kWeyl0;
      key[1] += kWeyl1;
    }
    counter = philoxRound(counter, key);
  }
  return counter;
}

template <typename T>
void dropout(int64_t n, double p, uint64_t seed, uint64_t step,
             uint64_t stream, const T *x, T *y) {
  std::array<uint32_t, 2> key = {uint32_t(seed),
                                 uint32_t(seed >> 32) ^ uint32_t(stream)};
  T keepScale = T(1 / (1 - p));
  for (int64_t base = 0; base < n; base += 4) {
    uint64_t group = uint64_t(base) / 4;
    std::array<uint32_t, 4> words =
        philox4x32({uint32_t(group), uint32_t(group >> 32), uint32_t(step),
                    uint32_t(step >> 32)},
                   key);
    int64_t count = n - base < 4 ? n - base : 4;
    for (int64_t k = 0; k < count; ++k) {
      double u = double(words[k] >> 8) * 0x1p-24;
      // A select, not x * mask * scale: at p == 1 the scale is infinite.
      y[base + k] = u >= p ? x[base + k] * keepScale : T(0);
    }
  }
}

template void dropout<float>(int64_t, double, uint64_t, uint64_t, uint64_t,
                             const float *, float *);
template void dropout<double>(int64_t, double, uint64_t, uint64_t, uint64_t,
                              const double *, double *);

} // namespace cairn::kernels
