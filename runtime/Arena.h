//===- Arena.h - The one block of memory every step works in -----*- C++ -*-===//
//
// Allocated once, 256-byte aligned, before any step, and filled with a known
// byte so the run can measure how much of it was really used: the highest
// byte that no longer holds the pattern is the arena's high-water mark (a
// tensor whose topmost bytes happen to equal the pattern reads a few bytes
// low; the measurement is a check on the planner, not an exact figure).
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_ARENA_H
#define CAIRN_RUNTIME_ARENA_H

#include "absl/status/statusor.h"

#include <cstddef>
#include <cstdlib>
#include <memory>

namespace cairn::runtime {

/// One past the highest of `bytes` bytes at `base` that differs from
/// `pattern`; 0 when none does.
size_t highWaterMark(const unsigned char *base, size_t bytes, unsigned char pattern);

class Arena {
public:
  static constexpr size_t kAlignment = 256;
  /// An x86-64 huge page: the alignment of an arena at least this large.
  static constexpr size_t kHugePage = size_t(2) << 20;
  static constexpr unsigned char kPattern = 0xCD;

  /// `bytes` (rounded up to the alignment) filled with kPattern; an error
  /// when the memory cannot be had.
  static absl::StatusOr<Arena> allocate(size_t bytes);

  unsigned char *data() { return memory.get(); }
  const unsigned char *data() const { return memory.get(); }
  /// The size asked for (the planned bytes).
  size_t size() const { return bytes; }

  /// One past the highest byte below size() that differs from kPattern;
  /// 0 when none does.
  size_t measuredPeakBytes() const { return highWaterMark(data(), bytes, kPattern); }

private:
  struct Free {
    void operator()(unsigned char *p) const { std::free(p); }
  };
  Arena(std::unique_ptr<unsigned char, Free> memory, size_t bytes)
      : memory(std::move(memory)), bytes(bytes) {}
  std::unique_ptr<unsigned char, Free> memory;
  size_t bytes;
};

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_ARENA_H
