//===- LrScheduleTest.cpp - The lr of each optimizer step -----------------===//
//
// The closed forms at the points where they are known exactly (agreement
// with torch.optim.lr_scheduler over whole runs is
// test/reference/check_lr_schedules.py's).
//
//===----------------------------------------------------------------------===//
#include "runtime/LrSchedule.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace cairn::runtime;

namespace {

LrScheduler stepLr(int64_t stepSize, double gamma) {
  LrScheduler s;
  s.kind = LrSchedulerKind::StepLR;
  s.stepSize = stepSize;
  s.gamma = gamma;
  return s;
}

LrScheduler cosine(int64_t tMax, double etaMin) {
  LrScheduler s;
  s.kind = LrSchedulerKind::CosineAnnealingLR;
  s.tMax = tMax;
  s.etaMin = etaMin;
  return s;
}

LrScheduler linear(double start, double end, int64_t total) {
  LrScheduler s;
  s.kind = LrSchedulerKind::LinearLR;
  s.startFactor = start;
  s.endFactor = end;
  s.totalIters = total;
  return s;
}

TEST(LrSchedule, NoneIsConstant) {
  EXPECT_EQ(scheduledLr(0.1, {}, 0), 0.1);
  EXPECT_EQ(scheduledLr(0.1, {}, 1000000), 0.1);
}

TEST(LrSchedule, StepLRDropsByGammaEveryStepSize) {
  std::vector<LrScheduler> s = {stepLr(3, 0.5)};
  EXPECT_EQ(scheduledLr(0.8, s, 0), 0.8);
  EXPECT_EQ(scheduledLr(0.8, s, 2), 0.8);
  EXPECT_EQ(scheduledLr(0.8, s, 3), 0.4);
  EXPECT_EQ(scheduledLr(0.8, s, 7), 0.2);
}

TEST(LrSchedule, CosineAnnealsToEtaMinAndBack) {
  std::vector<LrScheduler> s = {cosine(10, 0.01)};
  EXPECT_DOUBLE_EQ(scheduledLr(1.0, s, 0), 1.0);
  EXPECT_DOUBLE_EQ(scheduledLr(1.0, s, 5), 0.01 + 0.99 * 0.5);
  EXPECT_DOUBLE_EQ(scheduledLr(1.0, s, 10), 0.01);
  // Past T_max it rises again, as torch's does (a period of 2 T_max).
  EXPECT_DOUBLE_EQ(scheduledLr(1.0, s, 15), scheduledLr(1.0, s, 5));
  EXPECT_DOUBLE_EQ(scheduledLr(1.0, s, 20), 1.0);
}

TEST(LrSchedule, LinearRampsThenHolds) {
  std::vector<LrScheduler> s = {linear(0.25, 1.0, 4)};
  EXPECT_DOUBLE_EQ(scheduledLr(0.01, s, 0), 0.0025);
  EXPECT_DOUBLE_EQ(scheduledLr(0.01, s, 2), 0.00625);
  EXPECT_DOUBLE_EQ(scheduledLr(0.01, s, 4), 0.01);
  EXPECT_DOUBLE_EQ(scheduledLr(0.01, s, 400), 0.01);
}

TEST(LrSchedule, WarmUpHandsOverAtItsTotalIters) {
  // SequentialLR([LinearLR(total_iters=4), CosineAnnealingLR(T_max=10)],
  // milestones=[4]): the cosine counts from 0 at step 4.
  std::vector<LrScheduler> s = {linear(0.25, 1.0, 4), cosine(10, 1e-4)};
  EXPECT_DOUBLE_EQ(scheduledLr(0.01, s, 3), 0.008125);
  EXPECT_DOUBLE_EQ(scheduledLr(0.01, s, 4), 0.01);
  EXPECT_DOUBLE_EQ(scheduledLr(0.01, s, 5),
                   1e-4 + (0.01 - 1e-4) * (1 + std::cos(M_PI / 10)) / 2);
  EXPECT_DOUBLE_EQ(scheduledLr(0.01, s, 14), 1e-4);
}

} // namespace
