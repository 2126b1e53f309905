//===- FastMath.h - Vectorisable float32 exp, tanh, erf, Phi ----*- C++ -*-===//
//
// Float32 exp, tanh, erf and the standard normal CDF for the element-wise
// CPU kernels. ScalarOps.h evaluates activations through libm in double, one
// call per element, which keeps the loops scalar; these functions are
// header-only, branch-free (selects through integer masks and bit operations
// only, no tables, no libm calls) so that GCC vectorises a plain loop
//   for (i) y[i] = fastmath::exp(x[i]);
// at -O3 (SSE2, AVX2, AVX-512 alike).
//
// Only IEEE float +, -, *, / and exact bit manipulation are used, no FMA and
// nothing that depends on -ffast-math, so under -ffp-contract=off (how the
// runtime and generated code are compiled) an element gives the same bits
// whether its loop was vectorised or not, at any vector width.
//
// Maximum errors against libm in double, in ulps of the float result, over
// every float of the given range (FastMathTest checks them on a strided
// sweep); subnormal results are counted in steps of 2^-149, within the same
// bounds:
//   exp        1 ulp on [-110, 100]; 0 below about -103.97 (and for -inf),
//              +inf above about 88.72; subnormal results by two-step
//              scaling, rounded once (not flushed)
//   tanh       1 ulp on [-20, 20] (odd polynomial below 0.625, so relative
//              near 0); exactly +-1 from |x| = 9.1
//   erf        3 ulp on [-10, 10] (worst just below |x| = 1)
//   normalCdf  7 ulp on [-20, 20], relative also in the left tail down to
//              where Phi underflows (about -14.2), so x * normalCdf(x) is an
//              accurate GELU for negative x too; the float evaluation of the
//              rational R (below) is most of it
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_FASTMATH_H
#define CAIRN_RUNTIME_KERNELS_FASTMATH_H

#include "runtime/kernels/HostDevice.h"

#include <cstdint>
#include <cstring>

