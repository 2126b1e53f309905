//===- StageSplit.h - Cutting a sequence of ops into pipeline stages -*- C++
//-*-===//
//
// `--devices N` places a model without `on device` regions: its forward ops,
// in program order, are cut into N contiguous stages, one per device, so
// that the slowest stage is as fast as it can be (PipeDream's and Alpa's
// objective: in a pipeline the slowest stage sets the pace). A stage's time
// is its ops' (forward and backward) plus the transfers at its two cuts; a
// cut may be forbidden (inside the span of a layer whose weights two ops
// share). Plain data, exact dynamic programming in O(N n^2).
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_STAGESPLIT_H
#define CAIRN_PASSES_STAGESPLIT_H

#include <cstdint>
#include <optional>
#include <vector>

namespace cairn {

struct StageSplitProblem {
  /// By op, in program order: its modelled time (FLOP-equivalents).
  std::vector<int64_t> opCost;
  /// By boundary b = 0..n (before op b): the time of the transfers a cut
  /// there adds to each of the two stages it separates.
  std::vector<int64_t> cutCost;
  /// By boundary: whether a cut may go there (0 and n are the ends).
  std::vector<bool> allowed;
};

struct StageSplit {
  /// The first op of each stage: starts[0] = 0, increasing.
  std::vector<int> starts;
  /// The slowest stage's time.
  int64_t slowest = 0;
};

/// The split into `stages` non-empty stages whose slowest stage is fastest
/// (the same every run); nullopt when fewer than
/// `stages` - 1 boundaries are allowed.
std::optional<StageSplit> splitIntoStages(const StageSplitProblem &problem,
                                          int stages);

} // namespace cairn

#endif // CAIRN_PASSES_STAGESPLIT_H
