//===- SumChunks.h - How replicas split a bucket to sum it -------*- C++ -*-===//
//
// Replicas sum a bucket of n floats in two exchanges (MpiTransport): rank q
// owns chunk q of the bucket, receives every other rank's chunk q into a
// workspace, sums the R values of each element in rank order
// (((p0 + p1) + p2) + ...: the order in which one process adds R
// micro-batches' gradients, so the sums are the same bits), and every rank
// then gathers every chunk. The bucket is the gradients themselves, read as
// one run of floats; the compiler sizes the workspace, a buffer of the plan
// (cairn-all-reduce-gradients), and the runtime splits the bucket: both use
// these.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_SUMCHUNKS_H
#define CAIRN_RUNTIME_SUMCHUNKS_H

#include <cstdint>

namespace cairn::runtime {

/// The first element of chunk `rank` of `count` elements split over
/// `ranks` (sizes differ by at most one); chunk `ranks` begins at `count`.
constexpr int64_t getSumChunkBegin(int64_t count, int64_t ranks, int64_t rank) {
  return count / ranks * rank + (rank < count % ranks ? rank : count % ranks);
}

constexpr int64_t getSumChunkSize(int64_t count, int64_t ranks, int64_t rank) {
  return getSumChunkBegin(count, ranks, rank + 1) - getSumChunkBegin(count, ranks, rank);
}

/// The workspace a rank needs for the other ranks' copies of its chunk, in
/// elements: enough for any rank's.
constexpr int64_t getSumWorkspaceElements(int64_t count, int64_t ranks) {
  return (ranks - 1) * ((count + ranks - 1) / ranks);
}

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_SUMCHUNKS_H
