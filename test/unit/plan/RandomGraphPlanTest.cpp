//===- RandomGraphPlanTest.cpp - Plans of random schedules ----------------===//
//
// Property tests over thousands of random schedules (fixed seeds): every
// plan passes the independent PlanVerifier, and the arena stays close to
// the lower bound. Two families:
//
//   - training steps, the compiler's shape: a forward chain whose
//     activations live until their backward use, gradients flowing back,
//     one-step workspaces, and parameters, their gradients and optimizer
//     state live over the whole step. The compiler's target, arena / lower
//     bound <= 1.02, is asserted;
//   - generic random DAGs (values live from their definition to their last
//     use): the worst ratio is reported, not held to 1.02.
//
// Sizes are multiples of 256 with a log-uniform spread (256 B to 16 MiB);
// the alignment is 256, as in the compiler.
//
//===----------------------------------------------------------------------===//

#include "passes/IntervalPlanner.h"
#include "passes/PlanVerifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

using namespace cairn;

namespace {
constexpr int64_t kAlignment = 256;

/// A size of 256 B to 16 MiB, log-uniform, a multiple of 256.
int64_t randomSize(std::mt19937_64 &rng, double maxLog2 = 24) {
  std::uniform_real_distribution<double> log2(8, maxLog2);
  int64_t bytes = static_cast<int64_t>(std::exp2(log2(rng)));
  return std::max<int64_t>(1, bytes / kAlignment) * kAlignment;
}

void addBuffer(std::vector<BufferInterval> &buffers, int64_t lower, int64_t upper,
               int64_t size) {
  buffers.push_back({static_cast<int64_t>(buffers.size()), lower, upper, size,
                     kAlignment});
}

/// One training step of a network of `layers` layers: forward at steps
/// 0..L-1, backward of layer i at step 2L-1-i, the optimizer at step 2L.
std::vector<BufferInterval> randomTrainingStep(std::mt19937_64 &rng) {
  std::vector<BufferInterval> buffers;
  int64_t layers = 2 + static_cast<int64_t>(rng() % 40);
  int64_t end = 2 * layers + 1;
  auto backward = [&](int64_t layer) { return 2 * layers - 1 - layer; };
  for (int64_t i = 0; i < layers; ++i) {
    // Parameters and optimizer state; the parameters' gradient lives over
    // the whole step (accumulated) or from the backward to the optimizer.
    if (rng() % 4) {
      int64_t params = randomSize(rng, 22);
      addBuffer(buffers, 0, end, params);
      addBuffer(buffers, 0, end, params);
      addBuffer(buffers, rng() % 2 ? 0 : backward(i), end, params);
    }
    // The activation: made by the forward, read by the next layer and, if
    // the backward needs it, kept until then.
    int64_t activation = randomSize(rng);
    addBuffer(buffers, i, rng() % 4 ? backward(i) + 1 : i + 2, activation);
    // Sometimes a second saved tensor (a mask, the pre-activation).
    if (rng() % 3 == 0)
      addBuffer(buffers, i, backward(i) + 1, randomSize(rng));
    // The gradient of the activation: made by the backward of layer i+1
    // (or the loss), read by the backward of layer i.
    addBuffer(buffers, backward(i) - 1, backward(i) + 1, activation);
    // One-step workspaces (im2col, reductions) in both passes.
    for (int64_t step : {i, backward(i)})
      if (rng() % 2)
        addBuffer(buffers, step, step + 1, randomSize(rng, 22));
  }
  return buffers;
}

/// A random DAG in topological order: node i is defined at step i and lives
/// until its last consumer reads it.
std::vector<BufferInterval> randomDag(std::mt19937_64 &rng) {
  std::vector<BufferInterval> buffers;
  int64_t nodes = 5 + static_cast<int64_t>(rng() % 120);
  std::vector<int64_t> lastUse(nodes);
  for (int64_t i = 0; i < nodes; ++i)
    lastUse[i] = i + 1;
  for (int64_t i = 1; i < nodes; ++i) {
    int64_t inputs = 1 + static_cast<int64_t>(rng() % 3);
    for (int64_t k = 0; k < inputs; ++k) {
      // Mostly recent values, sometimes a long skip connection.
      int64_t back = rng() % 4 ? 1 + static_cast<int64_t>(rng() % 3)
                               : 1 + static_cast<int64_t>(rng() % i);
      int64_t producer = std::max<int64_t>(0, i - back);
      lastUse[producer] = std::max(lastUse[producer], i + 1);
    }
  }
  for (int64_t i = 0; i < nodes; ++i)
    addBuffer(buffers, i, lastUse[i], randomSize(rng));
  return buffers;
}

struct RatioStats {
  double worst = 1;
  uint64_t worstSeed = 0;
  double worstGreedy = 1;
  int atLowerBound = 0;
  int graphs = 0;
};

/// Plans graph `seed`, verifies the plan and records its ratio.
void planAndCheck(const std::vector<BufferInterval> &buffers, uint64_t seed,
                  const PlannerOptions &options, RatioStats &stats) {
  IntervalPlan plan = planIntervals(buffers, options);
  PlanVerdict verdict = verifyPlan(buffers, plan.offsets, plan.arenaSize);
  ASSERT_TRUE(verdict.ok) << "seed " << seed << ": " << verdict.message;
  ASSERT_EQ(plan.arenaSize, computeArenaSize(buffers, plan.offsets)) << "seed " << seed;
  ASSERT_GE(plan.arenaSize, plan.lowerBound) << "seed " << seed;
  ASSERT_LE(plan.arenaSize, plan.greedyArenaSize) << "seed " << seed;
  double ratio = static_cast<double>(plan.arenaSize) / plan.lowerBound;
  if (ratio > stats.worst) {
    stats.worst = ratio;
    stats.worstSeed = seed;
  }
  stats.worstGreedy = std::max(
      stats.worstGreedy, static_cast<double>(plan.greedyArenaSize) / plan.lowerBound);
  stats.atLowerBound += plan.arenaSize == plan.lowerBound;
  ++stats.graphs;
}

void report(const char *family, const RatioStats &stats) {
  std::string where = stats.worstSeed ? "seed " + std::to_string(stats.worstSeed)
                                      : std::string("every graph");
  std::printf("[ ratio    ] %s: %d graphs, %d at the lower bound, worst "
              "arena / lower bound %.4f (%s; greedy alone %.4f)\n",
              family, stats.graphs, stats.atLowerBound, stats.worst, where.c_str(),
              stats.worstGreedy);
}
} // namespace

