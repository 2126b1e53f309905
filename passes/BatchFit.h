//===- BatchFit.h - The largest batch whose plan fits a size ----*- C++ -*-===//
//
// `cairn plan MODEL --fit SIZE`: plan the model at its batch size, say
// whether the arena fits, then find the largest batch size that does. The
// arena grows with the batch (every activation does), about linearly, so a
// doubling search brackets the answer and each probe then aims where the
// line through the probes so far meets the size (with a bisection when that
// stalls); each probe is a full plan (an estimate is not the plan), and the
// line only chooses which. Plain C++ over a probe function, so the search is
// tested on its own.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_BATCHFIT_H
#define CAIRN_PASSES_BATCHFIT_H

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace cairn {

/// One plan of the model: at which batch size, and its arena.
struct PlannedBatch {
  int64_t batch = 0;
  int64_t arenaBytes = 0;
};

/// Plans the model at `batch` (0: the model's own batch size), or returns
/// nullopt when it cannot be planned (the error has been reported). `first`
/// is true for the first plan, which is the answer and is planned in full;
/// the other probes may plan with a shorter search.
using BatchProbe =
    std::function<std::optional<PlannedBatch>(int64_t batch, bool first)>;

struct BatchFit {
  /// The model's own batch size and its arena.
  int64_t batch = 0;
  int64_t arenaBytes = 0;
  int64_t budgetBytes = 0;
  bool fits = false;
  /// The largest batch that fits (0: none, not even 1) and its arena; the
  /// smallest that does not (maxBatch + 1 when every batch up to maxBatch
  /// fits) and its arena.
  int64_t largestFitting = 0, largestFittingArena = 0;
  int64_t smallestFailing = 0, smallestFailingArena = 0;
};

/// Plans at `batch` (0: the model's own), then searches. Nullopt when a
/// probe fails. Batches go up to `maxBatch`.
std::optional<BatchFit> findLargestBatch(int64_t batch, int64_t budgetBytes,
                                         int64_t maxBatch,
                                         const BatchProbe &probe);

/// The answer as `cairn plan --fit` prints it.
void printBatchFit(const BatchFit &fit, llvm::StringRef modelFile,
                   int64_t maxBatch, llvm::raw_ostream &os);

} // namespace cairn

#endif // CAIRN_PASSES_BATCHFIT_H
