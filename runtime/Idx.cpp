//===- Idx.cpp - IDX files (MNIST, Fashion-MNIST) -------------------------===//
#include "runtime/Idx.h"

#include "absl/strings/str_format.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <sys/stat.h>

namespace cairn::runtime {

namespace {

// Larger bodies are certainly a corrupt header rather than a dataset.
constexpr int64_t kMaxIdxBytes = int64_t(1) << 33;

absl::Status error(const std::string &path, const std::string &what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", path, what));
}

/// Reads a plain or gzip file through one interface, so the header and body
/// checks are written once.
class ByteSource {
public:
  static absl::StatusOr<std::unique_ptr<ByteSource>> open(const std::string &path) {
    std::FILE *file = std::fopen(path.c_str(), "rb");
    if (!file)
      return absl::NotFoundError(
          absl::StrFormat("%s: cannot open: %s", path, std::strerror(errno)));
    unsigned char magic[2] = {0, 0};
    size_t got = std::fread(magic, 1, 2, file);
    auto source = std::unique_ptr<ByteSource>(new ByteSource(path));
    if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
      std::fclose(file);
      source->gz = gzopen(path.c_str(), "rb");
      if (!source->gz)
        return absl::NotFoundError(absl::StrFormat("%s: cannot open", path));
      gzbuffer(source->gz, 1 << 17);
    } else {
      std::rewind(file);
      source->file = file;
    }
    return source;
  }

  ~ByteSource() {
    if (file)
      std::fclose(file);
    if (gz)
      gzclose_r(gz);
  }

  /// Reads up to `size` bytes; fewer only at the end of the data. A gzip
  /// stream that is corrupt or cut short is an error, not an early end.
  absl::StatusOr<size_t> read(void *buffer, size_t size) {
    size_t total = 0;
    auto *out = static_cast<unsigned char *>(buffer);
    while (total < size) {
      size_t want = std::min<size_t>(size - total, 1u << 30);
      size_t got;
      if (gz) {
        int n = gzread(gz, out + total, static_cast<unsigned>(want));
        int errnum = Z_OK;
        const char *message = gzerror(gz, &errnum);
        if (n < 0 || errnum != Z_OK)
          return error(path, absl::StrFormat("corrupt gzip data: %s", message));
        got = static_cast<size_t>(n);
      } else {
        got = std::fread(out + total, 1, want, file);
        if (std::ferror(file))
          return error(path, absl::StrFormat("read failed: %s", std::strerror(errno)));
      }
      if (got == 0)
        break;
      total += got;
    }
    return total;
  }

private:
  explicit ByteSource(std::string path) : path(std::move(path)) {}
  std::string path;
  std::FILE *file = nullptr;
  gzFile gz = nullptr;
};

struct IdxType {
  unsigned char code;
  const char *name;
  std::optional<DType> dtype;
  size_t size;
};
constexpr IdxType kIdxTypes[] = {
    {0x08, "u8", DType::U8, 1},   {0x09, "i8", std::nullopt, 1},
    {0x0B, "i16", std::nullopt, 2}, {0x0C, "i32", DType::I32, 4},
    {0x0D, "f32", DType::F32, 4}, {0x0E, "f64", DType::F64, 8},
};

/// IDX stores multi-byte elements big-endian; the runtime is little-endian.
void swapToLittleEndian(std::vector<uint8_t> &bytes, size_t size) {
  if (size == 1)
    return;
  for (size_t i = 0; i + size <= bytes.size(); i += size)
    std::reverse(bytes.begin() + i, bytes.begin() + i + size);
}

} // namespace

