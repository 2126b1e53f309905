//===- ByteSize.cpp - Sizes in bytes, read and written by people ----------===//

#include "passes/ByteSize.h"

#include "llvm/ADT/StringExtras.h"

#include <cstdio>

using namespace cairn;

std::optional<int64_t> cairn::parseByteSize(llvm::StringRef text) {
  text = text.trim();
  size_t numberEnd = 0;
  while (numberEnd < text.size() &&
         (llvm::isDigit(text[numberEnd]) || text[numberEnd] == '.'))
    ++numberEnd;
  llvm::StringRef number = text.take_front(numberEnd);
  std::string unit = text.drop_front(numberEnd).trim().lower();
  double value;
  if (number.empty() || number.getAsDouble(value) || !(value > 0))
    return std::nullopt;
  static const std::pair<const char *, double> units[] = {
      {"", 1},          {"b", 1},           {"kib", 1024.0},
      {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0},
      {"kb", 1e3},      {"mb", 1e6},        {"gb", 1e9},
      {"tb", 1e12}};
  for (auto [name, scale] : units) {
    if (unit != name)
      continue;
    double bytes = value * scale;
    if (!(bytes >= 1) || bytes >= 9.2e18)
      return std::nullopt;
    return static_cast<int64_t>(bytes);
  }
  return std::nullopt;
}

std::string cairn::formatByteSize(int64_t bytes) {
  if (bytes < 1024)
    return std::to_string(bytes) + " B";
  const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = bytes;
  int unit = -1;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.2f %s", value, units[unit]);
  return text;
}
