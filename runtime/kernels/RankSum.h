//===- RankSum.h - Numbers summed over the processes of a step ---*- C++ -*-===//
//
// A step that runs as several processes (data-parallel replicas, or the
// devices of a partitioned model) has kernels that need a few numbers from
// all of them: synchronized batch norm's statistics, the gradients' overflow
// check and norm. They take a RankSum, which the runtime makes from the
// step's transport (runtime/Transport.h); an empty one means this process
// is the whole step.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_RANKSUM_H
#define CAIRN_RUNTIME_KERNELS_RANKSUM_H

#include <cstdint>
#include <functional>

namespace cairn::kernels {

/// Sums `count` doubles in place over every process of the step: the same
/// sums, added in the same order, on every process. Every process calls it
/// with the same counts in the same order.
using RankSum = std::function<void(double *values, int64_t count)>;

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_RANKSUM_H
