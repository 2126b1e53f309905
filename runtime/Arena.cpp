//===- Arena.cpp - The one block of memory every step works in ------------===//
#include "runtime/Arena.h"
#include "runtime/Program.h"

#include "absl/strings/str_format.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <sys/mman.h>

namespace cairn::runtime {

absl::StatusOr<Arena> Arena::allocate(size_t bytes) {
  // An arena of huge pages or more starts on one and asks the kernel for
  // them (transparent huge pages in madvise mode): the step's memory-bound
  // kernels then miss the TLB once per 2 MiB, not once per 4 KiB.
  const size_t alignment = bytes >= kHugePage ? kHugePage : kAlignment;
  // aligned_alloc wants a multiple of the alignment, and at least one block.
  size_t rounded = std::max<size_t>(1, bytes / alignment + (bytes % alignment != 0)) * alignment;
  auto *memory = bytes > SIZE_MAX - alignment
                     ? nullptr
                     : static_cast<unsigned char *>(std::aligned_alloc(alignment, rounded));
  if (!memory)
    return absl::ResourceExhaustedError(
        absl::StrFormat("cannot allocate the model's %d-byte arena", bytes));
#ifdef MADV_HUGEPAGE
  if (alignment == kHugePage)
    madvise(memory, rounded, MADV_HUGEPAGE); // advice: without it, 4 KiB pages
#endif
  std::memset(memory, kPattern, rounded);
  return Arena(std::unique_ptr<unsigned char, Free>(memory), bytes);
}

size_t highWaterMark(const unsigned char *base, size_t bytes, unsigned char pattern) {
  size_t top = bytes;
  // Word at a time while aligned: a large arena is mostly scanned here.
  uint64_t patternWord;
  std::memset(&patternWord, pattern, sizeof(patternWord));
  while (top % sizeof(uint64_t) != 0 && base[top - 1] == pattern)
    --top;
  if (top % sizeof(uint64_t) == 0) {
    while (top > 0) {
      uint64_t word;
      std::memcpy(&word, base + top - sizeof(word), sizeof(word));
      if (word != patternWord)
        break;
      top -= sizeof(word);
    }
  }
  while (top > 0 && base[top - 1] == pattern)
    --top;
  return top;
}

void poisonBytes(unsigned char *data, size_t bytes) { std::memset(data, 0xFF, bytes); }

} // namespace cairn::runtime
