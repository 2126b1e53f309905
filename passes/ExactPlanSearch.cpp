//===- ExactPlanSearch.cpp - Branch and bound for a fixed capacity --------===//
//
// Decides whether the buffers fit an arena of `capacity` bytes, with the
// search of MiniMalloc (Moffitt, ASPLOS 2023), written for speed (no
// allocation per node, state updated and undone in place) and with
// stronger inference.
//
// Time is cut into sections, the intervals between consecutive buffer
// start and end times; a buffer covers the sections [first, last). The
// search only builds canonical plans: buffers are placed in non-decreasing
// offset order, each at its lowest offset (on the tops of the placed
// buffers it overlaps, or 0, aligned). Every feasible instance has one: let
// the buffers fall down and sort them by offset. On top of that it prunes
// with
//
//   - section inference: in a section, the buffers still to place stack up
//     from the lowest offset one of them can take next, and not below the
//     last offset; if that floor plus their bytes exceeds the capacity, the
//     node fails. A buffer that cannot go next (below the last offset, or at
//     it but ranked before the last buffer) needs a later buffer under it,
//     so it counts as at least the smallest buffer size above the last
//     offset. As later offsets are not lower, the section with the most
//     bytes left also caps the next offset;
//   - dominance: a buffer is not placed at or above the top another
//     unplaced buffer would have at its lowest offset (that one could drop
//     into the gap: a plan with smaller offsets, explored elsewhere);
//   - hats: once a buffer that overlaps no unplaced buffer has failed at its
//     lowest offset, no other choice at this node can succeed;
//   - decomposition: when no unplaced buffer crosses a section boundary, the
//     two sides are independent: both are checked, then solved one after
//     the other, never revisiting a solved side.
//
// Which buffer goes first among equal offsets follows a static order, and
// the right one matters by orders of magnitude (the run lengths are heavy
// tailed). So six searches, one per order, run interleaved in slices of
// nodes, each resuming where it stopped (the depth-first search keeps its
// own stack), until one of them finds a plan or proves there is none: the
// cost is about six times that of the luckiest order, where MiniMalloc's
// restarts with a doubling node limit pay the sum of all its runs. An easy
// instance is done within the first slice of the first search.
//
//===----------------------------------------------------------------------===//

#include "passes/IntervalPlanner.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

namespace cairn {

namespace {
using Clock = std::chrono::steady_clock;
constexpr int64_t kInfinity = std::numeric_limits<int64_t>::max();
/// The partitions on one search's stack hold at most this many entries
/// (16 bytes each); past it a search stops decomposing. A chain of splits
/// that each cut off a small part would otherwise copy the rest at every
/// level: quadratic memory.
constexpr size_t kMaxLiveEntries = size_t{1} << 20;

int64_t alignUp(int64_t value, int64_t alignment) {
  if (alignment <= 1)
    return value;
  int64_t rest = value % alignment;
  return rest ? value + (alignment - rest) : value;
}

enum class Outcome {
  Found,
  NotFound,
  /// The slice of nodes ran out; the search can resume.
  Suspended,
  /// The deadline passed (searchExactPlan: or the node limit).
  TimedOut,
};

/// Keys of a static order, each compared so that the first listed goes
/// first: T the largest total of bytes still to place in a section the
/// buffer covers (the tightest first), W the longest lifetime, A the
/// largest area (bytes x lifetime), Z the largest size, S the earliest
/// start, E the latest end.
enum class Key { Total, Width, Area, Size, Start, End };
using StaticOrder = std::array<Key, 3>;
/// MiniMalloc's best order (TWA) and five that break its ties by position
/// in time. Which order finds a plan fast varies by orders of magnitude
/// from instance to instance; this set covers both the MiniMalloc
/// instances and random cuts of a rectangle (perfect packings) within a
/// few thousand nodes each for its best member.
constexpr std::array<StaticOrder, 6> kStaticOrders = {{
    {Key::Total, Key::Width, Key::Area},
    {Key::Total, Key::Start, Key::Size},
    {Key::End, Key::Width, Key::Total},
    {Key::Total, Key::Start, Key::Width},
    {Key::End, Key::Width, Key::Area},
    {Key::Total, Key::Width, Key::Start},
}};

/// The buffers with bytes, as the searches see them; shared and read-only.
struct Problem {
  struct Item {
    size_t index; // into the caller's buffers
    int64_t size;
    int64_t alignment;
    int64_t width; // upper - lower, in schedule steps
    int32_t first; // sections [first, last)
    int32_t last;
  };

