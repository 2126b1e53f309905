//===- SafetensorsTest.cpp - safetensors reader and writer tests ----------===//
#include "runtime/Safetensors.h"

#include "TestFiles.h"

#include <cstring>

using namespace cairn::runtime;
using namespace cairn::runtime::test;

namespace {

HostTensor makeF32(std::vector<int64_t> shape, float start) {
  HostTensor t;
  t.dtype = DType::F32;
  t.shape = std::move(shape);
  std::vector<float> values(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = start + float(i);
  t.bytes.resize(values.size() * 4);
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

/// A file with the given JSON header (unpadded) and data buffer.
std::string file(const std::string &header, const std::string &data) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i)
    s[i] = char((uint64_t(header.size()) >> (8 * i)) & 0xff);
  return s + header + data;
}

void expectError(const std::string &path, const std::string &fragment) {
  expectFileError(loadSafetensors(path).status(), path, fragment);
}

TEST(Safetensors, RoundTrips) {
  TempDir dir;
  TensorMap tensors;
  tensors["fc1.weight"] = makeF32({3, 2}, 1);
  tensors["fc1.bias"] = makeF32({3}, -1);
  HostTensor steps{DType::I64, {}, std::vector<uint8_t>(8, 0)};
  steps.bytes[0] = 7;
  tensors["bn.num_batches_tracked"] = steps;
  tensors["empty"] = HostTensor{DType::BF16, {0, 5}, {}};
  tensors["bytes"] = HostTensor{DType::U8, {3}, {1, 2, 3}};
  std::string path = dir.file("m.safetensors");
  ASSERT_TRUE(saveSafetensors(path, tensors, {{"format", "pt"}}).ok());
  EXPECT_FALSE(fileExists(path + ".tmp." + std::to_string(getpid())));

  std::string raw = readBytes(path);
  uint64_t headerSize = 0;
  std::memcpy(&headerSize, raw.data(), 8);
  EXPECT_EQ(headerSize % 8, 0u);
  EXPECT_EQ(raw[8], '{');

  std::map<std::string, std::string> metadata;
  absl::StatusOr<TensorMap> back = loadSafetensors(path, &metadata);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(metadata, (std::map<std::string, std::string>{{"format", "pt"}}));
  ASSERT_EQ(back->size(), tensors.size());
  for (const auto &[name, tensor] : tensors) {
    const HostTensor &got = back->at(name);
    EXPECT_EQ(got.dtype, tensor.dtype) << name;
    EXPECT_EQ(got.shape, tensor.shape) << name;
    EXPECT_EQ(got.bytes, tensor.bytes) << name;
  }
}

TEST(Safetensors, SaveFailsWithoutPartialOutput) {
  TempDir dir;
  std::string path = dir.file("bad.safetensors");
  TensorMap tensors;
  tensors["w"] = HostTensor{DType::F32, {2}, std::vector<uint8_t>(7)};
  absl::Status status = saveSafetensors(path, tensors);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("tensor 'w': F32 [2] needs 8 bytes but has 7"),
            std::string::npos)
      << status;
  EXPECT_FALSE(fileExists(path));

  tensors["w"].bytes.resize(8);
  status = saveSafetensors(dir.file("no-such-dir/m.safetensors"), tensors);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("no-such-dir/m.safetensors"), std::string::npos);
}

TEST(Safetensors, RejectsEveryTruncation) {
  TempDir dir;
  TensorMap tensors;
  tensors["a"] = makeF32({2}, 0);
  tensors["b"] = makeF32({1}, 0);
  std::string path = dir.file("full.safetensors");
  ASSERT_TRUE(saveSafetensors(path, tensors).ok());
  std::string full = readBytes(path);
  for (size_t n = 0; n < full.size(); ++n) {
    writeBytes(dir.file("cut"), full.substr(0, n));
    EXPECT_FALSE(loadSafetensors(dir.file("cut")).ok()) << "prefix of " << n << " bytes";
  }
}

TEST(Safetensors, ReportsEachError) {
  TempDir dir;
  auto check = [&](const std::string &name, const std::string &contents,
                   const std::string &fragment) {
    writeBytes(dir.file(name), contents);
    expectError(dir.file(name), fragment);
  };
  const std::string w = R"("w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  writeBytes(dir.file("ok"), file("{" + w + "}", std::string(8, 'x')));
  ASSERT_TRUE(loadSafetensors(dir.file("ok")).ok());
  expectError(dir.file("absent"), "cannot open");
  check("huge", std::string("\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10), "larger than the limit");
  check("past", std::string("\x40\0\0\0\0\0\0\0{}", 10), "expected 64 header bytes but found 2");
  check("json", file("{\"w\":", ""), "not well-formed JSON");
  check("array", file("[1, 2]", ""), "starting with '{'");
  check("dup", file("{" + w + "," + w + "}", std::string(8, 'x')), "key 'w' twice");
  check("dtype", file(R"({"w":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})", "xx"),
        "tensor 'w': unsupported dtype 'F8_E4M3'");
  check("shape", file(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", "xxxxxxxx"),
        "tensor 'w': shape must be an array of non-negative integers");
  check("size", file(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", "xxxxxxxx"),
        "tensor 'w': F32 [3] needs 12 bytes but data_offsets [0, 8] hold 8");
  check("outside", file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", "xxxx"),
        "tensor 'w': data_offsets [0, 8] are outside the 4-byte data buffer");
  check("overlap",
        file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
             R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
             std::string(8, 'x')),
        "tensor 'b' at [4, 8] overlaps tensor 'a' ending at 8");
  check("hole", file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", "xxxxxxxx"),
        "has a hole");
  check("tail", file("{" + w + "}", std::string(12, 'x')),
        "the tensors cover 8 bytes of the data buffer but it has 12");
  check("meta", file(R"({"__metadata__":{"epoch":3}})", ""), "value of 'epoch' must be a string");
  check("extra", file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})",
                      std::string(8, 'x')),
        "tensor 'w': expected an object with exactly");
}

TEST(Safetensors, CheckTensorMessages) {
  TensorMap tensors;
  tensors["fc1.weight"] = makeF32({256, 784}, 0);
  EXPECT_TRUE(checkTensor(tensors, "fc1.weight", DType::F32, {256, 784}, "m.safetensors").ok());
  EXPECT_EQ(checkTensor(tensors, "fc1.weight", DType::F32, {128, 784}, "m.safetensors").message(),
            "m.safetensors: tensor 'fc1.weight' has shape [256, 784] but the model expects "
            "[128, 784]");
  EXPECT_EQ(checkTensor(tensors, "fc1.weight", DType::BF16, {256, 784}, "m.safetensors").message(),
            "m.safetensors: tensor 'fc1.weight' has dtype F32 but the model expects BF16");
  EXPECT_EQ(checkTensor(tensors, "fc2.bias", DType::F32, {10}, "m.safetensors").message(),
            "m.safetensors: tensor 'fc2.bias' is missing");
}

} // namespace
