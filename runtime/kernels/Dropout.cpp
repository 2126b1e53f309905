//===- Dropout.cpp - Counter-based dropout masks --------------------------===//
//
// One Philox call yields the mask bits of four consecutive elements. The
// loop draws kGroups calls at once, eight to an AVX2 vector where the CPU
// has it (chosen at run time; the library is built for any x86-64): the
// scalar loop cost as much as all the transformer's GEMMs on the CPU, and
// recomputation draws masks again. Element i's mask depends only on i (not
// on n), and y may alias x because each element is read before it is written.
// The generator is Philox.h's, which the CUDA dropout shares; the decision is
// ScalarOps.h's `u >= p`, as an integer compare (below), so both draw the
// same mask.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dropout.h"

#include "runtime/kernels/Philox.h"
#include "runtime/kernels/ScalarOps.h"

#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace cairn::kernels {

std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key) {
  PhiloxWords out = philox({{counter[0], counter[1], counter[2], counter[3]}},
                           {{key[0], key[1]}});
  return {out.w[0], out.w[1], out.w[2], out.w[3]};
}

namespace {

/// Philox calls drawn together.
constexpr int64_t kGroups = 16;

/// The words of groups first .. first + kGroups - 1 at `step`, word k of
/// group first + l in words[k][l]: philox() of Philox.h, lane by lane.
void philoxLanes(PhiloxKey key, uint64_t step, uint64_t first,
                 uint32_t (&words)[4][kGroups]) {
  for (int64_t l = 0; l < kGroups; ++l) {
    PhiloxWords out = ops::dropoutWords(key, step, first + l);
    for (int k = 0; k < 4; ++k)
      words[k][l] = out.w[k];
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
/// The high and low halves of a * m for eight 32-bit lanes: vpmuludq
/// multiplies the even lanes, so the odd ones are shifted down first.
__attribute__((target("avx2"))) inline void mulHiLo(__m256i a, __m256i m,
                                                    __m256i &hi, __m256i &lo) {
  __m256i even = _mm256_mul_epu32(a, m);
  __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

/// philoxLanes with AVX2: eight groups a vector, the same words.
__attribute__((target("avx2"))) void
philoxLanesAvx2(PhiloxKey key, uint64_t step, uint64_t first,
                uint32_t (&words)[4][kGroups]) {
  const __m256i mul0 = _mm256_set1_epi32(int(philox_detail::kMul0));
  const __m256i mul1 = _mm256_set1_epi32(int(philox_detail::kMul1));
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t half = 0; half < kGroups; half += 8) {
    uint64_t group = first + half;
    // Eight consecutive groups; a carry into the high word happens at most
    // at one lane, so the high words come from each lane's own group.
    __m256i c0 =
        _mm256_add_epi32(_mm256_set1_epi32(int(uint32_t(group))), lanes);
    alignas(32) uint32_t high[8];
    for (int l = 0; l < 8; ++l)
      high[l] = uint32_t((group + l) >> 32);
    __m256i c1 = _mm256_load_si256(reinterpret_cast<const __m256i *>(high));
    __m256i c2 = _mm256_set1_epi32(int(uint32_t(step)));
    __m256i c3 = _mm256_set1_epi32(int(uint32_t(step >> 32)));
    uint32_t k0 = key.k[0], k1 = key.k[1];
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        k0 += philox_detail::kWeyl0;
        k1 += philox_detail::kWeyl1;
      }
      __m256i hi0, lo0, hi1, lo1;
      mulHiLo(c0, mul0, hi0, lo0);
      mulHiLo(c2, mul1, hi1, lo1);
      __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1),
                                    _mm256_set1_epi32(int(k0)));
      __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3),
                                    _mm256_set1_epi32(int(k1)));
      c0 = n0;
      c1 = lo1;
      c2 = n2;
      c3 = lo0;
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(&words[0][half]), c0);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(&words[1][half]), c1);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(&words[2][half]), c2);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(&words[3][half]), c3);
  }
}
#endif

using PhiloxLanesFn = void (*)(PhiloxKey, uint64_t, uint64_t,
                               uint32_t (&)[4][kGroups]);

/// The widest philoxLanes this CPU runs.
PhiloxLanesFn selectPhiloxLanes() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2"))
    return philoxLanesAvx2;
#endif
  return philoxLanes;
}

} // namespace

template <typename T>
void dropout(int64_t n, double p, uint64_t seed, uint64_t step,
             uint64_t stream, const T *x, T *y) {
  PhiloxKey key = ops::dropoutKey(seed, stream);
  T keepScale = ops::dropoutScale<T>(p);
  // ScalarOps.h keeps an element when u = (word >> 8) * 2^-24 >= p. Both
  // sides times 2^-24 are exact, and word >> 8 is an integer, so that is
  // (word >> 8) >= ceil(p * 2^24): one integer compare per element.
  double scaled = std::ceil(p * 0x1p24);
  uint32_t threshold = scaled <= 0        ? 0
                       : scaled >= 0x1p24 ? 1u << 24
                                          : uint32_t(scaled);
  static const PhiloxLanesFn lanes = selectPhiloxLanes();
  const int64_t block = 4 * kGroups;
  int64_t base = 0;
  for (; base + block <= n; base += block) {
    uint32_t words[4][kGroups];
    lanes(key, step, uint64_t(base) / 4, words);
    for (int64_t l = 0; l < kGroups; ++l)
      for (int64_t k = 0; k < 4; ++k) {
        int64_t i = base + 4 * l + k;
        y[i] = (words[k][l] >> 8) >= threshold ? x[i] * keepScale : T(0);
      }
  }
  for (; base < n; base += 4) {
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
