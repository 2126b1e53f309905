//===- ReportingTest.cpp - Arena peak, metrics, progress, BLAS restart ----===//
#include "runtime/Arena.h"
#include "runtime/BlasSetup.h"
#include "runtime/Metrics.h"
#include "runtime/Progress.h"

#include "TestFiles.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

using namespace cairn::runtime;
using namespace cairn::runtime::test;

namespace {

/// Everything written to the temporary file `out`, which is closed.
std::string readAndClose(std::FILE *out) {
  std::rewind(out);
  std::string text;
  char buffer[256];
  while (std::fgets(buffer, sizeof(buffer), out))
    text += buffer;
  std::fclose(out);
  return text;
}

TEST(Arena, AlignedAndFilledWithThePattern) {
  absl::StatusOr<Arena> arena = Arena::allocate(1000);
  ASSERT_TRUE(arena.ok()) << arena.status();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(arena->data()) % 256, 0u);
  EXPECT_EQ(arena->size(), 1000u);
  for (size_t i = 0; i < 1000; ++i)
    ASSERT_EQ(arena->data()[i], Arena::kPattern);
  EXPECT_EQ(arena->measuredPeakBytes(), 0u);
  EXPECT_TRUE(Arena::allocate(0).ok());
  EXPECT_FALSE(Arena::allocate(SIZE_MAX - 8).ok());
}

TEST(Arena, LargeArenasStartOnAHugePage) {
  // So that the transparent huge pages it asks for back all of it.
  absl::StatusOr<Arena> arena = Arena::allocate(3 * Arena::kHugePage + 5);
  ASSERT_TRUE(arena.ok()) << arena.status();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(arena->data()) % Arena::kHugePage, 0u);
  EXPECT_EQ(arena->size(), 3 * Arena::kHugePage + 5);
  EXPECT_EQ(arena->data()[3 * Arena::kHugePage + 4], Arena::kPattern);
  EXPECT_EQ(arena->measuredPeakBytes(), 0u);
}

TEST(Arena, PeakIsTheHighestChangedByte) {
  absl::StatusOr<Arena> arena = Arena::allocate(1000);
  ASSERT_TRUE(arena.ok());
  for (size_t at : {0, 5, 8, 63, 64, 500, 997, 999}) {
    arena->data()[at] = 0;
    EXPECT_EQ(arena->measuredPeakBytes(), at + 1) << at;
  }
}

RunReport sampleReport() {
  RunReport report;
  report.model = "MLP";
  report.command = "train";
  report.epochs = 2;
  report.steps = 1874;
  report.seconds = 3.5;
  report.examplesPerSecond = 34000;
  report.finalLoss = 0.25;
  report.testAccuracy = 0.875;
  report.testLoss = 0.375;
  report.testExamples = 10000;
  report.plannedArenaBytes = 3 << 20;
  report.measuredPeakBytes = 2 << 20;
  report.peakRssBytes = peakRssBytes();
  report.blasCore = "SkylakeX";
  report.threads = 4;
  report.seed = 7;
  return report;
}

TEST(Metrics, CudaRunsReportDeviceMemoryAndNoBlas) {
  RunReport report = sampleReport();
  report.backend = "cuda";
  report.device = "NVIDIA H100 (sm_90)";
  report.blasCore.reset();
  report.threads.reset();
  report.deviceArenaBytes = 3 << 20;
  report.deviceOverheadBytes = 500 << 20;
  nlohmann::json json = nlohmann::json::parse(metricsJson(report));
  EXPECT_EQ(json["backend"], "cuda");
  EXPECT_EQ(json["device"], "NVIDIA H100 (sm_90)");
  EXPECT_TRUE(json["blas_core"].is_null());
  EXPECT_TRUE(json["threads"].is_null());
  EXPECT_EQ(json["device_arena_bytes"], 3 << 20);
  EXPECT_EQ(json["device_overhead_bytes"], 500 << 20);
}

