//===- StageSplit.cpp - Cutting a sequence of ops into pipeline stages ----===//

#include "passes/StageSplit.h"

#include <algorithm>
#include <cassert>
#include <limits>

using namespace cairn;

namespace {

/// The fastest split into `stages` whose every stage [begin, end) is
/// admissible(stage, begin, end): an exact dynamic programme.
std::optional<StageSplit>
fastestSplit(const StageSplitProblem &problem, int stages,
             const std::function<bool(int, int, int)> &admissible) {
  int n = problem.opCost.size();
  if (stages < 1 || n < stages)
    return std::nullopt;
  std::vector<int64_t> prefix(n + 1, 0);
  for (int i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + problem.opCost[i];
  // The time of a stage of ops [begin, end): its ops and its cuts.
  auto stageCost = [&](int begin, int end) {
    int64_t cost = prefix[end] - prefix[begin];
    if (begin > 0)
      cost += problem.cutCost[begin];
    if (end < n)
      cost += problem.cutCost[end];
    return cost;
  };
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  // best[s][e]: the slowest of s stages covering ops [0, e), each ending at
  // an allowed boundary; from[s][e]: where the last of them starts.
  std::vector<std::vector<int64_t>> best(stages + 1,
                                         std::vector<int64_t>(n + 1, kNone));
  std::vector<std::vector<int>> from(stages + 1, std::vector<int>(n + 1, -1));
  best[0][0] = 0;
  for (int s = 1; s <= stages; ++s)
    for (int end = s; end <= n; ++end) {
      if (end < n && !problem.allowed[end])
        continue;
      if (s == stages && end != n)
        continue;
      for (int begin = s - 1; begin < end; ++begin) {
        if (best[s - 1][begin] == kNone || !admissible(s - 1, begin, end))
          continue;
        int64_t cost = std::max(best[s - 1][begin], stageCost(begin, end));
        if (cost < best[s][end]) {
          best[s][end] = cost;
          from[s][end] = begin;
        }
      }
    }
  if (best[stages][n] == kNone)
    return std::nullopt;
  StageSplit split;
  split.slowest = best[stages][n];
  split.starts.assign(stages, 0);
  for (int s = stages, end = n; s >= 1; --s) {
    split.starts[s - 1] = from[s][end];
    end = from[s][end];
  }
  return split;
}

} // namespace

std::optional<StageSplit>
cairn::splitIntoStages(const StageSplitProblem &problem, int stages) {
  return fastestSplit(problem, stages, [](int, int, int) { return true; });
}

std::optional<FittingSplit>
cairn::splitIntoStagesThatFit(const StageSplitProblem &problem, int stages,
                              int64_t memory, const PlanStages &plan,
                              int maxPlans) {
  int n = problem.opCost.size();
  FittingSplit result;
  // firstRuledOutEnd[s][begin]: the least end of a stage ruled out for
  // stage s that starts at or after `begin`; so a stage [begin, end) at
  // index s holds the ops of one exactly when end >= it.
  std::vector<std::vector<int>> firstRuledOutEnd(
      stages, std::vector<int>(n + 1, n + 1));
  auto ruleOut = [&](int stage, int begin, int end) {
    for (int s = 0; s <= stage; ++s)
      for (int b = 0; b <= begin; ++b)
        firstRuledOutEnd[s][b] = std::min(firstRuledOutEnd[s][b], end);
  };
  auto admissible = [&](int stage, int begin, int end) {
    return end < firstRuledOutEnd[stage][begin];
  };
  int64_t closestLargest = 0;
  while (std::optional<StageSplit> split =
             fastestSplit(problem, stages, admissible)) {
    if (result.plans == maxPlans) {
      result.gaveUp = true;
      return result;
    }
    std::optional<std::vector<int64_t>> arenas = plan(split->starts);
    ++result.plans;
    if (!arenas)
      return std::nullopt;
    assert(int(arenas->size()) == stages && "an arena per stage");
    int64_t largest = *std::max_element(arenas->begin(), arenas->end());
    if (largest <= memory) {
      result.fits = std::move(*split);
      return result;
    }
    if (result.closest.empty() || largest < closestLargest) {
      result.closest = split->starts;
      closestLargest = largest;
    }
    for (int s = 0; s < stages; ++s)
      if ((*arenas)[s] > memory)
        ruleOut(s, split->starts[s], s + 1 < stages ? split->starts[s + 1] : n);
  }
  return result;
}
