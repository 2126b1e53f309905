//===- LossScalerTest.cpp - GradScaler's scale, step by step --------------===//
#include "runtime/LossScaler.h"

#include <gtest/gtest.h>

#include <limits>

using namespace cairn::runtime;

namespace {

TEST(LossScalerTest, ParsesEveryMode) {
  absl::StatusOr<LossScaleSetting> dynamic = parseLossScale("dynamic");
  ASSERT_TRUE(dynamic.ok());
  EXPECT_EQ(dynamic->mode, LossScaleMode::Dynamic);
  EXPECT_EQ(dynamic->initialScale, 65536.0f);
  absl::StatusOr<LossScaleSetting> from = parseLossScale("dynamic:1e30");
  ASSERT_TRUE(from.ok());
  EXPECT_EQ(from->mode, LossScaleMode::Dynamic);
  EXPECT_EQ(from->initialScale, 1e30f);
  absl::StatusOr<LossScaleSetting> fixed = parseLossScale("128");
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(fixed->mode, LossScaleMode::Fixed);
  EXPECT_EQ(fixed->initialScale, 128.0f);
  absl::StatusOr<LossScaleSetting> none = parseLossScale("none");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->mode, LossScaleMode::None);
  EXPECT_EQ(none->initialScale, 1.0f);
  EXPECT_EQ(describeLossScale(*from), "dynamic:1e+30");
  EXPECT_EQ(describeLossScale(*fixed), "fixed 128");
}

TEST(LossScalerTest, RefusesWhatIsNoScale) {
  for (const char *bad :
       {"", "0", "-4", "inf", "nan", "1e39", "1e-50", "dynamic:", "dynamic:0",
        "Dynamic", "static", "12x"}) {
    absl::StatusOr<LossScaleSetting> setting = parseLossScale(bad);
    ASSERT_FALSE(setting.ok()) << bad;
    EXPECT_EQ(setting.status().message(),
              "--loss-scale expects dynamic, dynamic:S, none or a scale N (S "
              "and N positive "
              "finite float32 numbers), got '" +
                  std::string(bad) + "'");
  }
}

// torch.amp.GradScaler's defaults: halve on a skipped step (and start
// counting again), double after 2000 steps in a row without one.
TEST(LossScalerTest, DynamicMovesAsGradScaler) {
  LossScaler scaler(LossScaleSetting{});
  EXPECT_EQ(scaler.scale(), 65536.0f);
  scaler.update(/*foundInf=*/true);
  EXPECT_EQ(scaler.scale(), 32768.0f);
  for (int i = 0; i < 1999; ++i)
    scaler.update(false);
  EXPECT_EQ(scaler.scale(), 32768.0f);
  EXPECT_EQ(scaler.state().growthTracker, 1999);
  scaler.update(false);
  EXPECT_EQ(scaler.scale(), 65536.0f);
  EXPECT_EQ(scaler.state().growthTracker, 0);
  // A skip resets the count: 1999 good steps, a skip, 1999 more: no growth.
  for (int i = 0; i < 1999; ++i)
    scaler.update(false);
  scaler.update(true);
  for (int i = 0; i < 1999; ++i)
    scaler.update(false);
  EXPECT_EQ(scaler.scale(), 32768.0f);
  EXPECT_EQ(scaler.state().skippedSteps, 2);
}

TEST(LossScalerTest, DoesNotGrowPastFloat32) {
  LossScaler scaler(
      {LossScaleMode::Dynamic, std::numeric_limits<float>::max()});
  for (int i = 0; i < LossScaler::kGrowthInterval; ++i)
    scaler.update(false);
  EXPECT_EQ(scaler.scale(), std::numeric_limits<float>::max());
  EXPECT_EQ(scaler.state().growthTracker, 0);
}

TEST(LossScalerTest, FixedAndNoneKeepTheirScaleAndCountSkips) {
  LossScaler fixed({LossScaleMode::Fixed, 1024});
  LossScaler none({LossScaleMode::None, 1});
  for (int i = 0; i < 2500; ++i) {
    fixed.update(i % 2 == 0);
    none.update(i == 7);
  }
  EXPECT_EQ(fixed.scale(), 1024.0f);
  EXPECT_EQ(fixed.state().skippedSteps, 1250);
  EXPECT_EQ(none.scale(), 1.0f);
  EXPECT_EQ(none.state().skippedSteps, 1);
}

TEST(LossScalerTest, ResumesTheSavedState) {
  LossScaleState saved{512, 1234, 9};
  LossScaler dynamic(LossScaleSetting{});
  dynamic.resume(saved);
  EXPECT_EQ(dynamic.scale(), 512.0f);
  for (int i = 0; i < 766; ++i)
    dynamic.update(false);
  EXPECT_EQ(dynamic.scale(), 1024.0f);
  EXPECT_EQ(dynamic.state().skippedSteps, 9);
  // A fixed scale stays what the flag says; the count of skips goes on.
  LossScaler fixed({LossScaleMode::Fixed, 8});
  fixed.resume(saved);
  EXPECT_EQ(fixed.scale(), 8.0f);
  EXPECT_EQ(fixed.state().skippedSteps, 9);
}

} // namespace