TEST(Metrics, JsonHasEveryField) {
  nlohmann::json json = nlohmann::json::parse(metricsJson(sampleReport()));
  EXPECT_EQ(json["model"], "MLP");
  EXPECT_EQ(json["command"], "train");
  EXPECT_EQ(json["epochs"], 2);
  EXPECT_EQ(json["steps"], 1874);
  EXPECT_EQ(json["seconds"], 3.5);
  EXPECT_EQ(json["examples_per_second"], 34000.0);
  EXPECT_EQ(json["final_loss"], 0.25);
  EXPECT_EQ(json["test_accuracy"], 0.875);
  EXPECT_EQ(json["test_loss"], 0.375);
  EXPECT_EQ(json["planned_arena_bytes"], 3 << 20);
  EXPECT_EQ(json["measured_peak_bytes"], 2 << 20);
  EXPECT_GT(json["peak_rss_bytes"].get<int64_t>(), 1 << 20);
  EXPECT_EQ(json["blas_core"], "SkylakeX");
  EXPECT_EQ(json["threads"], 4);
  EXPECT_EQ(json["seed"], 7);
  // Eval runs have no steps to watch: no resident-set readings.
  EXPECT_TRUE(json["rss_after_warmup_bytes"].is_null());
  EXPECT_TRUE(json["rss_at_end_bytes"].is_null());
  // A CPU run has no device memory to report.
  EXPECT_EQ(json["backend"], "cpu");
  EXPECT_TRUE(json["device_arena_bytes"].is_null());
  EXPECT_TRUE(json["device_overhead_bytes"].is_null());
  // A step without a loss scaler: no skips, no scale.
  EXPECT_TRUE(json["skipped_steps"].is_null());
  EXPECT_TRUE(json["loss_scale"].is_null());
  // One device: no waiting on others.
  EXPECT_TRUE(json["devices_wait_seconds"].is_null());
  // One process: no replicas.
  EXPECT_EQ(json["replicas"], 1);
  EXPECT_EQ(json["sync_batchnorm"], false);
  EXPECT_EQ(json.size(), 26u);
  RunReport train = sampleReport();
  train.devicesWaitSeconds = std::vector<double>{0.5, 1.25};
  train.replicas = 2;
  EXPECT_EQ(nlohmann::json::parse(metricsJson(train))["devices_wait_seconds"],
            nlohmann::json::array({0.5, 1.25}));
  EXPECT_EQ(nlohmann::json::parse(metricsJson(train))["replicas"], 2);
  train.syncBatchNorm = true;
  EXPECT_EQ(nlohmann::json::parse(metricsJson(train))["sync_batchnorm"], true);
  train.syncBatchNorm = false;
  train.replicas = 1;
  train.devicesWaitSeconds.reset();
  train.rssAfterWarmupBytes = 5 << 20;
  train.rssAtEndBytes = 6 << 20;
  train.skippedSteps = 3;
  train.lossScale = 8192;
  nlohmann::json trained = nlohmann::json::parse(metricsJson(train));
  EXPECT_EQ(trained["rss_after_warmup_bytes"], 5 << 20);
  EXPECT_EQ(trained["rss_at_end_bytes"], 6 << 20);
  EXPECT_EQ(trained["skipped_steps"], 3);
  EXPECT_EQ(trained["loss_scale"], 8192.0);
}

TEST(Metrics, MissingAndNonFiniteValuesAreNull) {
  RunReport report = sampleReport();
  report.finalLoss = NAN;
  report.testAccuracy.reset();
  report.testLoss.reset();
  nlohmann::json json = nlohmann::json::parse(metricsJson(report));
  EXPECT_TRUE(json["final_loss"].is_null());
  EXPECT_TRUE(json["test_accuracy"].is_null());
  EXPECT_TRUE(json["test_loss"].is_null());
}

