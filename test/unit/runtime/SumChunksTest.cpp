//===- SumChunksTest.cpp - How replicas split a bucket to sum it ----------===//
#include "runtime/SumChunks.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace cairn::runtime {
namespace {

// The chunks tile the bucket in rank order, their sizes differ by at most
// one, and the workspace holds the other ranks' copies of any rank's chunk.
TEST(SumChunksTest, TileTheBucketEvenly) {
  for (int64_t ranks = 1; ranks <= 9; ++ranks)
    for (int64_t count : {0, 1, 2, 5, 7, 8, 64, 131, 1000003}) {
      SCOPED_TRACE(testing::Message()
                   << count << " floats over " << ranks << " ranks");
      EXPECT_EQ(getSumChunkBegin(count, ranks, 0), 0);
      EXPECT_EQ(getSumChunkBegin(count, ranks, ranks), count);
      int64_t smallest = count, largest = 0;
      for (int64_t rank = 0; rank < ranks; ++rank) {
        int64_t size = getSumChunkSize(count, ranks, rank);
        EXPECT_GE(size, 0);
        EXPECT_EQ(getSumChunkBegin(count, ranks, rank) + size,
                  getSumChunkBegin(count, ranks, rank + 1));
        EXPECT_LE((ranks - 1) * size, getSumWorkspaceElements(count, ranks));
        smallest = std::min(smallest, size);
        largest = std::max(largest, size);
      }
      EXPECT_LE(largest - smallest, 1);
    }
}

TEST(SumChunksTest, OneRankNeedsNoWorkspace) {
  EXPECT_EQ(getSumWorkspaceElements(131, 1), 0);
  EXPECT_EQ(getSumChunkSize(131, 1, 0), 131);
}

TEST(SumChunksTest, WorkspaceIsTheOtherRanksLargestChunk) {
  EXPECT_EQ(getSumWorkspaceElements(48, 2), 24);
  EXPECT_EQ(getSumWorkspaceElements(131, 2), 66);
  EXPECT_EQ(getSumWorkspaceElements(195, 4), 3 * 49);
  // 7 over 3: chunks 3, 2, 2.
  EXPECT_EQ(getSumChunkSize(7, 3, 0), 3);
  EXPECT_EQ(getSumChunkSize(7, 3, 1), 2);
  EXPECT_EQ(getSumChunkBegin(7, 3, 2), 5);
}

} // namespace
} // namespace cairn::runtime
