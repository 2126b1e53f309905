//===- Init.h - Fresh weights from a seed ------------------------*- C++ -*-===//
//
// Every Param and Buffer gets its InitKind (InitKind::None counts as Zeros);
// OptimizerState always starts at zero. Each tensor draws from its own
// SplitMix64 (Random.h) whose state is
//   fnv1a64(name) ^ SplitMix64::mix(seed)
// (FNV-1a, 64-bit, over the name's bytes), so a tensor's values depend only
// on the seed and its name: adding or reordering tensors changes no others.
// Element by element, in C order, computed in double and rounded to the
// tensor's dtype:
//   Uniform: scale * (2u - 1)                     u = nextUnit()
//   Normal:  scale * sqrt(-2 ln(1 - u1)) * cos(2 pi u2)
//            u1, u2 = two nextUnit() draws (Box-Muller, one value per pair)
// Integer tensors (num_batches_tracked) take zeros or ones like the others.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_INIT_H
#define CAIRN_RUNTIME_INIT_H

#include "runtime/Program.h"

#include <cstdint>
#include <string>

namespace cairn::runtime {

/// FNV-1a over the bytes of `text`.
uint64_t fnv1a64(const std::string &text);

/// Writes every Param, Buffer and OptimizerState of `spec` into `arena`.
void initializeState(const ProgramSpec &spec, uint64_t seed, unsigned char *arena);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_INIT_H
