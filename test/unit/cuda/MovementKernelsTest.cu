//===- MovementKernelsTest.cu - Permute, slices and embedding on the GPU --===//
//
// cuda::permute, extractSlice, insertSlice, embeddingForward and
// embeddingBackward against their CPU twins in runtime/kernels/Movement.h
// on the same random inputs, compared byte for byte: every element size
// (1, 2, 4, 8 and the byte path's 3 and 12), ranks 1 to 8 (every
// permutation of a rank-5 shape), transposes that take the tiled path,
// negative steps, slices written into a full tensor whose other elements
// must survive; embedding with both index types, padding_idx, many repeats
// of a few rows (the backward adds them in index order on both sides: the
// same bits), and the documented handling of indices out of range.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"
#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Movement.h"

#include "TestContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using cairn::cuda::testing::allClose;
using cairn::cuda::testing::allEqual;
using cairn::cuda::testing::DeviceBuffer;
using cairn::cuda::testing::randomVector;
using cairn::cuda::testing::TestContext;

template <typename T> std::vector<T> randomValues(size_t n, uint64_t seed) {
  return randomVector<T>(n, -1, 1, seed);
}

const size_t kElemSizes[] = {1, 2, 3, 4, 8, 12};

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

std::vector<uint8_t> randomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t &b : v)
    b = static_cast<uint8_t>(rng());
  return v;
}

