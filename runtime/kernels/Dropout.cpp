//===- Dropout.cpp - Counter-based dropout masks --------------------------===//
//
// One Philox call yields the mask bits of four consecutive elements. The
// loop draws kGroups calls at once, sixteen to an AVX-512 vector or eight to
// an AVX2 vector where the CPU has them (chosen at run time): the
// scalar loop cost as much as all the transformer's GEMMs on the CPU, and
// recomputation draws masks again. Element i's mask depends only on i (not
// on n), and y may alias x because each element is read before it is written.
// The generator is Philox.h's, which the CUDA dropout shares; the decision is
// ScalarOps.h's `u >= p`, as an integer compare (below), so both draw the
// same mask.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dropout.h"

#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Parallel.h"
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

/// The words of groups first .. first + kGroups - 1 at `step` in element
/// order, word k of group first + l in words[4 * l + k]: philox() of
/// Philox.h, group by group.
void philoxLanes(PhiloxKey key, uint64_t step, uint64_t first,
                 uint32_t (&words)[4 * kGroups]) {
  for (int64_t l = 0; l < kGroups; ++l) {
    PhiloxWords out = ops::dropoutWords(key, step, first + l);
    for (int k = 0; k < 4; ++k)
      words[4 * l + k] = out.w[k];
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
                uint32_t (&words)[4 * kGroups]) {
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
    // Lane l of ck is word k of group l: a 4 x 8 transpose puts the words
    // in element order, so the mask loop reads them contiguously.
    __m256i t0 = _mm256_unpacklo_epi32(c0, c1), t1 = _mm256_unpackhi_epi32(c0, c1);
    __m256i t2 = _mm256_unpacklo_epi32(c2, c3), t3 = _mm256_unpackhi_epi32(c2, c3);
    __m256i g04 = _mm256_unpacklo_epi64(t0, t2), g15 = _mm256_unpackhi_epi64(t0, t2);
    __m256i g26 = _mm256_unpacklo_epi64(t1, t3), g37 = _mm256_unpackhi_epi64(t1, t3);
    __m256i *out = reinterpret_cast<__m256i *>(&words[4 * half]);
    _mm256_storeu_si256(out + 0, _mm256_permute2x128_si256(g04, g15, 0x20));
    _mm256_storeu_si256(out + 1, _mm256_permute2x128_si256(g26, g37, 0x20));
    _mm256_storeu_si256(out + 2, _mm256_permute2x128_si256(g04, g15, 0x31));
    _mm256_storeu_si256(out + 3, _mm256_permute2x128_si256(g26, g37, 0x31));
  }
}

// GCC 12's AVX-512 intrinsics warn that their own _mm512_undefined_epi32()
// is uninitialised (GCC bug 105593, fixed in 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"

/// The high and low halves of a * m for sixteen 32-bit lanes (as mulHiLo).
__attribute__((target("avx512f"))) inline void
mulHiLo512(__m512i a, __m512i m, __m512i &hi, __m512i &lo) {
  __m512i even = _mm512_mul_epu32(a, m);
  __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);
  lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