// Tests that training-step plans verify and stay within 1.02 of the lower
// bound (the compiler's target), on 2,000 random networks.
TEST(RandomGraphPlan, TrainingStepsWithinTwoPercent) {
  // A perfect packing is found in milliseconds when there is one; the limit
  // only binds the few graphs without one, and leaves room for a loaded
  // machine.
  PlannerOptions options;
  options.timeLimitSeconds = 0.25;
  RatioStats stats;
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    std::mt19937_64 rng(seed);
    planAndCheck(randomTrainingStep(rng), seed, options, stats);
    if (HasFatalFailure())
      return;
  }
  report("training steps", stats);
  RecordProperty("worst_ratio", std::to_string(stats.worst));
  EXPECT_LE(stats.worst, 1.02) << "seed " << stats.worstSeed;
}

// Tests that plans of generic random DAGs verify; reports the worst ratio
// (no perfect packing need exist here), bounded loosely.
TEST(RandomGraphPlan, GenericDagsVerify) {
  PlannerOptions options;
  options.timeLimitSeconds = 0.05;
  RatioStats stats;
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    std::mt19937_64 rng(seed);
    planAndCheck(randomDag(rng), seed, options, stats);
    if (HasFatalFailure())
      return;
  }
  report("generic DAGs", stats);
  RecordProperty("worst_ratio", std::to_string(stats.worst));
  EXPECT_LE(stats.worst, 1.5) << "seed " << stats.worstSeed;
}
