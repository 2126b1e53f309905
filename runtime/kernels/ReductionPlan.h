//===- ReductionPlan.h - Sums and broadcasts as merged runs ------*- C++ -*-===//
//
// reduceSum and broadcastTo first merge neighbouring dimensions that can be
// walked as one: runs of reduced or kept dimensions for a sum, dimensions
// over which the input is contiguous (or broadcast) for a broadcast. The
// CPU kernels (Reduction.cpp) and their CUDA twins (ReductionKernels.cu)
// merge here and differ only in how they walk the result.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_REDUCTIONPLAN_H
#define CAIRN_RUNTIME_KERNELS_REDUCTIONPLAN_H

#include "runtime/kernels/KernelError.h"

#include <cstdint>
#include <string>

namespace cairn::kernels {

/// Merged runs a sum or broadcast may have.
constexpr int kMaxReduceRank = 8;

[[noreturn]] inline void throwTooManyRuns(const char *what) {
  throw KernelError(std::string(what) + " needs more than " + std::to_string(kMaxReduceRank) +
                    " dimensions");
}

/// The input of reduceSum as runs of reduced / kept dimensions, outermost
/// first, size-1 dimensions dropped; strides row-major over the runs.
struct ReductionRuns {
  int count = 0;
  int64_t size[kMaxReduceRank];
  bool reduced[kMaxReduceRank];
  int64_t stride[kMaxReduceRank];
};

/// For a non-empty input (no dimension of size 0).
inline ReductionRuns mergeReductionRuns(int rank, const int64_t *inShape, const bool *reduced) {
  ReductionRuns r;
  int &m = r.count;
  for (int d = 0; d < rank; ++d) {
    if (inShape[d] == 1)
      continue;
    if (m > 0 && r.reduced[m - 1] == reduced[d]) {
      r.size[m - 1] *= inShape[d];
      continue;
    }
    if (m == kMaxReduceRank)
      throwTooManyRuns("reduceSum");
    r.size[m] = inShape[d];
    r.reduced[m] = reduced[d];
    ++m;
  }
  int64_t step = 1;
  for (int d = m - 1; d >= 0; --d) {
    r.stride[d] = step;
    step *= r.size[d];
  }
  return r;
}

/// The output of broadcastTo (contiguous) as dimensions with the input's
/// stride, outermost first: a dimension merges into the previous one when
/// the input is contiguous (or broadcast) across the pair too.
struct BroadcastRuns {
  int count = 0;
  int64_t size[kMaxReduceRank];
  int64_t inStride[kMaxReduceRank];
  bool empty = false; // some dimension is 0
};

inline BroadcastRuns mergeBroadcastRuns(int rank, const int64_t *outShape,
                                        const int64_t *inStrides) {
  BroadcastRuns r;
  int &m = r.count;
  for (int d = 0; d < rank; ++d) {
    if (outShape[d] == 0) {
      r.empty = true;
      return r;
    }
    if (outShape[d] == 1)
      continue;
    if (m > 0 && r.inStride[m - 1] == inStrides[d] * outShape[d]) {
      r.size[m - 1] *= outShape[d];
      r.inStride[m - 1] = inStrides[d];
      continue;
    }
    if (m == kMaxReduceRank)
      throwTooManyRuns("broadcastTo");
    r.size[m] = outShape[d];
    r.inStride[m] = inStrides[d];
    ++m;
  }
  return r;
}

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_REDUCTIONPLAN_H
