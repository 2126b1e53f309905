//===- FashionMnistTest.cpp - The real Fashion-MNIST files ----------------===//
#include "runtime/Idx.h"

#include "TestFiles.h"

using namespace cairn::runtime;
using namespace cairn::runtime::test;

namespace {

const char *kDir = "/usr/share/datasets/fashion-mnist";

TEST(FashionMnist, LoadsBothSplits) {
  if (!fileExists(std::string(kDir) + "/train-labels-idx1-ubyte.gz"))
    GTEST_SKIP() << kDir << " is not installed (Debian package dataset-fashion-mnist)";
  absl::StatusOr<Dataset> train = loadFashionMnist(kDir, /*train=*/true);
  ASSERT_TRUE(train.ok()) << train.status();
  EXPECT_EQ(train->images.shape, (std::vector<int64_t>{60000, 28, 28}));
  EXPECT_EQ(train->labels.shape, (std::vector<int64_t>{60000}));
  // Fashion-MNIST's first training image is an ankle boot (class 9); MNIST's is a 5.
  EXPECT_EQ(train->labels.bytes[0], 9);
  // Balanced classes: 6000 of each in train.
  std::vector<int> counts(10, 0);
  for (uint8_t label : train->labels.bytes)
    ++counts[label];
  for (int count : counts)
    EXPECT_EQ(count, 6000);

  absl::StatusOr<Dataset> test = loadFashionMnist(kDir, /*train=*/false);
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_EQ(test->images.shape, (std::vector<int64_t>{10000, 28, 28}));
  EXPECT_EQ(test->labels.shape, (std::vector<int64_t>{10000}));
}

std::string be32(uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }

TEST(FashionMnist, ChecksCountsAndLabels) {
  TempDir dir;
  std::string images = be32(0x803) + be32(2) + be32(28) + be32(28) + std::string(2 * 784, 0);
  writeGzip(dir.file("t10k-images-idx3-ubyte.gz"), images);
  writeBytes(dir.file("t10k-labels-idx1-ubyte"), be32(0x801) + be32(3) + "\1\2\3");
  absl::StatusOr<Dataset> ds = loadFashionMnist(dir.path, false);
  ASSERT_FALSE(ds.ok());
  EXPECT_NE(std::string(ds.status().message()).find("2 images but 3 labels"),
            std::string::npos)
      << ds.status();

  writeBytes(dir.file("t10k-labels-idx1-ubyte"), be32(0x801) + be32(2) + "\1\12");
  ds = loadFashionMnist(dir.path, false);
  ASSERT_FALSE(ds.ok());
  EXPECT_NE(std::string(ds.status().message()).find("label 1 is 10"), std::string::npos)
      << ds.status();

  // The .gz wins when both exist.
  writeGzip(dir.file("t10k-labels-idx1-ubyte.gz"), be32(0x801) + be32(2) + "\1\2");
  ds = loadFashionMnist(dir.path, false);
  ASSERT_TRUE(ds.ok()) << ds.status();
  EXPECT_EQ(ds->labels.bytes[1], 2);

  ds = loadFashionMnist(dir.path, true);
  ASSERT_FALSE(ds.ok());
  EXPECT_NE(std::string(ds.status().message()).find("not found"), std::string::npos);
}

} // namespace
