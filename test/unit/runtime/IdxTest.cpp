//===- IdxTest.cpp - IDX reader tests -------------------------------------===//
#include "runtime/Idx.h"

#include "TestFiles.h"

#include <cstring>

using namespace cairn::runtime;
using namespace cairn::runtime::test;

namespace {

std::string bigEndian32(uint32_t v) {
  return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
}

/// A 2x3x4 u8 IDX file: magic 0x00000803, three dims, 24 bytes of 0..23.
std::string smallImages() {
  std::string s = bigEndian32(0x803) + bigEndian32(2) + bigEndian32(3) + bigEndian32(4);
  for (int i = 0; i < 24; ++i)
    s.push_back(char(i));
  return s;
}

void expectError(const std::string &path, const std::string &fragment) {
  expectFileError(readIdx(path).status(), path, fragment);
}

TEST(Idx, ReadsPlainU8) {
  TempDir dir;
  writeBytes(dir.file("images"), smallImages());
  absl::StatusOr<HostTensor> t = readIdx(dir.file("images"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype, DType::U8);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3, 4}));
  ASSERT_EQ(t->bytes.size(), 24u);
  EXPECT_EQ(t->bytes[23], 23);
  EXPECT_EQ(t->numel(), 24);
}

TEST(Idx, DetectsGzipByContentNotName) {
  TempDir dir;
  writeGzip(dir.file("images.idx"), smallImages());
  writeBytes(dir.file("plain.gz"), smallImages());
  for (const char *name : {"images.idx", "plain.gz"}) {
    absl::StatusOr<HostTensor> t = readIdx(dir.file(name));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3, 4}));
    EXPECT_EQ(t->bytes[5], 5);
  }
}

TEST(Idx, ConvertsBigEndianI32AndF32) {
  TempDir dir;
  std::string i32 = bigEndian32(0x0C01) + bigEndian32(2) + bigEndian32(0x01020304) +
                    bigEndian32(0xFFFFFFFF);
  writeBytes(dir.file("i32"), i32);
  absl::StatusOr<HostTensor> t = readIdx(dir.file("i32"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->dtype, DType::I32);
  int32_t values[2];
  std::memcpy(values, t->bytes.data(), 8);
  EXPECT_EQ(values[0], 0x01020304);
  EXPECT_EQ(values[1], -1);

  float f = 1.5f;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  writeBytes(dir.file("f32"), bigEndian32(0x0D01) + bigEndian32(1) + bigEndian32(bits));
  t = readIdx(dir.file("f32"));
  ASSERT_TRUE(t.ok()) << t.status();
  float back;
  std::memcpy(&back, t->bytes.data(), 4);
  EXPECT_EQ(back, 1.5f);
}

TEST(Idx, RejectsEveryTruncation) {
  TempDir dir;
  std::string full = smallImages();
  for (size_t n = 0; n < full.size(); ++n) {
    writeBytes(dir.file("cut"), full.substr(0, n));
    absl::StatusOr<HostTensor> t = readIdx(dir.file("cut"));
    ASSERT_FALSE(t.ok()) << "prefix of " << n << " bytes was accepted";
    EXPECT_NE(std::string(t.status().message()).find(dir.file("cut")), std::string::npos);
  }
}

TEST(Idx, RejectsEveryTruncationOfTheGzip) {
  TempDir dir;
  writeGzip(dir.file("full.gz"), smallImages());
  std::string gz = readBytes(dir.file("full.gz"));
  for (size_t n = 0; n < gz.size(); ++n) {
    writeBytes(dir.file("cut.gz"), gz.substr(0, n));
    EXPECT_FALSE(readIdx(dir.file("cut.gz")).ok()) << "prefix of " << n << " bytes";
  }
}

TEST(Idx, ReportsEachError) {
  TempDir dir;
  expectError(dir.file("absent"), "cannot open");
  writeBytes(dir.file("short"), std::string("\0\0", 2));
  expectError(dir.file("short"), "truncated header");
  writeBytes(dir.file("magic"), "P5\n28" + smallImages().substr(5));
  expectError(dir.file("magic"), "bad magic");
  writeBytes(dir.file("type"), bigEndian32(0x0701) + bigEndian32(1) + "x");
  expectError(dir.file("type"), "unknown IDX element type 0x07");
  writeBytes(dir.file("i16"), bigEndian32(0x0B01) + bigEndian32(1) + "xx");
  expectError(dir.file("i16"), "unsupported IDX element type i16");
  writeBytes(dir.file("huge"), bigEndian32(0x0803) + bigEndian32(0xFFFFFFFF) +
                                   bigEndian32(0xFFFFFFFF) + bigEndian32(0xFFFFFFFF));
  expectError(dir.file("huge"), "dimensions too large");
  std::string images = bigEndian32(0x0803) + bigEndian32(60000) + bigEndian32(28) +
                       bigEndian32(28) + std::string(1000, 'x');
  writeBytes(dir.file("body"), images);
  expectError(dir.file("body"), "expected 47040000 bytes of data for shape [60000, 28, 28] "
                                "but found 1000");
  writeBytes(dir.file("long"), smallImages() + "extra");
  expectError(dir.file("long"), "expected 24 bytes of data for shape [2, 3, 4] but found 29");
}

TEST(Idx, RejectsGzipWithBadCrc) {
  TempDir dir;
  writeGzip(dir.file("good.gz"), smallImages());
  std::string gz = readBytes(dir.file("good.gz"));
  gz[gz.size() - 8] ^= 0x5a; // The trailer is CRC32 then ISIZE.
  writeBytes(dir.file("crc.gz"), gz);
  expectError(dir.file("crc.gz"), "corrupt gzip data");
}

} // namespace
