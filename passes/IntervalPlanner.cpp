//===- IntervalPlanner.cpp - Static offsets for buffers with lifetimes ------===//
//
// The driver. Buffers live over the whole schedule are stacked on top of
// the plan of the others, which goes to greedy, then to the exact search
// (ExactPlanSearch.cpp) for the capacity asked for or, to minimize, for the
// lower bound and then for targets bisected between the largest capacity
// proven too small and the best plan so far.
//
//===----------------------------------------------------------------------===//

#include "passes/IntervalPlanner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>
#include <utility>

namespace cairn {

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// What is left of the exact search's budget: wall-clock seconds since
/// `start`, or, reproducible, nodes (the work of timeLimitSeconds over the
/// buffers searched).
class SearchBudget {
public:
  SearchBudget(const PlannerOptions &options, size_t numPlaced,
               Clock::time_point start)
      : options(options), start(start) {
    if (options.reproducible)
      nodes = static_cast<uint64_t>(
          std::max(options.timeLimitSeconds, 0.0) * kSearchWorkPerSecond /
          static_cast<double>(std::max<size_t>(numPlaced, 1)));
  }

  bool isSpent() const {
    return options.reproducible
               ? nodes == 0
               : secondsSince(start) >= options.timeLimitSeconds;
  }

  /// Runs the search for `capacity` on `share` (in (0, 1]) of what is left.
  SearchResult search(const std::vector<BufferInterval> &buffers,
                      int64_t capacity, double share) {
    if (!options.reproducible)
      return searchExactPlan(
          buffers, capacity,
          std::max(options.timeLimitSeconds - secondsSince(start), 0.0) *
              share);
    // At least a node while any is left, so that halving ends.
    uint64_t limit = std::min(
        nodes, std::max<uint64_t>(1, static_cast<uint64_t>(
                                         static_cast<double>(nodes) * share)));
    SearchResult result = searchExactPlan(buffers, capacity, HUGE_VAL, limit);
    nodes -= std::min(nodes, result.nodes);
    return result;
  }

private:
  const PlannerOptions &options;
  Clock::time_point start;
  uint64_t nodes = 0;
};

/// Greedy, then the exact search, on buffers none of which is stacked.
/// `capacity` is that of PlannerOptions less the stacked bytes (only read
/// when `fixedCapacity`).
IntervalPlan planUnstacked(const std::vector<BufferInterval> &buffers,
                         const PlannerOptions &options, bool fixedCapacity,
                         int64_t capacity, Clock::time_point start) {
  IntervalPlan plan;
  plan.lowerBound = computeLowerBound(buffers);
  plan.offsets = planGreedyBySize(buffers);
  plan.arenaSize = plan.greedyArenaSize = computeArenaSize(buffers, plan.offsets);
  plan.provedOptimal = plan.arenaSize == plan.lowerBound;
  if (fixedCapacity && plan.lowerBound > capacity)
    plan.capacityStatus = SearchStatus::Infeasible;
  if (fixedCapacity && plan.arenaSize <= capacity)
    plan.capacityStatus = SearchStatus::Found;

  size_t numPlaced = std::count_if(buffers.begin(), buffers.end(),
                                   [](const BufferInterval &b) { return b.size > 0; });
  bool searchAllowed = options.timeLimitSeconds > 0 &&
                       numPlaced <= options.maxExactSearchBuffers;
  SearchBudget budget(options, numPlaced, start);
  auto takeSearchPlan = [&](SearchResult &result) {
    plan.offsets = std::move(result.offsets);
    plan.arenaSize = computeArenaSize(buffers, plan.offsets);
    plan.method = PlanMethod::ExactSearch;
  };
  if (fixedCapacity) {
    // Any plan that fits will do, as for MiniMalloc.
    if (searchAllowed && plan.capacityStatus == SearchStatus::TimedOut) {
      SearchResult result = budget.search(buffers, capacity, 1.0);
      plan.capacityStatus = result.status;
      if (result.status == SearchStatus::Found) {
        takeSearchPlan(result);
        plan.provedOptimal = plan.arenaSize == plan.lowerBound;
      }
    }
    return plan;
  }
  // Good enough: within the gap asked for (the lower bound itself at 0).
  auto goodEnough = static_cast<int64_t>(static_cast<double>(plan.lowerBound) *
                                         (1 + std::max(options.relativeGap, 0.0)));
  goodEnough = std::max(goodEnough, plan.lowerBound);
  if (plan.arenaSize <= goodEnough || !searchAllowed)
    return plan;

  // Targets in [low, high]: the good-enough size first, with half the
  // budget (a perfect packing is the common case and ends the search), then
  // bisect. Every target is below the best arena so far, so the plan only
  // improves. No plan is smaller than provenBelow.
  int64_t low = goodEnough, high = plan.arenaSize - 1;
  int64_t provenBelow = plan.lowerBound;
  for (bool first = true; low <= high && plan.arenaSize > goodEnough; first = false) {
    if (budget.isSpent())
      break;
    int64_t target = first ? low : low + (high - low) / 2;
    SearchResult result = budget.search(buffers, target, 0.5);
    if (result.status == SearchStatus::Found) {
      takeSearchPlan(result);
      high = plan.arenaSize - 1;
    } else {
      if (result.status == SearchStatus::Infeasible)
        provenBelow = std::max(provenBelow, target + 1);
      low = target + 1;
    }
  }
  plan.provedOptimal = provenBelow == plan.arenaSize;
  return plan;
}

/// The buffers live over the whole schedule, stacked: they overlap every
/// other buffer, so in any plan the others can slide down past them, and
/// stacking them on top of the plan of the others loses nothing. The
/// compiler's parameters and optimizer state are such buffers, most of its
/// arena; taking them out keeps greedy and the search linear in the rest.
struct Stack {
  std::vector<size_t> members, others; // indices into the buffers
  std::vector<int64_t> offsets;        // of the members, from the stack's base
  int64_t size = 0;
};

/// The stack, or nothing when there is no whole-schedule buffer or the
/// rearrangement could need alignment padding.
std::optional<Stack> stackWholeScheduleBuffers(const std::vector<BufferInterval> &buffers) {
  int64_t begin = 0, end = 0;
  bool any = false;
  for (const BufferInterval &b : buffers) {
    if (b.size <= 0)
      continue;
    begin = any ? std::min(begin, b.lower) : b.lower;
    end = any ? std::max(end, b.upper) : b.upper;
    any = true;
  }
  Stack stack;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferInterval &b = buffers[i];
    bool whole = b.size > 0 && b.lower <= begin && b.upper >= end;
    (whole ? stack.members : stack.others).push_back(i);
  }
  if (stack.members.empty())
    return std::nullopt;
  auto alignmentOf = [&](size_t i) { return std::max<int64_t>(1, buffers[i].alignment); };

