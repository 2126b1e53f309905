//===- NpyTest.cpp - .npy reader tests ------------------------------------===//
#include "runtime/Npy.h"

#include "TestFiles.h"

#include <cstring>

using namespace cairn::runtime;
using namespace cairn::runtime::test;

namespace {

/// A .npy file as numpy writes it: the header padded so data starts 64-aligned.
std::string npy(const std::string &dict, const std::string &data, int major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::string s = "\x93NUMPY";
  s += char(major);
  s += '\0';
  size_t n = header.size();
  s += char(n & 0xff);
  s += char((n >> 8) & 0xff);
  if (major != 1)
    s += std::string(2, '\0');
  return s + header + data;
}

std::string floats(std::initializer_list<float> values) {
  std::string s(values.size() * 4, '\0');
  std::memcpy(s.data(), values.begin(), s.size());
  return s;
}

void expectError(const std::string &path, const std::string &fragment) {
  expectFileError(readNpy(path).status(), path, fragment);
}

TEST(Npy, ReadsEachVersion) {
  TempDir dir;
  for (int major : {1, 2, 3}) {
    writeBytes(dir.file("a.npy"),
               npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                   floats({1, 2, 3, 4}), major));
    absl::StatusOr<HostTensor> t = readNpy(dir.file("a.npy"));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->dtype, DType::F32);
    EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 2}));
    float back[4];
    std::memcpy(back, t->bytes.data(), 16);
    EXPECT_EQ(back[3], 4.0f);
  }
}

TEST(Npy, ReadsScalarsAndOneTuples) {
  TempDir dir;
  writeBytes(dir.file("s.npy"),
             npy("{'descr': '<i8', 'fortran_order': False, 'shape': (), }", std::string(8, 'x')));
  absl::StatusOr<HostTensor> t = readNpy(dir.file("s.npy"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->shape.empty());
  EXPECT_EQ(t->dtype, DType::I64);
  writeBytes(dir.file("v.npy"),
             npy("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", "abc"));
  t = readNpy(dir.file("v.npy"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape, (std::vector<int64_t>{3}));
}

TEST(Npy, RejectsEveryTruncation) {
  TempDir dir;
  std::string full =
      npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", std::string(16, 'x'));
  for (size_t n = 0; n < full.size(); ++n) {
    writeBytes(dir.file("cut.npy"), full.substr(0, n));
    EXPECT_FALSE(readNpy(dir.file("cut.npy")).ok()) << "prefix of " << n << " bytes";
  }
}

TEST(Npy, ReportsEachError) {
  TempDir dir;
  expectError(dir.file("absent.npy"), "cannot open");
  writeBytes(dir.file("magic.npy"), "PK\3\4 not numpy at all");
  expectError(dir.file("magic.npy"), "bad magic");
  std::string v9 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", "xxxx");
  v9[6] = 9;
  writeBytes(dir.file("v9.npy"), v9);
  expectError(dir.file("v9.npy"), "unsupported .npy version 9.0");
  writeBytes(dir.file("f.npy"),
             npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", "xxxx"));
  expectError(dir.file("f.npy"), "fortran_order is True");
  writeBytes(dir.file("be.npy"),
             npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "xxxx"));
  expectError(dir.file("be.npy"), "unsupported dtype '>f4'");
  writeBytes(dir.file("obj.npy"),
             npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "xxxxxxxx"));
  expectError(dir.file("obj.npy"), "unsupported dtype '|O'");
  writeBytes(dir.file("keys.npy"), npy("{'descr': '<f4', 'shape': (1,), }", "xxxx"));
  expectError(dir.file("keys.npy"), "expected exactly the keys");
  writeBytes(dir.file("dict.npy"), npy("{'descr': '<f4' 'shape': (1,)}", "xxxx"));
  expectError(dir.file("dict.npy"), "bad header");
  writeBytes(dir.file("neg.npy"),
             npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", "xxxx"));
  expectError(dir.file("neg.npy"), "non-negative integer");
  writeBytes(dir.file("big.npy"),
             npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999), }",
                 ""));
  expectError(dir.file("big.npy"), "more than");
  writeBytes(dir.file("short.npy"),
             npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", "xxxx"));
  expectError(dir.file("short.npy"), "expected 12 bytes of data for <f4 [3] but found 4");
  writeBytes(dir.file("long.npy"),
             npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "xxxxx"));
  expectError(dir.file("long.npy"), "expected 4 bytes of data for <f4 [1] but found 5");
}

} // namespace