/// philoxLanes with AVX-512: sixteen groups a vector, the same words.
__attribute__((target("avx512f"))) void
philoxLanesAvx512(PhiloxKey key, uint64_t step, uint64_t first,
                  uint32_t (&words)[4 * kGroups]) {
  static_assert(kGroups == 16, "one AVX-512 vector of groups");
  const __m512i mul0 = _mm512_set1_epi32(int(philox_detail::kMul0));
  const __m512i mul1 = _mm512_set1_epi32(int(philox_detail::kMul1));
  const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
                                          11, 12, 13, 14, 15);
  // As in philoxLanesAvx2: a carry into the high word happens at one lane at
  // most, so each lane's high word comes from its own group.
  __m512i c0 = _mm512_add_epi32(_mm512_set1_epi32(int(uint32_t(first))), lanes);
  alignas(64) uint32_t high[16];
  for (int l = 0; l < 16; ++l)
    high[l] = uint32_t((first + l) >> 32);
  __m512i c1 = _mm512_load_si512(high);
  __m512i c2 = _mm512_set1_epi32(int(uint32_t(step)));
  __m512i c3 = _mm512_set1_epi32(int(uint32_t(step >> 32)));
  uint32_t k0 = key.k[0], k1 = key.k[1];
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += philox_detail::kWeyl0;
      k1 += philox_detail::kWeyl1;
    }
    __m512i hi0, lo0, hi1, lo1;
    mulHiLo512(c0, mul0, hi0, lo0);
    mulHiLo512(c2, mul1, hi1, lo1);
    __m512i n0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1),
                                  _mm512_set1_epi32(int(k0)));
    __m512i n2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3),
                                  _mm512_set1_epi32(int(k1)));
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  // Element order: within each 128-bit block the unpacks gather groups
  // 4j .. 4j+3 whole (g0: group 4j, g1: 4j+1, ...); the block shuffles then
  // transpose the 4 x 4 blocks so that out m holds groups 4m .. 4m+3.
  __m512i t0 = _mm512_unpacklo_epi32(c0, c1), t1 = _mm512_unpackhi_epi32(c0, c1);
  __m512i t2 = _mm512_unpacklo_epi32(c2, c3), t3 = _mm512_unpackhi_epi32(c2, c3);
  __m512i g0 = _mm512_unpacklo_epi64(t0, t2), g1 = _mm512_unpackhi_epi64(t0, t2);
  __m512i g2 = _mm512_unpacklo_epi64(t1, t3), g3 = _mm512_unpackhi_epi64(t1, t3);
  constexpr int kEven = 0 | 2 << 2 | 0 << 4 | 2 << 6; // blocks 0, 2, 0, 2
  constexpr int kOdd = 1 | 3 << 2 | 1 << 4 | 3 << 6;  // blocks 1, 3, 1, 3
  __m512i u0 = _mm512_shuffle_i32x4(g0, g1, kEven);
  __m512i u1 = _mm512_shuffle_i32x4(g0, g1, kOdd);
  __m512i u2 = _mm512_shuffle_i32x4(g2, g3, kEven);
  __m512i u3 = _mm512_shuffle_i32x4(g2, g3, kOdd);
  _mm512_storeu_si512(&words[0], _mm512_shuffle_i32x4(u0, u2, kEven));
  _mm512_storeu_si512(&words[16], _mm512_shuffle_i32x4(u1, u3, kEven));
  _mm512_storeu_si512(&words[32], _mm512_shuffle_i32x4(u0, u2, kOdd));
  _mm512_storeu_si512(&words[48], _mm512_shuffle_i32x4(u1, u3, kOdd));
}
#pragma GCC diagnostic pop
#endif

using PhiloxLanesFn = void (*)(PhiloxKey, uint64_t, uint64_t,
                               uint32_t (&)[4 * kGroups]);

struct PhiloxPath {
  const char *name;
  PhiloxLanesFn lanes;
};

/// The philoxLanes this CPU runs, widest first.
std::vector<PhiloxPath> philoxPaths() {
  std::vector<PhiloxPath> paths;
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f"))
    paths.push_back({"avx512", philoxLanesAvx512});
  if (__builtin_cpu_supports("avx2"))
    paths.push_back({"avx2", philoxLanesAvx2});
#endif
  paths.push_back({"scalar", philoxLanes});
  return paths;
}

/// ScalarOps.h keeps an element when u = (word >> 8) * 2^-24 >= p. Both
/// sides times 2^-24 are exact, and word >> 8 is an integer, so that is
/// (word >> 8) >= ceil(p * 2^24): one integer compare per element.
uint32_t keepThreshold(double p) {
  double scaled = std::ceil(p * 0x1p24);
  return scaled <= 0 ? 0 : scaled >= 0x1p24 ? 1u << 24 : uint32_t(scaled);
}

/// The Philox path dropout and dropoutKeep draw with: the widest.
PhiloxLanesFn widestLanes() {
  static const PhiloxLanesFn widest = philoxPaths().front().lanes;
  return widest;
}

