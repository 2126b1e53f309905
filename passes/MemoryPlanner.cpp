//===- MemoryPlanner.cpp - Static offsets for buffers with lifetimes ------===//

#include "passes/MemoryPlanner.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <utility>

namespace cairn {

namespace {
using Clock = std::chrono::steady_clock;

int64_t alignUp(int64_t value, int64_t alignment) {
  if (alignment <= 1)
    return value;
  int64_t rest = value % alignment;
  return rest ? value + (alignment - rest) : value;
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The placed buffers, found by time: a max segment tree over all buffers
/// sorted by `lower`, whose leaves hold `upper` once a buffer is placed.
/// Reporting the k placed buffers that overlap [l, u) costs O((k + 1) log n).
class PlacedIndex {
public:
  explicit PlacedIndex(const std::vector<BufferInterval> &buffers)
      : buffers(buffers), byLower(buffers.size()), position(buffers.size()) {
    std::iota(byLower.begin(), byLower.end(), size_t{0});
    std::sort(byLower.begin(), byLower.end(), [&](size_t a, size_t b) {
      return buffers[a].lower < buffers[b].lower;
    });
    sortedLowers.reserve(buffers.size());
    for (size_t p = 0; p < byLower.size(); ++p) {
      position[byLower[p]] = p;
      sortedLowers.push_back(buffers[byLower[p]].lower);
    }
    leaves = 1;
    while (leaves < buffers.size())
      leaves *= 2;
    maxUpper.assign(2 * leaves, std::numeric_limits<int64_t>::min());
  }

  void insert(size_t index) {
    size_t node = leaves + position[index];
    maxUpper[node] = buffers[index].upper;
    for (node /= 2; node; node /= 2)
      maxUpper[node] = std::max(maxUpper[2 * node], maxUpper[2 * node + 1]);
  }

  /// Calls `fn(index)` for every placed buffer live somewhere in [l, u).
  template <typename Fn> void forEachOverlapping(int64_t l, int64_t u, Fn fn) const {
    size_t end = std::lower_bound(sortedLowers.begin(), sortedLowers.end(), u) -
                 sortedLowers.begin();
    visit(1, 0, leaves, end, l, fn);
  }

private:
  template <typename Fn>
  void visit(size_t node, size_t nodeBegin, size_t nodeEnd, size_t end, int64_t l,
             Fn &fn) const {
    if (nodeBegin >= end || maxUpper[node] <= l)
      return;
    if (node >= leaves) {
      fn(byLower[node - leaves]);
      return;
    }
    size_t mid = nodeBegin + (nodeEnd - nodeBegin) / 2;
    visit(2 * node, nodeBegin, mid, end, l, fn);
    visit(2 * node + 1, mid, nodeEnd, end, l, fn);
  }

  const std::vector<BufferInterval> &buffers;
  std::vector<size_t> byLower;
  std::vector<size_t> position;
  std::vector<int64_t> sortedLowers;
  size_t leaves = 1;
  std::vector<int64_t> maxUpper;
};

/// Branch and bound over canonical solutions (MiniMalloc). Time is cut into
/// sections, the intervals between consecutive lower/upper values; each
/// section keeps its floor (the top of the highest placed buffer live there)
/// and the bytes still to place there.
class ExactSearch {
public:
  ExactSearch(const std::vector<BufferInterval> &buffers, int64_t capacity,
              Clock::time_point deadline)
      : capacity(capacity), deadline(deadline) {
    std::vector<int64_t> times;
    for (const BufferInterval &b : buffers) {
      if (b.size <= 0)
        continue;
      times.push_back(b.lower);
      times.push_back(b.upper);
    }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    auto sectionOf = [&](int64_t t) {
      return static_cast<int32_t>(std::lower_bound(times.begin(), times.end(), t) -
                                  times.begin());
    };
    for (size_t i = 0; i < buffers.size(); ++i) {
      const BufferInterval &b = buffers[i];
      if (b.size <= 0)
        continue;
      items.push_back({i, b.size, std::max<int64_t>(1, b.alignment),
                       sectionOf(b.lower), sectionOf(b.upper)});
    }
    // The static order breaks ties between equal offsets: the largest area
    // (bytes x sections) first, as those constrain the most.
    std::stable_sort(items.begin(), items.end(), [](const Item &a, const Item &b) {
      double areaA = static_cast<double>(a.size) * (a.last - a.first);
      double areaB = static_cast<double>(b.size) * (b.last - b.first);
      if (areaA != areaB)
        return areaA > areaB;
      if (a.last - a.first != b.last - b.first)
        return a.last - a.first > b.last - b.first;
      return a.size > b.size;
    });
    size_t numSections = times.empty() ? 0 : times.size() - 1;
    floors.assign(numSections, 0);
    remaining.assign(numSections, 0);
    minCandidate.assign(numSections, 0);
    for (const Item &item : items)
      for (int32_t s = item.first; s < item.last; ++s)
        remaining[s] += item.size;
    placed.assign(items.size(), 0);
    itemOffsets.assign(items.size(), 0);
    candidateOffsets.assign(items.size(), 0);
  }

  SearchResult run(size_t numBuffers) {
    SearchResult result;
    bool found = search(0, 0, -1);
    result.nodes = nodes;
    if (found) {
      result.status = SearchStatus::Found;
      result.offsets.assign(numBuffers, 0);
      for (size_t k = 0; k < items.size(); ++k)
        result.offsets[items[k].index] = itemOffsets[k];
    } else {
      result.status = timedOut ? SearchStatus::TimedOut : SearchStatus::Infeasible;
    }
    return result;
  }

private:
  struct Item {
    size_t index;  // into the caller's buffers
    int64_t size;
    int64_t alignment;
    int32_t first; // sections [first, last)
    int32_t last;
  };

  struct Candidate {
    int64_t offset;
    int32_t item;
  };

  /// Places the remaining buffers at offsets >= lastOffset; lastItem is the
  /// item placed at lastOffset (buffers at one offset go in item order).
  bool search(size_t numPlaced, int64_t lastOffset, int32_t lastItem) {
    if (numPlaced == items.size())
      return true;
    if ((++nodes & 127) == 0 && Clock::now() > deadline)
      timedOut = true;
    if (timedOut)
      return false;

    // The lowest offset of each remaining buffer: on top of what is placed
    // in its sections, and not below the last placed offset.
    std::fill(minCandidate.begin(), minCandidate.end(),
              std::numeric_limits<int64_t>::max());
    size_t frame = candidates.size();
    for (size_t k = 0; k < items.size(); ++k) {
      if (placed[k])
        continue;
      const Item &item = items[k];
      int64_t resting = 0;
      for (int32_t s = item.first; s < item.last; ++s)
        resting = std::max(resting, floors[s]);
      resting = alignUp(resting, item.alignment);
      int64_t offset = alignUp(std::max(resting, lastOffset), item.alignment);
      if (offset + item.size > capacity) {
        candidates.resize(frame);
        return false;
      }
      candidateOffsets[k] = offset;
      for (int32_t s = item.first; s < item.last; ++s)
        minCandidate[s] = std::min(minCandidate[s], offset);
      // Dominance: in a canonical plan every buffer rests on the top of a
      // buffer placed before it (or on 0), so one that would float above
      // its floors cannot go next; it stays a bound for the sections.
      if (resting == offset)
        candidates.push_back({offset, static_cast<int32_t>(k)});
    }
    // Section inference: the bytes still to place in a section stack up
    // from the lowest offset any of them can take. As every later buffer
    // goes at or above the next offset, that offset may not exceed
    // capacity minus the bytes left in any section.
    int64_t maxRemaining = 0;
    for (size_t s = 0; s < remaining.size(); ++s) {
      if (remaining[s] > 0 && minCandidate[s] + remaining[s] > capacity) {
        candidates.resize(frame);
        return false;
      }
      maxRemaining = std::max(maxRemaining, remaining[s]);
    }
    int64_t maxNextOffset = capacity - maxRemaining;
    std::sort(candidates.begin() + frame, candidates.end(),
              [](const Candidate &a, const Candidate &b) {
                if (a.offset != b.offset)
                  return a.offset < b.offset;
                return a.item < b.item;
              });

    size_t frameEnd = candidates.size();
    for (size_t c = frame; c < frameEnd; ++c) {
      Candidate candidate = candidates[c];
      if (candidate.offset > maxNextOffset)
        break;
      // Symmetry: buffers at one offset are disjoint in time, so their
      // order does not matter; take them in item order.
      if (candidate.offset == lastOffset && candidate.item < lastItem)
        continue;
      const Item &item = items[candidate.item];
      for (int32_t s = item.first; s < item.last; ++s) {
        undo.push_back(floors[s]);
        floors[s] = candidate.offset + item.size;
        remaining[s] -= item.size;
      }
      placed[candidate.item] = 1;
      itemOffsets[candidate.item] = candidate.offset;
      bool found = search(numPlaced + 1, candidate.offset, candidate.item);
      placed[candidate.item] = 0;
      for (int32_t s = item.last - 1; s >= item.first; --s) {
        floors[s] = undo.back();
        undo.pop_back();
        remaining[s] += item.size;
      }
      if (found || timedOut) {
        candidates.resize(frame);
        return found;
      }
    }
    candidates.resize(frame);
    return false;
  }

  int64_t capacity;
  Clock::time_point deadline;
  std::vector<Item> items;
  std::vector<int64_t> floors;
  std::vector<int64_t> remaining;
  std::vector<int64_t> minCandidate;
  std::vector<char> placed;
  std::vector<int64_t> itemOffsets;
  std::vector<int64_t> candidateOffsets;
  std::vector<Candidate> candidates;
  std::vector<int64_t> undo;
  uint64_t nodes = 0;
  bool timedOut = false;
};
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

int64_t computeLowerBound(const std::vector<BufferInterval> &buffers) {
  std::vector<std::pair<int64_t, int64_t>> events;
  events.reserve(2 * buffers.size());
  for (const BufferInterval &b : buffers) {
    if (b.size <= 0)
      continue;
    events.push_back({b.lower, b.size});
    events.push_back({b.upper, -b.size});
  }
  // At equal times the ends (negative) come first: intervals are half-open.
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (const auto &event : events) {
    live += event.second;
    peak = std::max(peak, live);
  }
  return peak;
}

int64_t computeArenaSize(const std::vector<BufferInterval> &buffers,
                         const std::vector<int64_t> &offsets) {
  int64_t arena = 0;
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].size > 0)
      arena = std::max(arena, offsets[i] + buffers[i].size);
  return arena;
}

std::vector<int64_t> planGreedyBySize(const std::vector<BufferInterval> &buffers) {
  std::vector<int64_t> offsets(buffers.size(), 0);
  std::vector<size_t> order;
  order.reserve(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].size > 0)
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const BufferInterval &x = buffers[a], &y = buffers[b];
    if (x.size != y.size)
      return x.size > y.size;
    if (x.upper - x.lower != y.upper - y.lower)
      return x.upper - x.lower > y.upper - y.lower;
    if (x.lower != y.lower)
      return x.lower < y.lower;
    return a < b;
  });

  PlacedIndex index(buffers);
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (size_t i : order) {
    const BufferInterval &b = buffers[i];
    busy.clear();
    index.forEachOverlapping(b.lower, b.upper, [&](size_t j) {
      busy.push_back({offsets[j], offsets[j] + buffers[j].size});
    });
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest gap between busy ranges that holds the buffer.
    int64_t best = -1;
    int64_t bestGap = std::numeric_limits<int64_t>::max();
    int64_t top = 0;
    for (const auto &range : busy) {
      int64_t start = alignUp(top, b.alignment);
      if (range.first - start >= b.size && range.first - top < bestGap) {
        bestGap = range.first - top;
        best = start;
      }
      top = std::max(top, range.second);
    }
    offsets[i] = best >= 0 ? best : alignUp(top, b.alignment);
    index.insert(i);
  }
  return offsets;
}

