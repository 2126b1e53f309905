//===- ByteSizeTest.cpp - Sizes in bytes -----------------------------------===//

#include "passes/ByteSize.h"

#include <gtest/gtest.h>

using namespace cairn;

TEST(ByteSizeTest, ParsesBinaryAndDecimalUnits) {
  EXPECT_EQ(parseByteSize("1000000"), 1000000);
  EXPECT_EQ(parseByteSize("512B"), 512);
  EXPECT_EQ(parseByteSize("16GiB"), int64_t(16) << 30);
  EXPECT_EQ(parseByteSize(" 512 MiB "), int64_t(512) << 20);
  EXPECT_EQ(parseByteSize("1.5kib"), 1536);
  EXPECT_EQ(parseByteSize("8GB"), 8000000000);
  EXPECT_EQ(parseByteSize("2TB"), 2000000000000);
  EXPECT_EQ(parseByteSize("1TiB"), int64_t(1) << 40);
}

TEST(ByteSizeTest, RefusesWhatIsNoSize) {
  for (const char *text : {"", "GiB", "0", "0.0001", "-5", "12 parsecs", "1e9",
                           "1..5MiB", "9223372036854775807", "10000000TiB"})
    EXPECT_FALSE(parseByteSize(text)) << "'" << text << "'";
}

TEST(ByteSizeTest, FormatsForPeople) {
  EXPECT_EQ(formatByteSize(0), "0 B");
  EXPECT_EQ(formatByteSize(1023), "1023 B");
  EXPECT_EQ(formatByteSize(1024), "1.00 KiB");
  EXPECT_EQ(formatByteSize(2701056), "2.58 MiB");
  EXPECT_EQ(formatByteSize(int64_t(3) << 30), "3.00 GiB");
}