  // Sliding the others down past stacked buffers keeps their alignment when
  // every stacked size is a multiple of their least common multiple.
  int64_t othersAlignment = 1;
  for (size_t i : stack.others) {
    if (buffers[i].size <= 0)
      continue;
    othersAlignment = std::lcm(othersAlignment, alignmentOf(i));
    if (othersAlignment > (int64_t{1} << 40))
      return std::nullopt;
  }
  // Largest alignment first: no padding inside the stack when the
  // alignments divide one another (powers of two).
  std::stable_sort(stack.members.begin(), stack.members.end(),
                   [&](size_t a, size_t b) { return alignmentOf(a) > alignmentOf(b); });
  for (size_t i : stack.members) {
    if (stack.size % alignmentOf(i) || buffers[i].size % othersAlignment)
      return std::nullopt;
    stack.offsets.push_back(stack.size);
    stack.size += buffers[i].size;
  }
  // No padding under the stack: the others' arena is a multiple of the
  // largest stacked alignment when their sizes and alignments are.
  int64_t stackAlignment = alignmentOf(stack.members[0]);
  for (size_t i : stack.others)
    if (buffers[i].size > 0 &&
        (buffers[i].size % stackAlignment || alignmentOf(i) % stackAlignment))
      return std::nullopt;
  return stack;
}
} // namespace

const char *getPlanMethodName(PlanMethod method) {
  switch (method) {
  case PlanMethod::GreedyBySize:
    return "greedy-by-size";
  case PlanMethod::ExactSearch:
    return "exact-search";
  }
  return "unknown";
}

IntervalPlan planIntervals(const std::vector<BufferInterval> &buffers,
                      const PlannerOptions &options) {
  Clock::time_point start = Clock::now();
  bool fixedCapacity = options.capacity > 0;
  std::optional<Stack> stack = stackWholeScheduleBuffers(buffers);
  if (!stack) {
    IntervalPlan plan =
        planUnstacked(buffers, options, fixedCapacity, options.capacity, start);
    plan.seconds = secondsSince(start);
    return plan;
  }

  std::vector<BufferInterval> others;
  others.reserve(stack->others.size());
  for (size_t i : stack->others)
    others.push_back(buffers[i]);
  IntervalPlan sub = planUnstacked(others, options, fixedCapacity,
                                 options.capacity - stack->size, start);
  IntervalPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  for (size_t k = 0; k < stack->others.size(); ++k)
    plan.offsets[stack->others[k]] = sub.offsets[k];
  for (size_t k = 0; k < stack->members.size(); ++k)
    plan.offsets[stack->members[k]] = sub.arenaSize + stack->offsets[k];
  plan.arenaSize = sub.arenaSize + stack->size;
  plan.lowerBound = sub.lowerBound + stack->size;
  plan.greedyArenaSize = sub.greedyArenaSize + stack->size;
  plan.method = sub.method;
  plan.provedOptimal = sub.provedOptimal;
  plan.capacityStatus = sub.capacityStatus;
  plan.seconds = secondsSince(start);
  return plan;
}

} // namespace cairn