namespace cairn::kernels::fastmath {

namespace detail {

/// Bit casts through memcpy; GCC lowers them to register moves (or nothing)
/// and vectorises them.
CAIRN_HOST_DEVICE inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
CAIRN_HOST_DEVICE inline float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
CAIRN_HOST_DEVICE inline float absOf(float x) {
  return fromBits(bitsOf(x) & 0x7fffffffu);
}
/// c ? a : b through integer masks. A float `?:` whose arms are computed
/// values does not vectorise under GCC's default -ftrapping-math: the arm
/// is sunk into a branch, and if-conversion will not speculate a float
/// operation that may trap. Both arms here are computed unconditionally.
CAIRN_HOST_DEVICE inline float select(bool c, float a, float b) {
  uint32_t m = 0u - uint32_t(c);
  return fromBits((bitsOf(a) & m) | (bitsOf(b) & ~m));
}
/// |mag| with the sign of `sign` (mag's own sign bit must be clear).
CAIRN_HOST_DEVICE inline float withSignOf(float mag, float sign) {
  return fromBits(bitsOf(mag) | (bitsOf(sign) & 0x80000000u));
}

/// exp(hi + lo) as m * 2^n, 1 <~ m <~ 2 after the polynomial. `lo` is a small
/// correction (|lo| << 1) that is added after the exact part of the range
/// reduction, so exp(hi + lo) keeps the accuracy of hi + lo even when the
/// rounded sum would not. Needs |hi + lo| < 2^21.
///
/// Scheme of Cephes expf (S. Moshier): n = nearest integer of x / ln 2,
/// r = x - n ln 2 with ln 2 split Cody-Waite style into C1 (9 bits, so n * C1
/// is exact) + C2, and exp(r) = 1 + r + r^2 P(r) on |r| <= ln 2 / 2 with
/// Moshier's minimax coefficients. The nearest integer is the exact
/// (y + 1.5 * 2^23) - 1.5 * 2^23 trick, whose low mantissa bits also give n
/// as an integer without a float-to-int conversion.
struct ExpParts {
  float m;
  int32_t n;
};
CAIRN_HOST_DEVICE inline ExpParts expParts(float hi, float lo) {
  const float kLog2e = 1.44269504088896341f;
  const float kC1 = 0.693359375f;      // 355 / 512
  const float kC2 = -2.12194440e-4f;   // ln 2 - kC1
  const float kRound = 12582912.0f;    // 1.5 * 2^23
  float t = (hi + lo) * kLog2e + kRound;
  float nf = t - kRound;
  int32_t n = int32_t(bitsOf(t) - bitsOf(kRound));
  float r = ((hi - nf * kC1) + lo) - nf * kC2;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float r2 = r * r;
  return {(p * r2 + r) + 1.0f, n};
}

/// m * 2^n for n in [-252, 254], as m * 2^n1 * 2^n2 with both factors normal
/// floats: the first product is exact for the m of expParts, so a subnormal
/// result is rounded once and an overflow gives +inf.
CAIRN_HOST_DEVICE inline float scaleBy2n(float m, int32_t n) {
  int32_t n1 = n >> 1;
  int32_t n2 = n - n1;
  float s1 = fromBits(uint32_t(n1 + 127) << 23);
  float s2 = fromBits(uint32_t(n2 + 127) << 23);
  return (m * s1) * s2;
}

/// R(a) = erfc(a / sqrt 2) * exp(a^2 / 2) (the scaled complementary error
/// function erfcx(a / sqrt 2)) for a in [0, 15]: a [4/5] rational fitted to
/// relative minimax (error 6.3e-9 in exact arithmetic) for Cairn. All
/// coefficients are positive, so the float evaluation does not cancel.
CAIRN_HOST_DEVICE inline float scaledTail(float a) {
  float p = 8.306541480123997e-3f;
  p = p * a + 8.176278322935104e-2f;
  p = p * a + 3.679398000240326e-1f;
  p = p * a + 8.785688281059265e-1f;
  p = p * a + 1.0f;
  float q = 1.0410594753921032e-2f;
  q = q * a + 1.0248056799173355e-1f;
  q = q * a + 4.7141072154045105e-1f;
  q = q * a + 1.2055513858795166f;
  q = q * a + 1.6764538288116455f;
  q = q * a + 1.0f;
  return p / q;
}

/// factor * exp(-k a^2) for a in [0, 15] and k = 1/2 or 1, with a^2 split
/// exactly (Dekker: a = hi + lo, hi of 12 bits, so hi^2, hi lo and lo^2 are
/// exact floats) rather than rounded: the rounding of a^2 would cost up to
/// ~50 ulps where the exponent is near -100.
CAIRN_HOST_DEVICE inline float gaussTimes(float a, float k, float factor) {
  float c = a * 4097.0f; // 2^12 + 1
  float hi = c - (c - a);
  float lo = a - hi;
  float xh = -(k * (hi * hi));
  float xl = -(k * ((hi + hi) * lo + lo * lo));
  ExpParts e = expParts(xh, xl);
  return scaleBy2n(e.m * factor, e.n);
}

} // namespace detail

/// e^x. -inf and x below about -103.97 give 0 (softmax relies on
/// exp(-inf) == 0), x above about 88.72 gives +inf, NaN gives NaN.
/// Subnormal results are rounded once from the polynomial (not flushed).
CAIRN_HOST_DEVICE inline float exp(float x) {
  // Clamp so the range reduction and the scaling stay in range; NaN passes
  // (both compares are false). exp(-104) < 2^-150 rounds to 0, exp(89)
  // overflows to +inf.
  float xc = detail::select(x < -104.0f, -104.0f, x);
  xc = detail::select(xc > 89.0f, 89.0f, xc);
  detail::ExpParts e = detail::expParts(xc, 0.0f);
  return detail::scaleBy2n(e.m, e.n);
}

/// tanh(x), odd. |x| < 0.625: x + x z P(z) with z = x^2 and the minimax
/// P of Cephes tanhf, so the error is relative near 0; otherwise
/// 1 - 2 / (e^{2|x|} + 1) with the sign of x. |x| >= 9.1 gives exactly +-1.
CAIRN_HOST_DEVICE inline float tanh(float x) {
  float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  float ax = detail::absOf(x);
  float small = ax + ax * (z * p); // on |x|, so that tanh(-0) == -0
  float ac = detail::select(ax > 10.0f, 10.0f, ax); // tanh(10) rounds to 1
  float e = exp(ac + ac);
  float big = 1.0f - 2.0f / (e + 1.0f);
  return detail::withSignOf(detail::select(ax < 0.625f, small, big), x);
}

/// erf(x), odd. |x| < 1: x P(x^2) with the minimax P of Cephes erff;
/// otherwise 1 - erfc(|x|) with erfc(a) = exp(-a^2) R(a sqrt 2) from
/// detail::scaledTail, the sign restored. |x| >= 4 gives exactly +-1.
CAIRN_HOST_DEVICE inline float erf(float x) {
  float z = x * x;
  float p = 7.853861353153693e-5f;
  p = p * z - 8.010193625184903e-4f;
  p = p * z + 5.188327685732524e-3f;
  p = p * z - 2.685381193529856e-2f;
  p = p * z + 1.128358514861418e-1f;
  p = p * z - 3.761262582423300e-1f;
  p = p * z + 1.128379165726710f;
  float small = x * p;
  float ax = detail::absOf(x);
  float a = detail::select(ax > 10.0f, 10.0f, ax);
  float erfc = detail::gaussTimes(
      a, 1.0f, detail::scaledTail(a * 1.41421356237309505f));
  float big = detail::withSignOf(1.0f - erfc, x);
  return detail::select(ax < 1.0f, small, big);
}

/// Phi(x) = (1 + erf(x / sqrt 2)) / 2, the standard normal CDF, as
/// Q = exp(-x^2 / 2) R(|x|) / 2 (the upper tail at |x|) for x < 0 and 1 - Q
/// otherwise: never 1 + erf(...) for x < 0, so the result is relatively
/// accurate down to where it underflows (Phi(x) == 0 for x below about
/// -14.2; Phi(-inf) == 0, Phi(+inf) == 1, NaN gives NaN).
CAIRN_HOST_DEVICE inline float normalCdf(float x) {
  float a = detail::absOf(x);
  a = detail::select(a > 15.0f, 15.0f, a); // Q(15) underflows to 0; NaN passes
  float q = detail::gaussTimes(a, 0.5f, 0.5f * detail::scaledTail(a));
  return detail::select(x < 0.0f, q, 1.0f - q);
}

} // namespace cairn::kernels::fastmath

#endif // CAIRN_RUNTIME_KERNELS_FASTMATH_H
