//===- StageSplitTest.cpp - The pipeline-stage split against brute force --===//

#include "passes/StageSplit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

using namespace cairn;

namespace {

StageSplitProblem makeProblem(std::vector<int64_t> costs) {
  StageSplitProblem problem;
  problem.opCost = std::move(costs);
  problem.cutCost.assign(problem.opCost.size() + 1, 0);
  problem.allowed.assign(problem.opCost.size() + 1, true);
  return problem;
}

/// The slowest stage of the best split among those `admit` takes (its
/// stages' starts), by trying every split.
std::optional<int64_t> bruteForce(
    const StageSplitProblem &problem, int stages,
    const std::function<bool(const std::vector<int> &)> &admit =
        [](const std::vector<int> &) { return true; }) {
  int n = problem.opCost.size();
  std::optional<int64_t> best;
  std::vector<int> starts = {0};
  std::function<void(int)> search = [&](int next) {
    if (int(starts.size()) == stages) {
      if (!admit(starts))
        return;
      int64_t slowest = 0;
      for (int s = 0; s < stages; ++s) {
        int begin = starts[s], end = s + 1 < stages ? starts[s + 1] : n;
        int64_t cost = 0;
        for (int i = begin; i < end; ++i)
          cost += problem.opCost[i];
        if (begin > 0)
          cost += problem.cutCost[begin];
        if (end < n)
          cost += problem.cutCost[end];
        slowest = std::max(slowest, cost);
      }
      if (!best || slowest < *best)
        best = slowest;
      return;
    }
    for (int b = next; b < n; ++b) {
      if (!problem.allowed[b])
        continue;
      starts.push_back(b);
      search(b + 1);
      starts.pop_back();
    }
  };
  search(1);
  return best;
}

TEST(StageSplitTest, BalancesEqualOps) {
  StageSplitProblem problem = makeProblem({1, 1, 1, 1, 1, 1});
  std::optional<StageSplit> split = splitIntoStages(problem, 3);
  ASSERT_TRUE(split);
  EXPECT_EQ(split->starts, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(split->slowest, 2);
}

TEST(StageSplitTest, AvoidsExpensiveCuts) {
  // Cutting after op 1 is cheapest in ops but moves a large activation.
  StageSplitProblem problem = makeProblem({4, 4, 4, 4});
  problem.cutCost[2] = 10;
  std::optional<StageSplit> split = splitIntoStages(problem, 2);
  ASSERT_TRUE(split);
  EXPECT_NE(split->starts[1], 2);
  EXPECT_EQ(split->slowest, 12);
}

TEST(StageSplitTest, RespectsForbiddenCuts) {
  StageSplitProblem problem = makeProblem({1, 1, 1, 1});
  problem.allowed[1] = problem.allowed[2] = false;
  std::optional<StageSplit> split = splitIntoStages(problem, 2);
  ASSERT_TRUE(split);
  EXPECT_EQ(split->starts, (std::vector<int>{0, 3}));
  problem.allowed[3] = false;
  EXPECT_FALSE(splitIntoStages(problem, 2));
}

TEST(StageSplitTest, TooFewOps) {
  EXPECT_FALSE(splitIntoStages(makeProblem({1, 2}), 3));
  std::optional<StageSplit> one = splitIntoStages(makeProblem({1, 2}), 1);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->slowest, 3);
}

TEST(StageSplitTest, MatchesBruteForce) {
  std::mt19937 random(13);
  for (int trial = 0; trial < 300; ++trial) {
    int n = 1 + random() % 9;
    std::vector<int64_t> costs(n);
    for (int64_t &cost : costs)
      cost = random() % 20;
    StageSplitProblem problem = makeProblem(costs);
    for (int64_t &cost : problem.cutCost)
      cost = random() % 8;
    for (size_t b = 1; b < problem.allowed.size() - 1; ++b)
      problem.allowed[b] = random() % 4 != 0;
    for (int stages = 1; stages <= 4; ++stages) {
      std::optional<StageSplit> split = splitIntoStages(problem, stages);
      std::optional<int64_t> expected = bruteForce(problem, stages);
      ASSERT_EQ(split.has_value(), expected.has_value())
          << "trial " << trial << ", " << stages << " stages";
      if (split) {
        EXPECT_EQ(split->slowest, *expected)
            << "trial " << trial << ", " << stages << " stages";
      }
    }
  }
}

/// A stage's arena as the plans give it, in miniature: its ops' bytes
/// (parameters, saved values), and at its peak the values live across one
/// of its boundaries (received, sent, or between two of its own ops) and its
/// largest op's working set, once per micro-batch in flight (1F1B: N - s for
/// stage s). It grows with the stage's ops and not with its index.
struct ArenaModel {
  std::vector<int64_t> opBytes, workingSet, liveAcross;
  bool oneFOneB = false;

