//===- Convert.cpp - float32 to and from f16 and bf16 ---------------------===//
#include "runtime/kernels/Convert.h"

#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Parallel.h"

#include <cstring>

#if (defined(__F16C__) && defined(__AVX__)) || (defined(__AVX512BF16__) && defined(__AVX512DQ__))
#include <immintrin.h>
#endif

namespace cairn::kernels {

namespace {
size_t elementBytes(CastType type) { return type == CastType::F32 ? 4 : 2; }

/// Converts x into y over [begin, end) `Lanes` at a time with `vector(i)`,
/// which returns a mask of the lanes the instruction gets otherwise than
/// `scalar` (a NaN's payload, a flushed subnormal); those lanes and the tail
/// take `scalar`, so the result is the scalar conversion's, bit for bit.
template <int Lanes, typename In, typename Out, typename V, typename S>
void convertInVectors(const In *x, Out *y, int64_t begin, int64_t end, V vector, S scalar) {
  int64_t i = begin;
  for (; i + Lanes <= end; i += Lanes)
    if (unsigned redo = vector(i))
      for (int lane = 0; lane < Lanes; ++lane)
        if (redo >> lane & 1)
          y[i + lane] = scalar(x[i + lane]);
  for (; i < end; ++i)
    y[i] = scalar(x[i]);
}

#if defined(__F16C__) && defined(__AVX__)
// F16C converts 8 lanes at once, rounding to nearest even as halfFromFloat
// does; a NaN keeps its payload there (halfFromFloat: PyTorch's quiet NaN).
void halvesFromFloats(const float *x, uint16_t *y, int64_t begin, int64_t end) {
  convertInVectors<8>(x, y, begin, end, [&](int64_t i) -> unsigned {
    __m256 v = _mm256_loadu_ps(x + i);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(y + i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }, halfFromFloat);
}

// Exact both ways but for a signalling NaN, which F16C makes quiet (as a
// float32 operation would).
void floatsFromHalves(const uint16_t *x, float *y, int64_t begin, int64_t end) {
  convertInVectors<8>(x, y, begin, end, [&](int64_t i) -> unsigned {
    __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x + i)));
    _mm256_storeu_ps(y + i, v);
    return _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }, floatFromHalf);
}
#endif

#if defined(__AVX512BF16__) && defined(__AVX512DQ__)
// AVX-512 BF16 rounds 16 lanes to nearest even at once, as bfloat16FromFloat
// does, but flushes subnormal inputs to zero and keeps a NaN's payload.
void bfloat16sFromFloats(const float *x, uint16_t *y, int64_t begin, int64_t end) {
  convertInVectors<16>(x, y, begin, end, [&](int64_t i) -> unsigned {
    __m512 v = _mm512_loadu_ps(x + i);
    __m256bh h = _mm512_cvtneps_pbh(v);
    std::memcpy(y + i, &h, sizeof h);
    // fpclass 0x01 | 0x20 | 0x80: quiet NaN, subnormal, signalling NaN.
    return _mm512_fpclass_ps_mask(v, 0xa1);
  }, bfloat16FromFloat);
}
#endif

/// One conversion over [begin, end), the loop the compiler vectorises.
template <typename In, typename Out, typename F>
void convertRange(const void *in, void *out, int64_t begin, int64_t end, F convert) {
  const In *x = static_cast<const In *>(in);
  Out *y = static_cast<Out *>(out);
  for (int64_t i = begin; i < end; ++i)
    y[i] = convert(x[i]);
}
} // namespace

void castRun(const void *in, CastType from, void *out, CastType to, int64_t begin, int64_t end) {
#if defined(__F16C__) && defined(__AVX__)
  if (from == CastType::F32 && to == CastType::F16)
    return halvesFromFloats(static_cast<const float *>(in), static_cast<uint16_t *>(out), begin,
                            end);
  if (from == CastType::F16 && to == CastType::F32)
    return floatsFromHalves(static_cast<const uint16_t *>(in), static_cast<float *>(out), begin,
                            end);
#endif
#if defined(__AVX512BF16__) && defined(__AVX512DQ__)
  if (from == CastType::F32 && to == CastType::BF16)
    return bfloat16sFromFloats(static_cast<const float *>(in), static_cast<uint16_t *>(out),
                               begin, end);
#endif
  if (from == CastType::F32 && to == CastType::F16)
    convertRange<float, uint16_t>(in, out, begin, end, halfFromFloat);
  else if (from == CastType::F32 && to == CastType::BF16)
    convertRange<float, uint16_t>(in, out, begin, end, bfloat16FromFloat);
  else if (from == CastType::F16 && to == CastType::F32)
    convertRange<uint16_t, float>(in, out, begin, end, floatFromHalf);
  else if (from == CastType::BF16 && to == CastType::F32)
    convertRange<uint16_t, float>(in, out, begin, end, floatFromBfloat16);
  else
    throw KernelError("cast: f16 and bf16 convert through float32, not to each other or "
                      "themselves");
}

void castElements(const void *in, CastType from, void *out, CastType to, int64_t n) {
  if (from == to) {
    std::memcpy(out, in, static_cast<size_t>(n) * elementBytes(from));
    return;
  }
  if (from != CastType::F32 && to != CastType::F32)
    throw KernelError("cast: f16 and bf16 convert through float32, not to each other");
  parallelFor(n, 4, [&](int64_t begin, int64_t end) { castRun(in, from, out, to, begin, end); });
}

} // namespace cairn::kernels
