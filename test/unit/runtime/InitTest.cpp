//===- InitTest.cpp - Parameter initialisation ----------------------------===//
#include "runtime/Init.h"
#include "runtime/Scalar.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace cairn::runtime;

namespace {

TensorInfo tensor(const std::string &name, DType dtype, std::vector<int64_t> shape,
                  TensorRole role, InitKind init, double scale, size_t offset) {
  TensorInfo info;
  info.name = name;
  info.dtype = dtype;
  info.shape = std::move(shape);
  info.role = role;
  info.init = init;
  info.initScale = scale;
  info.offset = offset;
  return info;
}

std::vector<double> values(const TensorInfo &info, const std::vector<unsigned char> &arena) {
  int64_t n = 1;
  for (int64_t d : info.shape)
    n *= d;
  std::vector<double> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(loadScalar(info.dtype, &arena[info.offset + i * dtypeSize(info.dtype)]));
  return out;
}

struct Moments {
  double mean = 0, variance = 0, low = INFINITY, high = -INFINITY;
};

Moments moments(const std::vector<double> &xs) {
  Moments m;
  for (double x : xs) {
    m.mean += x;
    m.low = std::min(m.low, x);
    m.high = std::max(m.high, x);
  }
  m.mean /= static_cast<double>(xs.size());
  for (double x : xs)
    m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= static_cast<double>(xs.size());
  return m;
}

constexpr int64_t kN = 200000;

TEST(Init, UniformStatistics) {
  ProgramSpec spec;
  spec.tensors = {tensor("w", DType::F32, {kN}, TensorRole::Param, InitKind::Uniform, 0.1, 0)};
  std::vector<unsigned char> arena(kN * 4);
  initializeState(spec, 0, arena.data());
  Moments m = moments(values(spec.tensors[0], arena));
  EXPECT_NEAR(m.mean, 0, 0.001);
  EXPECT_NEAR(m.variance, 0.01 / 3, 0.0001);
  EXPECT_GE(m.low, -0.1);
  EXPECT_LE(m.high, 0.1);
  EXPECT_LT(m.low, -0.0999);
  EXPECT_GT(m.high, 0.0999);
}

TEST(Init, NormalStatistics) {
  ProgramSpec spec;
  spec.tensors = {tensor("e", DType::F64, {kN}, TensorRole::Param, InitKind::Normal, 2.0, 0)};
  std::vector<unsigned char> arena(kN * 8);
  initializeState(spec, 1, arena.data());
  std::vector<double> xs = values(spec.tensors[0], arena);
  Moments m = moments(xs);
  EXPECT_NEAR(m.mean, 0, 0.03);
  EXPECT_NEAR(std::sqrt(m.variance), 2.0, 0.02);
  int64_t beyond = 0; // P(|z| > 2) = 4.55%
  for (double x : xs)
    beyond += std::fabs(x) > 4.0;
  EXPECT_NEAR(static_cast<double>(beyond) / kN, 0.0455, 0.003);
}

TEST(Init, ConstantsAndOptimizerStateInEachDType) {
  ProgramSpec spec;
  spec.tensors = {
      tensor("norm.weight", DType::BF16, {5}, TensorRole::Param, InitKind::Ones, 0, 0),
      tensor("norm.bias", DType::F16, {5}, TensorRole::Param, InitKind::Zeros, 0, 16),
      tensor("norm.num_batches_tracked", DType::I64, {}, TensorRole::Buffer, InitKind::Zeros,
             0, 32),
      // OptimizerState is zero whatever its init says.
      tensor("norm.weight.exp_avg", DType::F32, {5}, TensorRole::OptimizerState,
             InitKind::Ones, 0, 48),
      // Neither state nor parameter: left alone.
      tensor("image", DType::F32, {2}, TensorRole::Input, InitKind::Ones, 0, 80),
  };
  std::vector<unsigned char> arena(96, 0xCD);
  initializeState(spec, 0, arena.data());
  EXPECT_EQ(values(spec.tensors[0], arena), std::vector<double>(5, 1.0));
  EXPECT_EQ(values(spec.tensors[1], arena), std::vector<double>(5, 0.0));
  EXPECT_EQ(values(spec.tensors[2], arena), std::vector<double>(1, 0.0));
  EXPECT_EQ(values(spec.tensors[3], arena), std::vector<double>(5, 0.0));
  for (size_t i = 80; i < 88; ++i)
    EXPECT_EQ(arena[i], 0xCD);
}

TEST(Init, DependsOnlyOnSeedAndName) {
  ProgramSpec a, b;
  a.tensors = {tensor("fc1.weight", DType::F32, {64}, TensorRole::Param, InitKind::Uniform, 1, 0),
               tensor("fc2.weight", DType::F32, {64}, TensorRole::Param, InitKind::Normal, 1,
                      256)};
  // Another tensor first and the same two elsewhere in the arena.
  b.tensors = {tensor("fc0.weight", DType::F32, {64}, TensorRole::Param, InitKind::Uniform, 1, 0),
               tensor("fc2.weight", DType::F32, {64}, TensorRole::Param, InitKind::Normal, 1,
                      256),
               tensor("fc1.weight", DType::F32, {64}, TensorRole::Param, InitKind::Uniform, 1,
                      512)};
  std::vector<unsigned char> arenaA(768), arenaB(768), again(768);
  initializeState(a, 9, arenaA.data());
  initializeState(b, 9, arenaB.data());
  EXPECT_EQ(values(a.tensors[0], arenaA), values(b.tensors[2], arenaB));
  EXPECT_EQ(values(a.tensors[1], arenaA), values(b.tensors[1], arenaB));
  // Same name, different values: the name seeds the stream.
  EXPECT_NE(values(b.tensors[0], arenaB), values(b.tensors[2], arenaB));
  initializeState(a, 9, again.data());
  EXPECT_EQ(arenaA, again);
  initializeState(a, 10, again.data());
  EXPECT_NE(values(a.tensors[0], arenaA), values(a.tensors[0], again));
}

// nn.Embedding(padding_idx=p): every row drawn, then row p zeroed; the
// other rows are the very draws of the same tensor without a padding row.
TEST(Init, EmbeddingPaddingRowIsZeroAndTheOthersUnchanged) {
  ProgramSpec plain, padded;
  plain.tensors = {tensor("embed.weight", DType::F32, {5, 3}, TensorRole::Param,
                          InitKind::Normal, 1, 0)};
  padded.tensors = plain.tensors;
  padded.tensors[0].initZeroRow = 3;
  std::vector<unsigned char> a(64), b(64);
  initializeState(plain, 4, a.data());
  initializeState(padded, 4, b.data());
  std::vector<double> want = values(plain.tensors[0], a),
                      got = values(padded.tensors[0], b);
  for (int i = 0; i < 15; ++i) {
    if (i / 3 == 3)
      EXPECT_EQ(got[i], 0.0) << i;
    else
      EXPECT_EQ(got[i], want[i]) << i;
  }
  for (int i = 9; i < 12; ++i)
    EXPECT_NE(want[i], 0.0);
}

TEST(Init, Fnv1a64KnownValues) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
}

} // namespace
