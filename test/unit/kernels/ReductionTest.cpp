//===- ReductionTest.cpp - reduceSum and broadcastTo tests ----------------===//
//
// reduceSum against a one-element-at-a-time reference for every mask of a
// rank-4 shape and the layouts with dedicated loops; broadcastTo against the
// same; and the two as adjoints, <broadcastTo(a), b> == <a, reduceSum(b)>;
// and reduceSum on half storage against the float kernel on a widened copy.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Reduction.h"

#include "GradCheck.h"
#include "HalfBits.h"

#include <cmath>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

/// Sums `in` over the dimensions flagged in `reduced`, in long double.
std::vector<double> naiveReduce(const std::vector<int64_t> &shape,
                                const std::vector<bool> &reduced,
                                const std::vector<double> &in) {
  std::vector<int64_t> outShape;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!reduced[d])
      outShape.push_back(shape[d]);
  std::vector<long double> acc(numel(outShape), 0);
  for (int64_t i = 0; i < numel(shape); ++i) {
    int64_t rest = i, o = 0, ostride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      int64_t k = rest % shape[d];
      rest /= shape[d];
      if (!reduced[d]) {
        o += k * ostride;
        ostride *= shape[d];
      }
    }
    acc[o] += in[i];
  }
  return std::vector<double>(acc.begin(), acc.end());
}

/// in viewed through strides over outShape, times alpha.
std::vector<double> naiveBroadcast(const std::vector<int64_t> &outShape,
                                   const std::vector<int64_t> &strides,
                                   double alpha, const std::vector<double> &in) {
  std::vector<double> out(numel(outShape));
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t rest = int64_t(i), off = 0;
    for (size_t d = outShape.size(); d-- > 0;) {
      off += rest % outShape[d] * strides[d];
      rest /= outShape[d];
    }
    out[i] = alpha * in[off];
  }
  return out;
}

/// Strides that broadcast the reduceSum output of (shape, reduced) back over
/// shape: contiguous over the kept dimensions, 0 on the reduced ones.
std::vector<int64_t> keptStrides(const std::vector<int64_t> &shape,
                                 const std::vector<bool> &reduced) {
  std::vector<int64_t> s(shape.size());
  int64_t k = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    s[d] = reduced[d] ? 0 : k;
    if (!reduced[d])
      k *= shape[d];
  }
  return s;
}

std::vector<bool> maskBits(unsigned bits, size_t rank) {
  std::vector<bool> m(rank);
  for (size_t d = 0; d < rank; ++d)
    m[d] = (bits >> d) & 1;
  return m;
}

/// Runs reduceSum in double and float and checks both against naiveReduce.
void checkReduce(const std::vector<int64_t> &shape,
                 const std::vector<bool> &reduced, double alpha,
                 uint32_t seed) {
  std::vector<double> in = randomVector(numel(shape), seed);
  std::vector<float> inF(in.begin(), in.end());
  std::vector<double> inAsFloat(inF.begin(), inF.end());
  std::vector<double> want = naiveReduce(shape, reduced, in);
  std::vector<double> wantF = naiveReduce(shape, reduced, inAsFloat);
  bool mask[8];
  for (size_t d = 0; d < shape.size(); ++d)
    mask[d] = reduced[d];
  std::vector<double> out(want.size(), -99);
  std::vector<float> outF(want.size(), -99);
  int rank = int(shape.size());
  reduceSum<double>(rank, shape.data(), mask, alpha, in.data(), out.data());
  reduceSum<float>(rank, shape.data(), mask, float(alpha), inF.data(),
                   outF.data());
  std::string what = "shape rank " + std::to_string(rank) + " mask";
  for (bool r : reduced)
    what += r ? " R" : " K";
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(out[i], alpha * want[i], 1e-12 * (1 + std::fabs(want[i])))
        << what << " at " << i;
    // Accumulated in double, so only alpha's and the final rounding count.
    double w = double(float(alpha)) * wantF[i];
    EXPECT_NEAR(outF[i], w, 1e-7 * std::fabs(w) + 1e-30) << what << " at " << i;
  }
}

