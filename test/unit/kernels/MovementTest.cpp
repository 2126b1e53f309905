//===- MovementTest.cpp - Permute, slice and embedding tests --------------===//
//
// The byte-generic copies against an index-by-index reference for every
// element size (including ones that take the byte path), permute against its
// inverse, the slices as adjoints of each other, and embedding backward
// against finite differences.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Movement.h"

#include "runtime/kernels/KernelError.h"

#include "GradCheck.h"

#include <cstring>
#include <string>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

const size_t kElemSizes[] = {1, 2, 3, 4, 8, 12};

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

std::vector<int64_t> contiguous(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size());
  int64_t k = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = k;
    k *= shape[d];
  }
  return s;
}

/// The multi-index of flat position i in `shape`.
std::vector<int64_t> unflatten(int64_t i, const std::vector<int64_t> &shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

/// Bytes that differ between neighbouring elements and within one.
std::vector<unsigned char> patternBytes(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (unsigned char)(i * 131 + seed * 7 + (i >> 8) * 17);
  return v;
}

std::vector<unsigned char> naivePermute(const std::vector<int64_t> &inShape,
                                        const std::vector<int64_t> &perm,
                                        size_t eb,
                                        const std::vector<unsigned char> &in) {
  std::vector<int64_t> outShape(perm.size()), inStrides = contiguous(inShape);
  for (size_t d = 0; d < perm.size(); ++d)
    outShape[d] = inShape[perm[d]];
  std::vector<unsigned char> out(in.size());
  for (int64_t i = 0; i < numel(outShape); ++i) {
    std::vector<int64_t> idx = unflatten(i, outShape);
    int64_t src = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      src += idx[d] * inStrides[perm[d]];
    std::memcpy(&out[i * eb], &in[src * eb], eb);
  }
  return out;
}

struct PermuteCase {
  std::vector<int64_t> shape, perm;
};

const PermuteCase kPermuteCases[] = {
    {{70, 45}, {1, 0}},              // a transpose over several tiles
    {{2, 33, 5, 40}, {0, 2, 3, 1}},  // NCHW -> NHWC
    {{2, 5, 40, 33}, {0, 3, 1, 2}},  // NHWC -> NCHW
    {{3, 4, 5}, {0, 1, 2}},          // identity
    {{3, 1, 5, 2}, {2, 0, 3, 1}},    // with a size-1 dimension
    {{4, 3, 2}, {2, 1, 0}},
    {{2, 3, 2, 3, 2, 3, 2, 2}, {7, 0, 6, 1, 5, 2, 4, 3}}, // rank 8
};

TEST(Permute, MatchesNaiveForEveryElementSize) {
  unsigned seed = 1;
  for (const PermuteCase &c : kPermuteCases)
    for (size_t eb : kElemSizes) {
      std::vector<unsigned char> in = patternBytes(numel(c.shape) * eb, seed++);
      std::vector<unsigned char> out(in.size());
      permute(int(c.shape.size()), c.shape.data(), c.perm.data(), eb,
              in.data(), out.data());
      EXPECT_EQ(out, naivePermute(c.shape, c.perm, eb, in))
          << "rank " << c.shape.size() << " elemBytes " << eb;
    }
}

TEST(Permute, InversePermutationRestoresInput) {
  for (const PermuteCase &c : kPermuteCases) {
    int rank = int(c.shape.size());
    std::vector<int64_t> inverse(rank), outShape(rank);
    for (int d = 0; d < rank; ++d) {
      inverse[c.perm[d]] = d;
      outShape[d] = c.shape[c.perm[d]];
    }
    std::vector<double> x = randomVector(numel(c.shape), 10);
    std::vector<double> y(x.size()), back(x.size());
    permute(rank, c.shape.data(), c.perm.data(), sizeof(double), x.data(),
            y.data());
    permute(rank, outShape.data(), inverse.data(), sizeof(double), y.data(),
            back.data());
    EXPECT_EQ(back, x);
    if (x.size() > 400)
      continue;
    // The backward of permute is permute by the inverse.
    std::vector<double> probe = randomVector(x.size(), 11), dx(x.size());
    permute(rank, outShape.data(), inverse.data(), sizeof(double),
            probe.data(), dx.data());
    checkGradient(
        "permute", x,
        [&](const std::vector<double> &in) {
          std::vector<double> out(in.size());
          permute(rank, c.shape.data(), c.perm.data(), sizeof(double),
                  in.data(), out.data());
          return dot(out, probe);
        },
        dx);
  }
}

struct SliceCase {
  std::vector<int64_t> full, start, step, part;
};

const SliceCase kSliceCases[] = {
    {{6, 7}, {1, 2}, {1, 1}, {4, 5}},
    {{6, 7}, {0, 1}, {2, 3}, {3, 2}},          // strided both ways
    {{4, 3, 10}, {0, 0, 5}, {1, 1, 1}, {4, 3, 5}}, // a split's second half
    {{4, 3, 10}, {2, 0, 0}, {1, 1, 1}, {2, 3, 10}}, // contiguous block
    {{5, 6, 7, 8}, {1, 1, 2, 3}, {2, 1, 2, 2}, {2, 5, 3, 3}},
    {{3, 4}, {0, 0}, {1, 1}, {3, 0}},          // empty
};

std::vector<unsigned char> naiveExtract(const SliceCase &c, size_t eb,
                                        const std::vector<unsigned char> &in) {
  std::vector<int64_t> fullStrides = contiguous(c.full);
  std::vector<unsigned char> out(numel(c.part) * eb);
  for (int64_t i = 0; i < numel(c.part); ++i) {
    std::vector<int64_t> idx = unflatten(i, c.part);
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += (c.start[d] + c.step[d] * idx[d]) * fullStrides[d];
    std::memcpy(&out[i * eb], &in[src * eb], eb);
  }
  return out;
}

TEST(Slice, ExtractMatchesNaiveForEveryElementSize) {
  unsigned seed = 20;
  for (const SliceCase &c : kSliceCases)
    for (size_t eb : kElemSizes) {
      std::vector<unsigned char> in = patternBytes(numel(c.full) * eb, seed++);
      std::vector<unsigned char> out(numel(c.part) * eb);
      extractSlice(int(c.full.size()), c.full.data(), c.start.data(),
                   c.step.data(), c.part.data(), eb, in.data(), out.data());
      EXPECT_EQ(out, naiveExtract(c, eb, in)) << "elemBytes " << eb;
    }
}

TEST(Slice, InsertWritesOnlyTheSlice) {
  unsigned seed = 40;
  for (const SliceCase &c : kSliceCases)
    for (size_t eb : kElemSizes) {
      std::vector<unsigned char> part = patternBytes(numel(c.part) * eb, seed++);
      std::vector<unsigned char> full = patternBytes(numel(c.full) * eb, seed++);
      // Reference: write part element by element at the sliced positions.
      std::vector<unsigned char> want = full;
      std::vector<int64_t> fullStrides = contiguous(c.full);
      for (int64_t i = 0; i < numel(c.part); ++i) {
        std::vector<int64_t> idx = unflatten(i, c.part);
        int64_t dst = 0;
        for (size_t d = 0; d < idx.size(); ++d)
          dst += (c.start[d] + c.step[d] * idx[d]) * fullStrides[d];
        std::memcpy(&want[dst * eb], &part[i * eb], eb);
      }
      insertSlice(int(c.full.size()), c.full.data(), c.start.data(),
                  c.step.data(), c.part.data(), eb, part.data(), full.data());
      EXPECT_EQ(full, want) << "elemBytes " << eb;
    }
}

TEST(Slice, InsertIsTheAdjointOfExtract) {
  uint32_t seed = 60;
  for (const SliceCase &c : kSliceCases) {
    int rank = int(c.full.size());
    std::vector<double> x = randomVector(numel(c.full), seed++);
    std::vector<double> p = randomVector(numel(c.part), seed++);
    std::vector<double> ex(p.size()), in(x.size(), 0.0);
    extractSlice(rank, c.full.data(), c.start.data(), c.step.data(),
                 c.part.data(), sizeof(double), x.data(), ex.data());
    insertSlice(rank, c.full.data(), c.start.data(), c.step.data(),
                c.part.data(), sizeof(double), p.data(), in.data());
    EXPECT_NEAR(dot(ex, p), dot(x, in), 1e-12);
    // The slice's gradient: zeros with dy inserted.
    checkGradient(
        "extractSlice", x,
        [&](const std::vector<double> &v) {
          std::vector<double> out(p.size());
          extractSlice(rank, c.full.data(), c.start.data(), c.step.data(),
                       c.part.data(), sizeof(double), v.data(), out.data());
          return dot(out, p);
        },
        in);
    // And extract is the gradient of insert with respect to the part.
    checkGradient(
        "insertSlice", p,
        [&](const std::vector<double> &v) {
          std::vector<double> full(x.size(), 0.0);
          insertSlice(rank, c.full.data(), c.start.data(), c.step.data(),
                      c.part.data(), sizeof(double), v.data(), full.data());
          return dot(full, x);
        },
        ex);
  }
}

TEST(Slice, ConcatByInsertingEachInput) {
  std::vector<int64_t> full = {2, 5}, start0 = {0, 0}, start1 = {0, 2},
                       step = {1, 1}, shape0 = {2, 2}, shape1 = {2, 3};
  std::vector<float> a = {1, 2, 3, 4}, b = {5, 6, 7, 8, 9, 10}, out(10);
  insertSlice(2, full.data(), start0.data(), step.data(), shape0.data(),
              sizeof(float), a.data(), out.data());
  insertSlice(2, full.data(), start1.data(), step.data(), shape1.data(),
              sizeof(float), b.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 2, 5, 6, 7, 3, 4, 8, 9, 10}));
}

