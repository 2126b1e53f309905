//===- HalfOperand.cpp - A half product's tensors, half or float32 -------===//
//
// A float32 tensor is rounded through T in runs of kRoundRun elements on the
// stack: castRun to T, then back (or to the float32 result), the casts'
// own bits.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/HalfOperand.h"

#include "runtime/kernels/Parallel.h"

#include <algorithm>

namespace cairn::kernels {

namespace {

constexpr int64_t kRoundRun = 256;

/// in[begin, end) rounded to `type` and widened again into out[begin, end).
void roundRun(const float *in, CastType type, float *out, int64_t begin,
              int64_t end) {
  uint16_t bits[kRoundRun];
  for (int64_t i = begin; i < end; i += kRoundRun) {
    const int64_t n = std::min(kRoundRun, end - i);
    castRun(in + i, CastType::F32, bits, type, 0, n);
    castRun(bits, type, out + i, CastType::F32, 0, n);
  }
}

} // namespace

template <typename T>
void HalfIn::widenRun(float *out, int64_t begin, int64_t end) const {
  if (single)
    roundRun(single, T::kCastType, out, begin, end);
  else
    castRun(half, T::kCastType, out, CastType::F32, begin, end);
}

template <typename T> void HalfIn::widen(float *out, int64_t n) const {
  parallelFor(
      n, 4, [&](int64_t begin, int64_t end) { widenRun<T>(out, begin, end); });
}

template <typename T>
void HalfOut::narrowRun(const float *in, int64_t begin, int64_t end) const {
  if (single)
    roundRun(in, T::kCastType, single, begin, end);
  else
    castRun(in, CastType::F32, half, T::kCastType, begin, end);
}

template <typename T> void HalfOut::narrow(const float *in, int64_t n) const {
  parallelFor(
      n, 4, [&](int64_t begin, int64_t end) { narrowRun<T>(in, begin, end); });
}

#define CAIRN_INSTANTIATE_HALF_OPERAND(T)                                      \
  template void HalfIn::widenRun<T>(float *, int64_t, int64_t) const;          \
  template void HalfIn::widen<T>(float *, int64_t) const;                      \
  template void HalfOut::narrowRun<T>(const float *, int64_t, int64_t) const;  \
  template void HalfOut::narrow<T>(const float *, int64_t) const;
CAIRN_INSTANTIATE_HALF_OPERAND(F16)
CAIRN_INSTANTIATE_HALF_OPERAND(Bf16)
#undef CAIRN_INSTANTIATE_HALF_OPERAND

} // namespace cairn::kernels
