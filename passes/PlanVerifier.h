//===- PlanVerifier.h - Independent check of a memory plan -------*- C++ -*-===//
//
// Proves a memory plan sound, with code of its own (nothing shared with the
// planner): every buffer lies in [0, arena), its offset is a multiple of its
// alignment, and no two buffers whose live intervals [lower, upper) overlap
// share a byte. A sweep over time keeps the live buffers ordered by offset,
// so a new buffer only has to be compared with its two neighbours:
// O(n log n).
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_PLANVERIFIER_H
#define CAIRN_PASSES_PLANVERIFIER_H

#include "passes/IntervalPlanner.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cairn {

/// A buffer with its planned offset, as the verifier sees it.
struct PlacedBuffer {
  int64_t id = 0;
  int64_t lower = 0;
  int64_t upper = 0;
  int64_t size = 0;
  int64_t offset = 0;
  int64_t alignment = 1;
};

struct PlanVerdict {
  bool ok = true;
  /// The first violation found, naming the buffer ids; empty when ok.
  std::string message;
};

/// Checks `buffers` against an arena of `arenaSize` bytes.
PlanVerdict verifyPlan(const std::vector<PlacedBuffer> &buffers, int64_t arenaSize);

/// verifyPlan of `buffers` at `offsets` (one each, in order).
PlanVerdict verifyPlan(const std::vector<BufferInterval> &buffers,
                       const std::vector<int64_t> &offsets, int64_t arenaSize);

} // namespace cairn

#endif // CAIRN_PASSES_PLANVERIFIER_H
