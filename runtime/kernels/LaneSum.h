//===- LaneSum.h - A sum in double that vectorises ---------------*- C++ -*-===//
//
// The reductions of the normalisation and softmax kernels: a sum in double
// kept in independent lanes, added up in a fixed order, so the adds
// vectorise instead of forming one long chain and the result does not depend
// on how the loop was compiled. Internal to runtime/kernels.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_LANESUM_H
#define CAIRN_RUNTIME_KERNELS_LANESUM_H

#include <cstdint>

namespace cairn::kernels {

/// The sum of f(i) over [0, n) in double, kept in independent lanes so the
/// adds vectorize instead of forming one long dependency chain.
template <typename F> double laneSum(int64_t n, F f) {
  constexpr int64_t kLanes = 8;
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lanes[l] += f(i + l);
  double sum = 0;
  for (; i < n; ++i)
    sum += f(i);
  for (double lane : lanes)
    sum += lane;
  return sum;
}

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_LANESUM_H