SearchResult searchExactPlan(const std::vector<BufferInterval> &buffers,
                             int64_t capacity, double timeLimitSeconds) {
  Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeLimitSeconds));
  ExactSearch search(buffers, capacity, deadline);
  return search.run(buffers.size());
}

MemoryPlan planMemory(const std::vector<BufferInterval> &buffers,
                      const PlannerOptions &options) {
  Clock::time_point start = Clock::now();
  MemoryPlan plan;
  plan.lowerBound = computeLowerBound(buffers);
  plan.offsets = planGreedyBySize(buffers);
  plan.arenaSize = plan.greedyArenaSize = computeArenaSize(buffers, plan.offsets);
  plan.provedOptimal = plan.arenaSize == plan.lowerBound;

  size_t numPlaced = std::count_if(buffers.begin(), buffers.end(),
                                   [](const BufferInterval &b) { return b.size > 0; });
  if (plan.provedOptimal || options.timeLimitSeconds <= 0 ||
      numPlaced > options.maxExactSearchBuffers) {
    plan.seconds = secondsSince(start);
    return plan;
  }

  // Search capacities in [low, high]: the lower bound first, with most of
  // the budget (a perfect packing is the common case), then bisect.
  int64_t low = plan.lowerBound, high = plan.arenaSize - 1;
  bool lowProven = true, first = true;
  while (low <= high) {
    double left = options.timeLimitSeconds - secondsSince(start);
    if (left <= 0)
      break;
    int64_t target = first ? low : low + (high - low) / 2;
    double budget = first ? left * 0.75 : left / 2;
    if (budget < 0.001)
      budget = left;
    first = false;
    SearchResult result = searchExactPlan(buffers, target, budget);
    if (result.status == SearchStatus::Found) {
      plan.offsets = std::move(result.offsets);
      plan.arenaSize = computeArenaSize(buffers, plan.offsets);
      plan.method = PlanMethod::ExactSearch;
      high = plan.arenaSize - 1;
    } else {
      lowProven = lowProven && result.status == SearchStatus::Infeasible;
      low = target + 1;
    }
  }
  plan.provedOptimal = lowProven && low > high;
  plan.seconds = secondsSince(start);
  return plan;
}

} // namespace cairn
