//===- Init.cpp - Fresh weights from a seed -------------------------------===//
#include "runtime/Init.h"

#include "runtime/Random.h"
#include "runtime/Scalar.h"

#include <cmath>

namespace cairn::runtime {

uint64_t fnv1a64(const std::string &text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text)
    hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

namespace {

void initializeTensor(const TensorInfo &tensor, uint64_t seed, unsigned char *arena) {
  InitKind kind = tensor.role == TensorRole::OptimizerState ? InitKind::Zeros : tensor.init;
  SplitMix64 random(fnv1a64(tensor.name) ^ SplitMix64::mix(seed));
  size_t size = dtypeSize(tensor.dtype);
  int64_t numel = 1;
  for (int64_t dim : tensor.shape)
    numel *= dim;
  unsigned char *dst = arena + tensor.offset;
  for (int64_t i = 0; i < numel; ++i) {
    double value = 0;
    switch (kind) {
    case InitKind::None:
    case InitKind::Zeros:
      break;
    case InitKind::Ones:
      value = 1;
      break;
    case InitKind::Uniform:
      value = tensor.initScale * (2 * random.nextUnit() - 1);
      break;
    case InitKind::Normal: {
      double u1 = random.nextUnit(), u2 = random.nextUnit();
      value = tensor.initScale * std::sqrt(-2 * std::log(1 - u1)) * std::cos(2 * M_PI * u2);
      break;
    }
    }
    storeScalar(tensor.dtype, value, dst + i * size);
  }
  // nn.Embedding zeroes its padding row after drawing every row, so the
  // other rows are the same draws as without it.
  if (kind != InitKind::None && tensor.initZeroRow >= 0 && !tensor.shape.empty() &&
      tensor.initZeroRow < tensor.shape[0]) {
    const int64_t row = numel / tensor.shape[0];
    for (int64_t i = tensor.initZeroRow * row; i < (tensor.initZeroRow + 1) * row; ++i)
      storeScalar(tensor.dtype, 0.0, dst + i * size);
  }
}

} // namespace

void initializeState(const ProgramSpec &spec, uint64_t seed, unsigned char *arena) {
  for (const TensorInfo &tensor : spec.tensors)
    if (tensor.role == TensorRole::Param || tensor.role == TensorRole::Buffer ||
        tensor.role == TensorRole::OptimizerState)
      initializeTensor(tensor, seed, arena);
}

} // namespace cairn::runtime