  Problem(const std::vector<BufferInterval> &buffers, int64_t capacity);

  int64_t capacity;
  std::vector<Item> items;
  int32_t numSections = 0;
  int64_t minItemSize = 0;
};

Problem::Problem(const std::vector<BufferInterval> &buffers, int64_t capacity)
    : capacity(capacity) {
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
  minItemSize = kInfinity;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferInterval &b = buffers[i];
    if (b.size <= 0)
      continue;
    items.push_back({i, b.size, std::max<int64_t>(1, b.alignment), b.upper - b.lower,
                     sectionOf(b.lower), sectionOf(b.upper)});
    minItemSize = std::min(minItemSize, b.size);
  }
  numSections = times.empty() ? 0 : static_cast<int32_t>(times.size() - 1);
}

/// One depth-first search with one static order, resumable.
class Search {
public:
  Search(const Problem &problem, const StaticOrder &staticOrder,
         Clock::time_point deadline);

  /// Runs until the search ends or `budget` more nodes are visited.
  Outcome resume(uint64_t budget);
  uint64_t getNodes() const { return nodes; }
  /// The offset of each item once resume returned Found.
  const std::vector<int64_t> &getSolution() const { return solution; }

private:
  using Item = Problem::Item;

  /// An unplaced item of a partition: its lowest offset and its rank in the
  /// partition's static order.
  struct Entry {
    int64_t key;
    int32_t rank;
    int32_t item;
  };

  /// Items that share sections [lo, hi), no unplaced item crossing out.
  struct Partition {
    int32_t lo, hi;
    /// The unplaced items sorted by (key, rank), kept so by place/unplace.
    std::vector<Entry> order;
  };

  /// A search node, or a range of sections split into partitions.
  struct Frame {
    bool isRange = false;
    bool started = false;
    // A node: places the partition's items at offsets >= lastOffset; items
    // at lastOffset itself go in rank order after lastRank (their order
    // there does not matter: they are disjoint in time).
    Partition *partition = nullptr;
    int64_t lastOffset = 0;
    int32_t lastRank = -1;
    size_t candidatesBegin = 0, candidatesEnd = 0, next = 0;
    size_t undoMark = 0;
    bool hasHat = false;
    // A range: its parts, solved in turn, and their entries in all.
    int32_t lo = 0, hi = 0;
    std::unique_ptr<std::vector<Partition>> parts;
    size_t nextPart = 0;
    size_t numEntries = 0;
  };

  struct OffsetChange {
    int32_t item;
    int64_t minOffset;
  };

  bool splitRange(Frame &frame);
  /// Enters a node; returns false when it is a leaf or fails (`result` set).
  bool enterNode(Frame &frame);
  bool sectionsFit(const Partition &partition, size_t numUnplaced,
                   int64_t lastOffset, int32_t lastRank, int64_t &maxRemaining);
  /// Places the item of `entry` at its lowest offset; returns whether it has
  /// a hat (an unplaced item of the partition overlapping it in time) and
  /// whether a section boundary lost its last crossing item.
  void place(Partition &partition, const Entry &entry, bool &hasHat, bool &splits);
  void unplace(Partition &partition, const Entry &entry, size_t undoMark);
  /// Replaces the flagged entries of the order by `incoming` (sorted),
  /// touching only the prefix up to where they were and go.
  void reorder(std::vector<Entry> &order, std::vector<Entry> &incoming,
               size_t numFlagged);
  static bool entryLess(const Entry &a, const Entry &b) {
    return a.key < b.key || (a.key == b.key && a.rank < b.rank);
  }

