//===- BufferCsv.h - Buffers and plans as CSV --------------------*- C++ -*-===//
//
// The planner's file format, as in MiniMalloc's benchmarks:
//
//   id,lower,upper,size          (header line optional)
//   0,0,10,4096                  a buffer of 4096 bytes live over [0, 10)
//
// A plan adds a fifth column, `offset`. Empty lines and lines starting with
// `#` are skipped. `cairn plan --buffers FILE.csv` reads, plans, verifies
// (PlanVerifier.h) and prints formatPlanSummary.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_BUFFERCSV_H
#define CAIRN_PASSES_BUFFERCSV_H

#include "passes/IntervalPlanner.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn {

struct CsvError {
  /// 1-based line of the error.
  size_t line = 0;
  std::string message;
};

/// Parses `text`; on failure returns false and fills `error`. Fields are
/// integers; sizes are >= 0, lower < upper, ids are unique and the sizes add
/// up to at most 2^62.
bool parseBufferCsv(std::string_view text, std::vector<BufferInterval> &buffers,
                    CsvError &error);

/// `id,lower,upper,size,offset`, a header line and one line per buffer.
std::string formatPlanCsv(const std::vector<BufferInterval> &buffers,
                          const std::vector<int64_t> &offsets);

/// What `cairn plan --buffers` prints of a plan of `buffers`: the count, the
/// lower bound, greedy's arena and the final one with their ratios to the
/// bound, the method, whether it is proven optimal, with `capacity` whether
/// the buffers fit it, and the time.
std::string formatPlanSummary(const std::vector<BufferInterval> &buffers,
                              const IntervalPlan &plan,
                              std::optional<int64_t> capacity);

} // namespace cairn

#endif // CAIRN_PASSES_BUFFERCSV_H
