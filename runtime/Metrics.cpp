//===- Metrics.cpp - The end-of-run report, printed and as JSON -----------===//
#include "runtime/Metrics.h"

#include "runtime/File.h"

#include "absl/strings/str_format.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>
#include <string>

#include <sys/resource.h>

namespace cairn::runtime {

namespace {

/// A "Name: N kB" line of /proc/self/status, in bytes; nullopt when absent.
std::optional<int64_t> readStatusBytes(const char *field) {
  std::FILE *status = std::fopen("/proc/self/status", "r");
  if (!status)
    return std::nullopt;
  std::string format = std::string(field) + ": %lld kB";
  char line[256];
  long long kib = -1;
  while (std::fgets(line, sizeof line, status))
    if (std::sscanf(line, format.c_str(), &kib) == 1)
      break;
  std::fclose(status);
  if (kib < 0)
    return std::nullopt;
  return static_cast<int64_t>(kib) * 1024;
}

} // namespace

int64_t peakRssBytes() {
  // VmHWM starts afresh at exec; getrusage's ru_maxrss does not (it keeps the
  // peak of the process that forked us, e.g. a 600 MB Python driver).
  if (std::optional<int64_t> bytes = readStatusBytes("VmHWM"))
    return *bytes;
  struct rusage usage;
  if (::getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return static_cast<int64_t>(usage.ru_maxrss) * 1024; // Linux reports KiB
}

int64_t currentRssBytes() { return readStatusBytes("VmRSS").value_or(0); }

std::string formatBytes(double bytes) {
  const char *units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024)
    return absl::StrFormat("%.0f bytes", bytes);
  int unit = -1;
  while (bytes >= 1024 && unit < 3) {
    bytes /= 1024;
    ++unit;
  }
  return absl::StrFormat("%.2f %s", bytes, units[unit]);
}

std::string metricsJson(const RunReport &report) {
  auto orNull = [](const std::optional<double> &value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  nlohmann::ordered_json json = {
      {"model", report.model},
      {"command", report.command},
      {"epochs", report.epochs},
      {"steps", report.steps},
      {"skipped_steps",
       report.skippedSteps ? nlohmann::json(*report.skippedSteps) : nlohmann::json(nullptr)},
      {"loss_scale", orNull(report.lossScale)},
      {"seconds", report.seconds},
      {"examples_per_second", report.examplesPerSecond},
      {"final_loss", orNull(report.finalLoss)},
      {"test_accuracy", orNull(report.testAccuracy)},
      {"test_loss", orNull(report.testLoss)},
      {"planned_arena_bytes", report.plannedArenaBytes},
      {"measured_peak_bytes", report.measuredPeakBytes},
      {"peak_rss_bytes", report.peakRssBytes},
      {"rss_after_warmup_bytes", report.rssAfterWarmupBytes
                                         ? nlohmann::json(*report.rssAfterWarmupBytes)
                                         : nlohmann::json(nullptr)},
      {"rss_at_end_bytes", report.rssAtEndBytes ? nlohmann::json(*report.rssAtEndBytes)
                                                : nlohmann::json(nullptr)},
      {"blas_core", report.blasCore ? nlohmann::json(*report.blasCore) : nlohmann::json(nullptr)},
      {"threads", report.threads ? nlohmann::json(*report.threads) : nlohmann::json(nullptr)},
      {"backend", report.backend},
      {"device", report.device},
      {"device_arena_bytes", report.deviceArenaBytes ? nlohmann::json(*report.deviceArenaBytes)
                                                     : nlohmann::json(nullptr)},
      {"device_overhead_bytes", report.deviceOverheadBytes
                                    ? nlohmann::json(*report.deviceOverheadBytes)
                                    : nlohmann::json(nullptr)},
      {"seed", report.seed},
      {"replicas", report.replicas},
      {"sync_batchnorm", report.syncBatchNorm},
      {"devices_wait_seconds", report.devicesWaitSeconds
                                   ? nlohmann::json(*report.devicesWaitSeconds)
                                   : nlohmann::json(nullptr)},
  };
  // nlohmann writes a diverged run's NaN loss as null; `replace` keeps a
  // model name with bad UTF-8 from throwing.
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

absl::Status writeMetrics(const std::string &path, const RunReport &report) {
  std::string text = metricsJson(report) + "\n";
  return writeFileAtomically(path, {text});
}

void printSummary(std::FILE *out, const RunReport &report) {
  if (report.testAccuracy)
    absl::FPrintF(out, "test accuracy %.2f%% (%d examples), test loss %.4f\n",
                  *report.testAccuracy * 100, report.testExamples, *report.testLoss);
  else if (report.testLoss) // a loss other than a classifier's: no accuracy
    absl::FPrintF(out, "test loss %.6g (%d examples)\n", *report.testLoss, report.testExamples);
  if (report.command == "train")
    absl::FPrintF(out, "trained %d steps (%d epochs) in %.1f s, %.0f examples/s\n",
                  report.steps, report.epochs, report.seconds, report.examplesPerSecond);
  if (report.devicesWaitSeconds && report.seconds > 0) {
    std::string shares;
    for (double waited : *report.devicesWaitSeconds)
      shares += absl::StrFormat("%s%.0f%%", shares.empty() ? "" : ", ",
                                100 * waited / report.seconds);
    absl::FPrintF(out, "%s %s of the training time\n",
                  report.replicas > 1 ? "replicas waited (gradient sums, buffers, the loss)"
                                      : "devices waited (sends, receives, the loss)",
                  shares);
  }
  if (report.skippedSteps)
    absl::FPrintF(out,
                  "loss scaling: %d steps skipped for an inf or NaN gradient, scale now %.9g\n",
                  *report.skippedSteps, *report.lossScale);
  if (report.command == "eval")
    absl::FPrintF(out, "evaluated in %.1f s, %.0f examples/s\n", report.seconds,
                  report.examplesPerSecond);
  absl::FPrintF(out, "memory: arena %s planned, %s measured peak; peak RSS %s\n",
                formatBytes(static_cast<double>(report.plannedArenaBytes)),
                formatBytes(static_cast<double>(report.measuredPeakBytes)),
                formatBytes(static_cast<double>(report.peakRssBytes)));
  if (report.deviceArenaBytes && report.deviceOverheadBytes)
    absl::FPrintF(out, "device memory: arena %s, libraries and context %s (%s)\n",
                  formatBytes(static_cast<double>(*report.deviceArenaBytes)),
                  formatBytes(static_cast<double>(*report.deviceOverheadBytes)), report.device);
}

} // namespace cairn::runtime
