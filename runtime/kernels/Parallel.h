//===- Parallel.h - Split a kernel's loop across OpenMP threads -*- C++ -*-===//
//
// Every CPU kernel splits its outermost independent loop with
// parallelFor: contiguous chunks, one per thread of the OpenMP pool that
// OpenBLAS's OpenMP build also uses (one pool, so BLAS and the kernels never
// spin against each other). Each output element is computed by one thread,
// in the same order as serially, so results do not depend on the number of
// threads. Small loops stay on the calling thread: waking the pool costs a
// few microseconds.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_PARALLEL_H
#define CAIRN_RUNTIME_KERNELS_PARALLEL_H

#include <algorithm>
#include <cstdint>

#include <omp.h>

namespace cairn::kernels {

/// Work below which a loop runs on one thread, in units of "one simple
/// element-wise operation" (about a nanosecond).
constexpr int64_t kParallelGrain = 32768;

/// Calls f(begin, end) on disjoint chunks covering [0, n), in parallel when
/// n * costPerItem is at least kParallelGrain. Chunk edges are multiples of
/// `align` (a vector or a Philox group), but the last.
template <typename F>
void parallelFor(int64_t n, int64_t costPerItem, F &&f, int64_t align = 1) {
  if (n <= 0)
    return;
  int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  int64_t work = n * std::max<int64_t>(costPerItem, 1);
  if (threads <= 1 || work < 2 * kParallelGrain) {
    f(int64_t(0), n);
    return;
  }
  int64_t useful = std::max<int64_t>(work / kParallelGrain, 1);
  threads = int(std::min<int64_t>({int64_t(threads), useful, n}));
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num(), count = omp_get_num_threads();
    int64_t chunk = (n + count - 1) / count;
    chunk = (chunk + align - 1) / align * align;
    int64_t begin = std::min<int64_t>(n, t * chunk);
    int64_t end = std::min<int64_t>(n, begin + chunk);
    if (begin < end)
      f(begin, end);
  }
}

/// Calls f(i) for every i in [0, n), in chunks across threads as
/// parallelFor; one item costs about `costPerItem`.
template <typename F>
void parallelForEach(int64_t n, int64_t costPerItem, F &&f) {
  parallelFor(n, costPerItem, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      f(i);
  });
}

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_PARALLEL_H
