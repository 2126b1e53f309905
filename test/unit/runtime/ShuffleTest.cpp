//===- ShuffleTest.cpp - SplitMix64 and the epoch permutation -------------===//
#include "runtime/Dataset.h"
#include "runtime/Random.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace cairn::runtime;

namespace {

TEST(SplitMix64, MatchesTheReferenceSequence) {
  // The first outputs of the published splitmix64.c from state 0.
  SplitMix64 random(0);
  EXPECT_EQ(random.next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(random.next(), 0x6E789E6AA1B965F4ull);
}

TEST(SplitMix64, UnitDrawsLieInZeroOne) {
  SplitMix64 random(7);
  for (int i = 0; i < 10000; ++i) {
    double u = random.nextUnit();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(Shuffle, GoldenPermutations) {
  // Computed by an independent Python transcription of Dataset.h's algorithm.
  EXPECT_EQ(epochPermutation(10, 0, 0), (std::vector<int64_t>{8, 7, 6, 5, 3, 9, 2, 4, 1, 0}));
  EXPECT_EQ(epochPermutation(10, 0, 1), (std::vector<int64_t>{4, 1, 6, 8, 0, 5, 2, 3, 7, 9}));
  EXPECT_EQ(epochPermutation(10, 42, 0), (std::vector<int64_t>{2, 3, 9, 7, 5, 8, 6, 4, 0, 1}));
}

TEST(Shuffle, DeterministicPermutationsThatDifferByEpochAndSeed) {
  std::vector<int64_t> a = epochPermutation(1000, 5, 3);
  EXPECT_EQ(a, epochPermutation(1000, 5, 3));
  EXPECT_NE(a, epochPermutation(1000, 5, 4));
  EXPECT_NE(a, epochPermutation(1000, 6, 3));
  std::vector<int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i)
    ASSERT_EQ(sorted[i], i);
}

TEST(Shuffle, TinyAndEmptySets) {
  EXPECT_TRUE(epochPermutation(0, 1, 0).empty());
  EXPECT_EQ(epochPermutation(1, 1, 0), (std::vector<int64_t>{0}));
}

} // namespace
