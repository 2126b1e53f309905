//===- BatchFitTest.cpp - The --fit search ---------------------------------===//

#include "passes/BatchFit.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <map>

using namespace cairn;

namespace {

constexpr int64_t kMaxBatch = int64_t(1) << 30;

/// A model whose arena is `fixed + perExample * batch`, its own batch
/// `modelBatch`, counting the plans made.
struct LinearModel {
  int64_t fixed, perExample, modelBatch;
  std::map<int64_t, int> plans;

  BatchProbe probe() {
    return [this](int64_t batch, bool first) -> std::optional<PlannedBatch> {
      if (batch == 0)
        batch = modelBatch;
      EXPECT_EQ(first, plans.empty()) << "only the first plan is the first";
      ++plans[batch];
      return PlannedBatch{batch, fixed + perExample * batch};
    };
  }
};

TEST(BatchFitTest, FindsTheLargestBatchThatFits) {
  LinearModel model{1000, 100, 64, {}};
  // 1000 + 100 * b <= 50000  <=>  b <= 490.
  std::optional<BatchFit> fit =
      findLargestBatch(0, 50000, kMaxBatch, model.probe());
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->batch, 64);
  EXPECT_EQ(fit->arenaBytes, 7400);
  EXPECT_TRUE(fit->fits);
  EXPECT_EQ(fit->largestFitting, 490);
  EXPECT_EQ(fit->largestFittingArena, 50000);
  EXPECT_EQ(fit->smallestFailing, 491);
  EXPECT_EQ(fit->smallestFailingArena, 50100);
  // 64, 128, 256 (doubling: the line through 64 and 128 meets 50000 at
  // 490, past 256), 491 (one past where the line through 128 and 256 meets
  // it), 490: five plans, none twice, where bisection took eleven.
  for (auto [batch, count] : model.plans)
    EXPECT_EQ(count, 1) << "batch " << batch << " planned twice";
  EXPECT_EQ(model.plans.size(), 5u);
  EXPECT_EQ(model.plans.count(491), 1u);
}

/// An arena that grows faster than the batch (quadratically), where the
/// line through two probes always aims short: the search must still end
/// at the exact answer, in no more plans than doubling and bisecting (8,
/// 10 and 17 here, where those took up to 25).
TEST(BatchFitTest, ACurvedArenaStillEndsAtTheAnswer) {
  for (int64_t budget : {int64_t(1) << 20, int64_t(123456789), int64_t(5000)}) {
    std::map<int64_t, int> plans;
    auto arena = [](int64_t b) { return 3000 + b * b; };
    std::optional<BatchFit> fit = findLargestBatch(
        8, budget, kMaxBatch, [&](int64_t batch, bool) -> std::optional<PlannedBatch> {
          ++plans[batch];
          return PlannedBatch{batch, arena(batch)};
        });
    ASSERT_TRUE(fit);
    int64_t expected = 0;
    while (arena(expected + 1) <= budget)
      ++expected;
    EXPECT_EQ(fit->largestFitting, expected) << "budget " << budget;
    EXPECT_EQ(fit->smallestFailing, expected + 1) << "budget " << budget;
    for (auto [batch, count] : plans)
      EXPECT_EQ(count, 1) << "batch " << batch << " planned twice";
    EXPECT_LE(plans.size(), 20u) << "budget " << budget;
  }
}

TEST(BatchFitTest, SearchesDownWhenTheModelBatchDoesNotFit) {
  LinearModel model{1000, 100, 256, {}};
  std::optional<BatchFit> fit = findLargestBatch(256, 5000, kMaxBatch,
                                                 model.probe());
  ASSERT_TRUE(fit);
  EXPECT_FALSE(fit->fits);
  EXPECT_EQ(fit->largestFitting, 40); // 1000 + 4000
  EXPECT_EQ(fit->smallestFailing, 41);
  // Down from 256 by the line through the origin (48, 41, 35: the fixed
  // bytes make it aim high), then through 35 and 41: 40. Five plans where
  // bisecting 256 took nine.
  EXPECT_EQ(model.plans.size(), 5u);
}

TEST(BatchFitTest, NoBatchFits) {
  LinearModel model{10000, 100, 8, {}};
  std::optional<BatchFit> fit = findLargestBatch(0, 5000, kMaxBatch, model.probe());
  ASSERT_TRUE(fit);
  EXPECT_FALSE(fit->fits);
  EXPECT_EQ(fit->largestFitting, 0);
  EXPECT_EQ(fit->smallestFailing, 1);
  EXPECT_EQ(fit->smallestFailingArena, 10100);
  std::string text;
  llvm::raw_string_ostream os(text);
  printBatchFit(*fit, "m.cairn", kMaxBatch, os);
  EXPECT_NE(text.find("does not fit"), std::string::npos) << text;
  EXPECT_NE(text.find("no batch size fits: batch 1 needs 9.86 KiB"),
            std::string::npos)
      << text;
}

TEST(BatchFitTest, EveryBatchUpToTheLimitFits) {
  // Up to the limit, the limit itself included, whatever batch the doubling
  // starts from.
  LinearModel model{0, 1, 3, {}};
  std::optional<BatchFit> fit =
      findLargestBatch(0, int64_t(1) << 40, kMaxBatch, model.probe());
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->largestFitting, kMaxBatch);
  EXPECT_EQ(fit->smallestFailing, kMaxBatch + 1);
  EXPECT_EQ(model.plans.count(kMaxBatch), 1u) << "the limit itself is planned";
  std::string text;
  llvm::raw_string_ostream os(text);
  printBatchFit(*fit, "m.cairn", kMaxBatch, os);
  EXPECT_NE(text.find("every batch size up to 1073741824 fits"),
            std::string::npos)
      << text;
}

TEST(BatchFitTest, TheLimitItselfMayFail) {
  // Fits below 2^30 only: the search must not claim the limit.
  LinearModel model{0, 1, 3, {}};
  std::optional<BatchFit> fit =
      findLargestBatch(0, kMaxBatch - 1, kMaxBatch, model.probe());
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->largestFitting, kMaxBatch - 1);
  EXPECT_EQ(fit->smallestFailing, kMaxBatch);
}

TEST(BatchFitTest, AFailedPlanStopsTheSearch) {
  int plans = 0;
  std::optional<BatchFit> fit = findLargestBatch(
      16, 1 << 20, kMaxBatch,
      [&](int64_t batch, bool) -> std::optional<PlannedBatch> {
        if (++plans == 3)
          return std::nullopt;
        return PlannedBatch{batch, batch};
      });
  EXPECT_FALSE(fit);
  EXPECT_EQ(plans, 3);
}

TEST(BatchFitTest, PrintsTheAnswer) {
  LinearModel model{1000, 100, 64, {}};
  std::optional<BatchFit> fit =
      findLargestBatch(0, 50000, kMaxBatch, model.probe());
  ASSERT_TRUE(fit);
  std::string text;
  llvm::raw_string_ostream os(text);
  printBatchFit(*fit, "m.cairn", kMaxBatch, os);
  EXPECT_EQ(text, "model m.cairn at batch 64: arena 7.23 KiB (7400 bytes) fits "
                  "in 48.83 KiB (50000 bytes) per device\n"
                  "largest batch that fits: 490 (arena 48.83 KiB; batch 491 "
                  "needs 48.93 KiB)\n");
}

} // namespace