  int64_t arena(int stages, int stage, int begin, int end) const {
    int64_t bytes = 0, largest = 0, live = 0;
    for (int i = begin; i < end; ++i) {
      bytes += opBytes[i];
      largest = std::max(largest, workingSet[i]);
    }
    for (int b = begin; b <= end; ++b)
      live = std::max(live, liveAcross[b]);
    return bytes + (live + largest) * (oneFOneB ? stages - stage : 1);
  }
  std::vector<int64_t> arenas(const std::vector<int> &starts) const {
    int n = opBytes.size(), stages = starts.size();
    std::vector<int64_t> result;
    for (int s = 0; s < stages; ++s)
      result.push_back(
          arena(stages, s, starts[s], s + 1 < stages ? starts[s + 1] : n));
    return result;
  }
  /// The search's planner over this model, counting its plans in `planned`.
  PlanStages planner(int *planned = nullptr) const {
    return [this, planned](const std::vector<int> &starts) {
      if (planned)
        ++*planned;
      return std::optional(arenas(starts));
    };
  }
};

TEST(StageSplitThatFitsTest, TheFastestSplitThatFitsIsPlannedOnce) {
  StageSplitProblem problem = makeProblem({1, 1, 1, 1, 1, 1});
  ArenaModel model{{1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 0}, {}};
  model.liveAcross.assign(7, 0);
  int planned = 0;
  std::optional<FittingSplit> found =
      splitIntoStagesThatFit(problem, 3, 2, model.planner(&planned), 100);
  ASSERT_TRUE(found && found->fits);
  EXPECT_EQ(found->fits->starts, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(found->plans, 1);
  EXPECT_EQ(planned, 1);
}

TEST(StageSplitThatFitsTest, GivesUpSpeedForMemory) {
  // The fastest split puts ops 0 and 1 together, over the memory; the
  // fastest that fits gives op 1 to the second stage.
  StageSplitProblem problem = makeProblem({2, 2, 2, 2});
  ArenaModel model{{5, 5, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0, 0}};
  std::optional<FittingSplit> found =
      splitIntoStagesThatFit(problem, 2, 7, model.planner(), 100);
  ASSERT_TRUE(found && found->fits);
  EXPECT_EQ(found->fits->starts, (std::vector<int>{0, 1}));
  EXPECT_EQ(found->fits->slowest, 6);
}

TEST(StageSplitThatFitsTest, NoFitReturnsTheClosestPlanned) {
  StageSplitProblem problem = makeProblem({1, 1, 1});
  ArenaModel model{{1, 9, 1}, {0, 0, 0}, {0, 0, 0, 0}};
  std::vector<int64_t> largestPlanned;
  PlanStages plan = [&](const std::vector<int> &starts) {
    std::vector<int64_t> arenas = model.arenas(starts);
    largestPlanned.push_back(*std::max_element(arenas.begin(), arenas.end()));
    return std::optional(arenas);
  };
  std::optional<FittingSplit> found =
      splitIntoStagesThatFit(problem, 2, 8, plan, 100);
  ASSERT_TRUE(found);
  EXPECT_FALSE(found->fits);
  EXPECT_FALSE(found->gaveUp);
  ASSERT_EQ(found->closest.size(), 2u);
  std::vector<int64_t> closest = model.arenas(found->closest);
  EXPECT_EQ(*std::max_element(closest.begin(), closest.end()),
            *std::min_element(largestPlanned.begin(), largestPlanned.end()));
}

TEST(StageSplitThatFitsTest, AFailedPlanIsAFailure) {
  StageSplitProblem problem = makeProblem({1, 1});
  PlanStages plan = [](const std::vector<int> &) {
    return std::optional<std::vector<int64_t>>();
  };
  EXPECT_FALSE(splitIntoStagesThatFit(problem, 2, 100, plan, 100));
}

TEST(StageSplitThatFitsTest, StopsAtItsBoundOfPlans) {
  // The fastest split ([0, 2) and [2, 4)) is over on stage 0; the next
  // would fit, but the bound is one plan.
  StageSplitProblem problem = makeProblem({1, 1, 1, 1});
  ArenaModel model{{5, 1, 1, 1}, {0, 0, 0, 0}, {0, 0, 0, 0, 0}};
  PlanStages plan = model.planner();
  std::optional<FittingSplit> found =
      splitIntoStagesThatFit(problem, 2, 5, plan, 1);
  ASSERT_TRUE(found);
  EXPECT_FALSE(found->fits);
  EXPECT_TRUE(found->gaveUp);
  EXPECT_EQ(found->plans, 1);
  EXPECT_EQ(found->closest, (std::vector<int>{0, 2}));
  found = splitIntoStagesThatFit(problem, 2, 5, plan, 2);
  ASSERT_TRUE(found && found->fits);
  EXPECT_EQ(found->fits->starts, (std::vector<int>{0, 1}));
}

TEST(StageSplitThatFitsTest, MatchesBruteForce) {
  std::mt19937 random(29);
  int totalPlans = 0, totalSplits = 0;
  for (int trial = 0; trial < 400; ++trial) {
    int n = 2 + random() % 10;
    std::vector<int64_t> costs(n);
    for (int64_t &cost : costs)
      cost = random() % 20;
    StageSplitProblem problem = makeProblem(costs);
    for (int64_t &cost : problem.cutCost)
      cost = random() % 8;
    for (size_t b = 1; b < problem.allowed.size() - 1; ++b)
      problem.allowed[b] = random() % 5 != 0;
    ArenaModel model;
    for (int i = 0; i < n; ++i) {
      model.opBytes.push_back(random() % 30);
      model.workingSet.push_back(random() % 12);
    }
    for (int b = 0; b <= n; ++b)
      model.liveAcross.push_back(random() % 10);
    model.oneFOneB = trial % 2;
    int64_t all = model.arena(1, 0, 0, n);
    for (int stages = 2; stages <= 4; ++stages)
      for (int64_t memory : {all / 4, all / 3, all / 2, all}) {
        int planned = 0;
        std::optional<FittingSplit> found = splitIntoStagesThatFit(
            problem, stages, memory, model.planner(&planned), 10000);
        std::optional<int64_t> expected =
            bruteForce(problem, stages, [&](const std::vector<int> &starts) {
              std::vector<int64_t> arenas = model.arenas(starts);
              return *std::max_element(arenas.begin(), arenas.end()) <= memory;
            });
        std::string where = "trial " + std::to_string(trial) + ", " +
                            std::to_string(stages) + " stages, memory " +
                            std::to_string(memory);
        ASSERT_TRUE(found) << where;
        EXPECT_FALSE(found->gaveUp) << where;
        EXPECT_EQ(found->plans, planned) << where;
        ASSERT_EQ(found->fits.has_value(), expected.has_value()) << where;
        if (!expected)
          continue;
        EXPECT_EQ(found->fits->slowest, *expected) << where;
        std::vector<int64_t> arenas = model.arenas(found->fits->starts);
        EXPECT_LE(*std::max_element(arenas.begin(), arenas.end()), memory)
            << where;
        totalPlans += found->plans;
        ++totalSplits;
      }
  }
  // Lazy: far fewer plans than splits to try.
  EXPECT_GT(totalSplits, 100);
  EXPECT_LT(totalPlans, 4 * totalSplits);
}

} // namespace
