//===- DatasetTest.cpp - Data directories, checks and batches -------------===//
#include "runtime/Dataset.h"

#include "DataFiles.h"
#include "TestFiles.h"

#include <cstdio>

using namespace cairn::runtime;
using namespace cairn::runtime::test;

namespace {

/// The model of these tests: image f32[2, 1, 2, 3], label i64[2], 4 classes.
std::vector<InputFormat> format() {
  return {InputFormat{"image", DType::F32, {2, 1, 2, 3}, 0},
          InputFormat{"label", DType::I64, {2}, 4}};
}

/// Three 2x3 images whose pixels are 10 * example + position; labels 3, 0, 2.
std::string imageBytes() {
  std::string s;
  for (int example = 0; example < 3; ++example)
    for (int k = 0; k < 6; ++k)
      s.push_back(char(10 * example + k));
  return s;
}

void writeIdxSplit(const TempDir &dir, const std::string &prefix, bool gzip) {
  std::string images = idxFile(0x08, {3, 2, 3}, imageBytes());
  std::string labels = idxFile(0x08, {3}, std::string{3, 0, 2});
  if (gzip) {
    writeGzip(dir.file(prefix + "-images-idx3-ubyte.gz"), images);
    writeGzip(dir.file(prefix + "-labels-idx1-ubyte.gz"), labels);
  } else {
    writeBytes(dir.file(prefix + "-images-idx3-ubyte"), images);
    writeBytes(dir.file(prefix + "-labels-idx1-ubyte"), labels);
  }
}

Examples load(const TempDir &dir, Split split, Normalization normalization = {}) {
  absl::StatusOr<std::optional<Examples>> examples =
      loadSplit(dir.path, split, format(), normalization);
  EXPECT_TRUE(examples.ok()) << examples.status();
  EXPECT_TRUE(examples.ok() && examples->has_value());
  return std::move(**examples);
}

/// Examples `indices` as the model's inputs.
std::pair<std::vector<float>, std::vector<int64_t>> batch(const Examples &examples,
                                                          std::vector<int64_t> indices) {
  std::vector<float> image(indices.size() * 6);
  std::vector<int64_t> label(indices.size());
  examples.fillBatch(indices.data(), static_cast<int64_t>(indices.size()),
                     {reinterpret_cast<unsigned char *>(image.data()),
                      reinterpret_cast<unsigned char *>(label.data())});
  return {image, label};
}

void expectError(const TempDir &dir, Split split, const std::string &path,
                 const std::string &fragment) {
  expectFileError(loadSplit(dir.path, split, format(), {}).status(), path, fragment);
}

TEST(Dataset, IdxPlainAndGzipScaledBy255) {
  TempDir dir;
  writeIdxSplit(dir, "train", /*gzip=*/true);
  writeIdxSplit(dir, "t10k", /*gzip=*/false);
  for (Split split : {Split::Train, Split::Test}) {
    Examples examples = load(dir, split);
    ASSERT_EQ(examples.size(), 3);
    auto [image, label] = batch(examples, {2, 0});
    EXPECT_EQ(label, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(image[0], 20.0f / 255.0f);
    EXPECT_EQ(image[5], 25.0f / 255.0f);
    EXPECT_EQ(image[6], 0.0f);
    EXPECT_EQ(image[11], 5.0f / 255.0f);
  }
}

TEST(Dataset, PrefersGzipWhenBothExist) {
  TempDir dir;
  writeIdxSplit(dir, "train", /*gzip=*/true);
  writeBytes(dir.file("train-images-idx3-ubyte"), "not an idx file");
  EXPECT_EQ(load(dir, Split::Train).size(), 3);
}

TEST(Dataset, Normalizes) {
  TempDir dir;
  writeIdxSplit(dir, "train", /*gzip=*/false);
  Examples examples = load(dir, Split::Train, Normalization{0.5f, 0.25f});
  auto [image, label] = batch(examples, {1});
  EXPECT_EQ(image[0], (10.0f / 255.0f - 0.5f) / 0.25f);
}

TEST(Dataset, NumpyUint8AndFloat32WithOtherDTypes) {
  TempDir dir;
  writeBytes(dir.file("train_images.npy"), npyFile("|u1", {3, 6}, imageBytes()));
  writeBytes(dir.file("train_labels.npy"), npyFile("<i8", {3}, rawBytes<int64_t>({1, 2, 3})));
  std::vector<float> pixels(18);
  for (int i = 0; i < 18; ++i)
    pixels[i] = 0.5f * static_cast<float>(i);
  writeBytes(dir.file("test_images.npy"), npyFile("<f4", {3, 1, 6}, rawBytes(pixels)));
  writeBytes(dir.file("test_labels.npy"), npyFile("<i4", {3}, rawBytes<int32_t>({0, 0, 1})));

  auto [trainImage, trainLabel] = batch(load(dir, Split::Train), {0, 1});
  EXPECT_EQ(trainImage[7], 11.0f / 255.0f);
  EXPECT_EQ(trainLabel, (std::vector<int64_t>{1, 2}));
  // Float images are used as they are, then normalised.
  auto [testImage, testLabel] = batch(load(dir, Split::Test, Normalization{1, 2}), {2});
  EXPECT_EQ(testImage[1], (6.5f - 1) / 2);
  EXPECT_EQ(testLabel, (std::vector<int64_t>{1}));
}

TEST(Dataset, WritesTheModelsDTypes) {
  TempDir dir;
  writeIdxSplit(dir, "train", /*gzip=*/false);
  std::vector<InputFormat> narrow = {{"x", DType::F64, {1, 6}, 0},
                                     {"y", DType::I32, {1}, 4}};
  absl::StatusOr<std::optional<Examples>> examples =
      loadSplit(dir.path, Split::Train, narrow, {});
  ASSERT_TRUE(examples.ok()) << examples.status();
  double image[6];
  int32_t label[1];
  int64_t index = 1;
  (*examples)->fillBatch(&index, 1,
                         {reinterpret_cast<unsigned char *>(image),
                          reinterpret_cast<unsigned char *>(label)});
  EXPECT_EQ(image[2], static_cast<double>(12.0f / 255.0f));
  EXPECT_EQ(label[0], 0);
}

TEST(Dataset, MissingSplitIsNotAnError) {
  TempDir dir;
  writeIdxSplit(dir, "train", /*gzip=*/false);
  absl::StatusOr<std::optional<Examples>> test = loadSplit(dir.path, Split::Test, format(), {});
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_FALSE(test->has_value());
}

TEST(Dataset, ShapeMismatchNamesFileShapeAndInput) {
  TempDir dir;
  writeBytes(dir.file("train-images-idx3-ubyte"), idxFile(0x08, {2, 2, 2}, std::string(8, 1)));
  writeBytes(dir.file("train-labels-idx1-ubyte"), idxFile(0x08, {2}, std::string(2, 0)));
  std::string path = dir.file("train-images-idx3-ubyte");
  expectError(dir, Split::Train, path, "holds shape [2, 2, 2]");
  expectError(dir, Split::Train, path, "'image' F32 [2, 1, 2, 3]");
}

TEST(Dataset, LabelOutOfRangeNamesFileAndIndex) {
  TempDir dir;
  writeBytes(dir.file("train_images.npy"), npyFile("|u1", {3, 2, 3}, imageBytes()));
  writeBytes(dir.file("train_labels.npy"), npyFile("<i8", {3}, rawBytes<int64_t>({0, 4, 1})));
  expectError(dir, Split::Train, dir.file("train_labels.npy"), "label at index 1 is 4");
  writeBytes(dir.file("train_labels.npy"), npyFile("<i8", {3}, rawBytes<int64_t>({0, 1, -1})));
  expectError(dir, Split::Train, dir.file("train_labels.npy"), "label at index 2 is -1");
}

TEST(Dataset, OtherFileErrors) {
  TempDir dir;
  writeBytes(dir.file("train_images.npy"), npyFile("|u1", {3, 2, 3}, imageBytes()));
  expectError(dir, Split::Train, dir.file("train_labels.npy"), "label file not found");
  writeBytes(dir.file("train_labels.npy"), npyFile("<f4", {3}, rawBytes<float>({0, 1, 2})));
  expectError(dir, Split::Train, dir.file("train_labels.npy"),
              "takes integers");
  writeBytes(dir.file("train_labels.npy"), npyFile("<i8", {2}, rawBytes<int64_t>({0, 1})));
  expectError(dir, Split::Train, dir.file("train_labels.npy"),
              "holds 2 examples but " + dir.file("train_images.npy") +
                  " holds 3");
  writeBytes(dir.file("train_images.npy"), npyFile("<i4", {1, 6}, std::string(24, 0)));
  expectError(dir, Split::Train, dir.file("train_images.npy"),
              "holds I32 values");
  expectFileError(loadSplit(dir.path + "/nope", Split::Train, format(), {}).status(),
                  dir.path + "/nope", "data directory not found");
}

TEST(Dataset, OneFilePerInputNamedAfterIt) {
  // A regression: x f32[2, 3] and y f32[2, 1], from float32 and float64
  // files fed as they are (no normalisation of floats), and a uint8 input
  // scaled and normalised.
  TempDir dir;
  writeBytes(
      dir.file("train_x.npy"),
      npyFile("<f4", {3, 3}, rawBytes<float>({1, 2, 3, 4, 5, 6, 7, 8, 9})));
  writeBytes(dir.file("train_y.npy"),
             npyFile("<f8", {3, 1}, rawBytes<double>({0.1, 0.2, 0.3})));
  writeBytes(dir.file("train_p.npy"),
             npyFile("|u1", {3, 2}, std::string{0, 51, 102, 0, 1, 2}));
  std::vector<InputFormat> inputs = {{"x", DType::F32, {2, 3}, 0},
                                     {"y", DType::F64, {2, 1}, 0},
                                     {"p", DType::F32, {2, 2}, 0}};
  absl::StatusOr<std::optional<Examples>> examples =
      loadSplit(dir.path, Split::Train, inputs, Normalization{0.5f, 2.0f});
  ASSERT_TRUE(examples.ok()) << examples.status();
  ASSERT_TRUE(examples->has_value());
  EXPECT_EQ((*examples)->size(), 3);
  float x[6], p[4];
  double y[2];
  int64_t indices[] = {2, 0};
  (*examples)->fillBatch(indices, 2,
                         {reinterpret_cast<unsigned char *>(x),
                          reinterpret_cast<unsigned char *>(y),
                          reinterpret_cast<unsigned char *>(p)});
  EXPECT_EQ(x[0], 7.0f);
  EXPECT_EQ(x[5], 3.0f);
  EXPECT_EQ(y[0], 0.3); // float64 into float64, digits kept
  EXPECT_EQ(y[1], 0.1);
  EXPECT_EQ(p[0], (1.0f / 255.0f - 0.5f) / 2.0f);
  EXPECT_EQ(p[3], (51.0f / 255.0f - 0.5f) / 2.0f);
  // No test files: no test split.
  absl::StatusOr<std::optional<Examples>> test =
      loadSplit(dir.path, Split::Test, inputs, {});
  ASSERT_TRUE(test.ok()) << test.status();
  EXPECT_FALSE(test->has_value());
  // Some files of a split but not all: an error naming the missing one.
  std::remove(dir.file("train_p.npy").c_str());
  expectFileError(loadSplit(dir.path, Split::Train, inputs, {}).status(),
                  dir.path, "train_p.npy not found (train_x.npy is there)");
}

TEST(Dataset, ImagesAloneFeedAnAutoencoder) {
  // One floating-point input and no integer one: the images feed it, and a
  // label file is neither needed nor read.
  TempDir dir;
  writeBytes(dir.file("t10k-images-idx3-ubyte"),
             idxFile(0x08, {3, 2, 3}, imageBytes()));
  std::vector<InputFormat> inputs = {{"image", DType::F32, {2, 1, 2, 3}, 0}};
  absl::StatusOr<std::optional<Examples>> examples =
      loadSplit(dir.path, Split::Test, inputs, {});
  ASSERT_TRUE(examples.ok()) << examples.status();
  float image[6];
  int64_t index = 1;
  (*examples)->fillBatch(&index, 1, {reinterpret_cast<unsigned char *>(image)});
  EXPECT_EQ(image[1], 11.0f / 255.0f);
}

TEST(Dataset, MnistFilesFeedOnlyOneImageAndOneLabel) {
  TempDir dir;
  writeIdxSplit(dir, "train", /*gzip=*/false);
  std::vector<InputFormat> inputs = {{"a", DType::F32, {2, 6}, 0},
                                     {"b", DType::F32, {2, 6}, 0}};
  expectFileError(
      loadSplit(dir.path, Split::Train, inputs, {}).status(), dir.path,
      "the model's inputs 'a', 'b' are each read from train_<input>.npy");
}

TEST(Dataset, ArraysForPredict) {
  TempDir dir;
  writeBytes(dir.file("x.npy"), npyFile("|u1", {3, 6}, imageBytes()));
  std::vector<InputFormat> inputs = {{"image", DType::F32, {2, 1, 2, 3}, 0}};
  absl::StatusOr<Examples> examples =
      loadArrays(inputs, {dir.file("x.npy")}, Normalization{0, 0.5f});
  ASSERT_TRUE(examples.ok()) << examples.status();
  EXPECT_EQ(examples->size(), 3);
  float image[6];
  int64_t index = 2;
  examples->fillBatch(&index, 1, {reinterpret_cast<unsigned char *>(image)});
  EXPECT_EQ(image[3], (23.0f / 255.0f) / 0.5f);
  writeBytes(dir.file("bad.npy"), npyFile("<f4", {3, 5}, std::string(60, 0)));
  expectFileError(loadArrays(inputs, {dir.file("bad.npy")}, {}).status(),
                  dir.file("bad.npy"), "(6 values per example)");
}

} // namespace
