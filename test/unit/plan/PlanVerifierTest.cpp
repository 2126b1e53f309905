//===- PlanVerifierTest.cpp - The independent plan checker ----------------===//
//
// Hand-written plans (offsets inline), then random plans, valid and not,
// checked against a brute-force O(n^2) reference.
//
//===----------------------------------------------------------------------===//

#include "passes/PlanVerifier.h"

#include <gtest/gtest.h>

#include <random>

using namespace cairn;

namespace {
PlacedBuffer placed(int64_t id, int64_t lower, int64_t upper, int64_t size,
                    int64_t offset, int64_t alignment = 1) {
  return {id, lower, upper, size, offset, alignment};
}

/// Every pair, every rule: the reference the sweep must agree with.
bool bruteForceOk(const std::vector<PlacedBuffer> &buffers, int64_t arena) {
  for (const PlacedBuffer &b : buffers)
    if (b.offset < 0 || b.offset + b.size > arena || b.offset % b.alignment)
      return false;
  for (size_t i = 0; i < buffers.size(); ++i)
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const PlacedBuffer &a = buffers[i], &b = buffers[j];
      bool liveTogether = a.lower < b.upper && b.lower < a.upper;
      bool shareBytes = a.size > 0 && b.size > 0 && a.offset < b.offset + b.size &&
                        b.offset < a.offset + a.size;
      if (liveTogether && shareBytes)
        return false;
    }
  return true;
}
} // namespace

// Tests that a sound plan passes, including buffers that touch in time or
// in bytes without overlapping.
TEST(PlanVerifier, AcceptsSoundPlan) {
  std::vector<PlacedBuffer> plan = {
      //     id  live    size  offset
      placed(0, 0, 4, 100, 0),   // bytes [0, 100)
      placed(1, 2, 6, 50, 100),  // bytes [100, 150): touches buffer 0's end
      placed(2, 4, 8, 100, 0),   // live from 4: buffer 0 is dead by then
      placed(3, 0, 9, 0, 150),   // empty: needs no bytes
  };
  PlanVerdict verdict = verifyPlan(plan, 150);
  EXPECT_TRUE(verdict.ok) << verdict.message;
  EXPECT_TRUE(verdict.message.empty());
}

// Tests that two live buffers sharing one byte are caught, by id.
TEST(PlanVerifier, RejectsOverlap) {
  std::vector<PlacedBuffer> plan = {
      //     id  live    size  offset
      placed(7, 0, 4, 100, 0),  // bytes [0, 100)
      placed(8, 3, 6, 50, 99),  // bytes [99, 149): byte 99 at step 3
  };
  PlanVerdict verdict = verifyPlan(plan, 200);
  EXPECT_FALSE(verdict.ok);
  EXPECT_NE(verdict.message.find("buffer 8"), std::string::npos) << verdict.message;
  EXPECT_NE(verdict.message.find("buffer 7"), std::string::npos) << verdict.message;
}

// Tests that a buffer nested inside a larger one is caught.
TEST(PlanVerifier, RejectsNestedBuffer) {
  std::vector<PlacedBuffer> plan = {
      placed(0, 0, 10, 1000, 0), // bytes [0, 1000)
      placed(1, 1, 2, 10, 500),  // inside buffer 0
  };
  EXPECT_FALSE(verifyPlan(plan, 1000).ok);
}

// Tests the bounds of the arena and the alignment.
TEST(PlanVerifier, RejectsOutOfArenaAndMisaligned) {
  EXPECT_FALSE(verifyPlan({placed(0, 0, 1, 10, 95)}, 100).ok); // ends at 105
  EXPECT_TRUE(verifyPlan({placed(0, 0, 1, 10, 90)}, 100).ok);  // ends at 100
  EXPECT_FALSE(verifyPlan({placed(0, 0, 1, 10, -10)}, 100).ok);
  PlanVerdict misaligned = verifyPlan({placed(0, 0, 1, 10, 128, 256)}, 1000);
  EXPECT_FALSE(misaligned.ok);
  EXPECT_NE(misaligned.message.find("alignment 256"), std::string::npos);
  EXPECT_TRUE(verifyPlan({placed(0, 0, 1, 10, 512, 256)}, 1000).ok);
  EXPECT_FALSE(verifyPlan({placed(0, 3, 3, 10, 0)}, 100).ok); // empty interval
  EXPECT_FALSE(verifyPlan({placed(0, 0, 1, -1, 0)}, 100).ok);
}

// Tests that offsets near INT64_MAX do not overflow the arena check.
TEST(PlanVerifier, NoOverflow) {
  int64_t big = std::numeric_limits<int64_t>::max() - 5;
  EXPECT_FALSE(verifyPlan({placed(0, 0, 1, 10, big)}, 100).ok);
}

// Tests, on thousands of random plans (fixed seeds), that the sweep agrees
// with the brute-force check, on sound and on broken plans alike.
TEST(PlanVerifier, AgreesWithBruteForce) {
  int sound = 0, broken = 0;
  for (uint64_t seed = 1; seed <= 5000; ++seed) {
    std::mt19937_64 rng(seed);
    size_t n = 1 + rng() % 12;
    int64_t alignment = seed % 4 == 0 ? 8 : 1;
    std::vector<PlacedBuffer> plan;
    for (size_t i = 0; i < n; ++i) {
      int64_t lower = static_cast<int64_t>(rng() % 10);
      int64_t upper = lower + 1 + static_cast<int64_t>(rng() % 5);
      int64_t size = static_cast<int64_t>(rng() % 20);
      int64_t offset = static_cast<int64_t>(rng() % 60) * alignment;
      plan.push_back(placed(static_cast<int64_t>(i), lower, upper, size, offset, alignment));
    }
    int64_t arena = static_cast<int64_t>(rng() % 600);
    bool expected = bruteForceOk(plan, arena);
    PlanVerdict verdict = verifyPlan(plan, arena);
    ASSERT_EQ(verdict.ok, expected) << "seed " << seed << ": " << verdict.message;
    ASSERT_EQ(verdict.message.empty(), expected);
    (expected ? sound : broken)++;
  }
  // Both outcomes are exercised.
  EXPECT_GT(sound, 100);
  EXPECT_GT(broken, 100);
}
