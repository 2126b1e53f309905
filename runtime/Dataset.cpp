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

void Examples::fillBatch(const int64_t *indices, int64_t n,
                         const std::vector<unsigned char *> &destinations) const {
  for (size_t c = 0; c < columns.size(); ++c) {
    if (!destinations[c])
      continue;
    const Column &column = columns[c];
    const DType to = column.format.dtype, from = column.data.dtype;
    const size_t toSize = dtypeSize(to), fromSize = dtypeSize(from);
    const int64_t elements = column.exampleElements;
    const bool floating = to != DType::I32 && to != DType::I64;
    for (int64_t row = 0; row < n; ++row) {
      unsigned char *dst = destinations[c] + row * elements * toSize;
      const uint8_t *src = column.data.bytes.data() + indices[row] * elements * fromSize;
      // An array of the input's dtype fed as it is: the row's bytes.
      if (from == to && !column.normalize) {
        std::memcpy(dst, src, static_cast<size_t>(elements) * toSize);
        continue;
      }
      for (int64_t k = 0; k < elements; ++k) {
        if (!floating) {
          storeScalar(to, loadScalar(from, src + k * fromSize), dst + k * toSize);
          continue;
        }
        // In float, as torchvision's ToTensor + Normalize.
        float value;
        if (from == DType::U8)
          value = static_cast<float>(src[k]) / 255.0f;
        else if (from == DType::F32)
          std::memcpy(&value, src + 4 * k, sizeof(value));
        else
          value = static_cast<float>(loadScalar(from, src + k * fromSize));
        if (column.normalize)
          value = (value - normalization.mean) / normalization.std;
        // The common case skips the dtype switch.
        if (to == DType::F32)
          std::memcpy(dst + 4 * k, &value, sizeof(value));
        else
          storeScalar(to, value, dst + k * toSize);
      }
    }
  }
}

namespace {

bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool isIntegerInput(const InputFormat &input) {
  return input.dtype == DType::I32 || input.dtype == DType::I64;
}

/// MNIST's two files of one split in one format.
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

/// Checks `data` (read from `path`) against its input: dtype, elements per
/// example, the class range.
absl::Status checkColumn(const std::string &path, const HostTensor &data,
                         const InputFormat &input, int64_t &exampleElements) {
  bool integer = isIntegerInput(input);
  DType dtype = data.dtype;
  if (integer && dtype != DType::U8 && dtype != DType::I32 && dtype != DType::I64)
    return fileError(path, absl::StrFormat("holds %s values; the model's input '%s' takes "
                                           "integers (uint8, int32 or int64)",
                                           dtypeName(dtype), input.name));
  if (!integer && dtype != DType::U8 && dtype != DType::F32 && dtype != DType::F64)
    return fileError(path, absl::StrFormat("holds %s values; the model's input '%s' takes "
                                           "uint8 (scaled by 1/255), float32 or float64",
                                           dtypeName(dtype), input.name));
  int64_t modelElements = 1;
  for (size_t i = 1; i < input.shape.size(); ++i)
    modelElements *= input.shape[i];
  exampleElements = 1;
  for (size_t i = 1; i < data.shape.size(); ++i)
    exampleElements *= data.shape[i];
  if (data.shape.empty() || exampleElements != modelElements)
    return fileError(path, absl::StrFormat(
                               "holds shape %s, which does not fit the model's input '%s' %s %s "
                               "(%d values per example)",
                               formatShape(data.shape), input.name, dtypeName(input.dtype),
                               formatShape(input.shape), modelElements));
  if (data.shape[0] == 0)
    return fileError(path, "holds no examples");
  if (input.classes > 0) {
    size_t size = dtypeSize(dtype);
    int64_t n = data.shape[0] * exampleElements;
    for (int64_t i = 0; i < n; ++i) {
      auto label = static_cast<int64_t>(loadScalar(dtype, &data.bytes[i * size]));
      if (label < 0 || label >= input.classes)
        return fileError(path, absl::StrFormat("label at index %d is %d, expected 0 to %d (the "
                                               "model's output has %d classes)",
                                               i, label, input.classes - 1, input.classes));
    }
  }
  return absl::OkStatus();
}

std::string joinNames(const std::vector<InputFormat> &inputs) {
  std::string names;
  for (const InputFormat &input : inputs)
    names += (names.empty() ? "'" : ", '") + input.name + "'";
  return names;
}

/// Where an input's examples come from, and how they read.
struct Source {
  std::string path;
  bool idx = false;
  bool image = false; // MNIST's images (normalised whatever their dtype)
};

} // namespace

