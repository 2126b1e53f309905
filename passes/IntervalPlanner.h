//===- IntervalPlanner.h - Static offsets for buffers with lifetimes -*- C++ -*-===//
//
// The static memory planner: plain C++ over plain data (intervals in, offsets
// out), no MLIR. The PlanMemory pass converts IR to BufferIntervals and the
// offsets back to attributes; `cairn plan --buffers FILE.csv` runs it on a
// CSV file.
//
// A buffer of `size` bytes is live over the half-open interval [lower, upper)
// of schedule steps. Two buffers whose intervals overlap must not share a
// byte. The planner gives every buffer an offset (a multiple of its
// alignment) and minimizes the arena size, the largest offset + size.
//
//   0. Buffers live over the whole schedule (the compiler's parameters and
//      optimizer state) are stacked on top of the plan of the others: they
//      overlap everything, so no plan does better, and the rest is smaller.
//   1. Greedy best-fit by decreasing size (TFLite's greedy-by-size, XLA's
//      heap simulator): each buffer goes into the smallest gap left by the
//      already placed buffers that overlap it in time, or on top of them.
//      O(n log n + sum of overlaps); 100,000 buffers take milliseconds
//      (GreedyPlanner.cpp).
//   2. If greedy lands above the lower bound (the largest total of bytes live
//      at one time), an exact branch-and-bound search in the style of
//      MiniMalloc (Moffitt, ASPLOS 2023) under a time limit
//      (ExactPlanSearch.cpp): for the lower bound first, then for targets
//      bisected up to the best plan found (IntervalPlanner.cpp). With a fixed
//      capacity it looks for any plan that fits, as MiniMalloc does.
//
// The result is checked by the independent PlanVerifier, not here.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_INTERVALPLANNER_H
#define CAIRN_PASSES_INTERVALPLANNER_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cairn {

/// One buffer to place: `size` bytes live over [lower, upper). Requires
/// lower < upper, size >= 0, alignment >= 1, and the sum of all sizes to fit
/// in int64_t.
struct BufferInterval {
  int64_t id = 0;
  int64_t lower = 0;
  int64_t upper = 0;
  int64_t size = 0;
  int64_t alignment = 1;
};

enum class PlanMethod {
  /// Greedy best-fit by decreasing size.
  GreedyBySize,
  /// The exact search improved on greedy.
  ExactSearch,
};

/// The name printed by the driver: "greedy-by-size" or "exact-search".
const char *getPlanMethodName(PlanMethod method);

enum class SearchStatus {
  /// A plan with arena size <= capacity was found.
  Found,
  /// The search proved that no plan fits the capacity.
  Infeasible,
  /// The budget (time or work) ran out first.
  TimedOut,
};

/// The exact search's work per second of budget in reproducible mode:
/// nodes visited times buffers searched (a node's cost grows with the
/// buffers), about what one core of the AMD EPYC machines the project is
/// built on does, so that a search takes there about the time its
/// wall-clock limit gave it.
constexpr double kSearchWorkPerSecond = 1.7e8;

struct PlannerOptions {
  /// Budget of the exact search, in seconds; 0 turns it off.
  double timeLimitSeconds = 1.0;
  /// Count that budget in search work (kSearchWorkPerSecond) instead of
  /// wall-clock time: the plan then depends on the buffers alone, not on the
  /// machine's speed or load, so one model and its flags plan the same
  /// arena on every run (the compiler's; the CSV planner's time limit, which
  /// bench/minimalloc compares with other planners', stays wall-clock).
  bool reproducible = false;
  /// Above this many buffers the exact search is skipped (greedy only).
  size_t maxExactSearchBuffers = 20000;
  /// 0: minimize the arena. Otherwise any plan with an arena of at most this
  /// many bytes will do (greedy's, if it fits).
  int64_t capacity = 0;
  /// When minimizing, stop once the arena is within this fraction above the
  /// lower bound (0.001: within 0.1%). 0 stops only at the lower bound or
  /// at the time limit.
  double relativeGap = 0;
};

struct IntervalPlan {
  /// offsets[i] is the offset of buffers[i], a multiple of its alignment.
  std::vector<int64_t> offsets;
  /// max over buffers of offset + size (0 when there are none).
  int64_t arenaSize = 0;
  /// Max over time of the total live bytes: no plan can be smaller.
  int64_t lowerBound = 0;
  /// The arena size greedy-by-size found (the whole-schedule buffers
  /// stacked as in step 0).
  int64_t greedyArenaSize = 0;
  PlanMethod method = PlanMethod::GreedyBySize;
  /// True when arenaSize is proven minimal (it equals the lower bound, or the
  /// exact search proved that arenaSize - 1 does not fit).
  bool provedOptimal = false;
  /// With PlannerOptions::capacity: Found when the plan fits it, Infeasible
  /// when no plan can, TimedOut when none was found in time (or no search
  /// ran).
  SearchStatus capacityStatus = SearchStatus::TimedOut;
  /// Wall-clock time of planIntervals, in seconds.
  double seconds = 0;
};

/// Max over time of the total bytes live at that time.
int64_t computeLowerBound(const std::vector<BufferInterval> &buffers);

/// The arena size a set of offsets needs: max of offset + size.
int64_t computeArenaSize(const std::vector<BufferInterval> &buffers,
                         const std::vector<int64_t> &offsets);

/// Greedy best-fit by decreasing size; returns one offset per buffer.
std::vector<int64_t> planGreedyBySize(const std::vector<BufferInterval> &buffers);

struct SearchResult {
  SearchStatus status = SearchStatus::TimedOut;
  /// One offset per buffer when status is Found.
  std::vector<int64_t> offsets;
  /// Search nodes visited.
  uint64_t nodes = 0;
};

/// Exact search for offsets that fit `capacity` bytes, MiniMalloc-style:
/// buffers are placed in non-decreasing offset order, each at the lowest
/// offset its time-overlapping placed neighbours allow (a canonical
/// solution); partial plans are pruned by section inference, dominance and
/// hats, and split in time where no unplaced buffer crosses (see
/// ExactPlanSearch.cpp). Infeasible is a proof; TimedOut is not: it stops
/// after `timeLimitSeconds` (infinite: never) or `nodeLimit` nodes,
/// whichever comes first.
SearchResult searchExactPlan(const std::vector<BufferInterval> &buffers,
                             int64_t capacity, double timeLimitSeconds,
                             uint64_t nodeLimit = UINT64_MAX);

/// Greedy, then (if it is above the lower bound, or above
/// `options.capacity` when that is given) the exact search.
IntervalPlan planIntervals(const std::vector<BufferInterval> &buffers,
                      const PlannerOptions &options = {});

} // namespace cairn

#endif // CAIRN_PASSES_INTERVALPLANNER_H