absl::StatusOr<HostTensor> readIdx(const std::string &path) {
  absl::StatusOr<std::unique_ptr<ByteSource>> opened = ByteSource::open(path);
  if (!opened.ok())
    return opened.status();
  ByteSource &source = **opened;

  unsigned char magic[4];
  absl::StatusOr<size_t> got = source.read(magic, 4);
  if (!got.ok())
    return got.status();
  if (*got < 4)
    return error(path, absl::StrFormat(
                           "truncated header: expected 4 magic bytes but found %d", *got));
  if (magic[0] != 0 || magic[1] != 0)
    return error(path, absl::StrFormat("bad magic 0x%02x%02x%02x%02x: expected an IDX "
                                       "file starting with two zero bytes",
                                       magic[0], magic[1], magic[2], magic[3]));
  const IdxType *type = nullptr;
  for (const IdxType &candidate : kIdxTypes)
    if (candidate.code == magic[2])
      type = &candidate;
  if (!type)
    return error(path, absl::StrFormat("bad magic: unknown IDX element type 0x%02x", magic[2]));
  if (!type->dtype)
    return error(path, absl::StrFormat("unsupported IDX element type %s", type->name));

  int rank = magic[3];
  std::vector<unsigned char> dimBytes(4 * rank);
  got = source.read(dimBytes.data(), dimBytes.size());
  if (!got.ok())
    return got.status();
  if (*got < dimBytes.size())
    return error(path, absl::StrFormat("truncated header: expected %d dimensions "
                                       "(%d bytes) but found %d bytes",
                                       rank, dimBytes.size(), *got));
  HostTensor tensor;
  tensor.dtype = *type->dtype;
  for (int i = 0; i < rank; ++i) {
    const unsigned char *p = &dimBytes[4 * i];
    tensor.shape.push_back((int64_t(p[0]) << 24) | (int64_t(p[1]) << 16) |
                           (int64_t(p[2]) << 8) | int64_t(p[3]));
  }
  absl::StatusOr<int64_t> numel =
      checkedNumel(tensor.shape, kMaxIdxBytes / static_cast<int64_t>(type->size));
  if (!numel.ok())
    return error(path, absl::StrFormat("dimensions too large: %s", numel.status().message()));

  size_t expected = static_cast<size_t>(*numel) * type->size;
  tensor.bytes.resize(expected);
  got = source.read(tensor.bytes.data(), expected);
  if (!got.ok())
    return got.status();
  // Read past the end too: it finds trailing data and makes zlib check the CRC.
  size_t found = *got;
  if (found == expected) {
    char extra[1 << 12];
    while (true) {
      absl::StatusOr<size_t> more = source.read(extra, sizeof(extra));
      if (!more.ok())
        return more.status();
      if (*more == 0)
        break;
      found += *more;
    }
  }
  if (found != expected)
    return error(path, absl::StrFormat("expected %d bytes of data for shape %s but found %d",
                                       expected, formatShape(tensor.shape), found));
  swapToLittleEndian(tensor.bytes, type->size);
  return tensor;
}

namespace {

bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

absl::StatusOr<HostTensor> readSplitFile(const std::string &dir, const std::string &name) {
  std::string plain = dir + "/" + name;
  std::string gz = plain + ".gz";
  if (exists(gz))
    return readIdx(gz);
  if (exists(plain))
    return readIdx(plain);
  return absl::NotFoundError(
      absl::StrFormat("%s: fashion-mnist file not found (nor %s)", gz, plain));
}

} // namespace

absl::StatusOr<Dataset> loadFashionMnist(const std::string &dir, bool train) {
  std::string prefix = train ? "train" : "t10k";
  absl::StatusOr<HostTensor> images = readSplitFile(dir, prefix + "-images-idx3-ubyte");
  if (!images.ok())
    return images.status();
  absl::StatusOr<HostTensor> labels = readSplitFile(dir, prefix + "-labels-idx1-ubyte");
  if (!labels.ok())
    return labels.status();
  std::string where = dir + "/" + prefix;
  if (images->dtype != DType::U8 || images->shape.size() != 3 || images->shape[1] != 28 ||
      images->shape[2] != 28)
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s images: expected U8 [N, 28, 28] but found %s %s", where,
        dtypeName(images->dtype), formatShape(images->shape)));
  if (labels->dtype != DType::U8 || labels->shape.size() != 1)
    return absl::InvalidArgumentError(
        absl::StrFormat("%s labels: expected U8 [N] but found %s %s", where,
                        dtypeName(labels->dtype), formatShape(labels->shape)));
  if (images->shape[0] != labels->shape[0])
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %d images but %d labels", where, images->shape[0],
                        labels->shape[0]));
  for (size_t i = 0; i < labels->bytes.size(); ++i)
    if (labels->bytes[i] >= 10)
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s labels: label %d is %d, expected 0 to 9", where, i, labels->bytes[i]));
  return Dataset{std::move(*images), std::move(*labels)};
}

} // namespace cairn::runtime