  const Problem &problem;
  const std::vector<Item> &items;
  const StaticOrder &staticOrder;
  Clock::time_point deadline;

  std::vector<int64_t> minOffset;  // per item
  std::vector<char> placed;        // per item
  std::vector<char> flagged;       // per item: reorder() moves it
  std::vector<int64_t> solution;   // per item: the offset last given
  std::vector<int64_t> remaining;  // per section: bytes still to place
  std::vector<int32_t> crossing;   // per boundary s|s+1: unplaced items over it
  std::vector<int64_t> sectionFloor;
  std::vector<int32_t> deadCover;  // per section: a difference array
  struct SortKey {
    std::array<double, 3> values;
    int32_t item;
  };
  std::vector<SortKey> sortKeys; // scratch of splitRange()
  std::vector<OffsetChange> undo;
  std::vector<Entry> incoming, rebuilt; // scratch of reorder()
  std::vector<Entry> candidates;   // those of the nodes on the stack
  std::vector<Frame> stack;
  Outcome result = Outcome::NotFound;
  uint64_t nodes = 0;
  size_t liveEntries = 0; // in the parts of the ranges on the stack
};

Search::Search(const Problem &problem, const StaticOrder &staticOrder,
               Clock::time_point deadline)
    : problem(problem), items(problem.items), staticOrder(staticOrder),
      deadline(deadline) {
  size_t numSections = problem.numSections;
  minOffset.assign(items.size(), 0);
  placed.assign(items.size(), 0);
  flagged.assign(items.size(), 0);
  solution.assign(items.size(), 0);
  remaining.assign(numSections + 1, 0);
  crossing.assign(numSections + 1, 0);
  sectionFloor.assign(numSections + 1, 0);
  deadCover.assign(numSections + 1, 0);
  for (const Item &item : items) {
    for (int32_t s = item.first; s < item.last; ++s)
      remaining[s] += item.size;
    for (int32_t s = item.first; s + 1 < item.last; ++s)
      ++crossing[s];
  }
  Frame root;
  root.isRange = true;
  root.lo = 0;
  root.hi = problem.numSections;
  stack.push_back(std::move(root));
}

/// Splits the unplaced items of a range at the boundaries no unplaced item
/// crosses and checks every part; false if one cannot fit.
bool Search::splitRange(Frame &frame) {
  std::vector<int32_t> cuts = {frame.lo};
  for (int32_t s = frame.lo; s + 1 < frame.hi; ++s)
    if (crossing[s] == 0)
      cuts.push_back(s + 1);
  cuts.push_back(frame.hi);
  std::vector<std::vector<int32_t>> members(cuts.size() - 1);
  auto addMember = [&](int32_t k) {
    size_t part = std::upper_bound(cuts.begin(), cuts.end(), items[k].first) -
                  cuts.begin() - 1;
    members[part].push_back(k);
  };
  if (frame.partition) {
    for (const Entry &entry : frame.partition->order)
      addMember(entry.item);
  } else {
    for (size_t k = 0; k < items.size(); ++k)
      addMember(static_cast<int32_t>(k));
  }
  frame.parts = std::make_unique<std::vector<Partition>>();
  for (size_t p = 0; p < members.size(); ++p) {
    std::vector<int32_t> &part = members[p];
    if (part.empty())
      continue;
    sortKeys.clear();
    for (int32_t k : part) {
      int64_t most = 0;
      for (int32_t s = items[k].first; s < items[k].last; ++s)
        most = std::max(most, remaining[s]);
      const Item &item = items[k];
      // Larger goes first.
      auto value = [&](Key key) -> double {
        switch (key) {
        case Key::Total:
          return static_cast<double>(most);
        case Key::Width:
          return static_cast<double>(item.width);
        case Key::Area:
          return static_cast<double>(item.width) * static_cast<double>(item.size);
        case Key::Size:
          return static_cast<double>(item.size);
        case Key::Start:
          return -static_cast<double>(item.first);
        case Key::End:
          return static_cast<double>(item.last);
        }
        return 0;
      };
      sortKeys.push_back(
          {{value(staticOrder[0]), value(staticOrder[1]), value(staticOrder[2])}, k});
    }
    std::sort(sortKeys.begin(), sortKeys.end(),
              [](const SortKey &a, const SortKey &b) {
                if (a.values != b.values)
                  return a.values > b.values;
                return a.item < b.item;
              });
    for (size_t r = 0; r < part.size(); ++r)
      part[r] = sortKeys[r].item;
    Partition partition{cuts[p], cuts[p + 1], {}};
    partition.order.reserve(part.size());
    frame.numEntries += part.size();
    for (size_t r = 0; r < part.size(); ++r)
      partition.order.push_back(
          {minOffset[part[r]], static_cast<int32_t>(r), part[r]});
    std::sort(partition.order.begin(), partition.order.end(), entryLess);
    // Check every part before searching any: one that cannot fit makes
    // the search of the others wasted.
    int64_t maxRemaining;
    if (!sectionsFit(partition, partition.order.size(), frame.lastOffset, -1,
                     maxRemaining))
      return false;
    frame.parts->push_back(std::move(partition));
  }
  liveEntries += frame.numEntries;
  return true;
}

/// Section inference (see the file comment). The order is sorted, so the
/// first live item covering a section gives the lowest offset there.
bool Search::sectionsFit(const Partition &partition, size_t numUnplaced,
                         int64_t lastOffset, int32_t lastRank,
                         int64_t &maxRemaining) {
  int32_t lo = partition.lo, hi = partition.hi;
  int32_t left = 0; // sections with bytes left and no floor yet
  for (int32_t s = lo; s <= hi; ++s) {
    sectionFloor[s] = kInfinity;
    deadCover[s] = 0;
    left += s < hi && remaining[s] > 0;
  }
  bool anyDead = false;
  // The dead items come first in the order: below the last offset, or at
  // it and ranked before the last item.
  for (size_t i = 0; i < numUnplaced && left > 0; ++i) {
    const Entry &entry = partition.order[i];
    const Item &item = items[entry.item];
    if (entry.key < lastOffset || (entry.key == lastOffset && entry.rank < lastRank)) {
      ++deadCover[item.first];
      --deadCover[item.last];
      anyDead = true;
      continue;
    }
    for (int32_t s = item.first; s < item.last; ++s) {
      if (sectionFloor[s] == kInfinity) {
        sectionFloor[s] = entry.key;
        left -= remaining[s] > 0;
      }
    }
  }
  int64_t deadFloor = lastOffset + problem.minItemSize;
  int32_t dead = 0;
  maxRemaining = 0;
  for (int32_t s = lo; s < hi; ++s) {
    dead += deadCover[s];
    if (remaining[s] == 0)
      continue;
    int64_t floor = sectionFloor[s];
    if (anyDead && dead > 0)
      floor = std::min(floor, deadFloor);
    if (std::max(lastOffset, floor) + remaining[s] > problem.capacity)
      return false;
    maxRemaining = std::max(maxRemaining, remaining[s]);
  }
  return true;
}

void Search::reorder(std::vector<Entry> &order, std::vector<Entry> &moved,
                     size_t numFlagged) {
  std::sort(moved.begin(), moved.end(), entryLess);
  rebuilt.clear();
  size_t read = 0, next = 0;
  while (numFlagged > 0 || next < moved.size()) {
    if (read < order.size() && flagged[order[read].item]) {
      flagged[order[read].item] = 0;
      --numFlagged;
      ++read;
    } else if (next < moved.size() &&
               (read == order.size() || entryLess(moved[next], order[read]))) {
      rebuilt.push_back(moved[next++]);
    } else {
      rebuilt.push_back(order[read++]);
    }
  }
  if (rebuilt.size() == read) {
    std::copy(rebuilt.begin(), rebuilt.end(), order.begin());
    return;
  }
  order.erase(order.begin(), order.begin() + read);
  order.insert(order.begin(), rebuilt.begin(), rebuilt.end());
}

void Search::place(Partition &partition, const Entry &placedEntry, bool &hasHat,
                   bool &splits) {
  int32_t item = placedEntry.item;
  const Item &x = items[item];
  int64_t top = placedEntry.key + x.size;
  placed[item] = 1;
  solution[item] = placedEntry.key;
  // The items it lifts all sit below its top, at the front of the order.
  incoming.clear();
  flagged[item] = 1;
  size_t numFlagged = 1;
  for (const Entry &entry : partition.order) {
    if (entry.key >= top)
      break;
    int32_t k = entry.item;
    if (k == item || items[k].last <= x.first || x.last <= items[k].first)
      continue;
    int64_t lowest = alignUp(top, items[k].alignment);
    undo.push_back({k, minOffset[k]});
    minOffset[k] = lowest;
    flagged[k] = 1;
    ++numFlagged;
    incoming.push_back({lowest, entry.rank, k});
  }
  reorder(partition.order, incoming, numFlagged);
  hasHat = false;
  for (int32_t s = x.first; s < x.last; ++s) {
    remaining[s] -= x.size;
    hasHat |= remaining[s] > 0;
  }
  splits = false;
  for (int32_t s = x.first; s + 1 < x.last; ++s)
    splits |= --crossing[s] == 0;
}

void Search::unplace(Partition &partition, const Entry &placedEntry,
                     size_t undoMark) {
  int32_t item = placedEntry.item;
  const Item &x = items[item];
  for (int32_t s = x.first; s + 1 < x.last; ++s)
    ++crossing[s];
  for (int32_t s = x.first; s < x.last; ++s)
    remaining[s] += x.size;
  // The lifted items go back down; their ranks are in their entries.
  size_t numFlagged = undo.size() - undoMark;
  for (size_t u = undoMark; u < undo.size(); ++u)
    flagged[undo[u].item] = 1;
  incoming.clear();
  incoming.push_back(placedEntry);
  size_t found = 0;
  for (const Entry &entry : partition.order) {
    if (found == numFlagged)
      break;
    if (flagged[entry.item]) {
      incoming.push_back({0, entry.rank, entry.item});
      ++found;
    }
  }
  while (undo.size() > undoMark) {
    minOffset[undo.back().item] = undo.back().minOffset;
    undo.pop_back();
  }
  for (Entry &entry : incoming)
    entry.key = minOffset[entry.item];
  reorder(partition.order, incoming, numFlagged);
  placed[item] = 0;
}

bool Search::enterNode(Frame &frame) {
  Partition &partition = *frame.partition;
  size_t numUnplaced = partition.order.size();
  int64_t minTop = kInfinity;
  for (const Entry &entry : partition.order) {
    if (entry.key >= minTop)
      break; // the later tops are higher
    minTop = std::min(minTop, entry.key + items[entry.item].size);
  }
  if (numUnplaced == 0) {
    result = Outcome::Found;
    return false;
  }
  int64_t maxRemaining;
  if (minTop > problem.capacity ||
      !sectionsFit(partition, numUnplaced, frame.lastOffset, frame.lastRank,
                   maxRemaining)) {
    result = Outcome::NotFound;
    return false;
  }
  int64_t maxNextOffset = problem.capacity - maxRemaining;
  // The candidates, copied out: the children re-sort the order.
  frame.candidatesBegin = candidates.size();
  for (size_t i = 0; i < numUnplaced; ++i) {
    const Entry &entry = partition.order[i];
    // Dominance: the lowest top is a gap that must be filled first.
    if (entry.key >= minTop || entry.key > maxNextOffset)
      break;
    if (entry.key < frame.lastOffset ||
        (entry.key == frame.lastOffset && entry.rank < frame.lastRank))
      continue;
    candidates.push_back(entry);
  }
  frame.candidatesEnd = candidates.size();
  frame.next = frame.candidatesBegin;
  return true;
}

Outcome Search::resume(uint64_t budget) {
  uint64_t limit = nodes + budget;
  while (!stack.empty()) {
    size_t top = stack.size() - 1;
    Frame &frame = stack[top];
    if (frame.isRange) {
      if (!frame.started) {
        frame.started = true;
        if (!splitRange(frame)) {
          result = Outcome::NotFound;
          stack.pop_back();
          continue;
        }
        result = Outcome::Found;
      }
      if (result != Outcome::Found || frame.nextPart == frame.parts->size()) {
        liveEntries -= frame.numEntries;
        stack.pop_back();
        continue;
      }
      Frame child;
      child.partition = &(*frame.parts)[frame.nextPart++];
      child.lastOffset = frame.lastOffset;
      stack.push_back(std::move(child));
      continue;
    }

    if (!frame.started) {
      if (nodes >= limit)
        return Outcome::Suspended;
      if ((++nodes & 255) == 0 && Clock::now() > deadline)
        return Outcome::TimedOut;
      frame.started = true;
      if (!enterNode(frame)) {
        stack.pop_back();
        continue;
      }
    } else {
      // Back from the child placed at candidates[next].
      unplace(*frame.partition, candidates[frame.next], frame.undoMark);
      if (result != Outcome::NotFound || !frame.hasHat) {
        candidates.resize(frame.candidatesBegin);
        stack.pop_back();
        continue;
      }
      ++frame.next;
    }
    if (frame.next == frame.candidatesEnd) {
      candidates.resize(frame.candidatesBegin);
      result = Outcome::NotFound;
      stack.pop_back();
      continue;
    }
    Entry entry = candidates[frame.next];
    int64_t offset = entry.key;
    frame.undoMark = undo.size();
    bool splits = false;
    place(*frame.partition, entry, frame.hasHat, splits);
    Frame child;
    child.lastOffset = offset;
    // Without the split the search stays complete, only less focused.
    if (splits && liveEntries + frame.partition->order.size() <= kMaxLiveEntries) {
      child.isRange = true;
      child.lo = frame.partition->lo;
      child.hi = frame.partition->hi;
      child.partition = frame.partition; // where the unplaced items are
    } else {
      child.partition = frame.partition;
      child.lastRank = entry.rank;
    }
    stack.push_back(std::move(child)); // `frame` is dangling from here
  }
  return result;
}
} // namespace

