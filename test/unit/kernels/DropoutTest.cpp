//===- DropoutTest.cpp - Philox and dropout mask tests --------------------===//
//
// Philox4x32-10 against the Random123 known-answer vectors, then the mask
// scheme of Dropout.h: rate, dependence on (seed, step, stream), determinism,
// independence from n, identity at p = 0, in-place use.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Dropout.h"
#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/ScalarOps.h"

#include "GradCheck.h"
#include "HalfBits.h"

#include <cmath>
#include <cstring>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

using Words = std::array<uint32_t, 4>;

TEST(Philox, KnownAnswers) {
  // Random123's kat_vectors for philox4x32 with 10 rounds.
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                       {0xffffffff, 0xffffffff}),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                       {0xa4093822, 0x299f31d0}),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

/// Element i's mask exactly as Dropout.h spells it out.
bool referenceKeep(int64_t i, double p, uint64_t seed, uint64_t step,
                   uint64_t stream) {
  uint64_t group = uint64_t(i) / 4;
  Words w = philox4x32(
      {uint32_t(group), uint32_t(group >> 32), uint32_t(step),
       uint32_t(step >> 32)},
      {uint32_t(seed), uint32_t(seed >> 32) ^ uint32_t(stream)});
  double u = (w[i % 4] >> 8) * std::ldexp(1.0, -24);
  return u >= p;
}

std::vector<float> ones(int64_t n) { return std::vector<float>(n, 1.0f); }

TEST(Dropout, FollowsTheDocumentedScheme) {
  const int64_t n = 1003;
  const double p = 0.3;
  // Seed, step and stream with high bits set, so every word of the key and
  // counter matters.
  const uint64_t seed = 0x123456789abcdef0, step = 0x500000007, stream = 9;
  std::vector<double> x = randomVector(n, 1), y(n);
  dropout<double>(n, p, seed, step, stream, x.data(), y.data());
  double scale = 1 / (1 - p);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(y[i], referenceKeep(i, p, seed, step, stream) ? x[i] * scale : 0)
        << i;
}

// The kernel compares the word's top 24 bits with ceil(p * 2^24) as
// integers: the same decision as u >= p for a rate on the grid of 2^-24,
// just off it on either side, and at the ends.
TEST(Dropout, IntegerThresholdDecidesAsTheDocumentedCompare) {
  const int64_t n = 4096 + 7; // whole blocks of 64 and a tail
  const uint64_t seed = 42, step = 3, stream = 5;
  double grid = std::ldexp(8388608.0 + 12345.0, -24); // about 0.5007
  for (double p : {grid, std::nextafter(grid, 0.0), std::nextafter(grid, 1.0),
                   0.1, 0.5, 1 - std::ldexp(1.0, -24), std::nextafter(1.0, 0.0),
                   std::ldexp(1.0, -30)}) {
    std::vector<float> y(n);
    std::vector<float> x = ones(n);
    dropout<float>(n, p, seed, step, stream, x.data(), y.data());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i] != 0, referenceKeep(i, p, seed, step, stream))
          << "p " << p << " element " << i;
  }
}

// Every way this CPU draws Philox words (AVX-512, AVX2, scalar) gives the
// documented mask, over whole 64-element blocks and a tail, and with a step
// past 2^32 (the counter's high step word).
TEST(Dropout, EveryPhiloxPathFollowsTheScheme) {
  const int64_t n = 4096 + 7;
  std::vector<float> x = ones(n);
  for (const std::string &path : dropoutPhiloxPaths()) {
    std::vector<float> y(n);
    dropoutUsing(path, n, 0.3, 7, 9, 2, x.data(), y.data());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i] != 0, referenceKeep(i, 0.3, 7, 9, 2))
          << path << " element " << i;
  }
  // Step 2^32 + 5 exercises the counter's high step word.
  std::vector<float> y(n);
  for (const std::string &path : dropoutPhiloxPaths()) {
    dropoutUsing(path, n, 0.5, 1, (uint64_t(1) << 32) + 5, 0, x.data(),
                 y.data());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i] != 0, referenceKeep(i, 0.5, 1, (uint64_t(1) << 32) + 5, 0))
          << path << " element " << i;
  }
  EXPECT_EQ(dropoutPhiloxPaths().back(), "scalar");
  EXPECT_THROW(dropoutUsing<float>("sse9", n, 0.5, 1, 1, 0, x.data(), y.data()),
               KernelError);
}

