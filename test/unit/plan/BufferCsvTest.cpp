//===- BufferCsvTest.cpp - Buffers and plans as CSV -----------------------===//

#include "passes/BufferCsv.h"

#include <gtest/gtest.h>

using namespace cairn;

namespace {
/// Parses text that must fail; returns "line: message".
std::string errorOf(std::string_view text) {
  std::vector<BufferInterval> buffers;
  CsvError error;
  EXPECT_FALSE(parseBufferCsv(text, buffers, error)) << text;
  return std::to_string(error.line) + ": " + error.message;
}
} // namespace

// Tests the MiniMalloc format with its header.
TEST(BufferCsv, ParsesWithHeader) {
  std::vector<BufferInterval> buffers;
  CsvError error;
  ASSERT_TRUE(parseBufferCsv("id,lower,upper,size\n0,995328,1000448,656384\n"
                             "1,779264,828416,183296\n",
                             buffers, error))
      << error.message;
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0].id, 0);
  EXPECT_EQ(buffers[0].lower, 995328);
  EXPECT_EQ(buffers[0].upper, 1000448);
  EXPECT_EQ(buffers[0].size, 656384);
  EXPECT_EQ(buffers[0].alignment, 1);
  EXPECT_EQ(buffers[1].id, 1);
}

// Tests no header, CRLF, spaces, comments, blank lines and no final newline.
TEST(BufferCsv, ParsesWithoutHeader) {
  std::vector<BufferInterval> buffers;
  CsvError error;
  ASSERT_TRUE(parseBufferCsv("# a comment\r\n\r\n 5 , 0, 2, 10\r\n6,1,3,0", buffers, error))
      << error.message;
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0].id, 5);
  EXPECT_EQ(buffers[0].size, 10);
  EXPECT_EQ(buffers[1].size, 0);
  ASSERT_TRUE(parseBufferCsv("", buffers, error));
  EXPECT_TRUE(buffers.empty());
}

// Tests that every error names its line.
TEST(BufferCsv, Errors) {
  EXPECT_EQ(errorOf("id,lower,upper,size\n0,0,1\n"),
            "2: expected 4 fields (id,lower,upper,size) but got 3");
  EXPECT_EQ(errorOf("0,0,1,8,9\n"), "1: expected 4 fields (id,lower,upper,size) but got 5");
  EXPECT_EQ(errorOf("0,0,1,8\n1,0,x,8\n"), "2: expected an integer for 'upper' but got 'x'");
  EXPECT_EQ(errorOf("0,0,1,1.5\n"), "1: expected an integer for 'size' but got '1.5'");
  EXPECT_EQ(errorOf("0,0,1,\n"), "1: expected an integer for 'size' but got ''");
  EXPECT_EQ(errorOf("0,0,1,99999999999999999999\n"),
            "1: expected an integer for 'size' but got '99999999999999999999'");
  EXPECT_EQ(errorOf("0,0,1,-4\n"), "1: expected a size >= 0 but got -4");
  EXPECT_EQ(errorOf("0,3,3,4\n"), "1: expected lower < upper but got lower 3, upper 3");
  EXPECT_EQ(errorOf("0,0,1,4\n\n0,1,2,4\n"), "3: duplicate buffer id 0 (first on line 1)");
  EXPECT_EQ(errorOf("0,0,1,4611686018427387904\n1,0,1,1\n"),
            "2: the sizes add up to more than 2^62 bytes");
  // A header is only a header on the first line.
  EXPECT_EQ(errorOf("0,0,1,4\nid,lower,upper,size\n"),
            "2: expected an integer for 'id' but got 'id'");
}

// Tests the plan's CSV.
TEST(BufferCsv, FormatsPlan) {
  std::vector<BufferInterval> buffers = {{3, 0, 2, 10, 1}, {4, 1, 3, 20, 1}};
  EXPECT_EQ(formatPlanCsv(buffers, {0, 10}),
            "id,lower,upper,size,offset\n3,0,2,10,0\n4,1,3,20,10\n");
}

// Tests the summary `cairn plan --buffers` prints, with and without a
// capacity.
TEST(BufferCsv, FormatsPlanSummary) {
  std::vector<BufferInterval> buffers = {{3, 0, 2, 10, 1}, {4, 1, 3, 20, 1}};
  IntervalPlan plan;
  plan.offsets = {0, 10};
  plan.arenaSize = 30;
  plan.lowerBound = 30;
  plan.greedyArenaSize = 40;
  plan.method = PlanMethod::ExactSearch;
  plan.provedOptimal = true;
  plan.seconds = 0.0125;
  EXPECT_EQ(formatPlanSummary(buffers, plan, std::nullopt),
            "buffers: 2\nlower bound: 30\ngreedy arena: 40 (1.333x)\n"
            "arena: 30\nratio: 1.000x\nmethod: exact-search\n"
            "optimal: yes\ntime: 0.013 s\n");
  plan.provedOptimal = false;
  plan.capacityStatus = SearchStatus::Infeasible;
  std::string withCapacity = formatPlanSummary(buffers, plan, 25);
  EXPECT_NE(withCapacity.find("optimal: not proven\ncapacity: 25\nfits: no "
                              "(proven)\n"),
            std::string::npos)
      << withCapacity;
  plan.capacityStatus = SearchStatus::TimedOut;
  EXPECT_NE(formatPlanSummary(buffers, plan, 25)
                .find("fits: no (none found in time)\n"),
            std::string::npos);
}