/// Reads and checks each input's source into Examples' columns.
struct ExamplesReader {
  static absl::StatusOr<Examples> read(const std::vector<InputFormat> &inputs,
                                       const std::vector<Source> &sources,
                                       const Normalization &normalization) {
    Examples examples;
    examples.normalization = normalization;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Source &source = sources[i];
      absl::StatusOr<HostTensor> data = source.idx ? readIdx(source.path) : readNpy(source.path);
      if (!data.ok())
        return data.status();
      Examples::Column column;
      column.format = inputs[i];
      if (absl::Status status =
              checkColumn(source.path, *data, inputs[i], column.exampleElements);
          !status.ok())
        return status;
      int64_t n = data->shape[0];
      if (i > 0 && n != examples.count)
        return fileError(source.path, absl::StrFormat("holds %d examples but %s holds %d", n,
                                                      sources[0].path, examples.count));
      examples.count = n;
      column.normalize =
          !isIntegerInput(inputs[i]) && (source.image || data->dtype == DType::U8);
      column.data = std::move(*data);
      examples.columns.push_back(std::move(column));
    }
    return examples;
  }
};

absl::StatusOr<Examples> loadArrays(const std::vector<InputFormat> &inputs,
                                    const std::vector<std::string> &paths,
                                    const Normalization &normalization) {
  std::vector<Source> sources;
  for (const std::string &path : paths)
    sources.push_back({path, false, false});
  return ExamplesReader::read(inputs, sources, normalization);
}

absl::StatusOr<std::optional<Examples>> loadSplit(const std::string &dir, Split split,
                                                  const std::vector<InputFormat> &inputs,
                                                  const Normalization &normalization) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return absl::NotFoundError(absl::StrFormat("%s: data directory not found", dir));
  const std::string prefix = split == Split::Train ? "train_" : "test_";

  std::vector<Source> sources(inputs.size());
  std::vector<std::string> present, missing;
  for (size_t i = 0; i < inputs.size(); ++i) {
    sources[i].path = dir + "/" + prefix + inputs[i].name + ".npy";
    (exists(sources[i].path) ? present : missing).push_back(prefix + inputs[i].name + ".npy");
  }
  if (!present.empty() && !missing.empty())
    return absl::NotFoundError(absl::StrFormat(
        "%s: %s not found (%s is there): a data directory holds one file per input of the model",
        dir, missing.front(), present.front()));
  if (present.empty()) {
    std::optional<SplitFiles> files = findSplitFiles(dir, split);
    if (!files)
      return std::optional<Examples>();
    // MNIST's layout feeds one floating-point input and at most one integer one.
    int floating = 0, integer = 0;
    for (const InputFormat &input : inputs)
      (isIntegerInput(input) ? integer : floating) += 1;
    if (floating != 1 || integer > 1)
      return absl::NotFoundError(absl::StrFormat(
          "%s: the model's inputs %s are each read from %s<input>.npy, which is not there (%s "
          "feeds a model with one floating-point input and at most one integer input)",
          dir, joinNames(inputs), prefix, files->images));
    for (size_t i = 0; i < inputs.size(); ++i) {
      bool label = isIntegerInput(inputs[i]);
      sources[i] = {label ? files->labels : files->images, files->idx, !label};
      if (label && !exists(files->labels)) {
        std::string wanted = files->labels;
        if (files->idx) // neither name exists; say both
          wanted = wanted.substr(0, wanted.size() - 3) + "[.gz]";
        return absl::NotFoundError(absl::StrFormat(
            "%s: label file not found (the images are in %s)", wanted, files->images));
      }
    }
  }

  absl::StatusOr<Examples> examples = ExamplesReader::read(inputs, sources, normalization);
  if (!examples.ok())
    return examples.status();
  return std::optional<Examples>(std::move(*examples));
}

} // namespace cairn::runtime