SearchResult searchExactPlan(const std::vector<BufferInterval> &buffers,
                             int64_t capacity, double timeLimitSeconds,
                             uint64_t nodeLimit) {
  Clock::time_point deadline =
      std::isfinite(timeLimitSeconds)
          ? Clock::now() + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(timeLimitSeconds))
          : Clock::time_point::max();
  Problem problem(buffers, capacity);
  SearchResult result;
  // A slice long enough for one descent without backtracking, so an easy
  // instance never pays for the other orders.
  uint64_t slice = 4 * problem.items.size() + 1024;
  uint64_t visited = 0;
  std::vector<std::unique_ptr<Search>> searches;
  for (size_t turn = 0;; ++turn) {
    size_t which = turn % kStaticOrders.size();
    if (which == searches.size())
      searches.push_back(
          std::make_unique<Search>(problem, kStaticOrders[which], deadline));
    Search &search = *searches[which];
    Outcome outcome = Outcome::TimedOut;
    if (visited < nodeLimit) {
      // Every order's slices count against the one limit, so the searches
      // stop at the same node whatever the machine.
      uint64_t before = search.getNodes();
      outcome = search.resume(std::min(slice, nodeLimit - visited));
      visited += search.getNodes() - before;
    }
    if (outcome == Outcome::Suspended)
      continue;
    for (const std::unique_ptr<Search> &s : searches)
      result.nodes += s->getNodes();
    if (outcome == Outcome::Found) {
      result.status = SearchStatus::Found;
      result.offsets.assign(buffers.size(), 0);
      for (size_t k = 0; k < problem.items.size(); ++k)
        result.offsets[problem.items[k].index] = search.getSolution()[k];
    } else {
      result.status = outcome == Outcome::NotFound ? SearchStatus::Infeasible
                                                   : SearchStatus::TimedOut;
    }
    return result;
  }
}

} // namespace cairn
