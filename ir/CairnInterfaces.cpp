//===- CairnInterfaces.cpp - Op interfaces of cairn -----------------------===//

#include "ir/CairnInterfaces.h"

#include "llvm/Support/MathExtras.h"

#include <limits>

namespace cairn {

static uint64_t clampCost(int64_t v) { return v < 0 ? 0 : uint64_t(v); }

static int64_t toCost(uint64_t v) {
  constexpr uint64_t max = std::numeric_limits<int64_t>::max();
  return v > max ? int64_t(max) : int64_t(v);
}

int64_t saturatingAdd(int64_t a, int64_t b) {
  return toCost(llvm::SaturatingAdd(clampCost(a), clampCost(b)));
}

int64_t saturatingMul(int64_t a, int64_t b) {
  return toCost(llvm::SaturatingMultiply(clampCost(a), clampCost(b)));
}

} // namespace cairn

#include "ir/CairnInterfaces.cpp.inc"
