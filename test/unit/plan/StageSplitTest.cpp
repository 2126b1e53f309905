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

/// The slowest stage of the best split, by trying every split.
std::optional<int64_t> bruteForce(const StageSplitProblem &problem,
                                  int stages) {
  int n = problem.opCost.size();
  std::optional<int64_t> best;
  std::vector<int> starts = {0};
  std::function<void(int)> search = [&](int next) {
    if (int(starts.size()) == stages) {
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

} // namespace