TEST(ReduceSum, EveryMaskOfRank4) {
  std::vector<int64_t> shape = {2, 3, 4, 5};
  for (unsigned bits = 0; bits < 16; ++bits)
    checkReduce(shape, maskBits(bits, 4), 1.0, 100 + bits);
}

TEST(ReduceSum, SizeOneDimensionsInEitherRole) {
  std::vector<int64_t> shape = {3, 1, 4, 1, 2};
  for (unsigned bits = 0; bits < 32; ++bits)
    checkReduce(shape, maskBits(bits, 5), 0.5, 200 + bits);
}

TEST(ReduceSum, BiasGradientAndRowSumAcrossBlocks) {
  // Kept last runs wider than one accumulator block, reduced runs long
  // enough for the partial sums.
  checkReduce({700, 300}, {true, false}, 1.0, 300);
  checkReduce({300, 700}, {false, true}, 1.0, 301);
  checkReduce({5, 600}, {true, false}, 1.0 / 5, 302);
  checkReduce({4, 3, 257}, {true, true, false}, 1.0, 303);
}

TEST(ReduceSum, Rank8Alternating) {
  checkReduce({2, 3, 2, 3, 2, 3, 2, 3},
              {true, false, true, false, true, false, true, false}, 1.0, 400);
  checkReduce({2, 3, 2, 3, 2, 3, 2, 3},
              {false, true, false, true, false, true, false, true}, 1.0, 401);
}

TEST(ReduceSum, MeanOfAllAndRankZero) {
  checkReduce({7, 11, 13}, {true, true, true}, 1.0 / (7 * 11 * 13), 500);
  double x = 3, y = 0;
  int64_t unused = 0;
  reduceSum<double>(0, &unused, nullptr, 2.0, &x, &y);
  EXPECT_EQ(y, 6);
}

TEST(ReduceSum, EmptyInputGivesZeros) {
  std::vector<int64_t> shape = {0, 3};
  bool reduceRows[] = {true, false};
  std::vector<double> out(3, -1);
  reduceSum<double>(2, shape.data(), reduceRows, 1.0,
                    static_cast<double *>(nullptr), out.data());
  EXPECT_EQ(out, std::vector<double>(3, 0));
}

TEST(ReduceSum, FloatSumIsAccumulatedInDouble) {
  // 2^24 + n ones: a float accumulator would stall at 2^24.
  const int64_t n = 1 << 20;
  std::vector<float> in(n, 1.0f);
  in[0] = float(1 << 24);
  float out = 0;
  bool all = true;
  reduceSum<float>(1, &n, &all, 1.0f, in.data(), &out);
  EXPECT_EQ(out, float((1 << 24) + n - 1));
}

/// On half storage reduceSum reads the half input widened: the float
/// kernel's bits on a widened copy, NaN's sign aside (a sum of NaNs takes
/// whichever operand's sign the instructions pass on).
template <typename T> void checkHalfStorage(CastType type) {
  const struct {
    std::vector<int64_t> shape;
    std::vector<bool> reduced;
  } cases[] = {
      {{7, 37}, {false, true}},              // row sums, a tail
      {{300, 3, 520}, {true, false, false}}, // a bias gradient, two blocks
      {{4, 6, 5}, {true, false, true}},
      {{5}, {true}},
  };
  uint32_t seed = 40;
  for (const auto &c : cases) {
    int64_t n = numel(c.shape), outN = 1;
    for (size_t d = 0; d < c.shape.size(); ++d)
      outN *= c.reduced[d] ? 1 : c.shape[d];
    for (bool specials : {false, true}) {
      std::vector<uint16_t> in = randomHalves<T>(size_t(n), ++seed, specials);
      std::vector<float> wide = widen(in, type);
      bool mask[8];
      for (size_t d = 0; d < c.shape.size(); ++d)
        mask[d] = c.reduced[d];
      std::vector<float> got(size_t(outN), -99), want(size_t(outN), -99);
      int rank = int(c.shape.size());
      reduceSum<T>(rank, c.shape.data(), mask, 0.25f, in.data(), got.data());
      reduceSum<float>(rank, c.shape.data(), mask, 0.25f, wide.data(),
                       want.data());
      for (int64_t i = 0; i < outN; ++i) {
        if (std::isnan(want[size_t(i)]))
          EXPECT_TRUE(std::isnan(got[size_t(i)])) << i;
        else
          EXPECT_EQ(floatBits(got[size_t(i)]), floatBits(want[size_t(i)]))
              << "rank " << rank << " at " << i;
      }
    }
  }
}