TEST(Metrics, WritesAtomicallyOrNotAtAll) {
  TempDir dir;
  ASSERT_TRUE(writeMetrics(dir.file("m.json"), sampleReport()).ok());
  EXPECT_EQ(nlohmann::json::parse(readBytes(dir.file("m.json")))["seed"], 7);
  EXPECT_FALSE(writeMetrics(dir.file("missing/m.json"), sampleReport()).ok());
}

TEST(Metrics, FormatsBytes) {
  EXPECT_EQ(formatBytes(512), "512 bytes");
  EXPECT_EQ(formatBytes(1536), "1.50 KiB");
  EXPECT_EQ(formatBytes(3 << 20), "3.00 MiB");
}

TEST(Progress, FormatsDurations) {
  EXPECT_EQ(formatDuration(0), "0:00");
  EXPECT_EQ(formatDuration(42.4), "0:42");
  EXPECT_EQ(formatDuration(725), "12:05");
  EXPECT_EQ(formatDuration(10931), "3:02:11");
}

TEST(Progress, PlainLinesEveryLogEveryStepsAndPerEpoch) {
  std::FILE *out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  TrainingPlan plan;
  plan.epochs = 2;
  plan.totalSteps = 5;
  plan.batch = 4;
  plan.logEvery = 2;
  Progress progress(out, /*terminal=*/false, plan);
  progress.step(0, 1.0, 0.1);
  progress.step(0, 3.0, 0.1);
  progress.step(0, 5.0, 0.1);
  progress.endEpoch(0);
  EXPECT_EQ(progress.lastEpochMeanLoss(), 3.0);
  progress.step(1, 1.0, 0.1);
  progress.step(1, 2.0, 0.1);
  progress.endEpoch(1);
  EXPECT_EQ(progress.lastEpochMeanLoss(), 1.5);
  std::string text = readAndClose(out);
  EXPECT_NE(text.find("epoch 1/2  step 2/5  loss 2.0000 (mean of 2 steps)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("epoch 1/2 done  loss 3.0000"), std::string::npos) << text;
  EXPECT_NE(text.find("epoch 2/2  step 4/5  loss 3.0000 (mean of 2 steps)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("epoch 2/2 done  loss 1.5000"), std::string::npos) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_EQ(text.find("lr"), std::string::npos)
      << "no schedule, no lr: " << text;
}

TEST(Progress, ScheduledLrIsTheLastStepsOfTheLine) {
  std::FILE *out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  TrainingPlan plan;
  plan.totalSteps = 2;
  plan.logEvery = 2;
  plan.showLr = true;
  Progress progress(out, /*terminal=*/false, plan);
  progress.step(0, 1.0, 0.25);
  progress.step(0, 3.0, 0.0625);
  progress.endEpoch(0);
  std::string text = readAndClose(out);
  EXPECT_NE(text.find("step 2/2  loss 2.0000 (mean of 2 steps)  lr 0.0625  "),
            std::string::npos)
      << text;
}

TEST(BlasSetup, RestartsOnlyForAnUnrecognisedAvx512Cpu) {
  EXPECT_TRUE(shouldRestartForBlas(nullptr, nullptr, true, "Haswell"));
  EXPECT_TRUE(shouldRestartForBlas("0", nullptr, true, "Haswell"));
  EXPECT_TRUE(shouldRestartForBlas("", nullptr, true, "Prescott"));
  EXPECT_FALSE(shouldRestartForBlas("1", nullptr, true, "Haswell"));
  EXPECT_FALSE(shouldRestartForBlas(nullptr, "Haswell", true, "Haswell"));
  EXPECT_FALSE(shouldRestartForBlas(nullptr, nullptr, false, "Haswell"));
  for (const char *core : {"SkylakeX", "Cooperlake", "SapphireRapids", "skylakex"})
    EXPECT_FALSE(shouldRestartForBlas(nullptr, nullptr, true, core)) << core;
}

} // namespace
