//===- PlanVerifier.cpp - Independent check of a memory plan --------------===//

#include "passes/PlanVerifier.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <tuple>

namespace cairn {

namespace {
PlanVerdict fail(std::string message) { return {false, std::move(message)}; }

std::string name(const PlacedBuffer &b) { return "buffer " + std::to_string(b.id); }

std::string describe(const PlacedBuffer &b) {
  return name(b) + " (bytes [" + std::to_string(b.offset) + ", " +
         std::to_string(b.offset + b.size) + "), live [" + std::to_string(b.lower) +
         ", " + std::to_string(b.upper) + "))";
}
} // namespace

PlanVerdict verifyPlan(const std::vector<PlacedBuffer> &buffers, int64_t arenaSize) {
  if (arenaSize < 0)
    return fail("arena size " + std::to_string(arenaSize) + " is negative");
  for (const PlacedBuffer &b : buffers) {
    if (b.lower >= b.upper)
      return fail(name(b) + ": expected lower < upper but got [" +
                  std::to_string(b.lower) + ", " + std::to_string(b.upper) + ")");
    if (b.size < 0)
      return fail(name(b) + ": size " + std::to_string(b.size) + " is negative");
    if (b.alignment < 1)
      return fail(name(b) + ": alignment " + std::to_string(b.alignment) +
                  " is not positive");
    if (b.offset < 0)
      return fail(name(b) + ": offset " + std::to_string(b.offset) + " is negative");
    if (b.offset % b.alignment != 0)
      return fail(name(b) + ": offset " + std::to_string(b.offset) +
                  " is not a multiple of its alignment " + std::to_string(b.alignment));
    // offset + size > arenaSize, written so that it cannot overflow.
    if (b.offset > arenaSize || b.size > arenaSize - b.offset)
      return fail(describe(b) + " ends past the arena of " +
                  std::to_string(arenaSize) + " bytes");
  }

  // Events in time order; at equal times the ends come first ([lower, upper)
  // is half-open, so a buffer may reuse bytes freed at its own lower).
  struct Event {
    int64_t time;
    int kind; // 0: end, 1: start
    size_t index;
  };
  std::vector<Event> events;
  events.reserve(2 * buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size == 0)
      continue;
    events.push_back({buffers[i].lower, 1, i});
    events.push_back({buffers[i].upper, 0, i});
  }
  std::sort(events.begin(), events.end(), [](const Event &a, const Event &b) {
    return std::tie(a.time, a.kind, a.index) < std::tie(b.time, b.kind, b.index);
  });

  // The live buffers by offset; they never overlap each other, so each new
  // one only needs checking against the ones just below and above it.
  std::multimap<int64_t, size_t> live;
  std::vector<std::multimap<int64_t, size_t>::iterator> where(buffers.size());
  for (const Event &event : events) {
    const PlacedBuffer &b = buffers[event.index];
    if (event.kind == 0) {
      live.erase(where[event.index]);
      continue;
    }
    auto above = live.lower_bound(b.offset);
    if (above != live.end() && above->first < b.offset + b.size)
      return fail(describe(b) + " overlaps " + describe(buffers[above->second]));
    if (above != live.begin()) {
      const PlacedBuffer &below = buffers[std::prev(above)->second];
      if (below.offset + below.size > b.offset)
        return fail(describe(b) + " overlaps " + describe(below));
    }
    where[event.index] = live.emplace_hint(above, b.offset, event.index);
  }
  return {};
}

} // namespace cairn

cairn::PlanVerdict cairn::verifyPlan(const std::vector<BufferInterval> &buffers,
                              const std::vector<int64_t> &offsets,
                              int64_t arenaSize) {
  std::vector<PlacedBuffer> placed;
  placed.reserve(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferInterval &b = buffers[i];
    placed.push_back({b.id, b.lower, b.upper, b.size, offsets[i], b.alignment});
  }
  return verifyPlan(placed, arenaSize);
}