// dropoutKeep, a fused chain's mask, is dropout's: over any cut of the
// tensor into pieces starting at multiples of 4 (whole 64-element blocks,
// short pieces, tails), at the grid's edges and at p = 0 and 1, with a step
// past 2^32; and dropoutKept (the chain's select) of it is dropout's float
// result bit for bit, NaN and infinity in x included. A piece must start on a
// Philox group.
TEST(Dropout, KeepBytesAreDropoutsMask) {
  const int64_t n = 3 * kDropoutKeepBlock + 4 * 64 + 7;
  const uint64_t seed = 0x123456789abcdef0, step = (uint64_t(1) << 32) + 3,
                 stream = 11;
  std::vector<double> values = randomVector(n, 4);
  std::vector<float> x(values.begin(), values.end());
  x[5] = NAN;
  x[70] = INFINITY;
  double grid = std::ldexp(8388608.0 + 12345.0, -24);
  for (double p : {0.0, 0.1, 0.5, grid, std::nextafter(grid, 1.0), 1.0}) {
    std::vector<float> expected(n);
    dropout<float>(n, p, seed, step, stream, x.data(), expected.data());
    const float scale = ops::dropoutScale<float>(p);
    for (int64_t piece : {kDropoutKeepBlock, int64_t(64), int64_t(4),
                          int64_t(68), int64_t(1000)}) {
      std::vector<uint8_t> keep(n, 2);
      for (int64_t first = 0; first < n; first += piece)
        dropoutKeep(first, std::min(piece, n - first), p, seed, step, stream,
                    keep.data() + first);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_LE(keep[i], 1) << "p " << p << " element " << i;
        const float got = ops::dropoutKept(keep[i], x[i] * scale);
        ASSERT_EQ(std::memcmp(&got, &expected[i], sizeof(float)), 0)
            << "p " << p << " pieces of " << piece << " element " << i;
      }
    }
  }
  // A chain in double keeps dropout<double>'s bits too.
  std::vector<double> expected(n);
  dropout<double>(n, 0.3, seed, step, stream, values.data(), expected.data());
  std::vector<uint8_t> keep(n);
  dropoutKeep(0, n, 0.3, seed, step, stream, keep.data());
  const double scale = ops::dropoutScale<double>(0.3);
  for (int64_t i = 0; i < n; ++i) {
    const double got = ops::dropoutKept(keep[i], values[i] * scale);
    ASSERT_EQ(std::memcmp(&got, &expected[i], sizeof(double)), 0) << i;
  }
  EXPECT_THROW(dropoutKeep(2, 6, 0.5, seed, step, stream, keep.data()),
               KernelError);
}

TEST(Dropout, KeptFractionIsOneMinusP) {
  const int64_t n = 1000000;
  for (double p : {0.1, 0.5, 0.9}) {
    std::vector<float> x = ones(n), y(n);
    dropout<float>(n, p, 42, 7, 0, x.data(), y.data());
    int64_t kept = 0;
    float scale = float(1 / (1 - p));
    for (float v : y) {
      ASSERT_TRUE(v == 0.0f || v == scale) << v;
      kept += v != 0;
    }
    // Binomial standard deviation is at most 500; allow five of them.
    EXPECT_NEAR(double(kept), (1 - p) * n, 2500) << "p " << p;
  }
}

TEST(Dropout, MaskDependsOnSeedStepAndStream) {
  const int64_t n = 4096;
  auto mask = [&](uint64_t seed, uint64_t step, uint64_t stream) {
    std::vector<float> x = ones(n), y(n);
    dropout<float>(n, 0.5, seed, step, stream, x.data(), y.data());
    return y;
  };
  std::vector<float> base = mask(1, 2, 3);
  EXPECT_EQ(mask(1, 2, 3), base);
  for (const std::vector<float> &other :
       {mask(2, 2, 3), mask(1, 3, 3), mask(1, 2, 4), mask(1ull << 40, 2, 3),
        mask(1, 2ull << 40, 3)}) {
    int64_t differ = 0;
    for (int64_t i = 0; i < n; ++i)
      differ += other[i] != base[i];
    // Independent masks differ in about half the elements.
    EXPECT_GT(differ, n / 4);
  }
}