// On half storage each element is widened as it is read and the product
// rounded as it is written (Convert.h): the float kernel's bits between
// casts.
template <typename T>
void dropoutWith(PhiloxLanesFn lanes, int64_t n, double p, uint64_t seed,
                 uint64_t step, uint64_t stream, const StoredAs<T> *x,
                 StoredAs<T> *y) {
  using S = Storage<T>;
  using C = ComputedIn<T>;
  PhiloxKey key = ops::dropoutKey(seed, stream);
  C keepScale = ops::dropoutScale<C>(p);
  const uint32_t threshold = keepThreshold(p);
  const int64_t block = 4 * kGroups;
  const int64_t blocks = n / block;
  parallelFor(
      blocks, 8 * block,
      [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          const int64_t base = b * block;
          uint32_t words[4 * kGroups];
          lanes(key, step, uint64_t(base) / 4, words);
          // The product is taken unconditionally: under a select it would
          // keep the loop scalar, branching on random bits.
          for (int64_t i = 0; i < block; ++i) {
            const C kept = S::load(x[base + i]) * keepScale;
            y[base + i] = S::store((words[i] >> 8) >= threshold ? kept : C(0));
          }
        }
      });
  for (int64_t base = blocks * block; base < n; base += 4) {
    PhiloxWords words = ops::dropoutWords(key, step, uint64_t(base) / 4);
    int64_t count = n - base < 4 ? n - base : 4;
    for (int64_t k = 0; k < count; ++k)
      y[base + k] = S::store(
          ops::dropoutElement(words.w[k], p, S::load(x[base + k]), keepScale));
  }
}

} // namespace

template <typename T>
void dropout(int64_t n, double p, uint64_t seed, uint64_t step, uint64_t stream,
             const StoredAs<T> *x, StoredAs<T> *y) {
  dropoutWith<T>(widestLanes(), n, p, seed, step, stream, x, y);
}

void dropoutKeep(int64_t first, int64_t count, double p, uint64_t seed,
                 uint64_t step, uint64_t stream, uint8_t *keep) {
  if (first % 4 != 0)
    throw KernelError("dropoutKeep: the first element " +
                      std::to_string(first) + " is not a multiple of 4");
  const PhiloxKey key = ops::dropoutKey(seed, stream);
  const uint32_t threshold = keepThreshold(p);
  const PhiloxLanesFn lanes = widestLanes();
  const int64_t block = 4 * kGroups;
  int64_t j = 0;
  for (; j + block <= count; j += block) {
    uint32_t words[4 * kGroups];
    lanes(key, step, uint64_t(first + j) / 4, words);
    for (int64_t i = 0; i < block; ++i)
      keep[j + i] = (words[i] >> 8) >= threshold;
  }
  for (; j < count; j += 4) {
    PhiloxWords words = ops::dropoutWords(key, step, uint64_t(first + j) / 4);
    for (int64_t k = 0; k < 4 && j + k < count; ++k)
      keep[j + k] = (words.w[k] >> 8) >= threshold;
  }
}

std::vector<std::string> dropoutPhiloxPaths() {
  std::vector<std::string> names;
  for (const PhiloxPath &path : philoxPaths())
    names.push_back(path.name);
  return names;
}

template <typename T>
void dropoutUsing(const std::string &path, int64_t n, double p, uint64_t seed,
                  uint64_t step, uint64_t stream, const T *x, T *y) {
  for (const PhiloxPath &candidate : philoxPaths())
    if (path == candidate.name)
      return dropoutWith<T>(candidate.lanes, n, p, seed, step, stream, x, y);
  throw KernelError("dropout: no Philox path '" + path + "' on this CPU");
}

template void dropout<float>(int64_t, double, uint64_t, uint64_t, uint64_t,
                             const float *, float *);
template void dropout<double>(int64_t, double, uint64_t, uint64_t, uint64_t,
                              const double *, double *);
template void dropout<F16>(int64_t, double, uint64_t, uint64_t, uint64_t,
                           const uint16_t *, uint16_t *);
template void dropout<Bf16>(int64_t, double, uint64_t, uint64_t, uint64_t,
                            const uint16_t *, uint16_t *);
template void dropoutUsing<float>(const std::string &, int64_t, double,
                                  uint64_t, uint64_t, uint64_t, const float *,
                                  float *);

} // namespace cairn::kernels
