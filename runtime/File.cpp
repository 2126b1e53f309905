//===- File.cpp - Whole-file reads and atomic writes ----------------------===//
#include "runtime/File.h"

#include "absl/strings/str_format.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cairn::runtime {

absl::StatusOr<std::string> readWholeFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return absl::NotFoundError(
        absl::StrFormat("%s: cannot open: %s", path, std::strerror(errno)));
  std::string data;
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: is a directory, expected a file", path));
  }
  if (::fstat(fd, &st) == 0 && st.st_size > 0)
    data.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return absl::DataLossError(
          absl::StrFormat("%s: read failed: %s", path, std::strerror(err)));
    }
    if (n == 0)
      break;
    data.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return data;
}

namespace {
absl::Status writeAll(int fd, absl::string_view piece) {
  while (!piece.empty()) {
    ssize_t n = ::write(fd, piece.data(), piece.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return absl::DataLossError(std::strerror(errno));
    piece.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

std::string parentDirectory(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
} // namespace

absl::Status writeFileAtomically(const std::string &path,
                                 const std::vector<absl::string_view> &pieces) {
  std::string tmp = absl::StrFormat("%s.tmp.%d", path, static_cast<int>(::getpid()));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return absl::PermissionDeniedError(absl::StrFormat(
        "%s: cannot create temporary file %s: %s", path, tmp, std::strerror(errno)));
  auto fail = [&](const std::string &what) {
    int err = errno;
    if (fd >= 0)
      ::close(fd);
    ::unlink(tmp.c_str());
    return absl::DataLossError(
        absl::StrFormat("%s: %s: %s", path, what, std::strerror(err)));
  };
  for (absl::string_view piece : pieces)
    if (absl::Status status = writeAll(fd, piece); !status.ok())
      return fail("write failed");
  if (::fsync(fd) != 0)
    return fail("fsync failed");
  int closed = ::close(fd);
  fd = -1;
  if (closed != 0)
    return fail("close failed");
  if (::rename(tmp.c_str(), path.c_str()) != 0)
    return fail("cannot rename the temporary file into place");
  // Persist the rename itself; failure here leaves a complete file, so ignore it.
  int dir = ::open(parentDirectory(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
  return absl::OkStatus();
}

} // namespace cairn::runtime