TEST(Dropout, SameCallTwiceGivesSameMaskForForwardAndBackward) {
  const int64_t n = 777;
  std::vector<double> x = randomVector(n, 2), dy = randomVector(n, 3);
  std::vector<double> y(n), dx(n);
  dropout<double>(n, 0.25, 5, 6, 1, x.data(), y.data());
  dropout<double>(n, 0.25, 5, 6, 1, dy.data(), dx.data());
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(y[i] == 0, dx[i] == 0) << i;
  // The backward is the same linear map: <dropout(x), dy> == <x, dropout(dy)>.
  EXPECT_NEAR(dot(y, dy), dot(x, dx), 1e-12);
}

TEST(Dropout, ZeroRateIsIdentity) {
  std::vector<float> x = {1.5f, -0.0f, 3e-38f, -7.25f, 1e30f}, y(5);
  dropout<float>(5, 0.0, 11, 12, 13, x.data(), y.data());
  EXPECT_EQ(y, x);
  EXPECT_TRUE(std::signbit(y[1]));
}

TEST(Dropout, RateOneDropsEverything) {
  std::vector<float> x = {1.5f, -2.0f, 1e30f}, y(3, 9.0f);
  dropout<float>(3, 1.0, 11, 12, 13, x.data(), y.data());
  EXPECT_EQ(y, std::vector<float>(3, 0.0f));
}

TEST(Dropout, InPlace) {
  const int64_t n = 1001;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i)
    x[i] = float(i + 1);
  dropout<float>(n, 0.4, 3, 4, 5, x.data(), y.data());
  dropout<float>(n, 0.4, 3, 4, 5, x.data(), x.data());
  EXPECT_EQ(x, y);
}

TEST(Dropout, MaskOfAnElementDoesNotDependOnN) {
  const int64_t n = 1000;
  std::vector<float> x = ones(n), full(n);
  dropout<float>(n, 0.5, 8, 9, 10, x.data(), full.data());
  for (int64_t m : {1, 2, 3, 5, 6, 7, 998}) {
    std::vector<float> prefix(m);
    dropout<float>(m, 0.5, 8, 9, 10, x.data(), prefix.data());
    EXPECT_EQ(prefix, std::vector<float>(full.begin(), full.begin() + m))
        << "n " << m;
  }
}

/// Dropout on F16 or Bf16 storage has the bits of the float kernel on a
/// widened copy followed by a cast (NaN's sign aside: a dropped NaN is 0 in
/// both, a kept one is NaN), over the vectorised blocks and the tail, in
/// place too, at p = 0, a fraction, and 1.
template <typename T> void checkHalfDropout(CastType type) {
  const int64_t n = 1000 + 3; // blocks and a tail
  const std::vector<uint16_t> x = randomHalves<T>(n, 21);
  const std::vector<float> x32 = widen(x, type);
  for (double p : {0.0, 0.3, 1.0}) {
    SCOPED_TRACE("p " + std::to_string(p));
    std::vector<float> y32(n);
    dropout<float>(n, p, 7, 8, 9, x32.data(), y32.data());
    std::vector<uint16_t> y(n, 0x1234); // overwritten
    dropout<T>(n, p, 7, 8, 9, x.data(), y.data());
    const std::vector<uint16_t> want = nanSignsCleared(narrow(y32, type), type);
    ASSERT_EQ(nanSignsCleared(y, type), want);
    std::vector<uint16_t> inPlace = x;
    dropout<T>(n, p, 7, 8, 9, inPlace.data(), inPlace.data());
    ASSERT_EQ(nanSignsCleared(inPlace, type), want) << "in place";
  }
}

TEST(DropoutHalfStorage, SameBitsAsFloatBetweenCastsF16) {
  checkHalfDropout<F16>(CastType::F16);
}

TEST(DropoutHalfStorage, SameBitsAsFloatBetweenCastsBf16) {
  checkHalfDropout<Bf16>(CastType::BF16);
}

} // namespace
