//===- ThreadRanks.h - A RankSum over threads, for kernel tests -*- C++ -*-===//
//
// The kernels that sum a few numbers over the processes of a step
// (RankSum.h) tested with one thread per process.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_TEST_UNIT_KERNELS_THREADRANKS_H
#define CAIRN_TEST_UNIT_KERNELS_THREADRANKS_H

#include "runtime/kernels/RankSum.h"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace cairn::kernels::testing {

/// R processes (replicas or devices) as R threads: each RankSum call waits
/// for every rank's values, and each gets their sum in rank order, as
/// MpiTransport's sumInRankOrder does.
class ThreadRanks {
public:
  explicit ThreadRanks(int ranks) : parts(ranks) {}

  RankSum forRank(int rank) {
    return [this, rank](double *values, int64_t count) {
      std::unique_lock<std::mutex> lock(mutex);
      parts[rank].assign(values, values + count);
      const int generation = generations;
      if (++arrived == int(parts.size())) {
        sums.assign(count, 0.0);
        for (const std::vector<double> &part : parts)
          for (int64_t i = 0; i < count; ++i)
            sums[i] += part[i];
        arrived = 0;
        ++generations;
        changed.notify_all();
      } else {
        changed.wait(lock, [&] { return generations != generation; });
      }
      // The next sum cannot end before this rank has joined it.
      std::copy(sums.begin(), sums.begin() + count, values);
      ++calls;
    };
  }

  /// Runs f(rank, forRank(rank)) for every rank, each on a thread of its
  /// own, and waits for all of them.
  template <typename F> void run(F f) {
    std::vector<std::thread> threads;
    for (int rank = 0; rank < int(parts.size()); ++rank)
      threads.emplace_back([&, rank] { f(rank, forRank(rank)); });
    for (std::thread &thread : threads)
      thread.join();
  }

  int callsMade() const { return calls; }

private:
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::vector<double>> parts;
  std::vector<double> sums;
  int arrived = 0, generations = 0, calls = 0;
};

} // namespace cairn::kernels::testing

#endif // CAIRN_TEST_UNIT_KERNELS_THREADRANKS_H