std::string describe(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

class MovementKernels : public ::testing::Test {
protected:
  void checkPermute(const std::vector<int64_t> &shape, const std::vector<int64_t> &perm,
                    size_t elemBytes, uint32_t seed) {
    const int rank = static_cast<int>(shape.size());
    const size_t bytes = numel(shape) * elemBytes;
    const std::vector<uint8_t> in = randomBytes(bytes, seed);
    std::vector<uint8_t> want(bytes, 0xCD);
    cairn::kernels::permute(rank, shape.data(), perm.data(), elemBytes, in.data(), want.data());
    DeviceBuffer<uint8_t> dIn(in), dOut(std::vector<uint8_t>(bytes, 0xCD));
    cairn::cuda::permute(tc.cx, rank, shape.data(), perm.data(), elemBytes, dIn.get(),
                         dOut.get());
    EXPECT_TRUE(allEqual(dOut.download(), want))
        << "permute " << describe(shape) << " by " << describe(perm) << ", " << elemBytes
        << "-byte elements";
  }

  void checkExtract(const std::vector<int64_t> &inShape, const std::vector<int64_t> &start,
                    const std::vector<int64_t> &step, const std::vector<int64_t> &outShape,
                    size_t elemBytes, uint32_t seed) {
    const int rank = static_cast<int>(inShape.size());
    const std::vector<uint8_t> in = randomBytes(numel(inShape) * elemBytes, seed);
    std::vector<uint8_t> want(numel(outShape) * elemBytes, 0xCD);
    cairn::kernels::extractSlice(rank, inShape.data(), start.data(), step.data(),
                                 outShape.data(), elemBytes, in.data(), want.data());
    DeviceBuffer<uint8_t> dIn(in), dOut(std::vector<uint8_t>(want.size(), 0xCD));
    cairn::cuda::extractSlice(tc.cx, rank, inShape.data(), start.data(), step.data(),
                              outShape.data(), elemBytes, dIn.get(), dOut.get());
    EXPECT_TRUE(allEqual(dOut.download(), want))
        << "extractSlice of " << describe(inShape) << " from " << describe(start) << " by "
        << describe(step) << ", " << elemBytes << "-byte elements";
  }

  /// `full` starts as random bytes; only the slice's elements may change.
  void checkInsert(const std::vector<int64_t> &fullShape, const std::vector<int64_t> &start,
                   const std::vector<int64_t> &step, const std::vector<int64_t> &partShape,
                   size_t elemBytes, uint32_t seed) {
    const int rank = static_cast<int>(fullShape.size());
    const std::vector<uint8_t> part = randomBytes(numel(partShape) * elemBytes, seed);
    std::vector<uint8_t> want = randomBytes(numel(fullShape) * elemBytes, seed + 1);
    DeviceBuffer<uint8_t> dPart(part), dFull(want);
    cairn::kernels::insertSlice(rank, fullShape.data(), start.data(), step.data(),
                                partShape.data(), elemBytes, part.data(), want.data());
    cairn::cuda::insertSlice(tc.cx, rank, fullShape.data(), start.data(), step.data(),
                             partShape.data(), elemBytes, dPart.get(), dFull.get());
    EXPECT_TRUE(allEqual(dFull.download(), want))
        << "insertSlice into " << describe(fullShape) << " at " << describe(start) << " by "
        << describe(step) << ", " << elemBytes << "-byte elements";
  }

  TestContext tc;
};

TEST_F(MovementKernels, PermuteRank1) {
  for (size_t e : kElemSizes)
    checkPermute({17}, {0}, e, 100);
}

TEST_F(MovementKernels, PermuteTransposesThroughTiles) {
  uint32_t seed = 200;
  for (size_t e : kElemSizes) {
    checkPermute({70, 45}, {1, 0}, e, ++seed);              // partial tiles both ways
    checkPermute({64, 32}, {1, 0}, e, ++seed);              // whole tiles
    checkPermute({1, 5}, {1, 0}, e, ++seed);                // a size-1 dimension
    checkPermute({5, 33, 40}, {0, 2, 1}, e, ++seed);        // batched
    checkPermute({2, 3, 17, 19}, {0, 2, 3, 1}, e, ++seed);  // NCHW -> NHWC
    checkPermute({2, 17, 19, 3}, {0, 3, 1, 2}, e, ++seed);  // NHWC -> NCHW
    checkPermute({2, 7, 4, 16}, {0, 2, 1, 3}, e, ++seed);   // heads: rows stay whole
    checkPermute({3, 40, 2, 50}, {3, 1, 2, 0}, e, ++seed);  // unit stride far out
  }
}

TEST_F(MovementKernels, PermuteEveryOrderOfRank3And5) {
  uint32_t seed = 300;
  std::vector<int64_t> perm3 = {0, 1, 2};
  do
    for (size_t e : kElemSizes)
      checkPermute({4, 5, 6}, perm3, e, ++seed);
  while (std::next_permutation(perm3.begin(), perm3.end()));
  std::vector<int64_t> perm5 = {0, 1, 2, 3, 4};
  do
    checkPermute({2, 3, 4, 5, 6}, perm5, 4, ++seed);
  while (std::next_permutation(perm5.begin(), perm5.end()));
  for (size_t e : kElemSizes)
    checkPermute({3, 1, 4, 2, 5}, {4, 2, 0, 1, 3}, e, ++seed);
}

TEST_F(MovementKernels, PermuteRank8AndRejectsRank9) {
  checkPermute({2, 3, 2, 3, 2, 3, 2, 3}, {7, 5, 3, 1, 6, 4, 2, 0}, 4, 400);
  checkPermute({2, 3, 2, 3, 2, 3, 2, 3}, {1, 0, 3, 2, 5, 4, 7, 6}, 12, 401);
  const std::vector<int64_t> shape(9, 2), perm = {8, 7, 6, 5, 4, 3, 2, 1, 0};
  DeviceBuffer<uint8_t> in(std::vector<uint8_t>(512)), out(std::vector<uint8_t>(512));
  EXPECT_THROW(cairn::cuda::permute(tc.cx, 9, shape.data(), perm.data(), 1, in.get(), out.get()),
               cairn::kernels::KernelError);
}

TEST_F(MovementKernels, PermuteOfNothingWritesNothing) {
  for (size_t e : kElemSizes) {
    const std::vector<int64_t> shape = {3, 0, 2}, perm = {2, 0, 1};
    DeviceBuffer<uint8_t> in(std::vector<uint8_t>(1)), out(std::vector<uint8_t>(4, 0xAB));
    cairn::cuda::permute(tc.cx, 3, shape.data(), perm.data(), e, in.get(), out.get());
    EXPECT_EQ(out.download(), std::vector<uint8_t>(4, 0xAB));
  }
}

TEST_F(MovementKernels, ExtractSlice) {
  uint32_t seed = 500;
  for (size_t e : kElemSizes) {
    checkExtract({7, 9, 5}, {1, 2, 0}, {2, 3, 1}, {3, 3, 5}, e, ++seed);  // whole rows
    checkExtract({7, 9, 5}, {0, 0, 1}, {1, 1, 2}, {7, 9, 2}, e, ++seed);  // strided rows
    checkExtract({6, 4}, {5, 0}, {-1, 1}, {6, 4}, e, ++seed);             // flipped
    checkExtract({6, 40}, {0, 39}, {1, -3}, {6, 13}, e, ++seed);          // flipped, strided
    checkExtract({33}, {3}, {1}, {30}, e, ++seed);                        // rank 1
    checkExtract({2, 3, 4, 5, 6}, {1, 0, 1, 2, 0}, {1, 2, 2, 1, 5}, {1, 2, 2, 3, 2}, e, ++seed);
    checkExtract({300, 70}, {1, 3}, {1, 1}, {299, 60}, e, ++seed);        // many elements
  }
}

TEST_F(MovementKernels, InsertSlice) {
  uint32_t seed = 600;
  for (size_t e : kElemSizes) {
    checkInsert({7, 9, 5}, {1, 2, 0}, {2, 3, 1}, {3, 3, 5}, e, seed += 2);
    checkInsert({7, 9, 5}, {0, 0, 1}, {1, 1, 2}, {7, 9, 2}, e, seed += 2);
    checkInsert({6, 4}, {5, 0}, {-1, 1}, {6, 4}, e, seed += 2);
    checkInsert({4, 10}, {0, 6}, {1, 1}, {4, 4}, e, seed += 2); // concat's second input
    checkInsert({2, 3, 4, 5, 6}, {1, 0, 1, 2, 0}, {1, 2, 2, 1, 5}, {1, 2, 2, 3, 2}, e, seed += 2);
  }
}

/// Embedding tests run for each value and index type.
template <typename P> class EmbeddingKernels : public ::testing::Test {
protected:
  using T = typename P::first_type;
  using I = typename P::second_type;

  std::vector<I> randomIndices(int64_t n, int64_t numEmbeddings, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int64_t> dist(0, numEmbeddings - 1);
    std::vector<I> v(n);
    for (I &i : v)
      i = static_cast<I>(dist(rng));
    return v;
  }

  void checkForward(int64_t numIndices, int64_t dim, int64_t numEmbeddings, uint32_t seed) {
    const std::vector<I> indices = randomIndices(numIndices, numEmbeddings, seed);
    const std::vector<T> weight = randomValues<T>(numEmbeddings * dim, seed + 1);
    std::vector<T> want(numIndices * dim, T(-99));
    cairn::kernels::embeddingForward<T, I>(numIndices, dim, numEmbeddings, indices.data(),
                                           weight.data(), want.data());
    DeviceBuffer<I> dIndices(indices);
    DeviceBuffer<T> dWeight(weight), dOut(std::vector<T>(want.size(), T(-99)));
    cairn::cuda::embeddingForward<T, I>(tc.cx, numIndices, dim, numEmbeddings, dIndices.get(),
                                        dWeight.get(), dOut.get());
    EXPECT_TRUE(allEqual(dOut.download(), want))
        << numIndices << " indices of " << numEmbeddings << " x " << dim;
  }

  void checkBackward(int64_t numIndices, int64_t dim, int64_t numEmbeddings, int64_t paddingIdx,
                     uint32_t seed) {
    const std::vector<I> indices = randomIndices(numIndices, numEmbeddings, seed);
    const std::vector<T> dy = randomValues<T>(numIndices * dim, seed + 1);
    std::vector<T> want(numEmbeddings * dim, T(-99));
    cairn::kernels::embeddingBackward<T, I>(numIndices, dim, numEmbeddings, indices.data(),
                                            dy.data(), paddingIdx, want.data());
    DeviceBuffer<I> dIndices(indices);
    DeviceBuffer<T> dDy(dy), dWeight(std::vector<T>(want.size(), T(-99)));
    cairn::cuda::embeddingBackward<T, I>(tc.cx, numIndices, dim, numEmbeddings, dIndices.get(),
                                         dDy.get(), paddingIdx, dWeight.get());
    // Added in index order from zero in T on both sides: the same bits.
    EXPECT_TRUE(allEqual(dWeight.download(), want))
        << numIndices << " indices of " << numEmbeddings << " x " << dim << ", padding "
        << paddingIdx;
  }

  TestContext tc;
};

using EmbeddingTypes =
    ::testing::Types<std::pair<float, int32_t>, std::pair<float, int64_t>,
                     std::pair<double, int32_t>, std::pair<double, int64_t>>;
TYPED_TEST_SUITE(EmbeddingKernels, EmbeddingTypes);

TYPED_TEST(EmbeddingKernels, Forward) {
  this->checkForward(37, 5, 11, 700);
  this->checkForward(1, 1, 1, 710);
  this->checkForward(512, 300, 1000, 720);
  this->checkForward(0, 8, 4, 730);
}

TYPED_TEST(EmbeddingKernels, BackwardAddsRepeatsInIndexOrder) {
  this->checkBackward(5000, 3, 37, -1, 800);   // 4-wide tiles of 1024 rows, many repeats
  this->checkBackward(5000, 3, 37, 4, 810);    // padding_idx's row stays zero
  this->checkBackward(777, 300, 1000, 999, 820); // two column tiles, the last row padded
  this->checkBackward(64, 1, 5000, 0, 830);    // one column, two row tiles
  this->checkBackward(2000, 257, 50, 7, 840);  // a one-column second tile
  this->checkBackward(3000, 16, 20000, -1, 850); // many row tiles, most rows untouched
  this->checkBackward(1025, 32, 3, -1, 860);   // a scan round past a multiple of 1024
  this->checkBackward(0, 4, 6, -1, 870);       // no indices: all zero
}

TYPED_TEST(EmbeddingKernels, OutOfRangeIndices) {
  // The CPU throws; the GPU, which cannot, writes zero rows forward and
  // skips the positions backward: as the CPU on those positions' rows
  // zeroed and their indices replaced by a valid one.
  using T = typename TestFixture::T;
  using I = typename TestFixture::I;
  const int64_t numEmbeddings = 6, dim = 4;
  const std::vector<I> indices = {2, -1, 5, 6, 0, 100, 2};
  std::vector<I> valid = indices;
  const std::vector<T> weight = randomValues<T>(numEmbeddings * dim, 900);
  std::vector<T> dy = randomValues<T>(indices.size() * dim, 901);
  std::vector<T> dyValid = dy;
  for (size_t i = 0; i < indices.size(); ++i)
    if (indices[i] < 0 || indices[i] >= numEmbeddings) {
      valid[i] = 0;
      std::fill(dyValid.begin() + i * dim, dyValid.begin() + (i + 1) * dim, T(0));
    }
  std::vector<T> wantOut(indices.size() * dim), wantGrad(numEmbeddings * dim);
  cairn::kernels::embeddingForward<T, I>(indices.size(), dim, numEmbeddings, valid.data(),
                                         weight.data(), wantOut.data());
  for (size_t i = 0; i < indices.size(); ++i)
    if (indices[i] != valid[i])
      std::fill(wantOut.begin() + i * dim, wantOut.begin() + (i + 1) * dim, T(0));
  cairn::kernels::embeddingBackward<T, I>(indices.size(), dim, numEmbeddings, valid.data(),
                                          dyValid.data(), -1, wantGrad.data());

  DeviceBuffer<I> dIndices(indices);
  DeviceBuffer<T> dWeight(weight), dDy(dy), dOut(std::vector<T>(wantOut.size(), T(-99))),
      dGrad(std::vector<T>(wantGrad.size(), T(-99)));
  cairn::cuda::embeddingForward<T, I>(this->tc.cx, indices.size(), dim, numEmbeddings,
                                      dIndices.get(), dWeight.get(), dOut.get());
  cairn::cuda::embeddingBackward<T, I>(this->tc.cx, indices.size(), dim, numEmbeddings,
                                       dIndices.get(), dDy.get(), -1, dGrad.get());
  EXPECT_EQ(dOut.download(), wantOut);
  EXPECT_EQ(dGrad.download(), wantGrad);
}

} // namespace
