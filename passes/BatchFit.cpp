//===- BatchFit.cpp - The largest batch whose plan fits a size ------------===//

#include "passes/BatchFit.h"

#include "passes/ByteSize.h"

using namespace cairn;

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

  // Bisect on [good, bad): good fits (0: none known), bad does not.
  int64_t good = fit.fits ? batch : 0, bad = fit.fits ? 0 : batch;
  int64_t goodArena = fit.fits ? fit.arenaBytes : 0,
          badArena = fit.fits ? 0 : fit.arenaBytes;
  if (fit.fits) {
    for (int64_t next = batch * 2; !bad; next *= 2) {
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
      if (*arena <= budgetBytes) {
        good = next, goodArena = *arena;
        if (next == maxBatch) {
          bad = maxBatch + 1;
          break;
        }
      } else {
        bad = next, badArena = *arena;
      }
    }
  }
  while (bad - good > 1) {
    int64_t mid = good + (bad - good) / 2;
    std::optional<int64_t> arena = arenaAt(mid);
    if (!arena)
      return std::nullopt;
    if (*arena <= budgetBytes)
      good = mid, goodArena = *arena;
    else
      bad = mid, badArena = *arena;
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
