//===- SafetensorsRoundTrip.cpp - Interop check with PyTorch --------------===//
//
// cairn-safetensors-roundtrip IN OUT: loads IN (written by
// test/reference/safetensors_interop.py --write), checks every tensor against
// the values that script writes, and saves it to OUT for --check.
//
//===----------------------------------------------------------------------===//
#include "runtime/Safetensors.h"

#include <cstdio>
#include <cstring>

using namespace cairn::runtime;

namespace {

int failures = 0;

template <typename T>
void expectValues(const TensorMap &tensors, const std::string &name, DType dtype,
                  const std::vector<int64_t> &shape, const std::vector<T> &values,
                  const std::string &path) {
  if (absl::Status status = checkTensor(tensors, name, dtype, shape, path); !status.ok()) {
    std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
    ++failures;
    return;
  }
  const std::vector<uint8_t> &bytes = tensors.at(name).bytes;
  if (bytes.size() != values.size() * sizeof(T) ||
      (!values.empty() && std::memcmp(bytes.data(), values.data(), bytes.size()) != 0)) {
    std::fprintf(stderr, "%s: tensor '%s' has other values than torch wrote\n", path.c_str(),
                 name.c_str());
    ++failures;
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s IN OUT\n", argv[0]);
    return 2;
  }
  std::string in = argv[1], out = argv[2];
  std::map<std::string, std::string> metadata;
  absl::StatusOr<TensorMap> tensors = loadSafetensors(in, &metadata);
  if (!tensors.ok()) {
    std::fprintf(stderr, "%s\n", std::string(tensors.status().message()).c_str());
    return 1;
  }
  if (metadata["format"] != "pt") {
    std::fprintf(stderr, "%s: metadata 'format' is '%s', expected 'pt'\n", in.c_str(),
                 metadata["format"].c_str());
    ++failures;
  }
  if (tensors->size() != 10) {
    std::fprintf(stderr, "%s: %zu tensors, expected 10\n", in.c_str(), tensors->size());
    ++failures;
  }
  std::vector<float> weight;
  for (int i = 0; i < 12; ++i)
    weight.push_back(float(i) * 0.5f - 1);
  expectValues<float>(*tensors, "fc1.weight", DType::F32, {3, 4}, weight, in);
  expectValues<float>(*tensors, "fc1.bias", DType::F32, {3}, {0.25f, -0.5f, 1e-3f}, in);
  expectValues<int64_t>(*tensors, "bn.num_batches_tracked", DType::I64, {}, {1234567890123}, in);
  expectValues<int64_t>(*tensors, "ids", DType::I64, {5},
                        {-3, 0, 7, int64_t(1) << 40, -(int64_t(1) << 62)}, in);
  expectValues<double>(*tensors, "d", DType::F64, {2}, {3.141592653589793, -2.5}, in);
  // Bit patterns: f16 1, -2, 0.5, 65504; bf16 1, -3.5, 256.
  expectValues<uint16_t>(*tensors, "h", DType::F16, {2, 2}, {0x3C00, 0xC000, 0x3800, 0x7BFF}, in);
  expectValues<uint16_t>(*tensors, "b", DType::BF16, {3}, {0x3F80, 0xC060, 0x4380}, in);
  expectValues<int32_t>(*tensors, "n", DType::I32, {2}, {-7, 2147483647}, in);
  expectValues<uint8_t>(*tensors, "pix", DType::U8, {4}, {0, 1, 128, 255}, in);
  expectValues<float>(*tensors, "empty", DType::F32, {0, 4}, {}, in);
  if (failures)
    return 1;
  if (absl::Status status = saveSafetensors(out, *tensors, metadata); !status.ok()) {
    std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