TEST(Embedding, ForwardGathersRows) {
  const int64_t num = 5, dim = 3;
  std::vector<float> w = {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32,
                          40, 41, 42};
  std::vector<int32_t> idx32 = {4, 0, 4, 2};
  std::vector<int64_t> idx64(idx32.begin(), idx32.end());
  std::vector<float> out32(12), out64(12);
  embeddingForward(4, dim, num, idx32.data(), w.data(), out32.data());
  embeddingForward(4, dim, num, idx64.data(), w.data(), out64.data());
  std::vector<float> want = {40, 41, 42, 0, 1, 2, 40, 41, 42, 20, 21, 22};
  EXPECT_EQ(out32, want);
  EXPECT_EQ(out64, want);
}

TEST(Embedding, BackwardMatchesFiniteDifferences) {
  const int64_t num = 6, dim = 4, count = 7;
  std::vector<int64_t> idx = {1, 3, 1, 5, 0, 1, 3}; // repeats accumulate
  std::vector<int32_t> idx32(idx.begin(), idx.end());
  std::vector<double> w = randomVector(num * dim, 70);
  std::vector<double> probe = randomVector(count * dim, 71);
  std::vector<double> dw(w.size(), 123.0), dw32(w.size(), -5.0);
  embeddingBackward(count, dim, num, idx.data(), probe.data(), -1, dw.data());
  embeddingBackward(count, dim, num, idx32.data(), probe.data(), -1,
                    dw32.data());
  EXPECT_EQ(dw32, dw);
  for (int64_t j = 0; j < dim; ++j) { // rows 2 and 4 are never used
    EXPECT_EQ(dw[2 * dim + j], 0.0);
    EXPECT_EQ(dw[4 * dim + j], 0.0);
  }
  checkGradient(
      "embedding", w,
      [&](const std::vector<double> &v) {
        std::vector<double> out(count * dim);
        embeddingForward(count, dim, num, idx.data(), v.data(), out.data());
        return dot(out, probe);
      },
      dw);
}

