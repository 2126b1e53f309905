//===- Convert.cpp - float32 to and from f16 and bf16 ---------------------===//
#include "runtime/kernels/Convert.h"

#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Parallel.h"

namespace cairn::kernels {

namespace {
size_t elementBytes(CastType type) { return type == CastType::F32 ? 4 : 2; }

/// One conversion over [begin, end), the loop the compiler vectorises.
template <typename In, typename Out, typename F>
void convertRange(const void *in, void *out, int64_t begin, int64_t end, F convert) {
  const In *x = static_cast<const In *>(in);
  Out *y = static_cast<Out *>(out);
  for (int64_t i = begin; i < end; ++i)
    y[i] = convert(x[i]);
}
} // namespace

void castElements(const void *in, CastType from, void *out, CastType to, int64_t n) {
  if (from == to) {
    std::memcpy(out, in, static_cast<size_t>(n) * elementBytes(from));
    return;
  }
  if (from != CastType::F32 && to != CastType::F32)
    throw KernelError("cast: f16 and bf16 convert through float32, not to each other");
  parallelFor(n, 4, [&](int64_t begin, int64_t end) {
    if (from == CastType::F32 && to == CastType::F16)
      convertRange<float, uint16_t>(in, out, begin, end, halfFromFloat);
    else if (from == CastType::F32)
      convertRange<float, uint16_t>(in, out, begin, end, bfloat16FromFloat);
    else if (from == CastType::F16)
      convertRange<uint16_t, float>(in, out, begin, end, floatFromHalf);
    else
      convertRange<uint16_t, float>(in, out, begin, end, floatFromBfloat16);
  });
}

} // namespace cairn::kernels
