//===- KernelProfileTest.cpp - Per-kernel times of the CPU step -----------===//
#include "runtime/KernelProfile.h"
#include "runtime/Program.h"

#include "TestFiles.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

using namespace cairn::runtime;
using namespace cairn::runtime::test;

namespace {

void sleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

/// One step of two kernels: kernel 0 takes about `ms` milliseconds, kernel 1 none.
void step(KernelProfile &profile, int ms) {
  profile.enter(0);
  sleepMs(ms);
  profile.enter(1);
  profile.endStep();
}

TEST(KernelProfile, TimeUntilTheNextKernelIsTheKernels) {
  KernelProfile profile(2);
  step(profile, 20);
  ASSERT_EQ(profile.steps(), 1u);
  EXPECT_GE(profile.medianSeconds(0), 0.020);
  EXPECT_LT(profile.medianSeconds(1), profile.medianSeconds(0) / 4);
  EXPECT_DOUBLE_EQ(profile.medianStepSeconds(),
                   profile.medianSeconds(0) + profile.medianSeconds(1));
}

TEST(KernelProfile, MedianOverSteps) {
  // 5, 80, 30 ms: the median is the middle step's, neither outlier's.
  KernelProfile profile(2);
  for (int ms : {5, 80, 30})
    step(profile, ms);
  ASSERT_EQ(profile.steps(), 3u);
  EXPECT_GE(profile.medianSeconds(0), 0.030);
  EXPECT_LT(profile.medianSeconds(0), 0.080);
  EXPECT_GE(profile.medianStepSeconds(), 0.030);
  EXPECT_LT(profile.medianStepSeconds(), 0.080);
  // An even count: the mean of the middle two.
  step(profile, 5);
  EXPECT_LT(profile.medianSeconds(0), 0.080);
  EXPECT_GE(profile.medianSeconds(0), (0.005 + 0.030) / 2);
}

TEST(KernelProfile, NoStepsNoTime) {
  KernelProfile profile(3);
  EXPECT_EQ(profile.steps(), 0u);
  EXPECT_EQ(profile.medianSeconds(2), 0.0);
  EXPECT_EQ(profile.medianStepSeconds(), 0.0);
}

TEST(KernelProfile, WritesEveryKernelOfTheSpec) {
  ProgramSpec spec;
  spec.model = "M";
  spec.sourceFile = "m.cairn";
  spec.batch = 4;
  spec.trainKernels = {{"fc.linear", "cairn.kernel.linear", "m.cairn:3:5"},
                       {"loss", "cairn.kernel.cross_entropy", "m.cairn:9:12"}};
  KernelProfile profile(2);
  step(profile, 2);
  TempDir dir;
  ASSERT_TRUE(writeKernelProfile(dir.file("p.json"), spec, profile, 2).ok());
  nlohmann::json json = nlohmann::json::parse(readBytes(dir.file("p.json")));
  EXPECT_EQ(json["format"], "cairn-kernel-profile");
  EXPECT_EQ(json["version"], 1);
  EXPECT_EQ(json["model"], "M");
  EXPECT_EQ(json["batch"], 4);
  EXPECT_EQ(json["threads"], 2);
  EXPECT_EQ(json["steps"], 1);
  ASSERT_EQ(json["kernels"].size(), 2u);
  EXPECT_EQ(json["kernels"][0]["name"], "fc.linear");
  EXPECT_EQ(json["kernels"][1]["kind"], "cairn.kernel.cross_entropy");
  EXPECT_EQ(json["kernels"][1]["loc"], "m.cairn:9:12");
  EXPECT_GE(json["kernels"][0]["seconds"].get<double>(), 0.002);
  // An unwritable path is an error naming it.
  absl::Status status = writeKernelProfile(dir.file("no/such/p.json"), spec, profile, 2);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("no/such/p.json"), std::string::npos);
}

} // namespace
