//===- GreedyPlanner.cpp - Greedy best-fit by decreasing size -------------===//
//
// The planner's fast path and the bounds around it: greedy-by-size places
// the largest buffers first, each in the best-fitting gap left by the
// already placed buffers it overlaps in time, found through a segment tree
// over the buffers sorted by start. The lower bound is the peak of the live
// bytes over time.
//
//===----------------------------------------------------------------------===//

#include "passes/IntervalPlanner.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <utility>

namespace cairn {

namespace {
int64_t alignUp(int64_t value, int64_t alignment) {
  if (alignment <= 1)
    return value;
  int64_t rest = value % alignment;
  return rest ? value + (alignment - rest) : value;
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
} // namespace

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

} // namespace cairn
