//===- StageSplit.cpp - Cutting a sequence of ops into pipeline stages ----===//

#include "passes/StageSplit.h"

#include <algorithm>
#include <limits>

using namespace cairn;

std::optional<StageSplit>
cairn::splitIntoStages(const StageSplitProblem &problem, int stages) {
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
        if (best[s - 1][begin] == kNone)
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
