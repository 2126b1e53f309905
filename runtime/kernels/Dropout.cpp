//===- Dropout.cpp - Counter-based dropout masks --------------------------===//
//
// One Philox call yields the mask bits of four consecutive elements, so the
// loop runs over groups of four; element i's mask depends only on i (not on
// n), and y may alias x because each element is read before it is written.
// The generator and the per-element decision are those of Philox.h and
// ScalarOps.h, which the CUDA dropout shares, so both draw the same mask.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dropout.h"

#include "runtime/kernels/Philox.h"
#include "runtime/kernels/ScalarOps.h"

namespace cairn::kernels {

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key) {
  PhiloxWords out = philox({{counter[0], counter[1], counter[2], counter[3]}},
                           {{key[0], key[1]}});
  return {out.w[0], out.w[1], out.w[2], out.w[3]};
}

template <typename T>
void dropout(int64_t n, double p, uint64_t seed, uint64_t step,
             uint64_t stream, const T *x, T *y) {
  PhiloxKey key = ops::dropoutKey(seed, stream);
  T keepScale = ops::dropoutScale<T>(p);
  for (int64_t base = 0; base < n; base += 4) {
    PhiloxWords words = ops::dropoutWords(key, step, uint64_t(base) / 4);
    int64_t count = n - base < 4 ? n - base : 4;
    for (int64_t k = 0; k < count; ++k)
      y[base + k] = ops::dropoutElement(words.w[k], p, x[base + k], keepScale);
  }
}

template void dropout<float>(int64_t, double, uint64_t, uint64_t, uint64_t,
                             const float *, float *);
template void dropout<double>(int64_t, double, uint64_t, uint64_t, uint64_t,
                              const double *, double *);

} // namespace cairn::kernels
