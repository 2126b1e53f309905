//===- BufferCsv.cpp - Buffers and plans as CSV ---------------------------===//

#include "passes/BufferCsv.h"

#include <cstdio>

#include <limits>
#include <unordered_map>

namespace cairn {

namespace {
constexpr int64_t kMaxTotalBytes = int64_t{1} << 62;
constexpr const char *kFieldNames[] = {"id", "lower", "upper", "size"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> splitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    fields.push_back(trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos)
      return fields;
    start = comma + 1;
  }
}

/// A decimal integer with an optional '-'; false if malformed or out of range.
bool parseInteger(std::string_view s, int64_t &value) {
  bool negative = !s.empty() && s.front() == '-';
  if (negative)
    s.remove_prefix(1);
  if (s.empty())
    return false;
  uint64_t magnitude = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return false;
    magnitude = magnitude * 10 + static_cast<uint64_t>(c - '0');
    if (magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return false;
  }
  value = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

bool isHeader(const std::vector<std::string_view> &fields) {
  if (fields.size() != 4)
    return false;
  for (size_t i = 0; i < 4; ++i)
    if (fields[i] != kFieldNames[i])
      return false;
  return true;
}
} // namespace

bool parseBufferCsv(std::string_view text, std::vector<BufferInterval> &buffers,
                    CsvError &error) {
  buffers.clear();
  std::unordered_map<int64_t, size_t> firstLineOfId;
  int64_t totalBytes = 0;
  bool seenContent = false;
  size_t lineNumber = 0;
  auto fail = [&](std::string message) {
    error.line = lineNumber;
    error.message = std::move(message);
    return false;
  };
  while (!text.empty() || lineNumber == 0) {
    size_t newline = text.find('\n');
    std::string_view line = trim(text.substr(0, newline));
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++lineNumber;
    if (line.empty() || line.front() == '#')
      continue;
    std::vector<std::string_view> fields = splitFields(line);
    if (!seenContent && isHeader(fields)) {
      seenContent = true;
      continue;
    }
    seenContent = true;
    if (fields.size() != 4)
      return fail("expected 4 fields (id,lower,upper,size) but got " +
                  std::to_string(fields.size()));
    int64_t values[4];
    for (size_t i = 0; i < 4; ++i)
      if (!parseInteger(fields[i], values[i]))
        return fail("expected an integer for '" + std::string(kFieldNames[i]) +
                    "' but got '" + std::string(fields[i]) + "'");
    BufferInterval b;
    b.id = values[0];
    b.lower = values[1];
    b.upper = values[2];
    b.size = values[3];
    if (b.size < 0)
      return fail("expected a size >= 0 but got " + std::to_string(b.size));
    if (b.lower >= b.upper)
      return fail("expected lower < upper but got lower " + std::to_string(b.lower) +
                  ", upper " + std::to_string(b.upper));
    auto [it, inserted] = firstLineOfId.emplace(b.id, lineNumber);
    if (!inserted)
      return fail("duplicate buffer id " + std::to_string(b.id) + " (first on line " +
                  std::to_string(it->second) + ")");
    if (b.size > kMaxTotalBytes - totalBytes)
      return fail("the sizes add up to more than 2^62 bytes");
    totalBytes += b.size;
    buffers.push_back(b);
  }
  return true;
}

std::string formatPlanCsv(const std::vector<BufferInterval> &buffers,
                          const std::vector<int64_t> &offsets) {
  std::string out = "id,lower,upper,size,offset\n";
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferInterval &b = buffers[i];
    out += std::to_string(b.id) + "," + std::to_string(b.lower) + "," +
           std::to_string(b.upper) + "," + std::to_string(b.size) + "," +
           std::to_string(offsets[i]) + "\n";
  }
  return out;
}

} // namespace cairn

std::string cairn::formatPlanSummary(const std::vector<BufferInterval> &buffers,
                                     const IntervalPlan &plan,
                                     std::optional<int64_t> capacity) {
  auto ratio = [&](int64_t arena) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3f",
                  plan.lowerBound ? double(arena) / plan.lowerBound : 1.0);
    return std::string(text);
  };
  std::string text;
  auto line = [&](const std::string &name, const std::string &value) {
    text += name + ": " + value + "\n";
  };
  line("buffers", std::to_string(buffers.size()));
  line("lower bound", std::to_string(plan.lowerBound));
  line("greedy arena", std::to_string(plan.greedyArenaSize) + " (" +
                           ratio(plan.greedyArenaSize) + "x)");
  line("arena", std::to_string(plan.arenaSize));
  line("ratio", ratio(plan.arenaSize) + "x");
  line("method", getPlanMethodName(plan.method));
  line("optimal", plan.provedOptimal ? "yes" : "not proven");
  if (capacity) {
    line("capacity", std::to_string(*capacity));
    line("fits", plan.capacityStatus == SearchStatus::Found ? "yes"
                 : plan.capacityStatus == SearchStatus::Infeasible
                     ? "no (proven)"
                     : "no (none found in time)");
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.3f s", plan.seconds);
  line("time", seconds);
  return text;
}
