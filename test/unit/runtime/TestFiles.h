//===- TestFiles.h - Temporary files for the runtime tests -------*- C++ -*-===//
#ifndef CAIRN_TEST_UNIT_RUNTIME_TESTFILES_H
#define CAIRN_TEST_UNIT_RUNTIME_TESTFILES_H

#include "absl/status/status.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

namespace cairn::runtime::test {

/// A fresh directory per test, removed afterwards.
class TempDir {
public:
  TempDir() {
    std::string pattern = (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
    pattern += "/cairn-runtime-XXXXXX";
    path = mkdtemp(pattern.data()) ? pattern : "";
    EXPECT_FALSE(path.empty());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::string file(const std::string &name) const { return path + "/" + name; }
  std::string path;
};

inline void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void writeGzip(const std::string &path, const std::string &bytes) {
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr) << path;
  ASSERT_EQ(gzwrite(gz, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
}

/// Expects `status` to be an error whose message names `path` and says
/// `fragment`: every reader error must tell the user which file is wrong.
inline void expectFileError(const absl::Status &status, const std::string &path,
                            const std::string &fragment) {
  ASSERT_FALSE(status.ok()) << path;
  std::string message(status.message());
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find(fragment), std::string::npos) << message;
}

inline bool fileExists(const std::string &path) { return access(path.c_str(), F_OK) == 0; }

} // namespace cairn::runtime::test

#endif // CAIRN_TEST_UNIT_RUNTIME_TESTFILES_H
