//===- Dropout.h - Counter-based dropout masks -------------------*- C++ -*-===//
//
// The mask is a pure function of (seed, step, stream, element index), so the
// backward pass and any recomputation draw it again instead of storing it.
//
// Exactly (reference scripts reimplement this; keep them in sync):
//   Philox4x32-10 (Salmon et al., SC'11) with
//     key     = { uint32(seed), uint32(seed >> 32) ^ uint32(stream) }
//     counter = { uint32(i / 4), uint32((i / 4) >> 32), uint32(step),
//                 uint32(step >> 32) }
//   word     = output[i % 4]
//   u        = (word >> 8) * 2^-24              (uniform in [0, 1))
//   keep     = u >= p
//   y[i]     = keep ? x[i] * T(1 / (1 - p)) : 0
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_DROPOUT_H
#define CAIRN_RUNTIME_KERNELS_DROPOUT_H

#include "runtime/kernels/Convert.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace cairn::kernels {

/// Ten rounds of Philox4x32 on `counter` with `key` (kernels::philox, in
/// Philox.h, for the host and the device).
std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> counter,
                                   std::array<uint32_t, 2> key);

/// y = x * mask / (1 - p); also the backward (applied to dy with the same
/// seed, step and stream). y may alias x. T is float or double, or F16 or
/// Bf16 (Convert.h): half tensors read widened to float and written
/// rounded, the float kernel's bits between casts.
template <typename T>
void dropout(int64_t n, double p, uint64_t seed, uint64_t step, uint64_t stream,
             const StoredAs<T> *x, StoredAs<T> *y);

/// Elements dropoutKeep decides at a time in a fused chain's loop (a
/// multiple of Philox's four): its keep bytes fit in a kilobyte of stack.
constexpr int64_t kDropoutKeepBlock = 1024;

/// Whether dropout keeps elements first .. first + count - 1 of a tensor
/// (first a multiple of 4): keep[j] is 1 for element first + j kept, else
/// 0; dropout's mask, drawn the same way (the widest Philox path). For
/// cairn.kernel.elementwise_chain, whose loop decides kDropoutKeepBlock
/// elements at once and then computes dropoutKept(keep, x * dropoutScale(p))
/// (ScalarOps.h) with the rest of the chain, as dropout would.
void dropoutKeep(int64_t first, int64_t count, double p, uint64_t seed,
                 uint64_t step, uint64_t stream, uint8_t *keep);

/// The ways this CPU can draw Philox words ("avx512", "avx2", "scalar"),
/// the one dropout uses first; each must give the same mask.
std::vector<std::string> dropoutPhiloxPaths();

/// dropout drawing its words the way `path` (one of dropoutPhiloxPaths())
/// names: for tests.
template <typename T>
void dropoutUsing(const std::string &path, int64_t n, double p, uint64_t seed,
                  uint64_t step, uint64_t stream, const T *x, T *y);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_DROPOUT_H