TEST(ReduceSumHalfStorage, SameBitsAsFloatOnAWidenedCopyF16) {
  checkHalfStorage<F16>(CastType::F16);
}
TEST(ReduceSumHalfStorage, SameBitsAsFloatOnAWidenedCopyBf16) {
  checkHalfStorage<Bf16>(CastType::BF16);
}

TEST(BroadcastTo, MatchesNaive) {
  struct Case {
    std::vector<int64_t> shape, strides;
    int64_t inSize;
  };
  std::vector<Case> cases = {
      {{4, 5}, {0, 1}, 5},                 // bias rows
      {{4, 5}, {1, 0}, 4},                 // per-row value
      {{2, 3, 4, 5}, {0, 1, 0, 0}, 3},     // per-channel
      {{3, 4}, {0, 0}, 1},                 // scalar
      {{3, 4}, {1, 3}, 12},                // a transposed view
      {{3, 1, 4}, {8, 99, 2}, 24},         // gaps; size-1 stride ignored
      {{2, 2, 2, 2, 2, 2, 2, 3}, {0, 24, 0, 6, 0, 3, 0, 1}, 48},
  };
  uint32_t seed = 600;
  for (const Case &c : cases) {
    std::vector<double> in = randomVector(c.inSize, seed++);
    std::vector<double> want = naiveBroadcast(c.shape, c.strides, -2.0, in);
    std::vector<double> out(want.size());
    broadcastTo(int(c.shape.size()), c.shape.data(), c.strides.data(), -2.0,
                in.data(), out.data());
    EXPECT_EQ(out, want);
    std::vector<float> inF(in.begin(), in.end()), outF(want.size());
    broadcastTo(int(c.shape.size()), c.shape.data(), c.strides.data(), -2.0f,
                inF.data(), outF.data());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(outF[i], float(want[i]));
  }
  double x = 1.5, y = 0;
  int64_t unused = 0;
  broadcastTo(0, &unused, &unused, 2.0, &x, &y);
  EXPECT_EQ(y, 3);
}

TEST(BroadcastTo, IsTheAdjointOfReduceSum) {
  std::vector<int64_t> shape = {2, 3, 4, 5};
  for (unsigned bits = 0; bits < 16; ++bits) {
    std::vector<bool> reduced = maskBits(bits, 4);
    bool mask[4];
    std::vector<int64_t> small;
    for (size_t d = 0; d < 4; ++d) {
      mask[d] = reduced[d];
      if (!reduced[d])
        small.push_back(shape[d]);
    }
    std::vector<int64_t> strides = keptStrides(shape, reduced);
    std::vector<double> a = randomVector(numel(small), 700 + bits);
    std::vector<double> b = randomVector(numel(shape), 800 + bits);
    std::vector<double> ba(b.size()), rb(a.size());
    broadcastTo(4, shape.data(), strides.data(), 0.75, a.data(), ba.data());
    reduceSum<double>(4, shape.data(), mask, 0.75, b.data(), rb.data());
    EXPECT_NEAR(dot(ba, b), dot(a, rb), 1e-12) << "mask " << bits;
    // And reduceSum is the gradient of <broadcastTo(a), b> with respect to a.
    checkGradient(
        "broadcastTo", a,
        [&](const std::vector<double> &av) {
          std::vector<double> y(b.size());
          broadcastTo(4, shape.data(), strides.data(), 0.75, av.data(),
                      y.data());
          return dot(y, b);
        },
        rb);
  }
}

} // namespace
