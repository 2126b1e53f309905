//===- StageSplit.h - Cutting ops into pipeline stages ----------*- C++ -*-===//
//
// `--devices N` places a model without `on device` regions: its forward ops,
// in program order, are cut into N contiguous stages, one per device, so
// that the slowest stage is as fast as it can be (PipeDream's and Alpa's
// objective: in a pipeline the slowest stage sets the pace). A stage's time
// is its ops' (forward and backward) plus the transfers at its two cuts; a
// cut may be forbidden (inside the span of a layer whose weights two ops
// share). Plain data, exact dynamic programming in O(N n^2); with a memory
// per device, the same programme again each time a plan rules out stages
// (--device-memory, planned by the caller).
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_STAGESPLIT_H
#define CAIRN_PASSES_STAGESPLIT_H

#include <cstdint>
#include <functional>
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

/// Each stage's arena under the split that starts its stages at `starts`
/// (the plans themselves), or nullopt where planning failed (it said why).
using PlanStages = std::function<std::optional<std::vector<int64_t>>(
    const std::vector<int> &)>;

/// What the search for a split that fits a memory found.
struct FittingSplit {
  /// The fastest split whose every stage fits; nullopt when none does.
  std::optional<StageSplit> fits;
  /// Without a fit: the planned split whose largest arena was smallest.
  std::vector<int> closest;
  /// The number of splits planned.
  int plans = 0;
  /// Whether the search stopped at its bound of plans before it knew.
  bool gaveUp = false;
};

/// The fastest split into `stages` whose every stage's arena is at most
/// `memory`, with the plans in the loop. The search is lazy: it takes the
/// fastest split that no plan has ruled out, plans it, and where a stage is
/// over the memory, rules out that stage's ops, and every stage that holds
/// them, for that stage and every earlier one; until a split fits or none is
/// left. That is exact where a stage's arena grows with its ops and does not
/// grow with its index (a later stage of a 1F1B pipeline holds fewer
/// micro-batches in flight; without micro-batches the index does not
/// matter). Nullopt where planning failed; stops after `maxPlans` plans.
std::optional<FittingSplit>
splitIntoStagesThatFit(const StageSplitProblem &problem, int stages,
                       int64_t memory, const PlanStages &plan, int maxPlans);

} // namespace cairn

#endif // CAIRN_PASSES_STAGESPLIT_H
