//===- Dataset.cpp - Training and test examples, shuffled and batched -----===//
#include "runtime/Dataset.h"

#include "runtime/Idx.h"
#include "runtime/Npy.h"
#include "runtime/Random.h"
#include "runtime/Scalar.h"

#include "absl/strings/str_format.h"

#include <cstring>
#include <sys/stat.h>

namespace cairn::runtime {

std::vector<int64_t> epochPermutation(int64_t n, uint64_t seed, int64_t epoch) {
  SplitMix64 random(seed + SplitMix64::kGamma * (static_cast<uint64_t>(epoch) + 1));
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    order[i] = i;
  for (int64_t i = n - 1; i >= 1; --i) {
    auto j = static_cast<int64_t>(random.next() % static_cast<uint64_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

void Examples::fillBatch(const int64_t *indices, int64_t count, unsigned char *image,
                         unsigned char *label) const {
  size_t imageSize = dtypeSize(format.imageDType);
  size_t labelSize = dtypeSize(format.labelDType);
  bool scale = images.dtype == DType::U8;
  for (int64_t row = 0; row < count; ++row) {
    int64_t example = indices[row];
    unsigned char *dst = image + row * exampleElements * imageSize;
    const uint8_t *src = images.bytes.data() +
                         example * exampleElements * static_cast<int64_t>(dtypeSize(images.dtype));
    for (int64_t k = 0; k < exampleElements; ++k) {
      float value;
      if (scale) {
        value = static_cast<float>(src[k]) / 255.0f;
      } else {
        std::memcpy(&value, src + 4 * k, sizeof(value));
      }
      value = (value - normalization.mean) / normalization.std;
      // The common case skips the dtype switch.
      if (format.imageDType == DType::F32)
        std::memcpy(dst + 4 * k, &value, sizeof(value));
      else
        storeScalar(format.imageDType, value, dst + k * imageSize);
    }
    storeScalar(format.labelDType, static_cast<double>(labels[example]),
                label + row * labelSize);
  }
}

namespace {

bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

/// The two files of one split in one format.
struct SplitFiles {
  std::string images, labels;
  bool idx;
};

/// Picks the IDX files when their image file exists (the .gz when both do),
/// else the NumPy files when theirs does; nullopt when neither does.
std::optional<SplitFiles> findSplitFiles(const std::string &dir, Split split) {
  std::string idxPrefix = dir + (split == Split::Train ? "/train-" : "/t10k-");
  auto pickIdx = [](const std::string &plain) {
    return exists(plain + ".gz") || !exists(plain) ? plain + ".gz" : plain;
  };
  std::string idxImages = pickIdx(idxPrefix + "images-idx3-ubyte");
  if (exists(idxImages))
    return SplitFiles{idxImages, pickIdx(idxPrefix + "labels-idx1-ubyte"), true};
  std::string npyPrefix = dir + (split == Split::Train ? "/train_" : "/test_");
  if (exists(npyPrefix + "images.npy"))
    return SplitFiles{npyPrefix + "images.npy", npyPrefix + "labels.npy", false};
  return std::nullopt;
}

absl::Status fileError(const std::string &path, const std::string &what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", path, what));
}

/// Images as U8 or F32 (F64 files are narrowed once here).
absl::Status checkImages(const std::string &path, HostTensor &images,
                         const InputFormat &format, int64_t &exampleElements) {
  if (images.dtype == DType::F64) {
    std::vector<uint8_t> narrowed(images.bytes.size() / 2);
    for (size_t i = 0; i < narrowed.size() / 4; ++i) {
      auto value = static_cast<float>(loadScalar(DType::F64, &images.bytes[8 * i]));
      std::memcpy(&narrowed[4 * i], &value, sizeof(value));
    }
    images.bytes = std::move(narrowed);
    images.dtype = DType::F32;
  }
  if (images.dtype != DType::U8 && images.dtype != DType::F32)
    return fileError(path, absl::StrFormat("images are %s; expected uint8 (scaled by 1/255) "
                                           "or float32",
                                           dtypeName(images.dtype)));
  int64_t modelElements = 1;
  for (size_t i = 1; i < format.imageShape.size(); ++i)
    modelElements *= format.imageShape[i];
  exampleElements = 1;
  for (size_t i = 1; i < images.shape.size(); ++i)
    exampleElements *= images.shape[i];
  if (images.shape.empty() || exampleElements != modelElements)
    return fileError(path, absl::StrFormat(
                               "images of shape %s do not fit the model's input '%s' %s %s "
                               "(%d values per example)",
                               formatShape(images.shape), format.imageName,
                               dtypeName(format.imageDType), formatShape(format.imageShape),
                               modelElements));
  if (images.shape[0] == 0)
    return fileError(path, "holds no examples");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> readLabels(const std::string &path, const HostTensor &raw,
                                                int64_t count, int64_t classes) {
  if (raw.dtype != DType::U8 && raw.dtype != DType::I32 && raw.dtype != DType::I64)
    return fileError(path, absl::StrFormat("labels are %s; expected integers (uint8, int32 or "
                                           "int64)",
                                           dtypeName(raw.dtype)));
  if (raw.shape != std::vector<int64_t>{count})
    return fileError(path, absl::StrFormat("labels have shape %s but the images file holds %d "
                                           "examples, expected [%d]",
                                           formatShape(raw.shape), count, count));
  std::vector<int64_t> labels(static_cast<size_t>(count));
  size_t size = dtypeSize(raw.dtype);
  for (int64_t i = 0; i < count; ++i) {
    auto label = static_cast<int64_t>(loadScalar(raw.dtype, &raw.bytes[i * size]));
    if (label < 0 || label >= classes)
      return fileError(path, absl::StrFormat("label at index %d is %d, expected 0 to %d (the "
                                             "model's output has %d classes)",
                                             i, label, classes - 1, classes));
    labels[i] = label;
  }
  return labels;
}

} // namespace

absl::StatusOr<std::optional<Examples>> loadSplit(const std::string &dir, Split split,
                                                  const InputFormat &format,
                                                  const Normalization &normalization) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return absl::NotFoundError(absl::StrFormat("%s: data directory not found", dir));
  std::optional<SplitFiles> files = findSplitFiles(dir, split);
  if (!files)
    return std::optional<Examples>();
  if (!exists(files->labels)) {
    std::string wanted = files->labels;
    if (files->idx) // neither name exists; say both
      wanted = wanted.substr(0, wanted.size() - 3) + "[.gz]";
    return absl::NotFoundError(absl::StrFormat(
        "%s: label file not found (the images are in %s)", wanted, files->images));
  }
  auto read = [&](const std::string &path) {
    return files->idx ? readIdx(path) : readNpy(path);
  };
  absl::StatusOr<HostTensor> images = read(files->images);
  if (!images.ok())
    return images.status();
  Examples examples;
  if (absl::Status status = checkImages(files->images, *images, format, examples.exampleElements);
      !status.ok())
    return status;
  absl::StatusOr<HostTensor> rawLabels = read(files->labels);
  if (!rawLabels.ok())
    return rawLabels.status();
  absl::StatusOr<std::vector<int64_t>> labels =
      readLabels(files->labels, *rawLabels, images->shape[0], format.classes);
  if (!labels.ok())
    return labels.status();
  examples.images = std::move(*images);
  examples.labels = std::move(*labels);
  examples.format = format;
  examples.normalization = normalization;
  return std::optional<Examples>(std::move(examples));
}

} // namespace cairn::runtime
