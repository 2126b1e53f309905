//===- Reduction.cpp - Sums over dimensions and their adjoint -------------===//
//
// reduceSum drops size-1 dimensions and merges neighbours that are both
// reduced or both kept, leaving alternating reduced/kept runs. The last run
// decides the inner loop: a reduced last run sums contiguous rows (a row sum);
// a kept last run adds contiguous rows into a block of accumulators (a bias
// gradient). Sums are taken in double and rounded once per output element.
// broadcastTo merges dimensions the same way as the binary broadcasts.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Reduction.h"

#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/ReductionPlan.h"
#include "runtime/kernels/StridedWalk.h"

#include <algorithm>
#include <string>

namespace cairn::kernels {

namespace {

static_assert(kMaxReduceRank <= kMaxWalkRank, "a walk must fit a StridedWalk");
/// Accumulators kept on the stack for a kept last run, 2 KiB of doubles.
constexpr int64_t kBlock = 256;

using Walker = StridedWalk<1>;

/// sum(x[0..n)) in double; eight partial sums let the loop vectorise.
template <typename T> double rowSum(int64_t n, const StoredAs<T> *x) {
  double part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k)
      part[k] += double(Storage<T>::load(x[i + k]));
  double s = 0;
  for (; i < n; ++i)
    s += double(Storage<T>::load(x[i]));
  for (double p : part)
    s += p;
  return s;
}

} // namespace

template <typename T>
void reduceSum(int rank, const int64_t *inShape, const bool *reduced,
               ComputedIn<T> alpha, const StoredAs<T> *in, ComputedIn<T> *out) {
  using Out = ComputedIn<T>;
  int64_t outCount = 1;
  bool empty = false;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d])
      outCount *= inShape[d];
    empty |= inShape[d] == 0;
  }
  if (empty) {
    std::fill(out, out + outCount, Out(0));
    return;
  }

  // Runs of reduced / kept dimensions, outermost first.
  const ReductionRuns runs = mergeReductionRuns(rank, inShape, reduced);
  const int m = runs.count;
  const int64_t *size = runs.size, *stride = runs.stride;
  const bool *red = runs.reduced;
  double a = alpha;
  if (m == 0) {
    out[0] = Out(a * double(Storage<T>::load(in[0])));
    return;
  }

  int64_t last = size[m - 1];
  Walker kept, summed;
  for (int d = 0; d < m - 1; ++d)
    (red[d] ? summed : kept).add(size[d], {stride[d]});

  // A walker that has taken count() steps is back at its start, so `summed`
  // needs no reset between output elements.
  int64_t keptCount = kept.count(), summedCount = summed.count();
  if (red[m - 1]) {
    for (int64_t k = 0; k < keptCount; ++k, kept.next()) {
      double s = 0;
      for (int64_t r = 0; r < summedCount; ++r, summed.next())
        s += rowSum<T>(last, in + kept.offset[0] + summed.offset[0]);
      out[k] = Out(a * s);
    }
    return;
  }
  double acc[kBlock];
  for (int64_t k = 0; k < keptCount; ++k, kept.next()) {
    Out *o = out + k * last;
    for (int64_t j0 = 0; j0 < last; j0 += kBlock) {
      int64_t len = std::min(kBlock, last - j0);
      std::fill(acc, acc + len, 0.0);
      for (int64_t r = 0; r < summedCount; ++r, summed.next()) {
        const StoredAs<T> *row = in + kept.offset[0] + summed.offset[0] + j0;
        for (int64_t j = 0; j < len; ++j)
          acc[j] += double(Storage<T>::load(row[j]));
      }
      for (int64_t j = 0; j < len; ++j)
        o[j0 + j] = Out(a * acc[j]);
    }
  }
}

template <typename T>
void broadcastTo(int rank, const int64_t *outShape, const int64_t *inStrides,
                 T alpha, const T *in, T *out) {
  const BroadcastRuns runs = mergeBroadcastRuns(rank, outShape, inStrides);
  if (runs.empty)
    return;
  const int m = runs.count;
  const int64_t *shape = runs.size, *st = runs.inStride;
  if (m == 0) {
    out[0] = alpha * in[0];
    return;
  }
  int64_t inner = shape[m - 1], innerStride = st[m - 1];
  Walker outer;
  for (int d = 0; d < m - 1; ++d)
    outer.add(shape[d], {st[d]});
  int64_t outerCount = outer.count();
  for (int64_t o = 0; o < outerCount; ++o, outer.next()) {
    const T *x = in + outer.offset[0];
    T *y = out + o * inner;
    if (innerStride == 1) {
      for (int64_t i = 0; i < inner; ++i)
        y[i] = alpha * x[i];
    } else if (innerStride == 0) {
      T v = alpha * x[0];
      for (int64_t i = 0; i < inner; ++i)
        y[i] = v;
    } else {
      for (int64_t i = 0; i < inner; ++i)
        y[i] = alpha * x[i * innerStride];
    }
  }
}

#define CAIRN_INSTANTIATE(T)                                                   \
  template void reduceSum<T>(int, const int64_t *, const bool *, T,            \
                             const T *, T *);                                  \
  template void broadcastTo<T>(int, const int64_t *, const int64_t *, T,       \
                               const T *, T *);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
#undef CAIRN_INSTANTIATE
template void reduceSum<F16>(int, const int64_t *, const bool *, float,
                             const uint16_t *, float *);
template void reduceSum<Bf16>(int, const int64_t *, const bool *, float,
                              const uint16_t *, float *);

} // namespace cairn::kernels
