//===- Metrics.h - The end-of-run report, printed and as JSON ----*- C++ -*-===//
//
// --metrics FILE writes one JSON object (atomically):
//   model, command          the spec's model name; "train" or "eval"
//   epochs, steps           epochs begun and steps run (0 for eval), skipped
//                           ones included
//   skipped_steps, loss_scale
//                           train with a loss scaler (LossScaler.h): the steps
//                           of this run skipped for an inf or NaN gradient,
//                           and the scale the next step would take; null
//                           without one
//   seconds                 wall time of the training loop (eval: of the
//                           evaluation); loading, saving and the evaluation
//                           after training are not counted
//   examples_per_second     examples processed per one of those seconds
//   final_loss              mean training loss of the last epoch (null for eval)
//   test_accuracy           fraction in [0, 1]; null without test data
//   test_loss               mean cross-entropy over the test set; null likewise
//   planned_arena_bytes     spec.arenaBytes
//   measured_peak_bytes     the arena's high-water mark (Arena.h)
//   peak_rss_bytes          the process's peak resident set since exec (VmHWM)
//   rss_after_warmup_bytes, rss_at_end_bytes
//                           train: the resident set after the warm-up steps
//                           (kWarmupSteps, or all when fewer) and after the
//                           last one (VmRSS); the step allocates nothing, so
//                           the two stay level over any number of steps
//                           (null for eval)
//   blas_core, threads      the BLAS core and the number of threads it uses
//                           (null on CUDA)
//   backend, device         "cpu" or "cuda"; what ran the steps ("OpenBLAS
//                           core SkylakeX, 2 threads", "NVIDIA H100 ...
//                           (sm_90), cuDNN 9.19.0, cuBLASLt 13.1.0")
//   device_arena_bytes      CUDA: the arena's one cudaMalloc (planned size);
//                           null on the CPU
//   device_overhead_bytes   CUDA: device memory the process holds besides
//                           the arena (context, cuBLAS, cuDNN, graphs), from
//                           cudaMemGetInfo; null on the CPU
//   seed                    --seed
//   devices_wait_seconds    train on a model split across devices: by
//                           device, the seconds of the training loop it
//                           spent blocked sending, receiving and waiting for
//                           the step's loss (Transport::waitSeconds): the
//                           pipeline's bubble and the copies; null otherwise
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_METRICS_H
#define CAIRN_RUNTIME_METRICS_H

#include "absl/status/status.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace cairn::runtime {

struct RunReport {
  std::string model;
  std::string command;
  int64_t epochs = 0;
  int64_t steps = 0;
  std::optional<int64_t> skippedSteps;
  std::optional<double> lossScale;
  double seconds = 0;
  double examplesPerSecond = 0;
  std::optional<double> finalLoss;
  std::optional<double> testAccuracy;
  std::optional<double> testLoss;
  int64_t testExamples = 0; // for the printed summary only
  size_t plannedArenaBytes = 0;
  size_t measuredPeakBytes = 0;
  int64_t peakRssBytes = 0;
  std::optional<int64_t> rssAfterWarmupBytes;
  std::optional<int64_t> rssAtEndBytes;
  std::optional<std::string> blasCore;
  std::optional<int> threads;
  std::string backend = "cpu";
  std::string device;
  std::optional<int64_t> deviceArenaBytes;
  std::optional<int64_t> deviceOverheadBytes;
  uint64_t seed = 0;
  /// Each rank's seconds blocked on the others during training: a
  /// partitioned model's devices, or data-parallel replicas.
  std::optional<std::vector<double>> devicesWaitSeconds;
  /// Data-parallel replicas the run trained with (1: one process).
  int replicas = 1;
  /// Whether the replicas' batch norm used the whole batch's statistics.
  bool syncBatchNorm = false;
};

/// The process's peak resident set size so far, in bytes.
int64_t peakRssBytes();
/// Steps after which the resident set is first read: by then the BLAS has
/// started its threads and the first epoch boundary has passed on small data.
constexpr int64_t kWarmupSteps = 20;

/// The process's resident set size now, in bytes (0 when unknown).
int64_t currentRssBytes();

/// "1.50 MiB"; plain bytes below 1 KiB.
std::string formatBytes(double bytes);

/// The report as the JSON object described above (no trailing newline).
std::string metricsJson(const RunReport &report);

/// Writes metricsJson and a newline to `path` atomically.
absl::Status writeMetrics(const std::string &path, const RunReport &report);

/// The human summary: accuracy, loss, time, memory.
void printSummary(std::FILE *out, const RunReport &report);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_METRICS_H