TEST(Embedding, PaddingRowStaysZero) {
  const int64_t num = 4, dim = 2;
  std::vector<int64_t> idx = {2, 0, 2, 3};
  std::vector<float> dy = {1, 2, 3, 4, 5, 6, 7, 8}, dw(num * dim, 9.0f);
  embeddingBackward(4, dim, num, idx.data(), dy.data(), 2, dw.data());
  EXPECT_EQ(dw, (std::vector<float>{3, 4, 0, 0, 0, 0, 7, 8}));
}

TEST(Embedding, IndexOutOfRangeThrows) {
  std::vector<float> w(6), out(6, 1.0f), dy(6);
  std::vector<int64_t> high = {0, 3};
  std::vector<int32_t> negative = {-2, 1};
  try {
    embeddingForward(2, 2, 3, high.data(), w.data(), out.data());
    FAIL() << "no exception";
  } catch (const KernelError &e) {
    EXPECT_NE(std::string(e.what()).find("index 3 at position 1"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(out, std::vector<float>(6, 1.0f));
  try {
    embeddingBackward(2, 2, 3, negative.data(), dy.data(), -1, w.data());
    FAIL() << "no exception";
  } catch (const KernelError &e) {
    EXPECT_NE(std::string(e.what()).find("index -2 at position 0"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
