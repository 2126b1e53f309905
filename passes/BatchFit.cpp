//===- BatchFit.cpp - The largest batch whose plan fits a size ------------===//

#include "passes/BatchFit.h"

#include "passes/ByteSize.h"

#include <algorithm>
#include <cmath>

using namespace cairn;

namespace {

/// Where the line through (b0, a0) and (b1, a1) reaches `budget`, or
/// nothing when it does not rise.
std::optional<double> lineCrossing(int64_t b0, int64_t a0, int64_t b1,
                                   int64_t a1, int64_t budget) {
  if (b1 == b0 || a1 <= a0)
    return std::nullopt;
  double slope = double(a1 - a0) / double(b1 - b0);
  return double(b0) + double(budget - a0) / slope;
}

/// floor(x), clamped to [lo, hi] (x may be far outside, or huge).
int64_t clampFloor(double x, int64_t lo, int64_t hi) {
  if (!(x >= double(lo)))
    return lo;
  if (x >= double(hi))
    return hi;
  return static_cast<int64_t>(std::floor(x));
}

} // namespace

std::optional<BatchFit> cairn::findLargestBatch(int64_t batch,
                                                int64_t budgetBytes,
                                                int64_t maxBatch,
                                                const BatchProbe &probe) {
  BatchFit fit;
  fit.budgetBytes = budgetBytes;
  std::optional<PlannedBatch> planned = probe(batch, /*first=*/true);
  if (!planned || planned->batch < 1)
    return std::nullopt;
  batch = fit.batch = planned->batch;
  fit.arenaBytes = planned->arenaBytes;
  fit.fits = fit.arenaBytes <= budgetBytes;

  auto arenaAt = [&](int64_t b) -> std::optional<int64_t> {
    std::optional<PlannedBatch> p = probe(b, /*first=*/false);
    if (!p)
      return std::nullopt;
    return p->arenaBytes;
  };
  // The bracket [good, bad): good fits (0: none known), bad does not.
  int64_t good = fit.fits ? batch : 0, bad = fit.fits ? 0 : batch;
  int64_t goodArena = fit.fits ? fit.arenaBytes : 0,
          badArena = fit.fits ? 0 : fit.arenaBytes;
  // Up from a batch that fits: double, or, once two batches fit, go one
  // past where the line through them meets the size if that is nearer
  // (arenas grow about linearly with the batch: the probe then fails and
  // the one below it closes the search).
  int64_t previousGood = 0, previousGoodArena = 0;
  int64_t next = good * 2;
  while (fit.fits && !bad) {
    if (next > maxBatch) {
      // The largest batch itself, before giving up on a failing one.
      if (good == maxBatch) {
        bad = maxBatch + 1;
        break;
      }
      next = maxBatch;
    }
    std::optional<int64_t> arena = arenaAt(next);
    if (!arena)
      return std::nullopt;
    if (*arena > budgetBytes) {
      bad = next, badArena = *arena;
      break;
    }
    previousGood = good, previousGoodArena = goodArena;
    good = next, goodArena = *arena;
    if (good == maxBatch) {
      bad = maxBatch + 1;
      break;
    }
    next = good > maxBatch / 2 ? maxBatch : good * 2;
    if (std::optional<double> at = lineCrossing(
            previousGood, previousGoodArena, good, goodArena, budgetBytes))
      next = std::min(next, clampFloor(*at + 1, good + 1, next));
  }
  // Close in: probe where the line through the bracket's ends meets the
  // size (through the origin while no batch is known to fit), which the
  // linear growth makes right at once or nearly; after two such probes on
  // one side of the answer (regula falsi stalls on a curved arena), one
  // bisection.
  int lastSide = 0, sameSide = 0;
  while (bad - good > 1) {
    int64_t mid = good + (bad - good) / 2;
    if (sameSide < 2) {
      if (std::optional<double> at =
              lineCrossing(good, goodArena, bad, badArena, budgetBytes))
        mid = clampFloor(*at, good + 1, bad - 1);
    } else {
      sameSide = 0;
    }
    std::optional<int64_t> arena = arenaAt(mid);
    if (!arena)
      return std::nullopt;
    int side = *arena <= budgetBytes ? 1 : -1;
    if (side > 0)
      good = mid, goodArena = *arena;
    else
      bad = mid, badArena = *arena;
    sameSide = side == lastSide ? sameSide + 1 : 1;
    lastSide = side;
  }
  fit.largestFitting = good;
  fit.largestFittingArena = goodArena;
  fit.smallestFailing = bad;
  fit.smallestFailingArena = badArena;
  return fit;
}

void cairn::printBatchFit(const BatchFit &fit, llvm::StringRef modelFile,
                          int64_t maxBatch, llvm::raw_ostream &os) {
  os << "model " << modelFile << " at batch " << fit.batch << ": arena "
     << formatByteSize(fit.arenaBytes) << " (" << fit.arenaBytes << " bytes) "
     << (fit.fits ? "fits" : "does not fit") << " in "
     << formatByteSize(fit.budgetBytes) << " (" << fit.budgetBytes
     << " bytes) per device\n";
  if (fit.largestFitting == 0) {
    os << "no batch size fits: batch 1 needs "
       << formatByteSize(fit.smallestFailingArena) << "\n";
    return;
  }
  if (fit.smallestFailing > maxBatch) {
    os << "every batch size up to " << maxBatch << " fits\n";
    return;
  }
  os << "largest batch that fits: " << fit.largestFitting << " (arena "
     << formatByteSize(fit.largestFittingArena) << "; batch "
     << fit.smallestFailing << " needs "
     << formatByteSize(fit.smallestFailingArena) << ")\n";
}
