//===- OptimizerTest.cpp - SGD and Adam update tests ----------------------===//
//
// Several steps of each update against a double reference written op by op
// after PyTorch 1.13's _single_tensor_sgd and _single_tensor_adam, for double
// (carried in double over the steps) and float (each step from the stored
// float state, to one rounding). clip_grad_norm_'s coefficient against a
// double reference written after torch.nn.utils.clip_grad_norm_ (the norm of
// the per-tensor norms), across chunk edges, norms, NaN and thread counts.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Optimizer.h"

#include "runtime/kernels/Convert.h"

#include "GradCheck.h"
#include "ThreadRanks.h"

#include <omp.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

using namespace cairn::kernels;
using namespace cairn::kernels::testing;

namespace {

using Vec = std::vector<double>;

struct SgdConfig {
  double lr, momentum, dampening, weightDecay;
  bool nesterov;
};

/// One step of torch.optim.SGD on one tensor; `buf` is None before the first.
void referenceSgd(const SgdConfig &c, Vec &param, const Vec &grad,
                  std::optional<Vec> &buf) {
  Vec dp = grad;
  if (c.weightDecay != 0) // d_p = d_p.add(param, alpha=weight_decay)
    for (size_t i = 0; i < dp.size(); ++i)
      dp[i] = dp[i] + c.weightDecay * param[i];
  if (c.momentum != 0) {
    if (!buf) { // buf = torch.clone(d_p).detach()
      buf = dp;
    } else { // buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
      for (size_t i = 0; i < dp.size(); ++i) {
        (*buf)[i] *= c.momentum;
        (*buf)[i] += (1 - c.dampening) * dp[i];
      }
    }
    if (c.nesterov) // d_p = d_p.add(buf, alpha=momentum)
      for (size_t i = 0; i < dp.size(); ++i)
        dp[i] = dp[i] + c.momentum * (*buf)[i];
    else
      dp = *buf;
  }
  for (size_t i = 0; i < dp.size(); ++i) // param.add_(d_p, alpha=-lr)
    param[i] += -c.lr * dp[i];
}

struct AdamConfig {
  double lr, beta1, beta2, eps, weightDecay;
  bool decoupled = false; // AdamW
};

/// One step of torch.optim.Adam (amsgrad=False) on one tensor; `step` is the
/// step count after its increment (1 on the first step).
void referenceAdam(const AdamConfig &c, int64_t step, Vec &param,
                   const Vec &grad, Vec &expAvg, Vec &expAvgSq) {
  Vec g = grad;
  if (c.weightDecay != 0 && c.decoupled) // AdamW: param.mul_(1 - lr * wd)
    for (size_t i = 0; i < g.size(); ++i)
      param[i] = param[i] * (1 - c.lr * c.weightDecay);
  else if (c.weightDecay != 0) // grad = grad.add(param, alpha=weight_decay)
    for (size_t i = 0; i < g.size(); ++i)
      g[i] = g[i] + c.weightDecay * param[i];
  for (size_t i = 0; i < g.size(); ++i) {
    // exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
    expAvg[i] = expAvg[i] * c.beta1 + (1 - c.beta1) * g[i];
    // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    expAvgSq[i] = expAvgSq[i] * c.beta2 + (1 - c.beta2) * g[i] * g[i];
  }
  double biasCorrection1 = 1 - std::pow(c.beta1, double(step));
  double biasCorrection2 = 1 - std::pow(c.beta2, double(step));
  double stepSize = c.lr / biasCorrection1;
  double biasCorrection2Sqrt = std::sqrt(biasCorrection2);
  for (size_t i = 0; i < g.size(); ++i) {
    // denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    double denom = std::sqrt(expAvgSq[i]) / biasCorrection2Sqrt + c.eps;
    // param.addcdiv_(exp_avg, denom, value=-step_size)
    param[i] += -stepSize * (expAvg[i] / denom);
  }
}

/// Float state is re-read into the reference before every step (see
/// runSgd), so each stored value is one rounding of the double result.
void expectClose(const std::vector<float> &got, const Vec &want,
                 const std::string &what) {
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 2.4e-7 * std::fabs(want[i]) + 1e-30)
        << what << " at " << i;
}

void expectClose(const Vec &got, const Vec &want, const std::string &what) {
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-14 * std::max(1.0, std::fabs(want[i])))
        << what << " at " << i;
}

const int64_t kSize = 50;
const int kSteps = 5;

/// In float the reference restarts each step from the stored float state:
/// rounding the state is the kernel's contract, and a reference carried in
/// double drifts from it by more than one rounding after a few steps.
template <typename T> void syncState(Vec &ref, const std::vector<T> &state) {
  if (std::is_same_v<T, float>)
    ref.assign(state.begin(), state.end());
}

template <typename T> void runSgd(const SgdConfig &c) {
  std::string what = "SGD momentum " + std::to_string(c.momentum) +
                     " dampening " + std::to_string(c.dampening) + " wd " +
                     std::to_string(c.weightDecay) +
                     (c.nesterov ? " nesterov" : "");
  Vec param = randomVector(kSize, 1);
  std::optional<Vec> buf;
  std::vector<T> p(param.begin(), param.end()), b(kSize, T(-99));
  for (int s = 0; s < kSteps; ++s) {
    Vec grad = randomVector(kSize, 100 + s);
    std::vector<T> g(grad.begin(), grad.end());
    // The reference sees exactly the values the kernel stores.
    Vec gr(g.begin(), g.end());
    syncState(param, p);
    if (buf)
      syncState(*buf, b);
    referenceSgd(c, param, gr, buf);
    sgdUpdate(kSize, c.lr, c.momentum, c.dampening, c.weightDecay,
              c.nesterov, s == 0, p.data(), g.data(),
              c.momentum != 0 ? b.data() : static_cast<T *>(nullptr));
    expectClose(p, param, what + " param, step " + std::to_string(s));
    if (buf)
      expectClose(b, *buf, what + " buffer, step " + std::to_string(s));
  }
}

const SgdConfig kSgdConfigs[] = {
    {0.1, 0, 0, 0, false},      // plain
    {0.1, 0, 0, 1e-2, false},   // weight decay only
    {0.05, 0.9, 0, 0, false},   // momentum
    {0.05, 0.9, 0.1, 0, false}, // dampening
    {0.05, 0.9, 0, 1e-3, true}, // nesterov with weight decay
    {0.05, 0.8, 0.3, 5e-4, false},
};

TEST(Sgd, MatchesReferenceInDouble) {
  for (const SgdConfig &c : kSgdConfigs)
    runSgd<double>(c);
}

TEST(Sgd, MatchesReferenceInFloat) {
  for (const SgdConfig &c : kSgdConfigs)
    runSgd<float>(c);
}

TEST(Sgd, FirstStepIgnoresOldBufferAndDampening) {
  float p = 1, g = 0.5f, buf = 123;
  sgdUpdate(1, 0.1, 0.9, 0.5, 0.0, false, true, &p, &g, &buf);
  EXPECT_EQ(buf, 0.5f);
  EXPECT_FLOAT_EQ(p, 0.95f);
}

template <typename T> void runAdam(const AdamConfig &c) {
  std::string what = std::string(c.decoupled ? "AdamW" : "Adam") + " wd " +
                     std::to_string(c.weightDecay);
  Vec param = randomVector(kSize, 2), m(kSize, 0), v(kSize, 0);
  std::vector<T> p(param.begin(), param.end()), mt(kSize, 0), vt(kSize, 0);
  for (int s = 1; s <= kSteps; ++s) {
    Vec grad = randomVector(kSize, 200 + s);
    std::vector<T> g(grad.begin(), grad.end());
    Vec gr(g.begin(), g.end());
    syncState(param, p);
    syncState(m, mt);
    syncState(v, vt);
    referenceAdam(c, s, param, gr, m, v);
    adamUpdate(kSize, c.lr, c.beta1, c.beta2, c.eps, c.weightDecay, c.decoupled,
               s, p.data(), g.data(), mt.data(), vt.data());
    std::string at = ", step " + std::to_string(s);
    expectClose(p, param, what + " param" + at);
    expectClose(mt, m, what + " exp_avg" + at);
    expectClose(vt, v, what + " exp_avg_sq" + at);
  }
}

const AdamConfig kAdamConfigs[] = {
    {1e-3, 0.9, 0.999, 1e-8, 0},
    {1e-2, 0.8, 0.99, 1e-6, 1e-2},
    {0.1, 0.5, 0.9, 1e-3, 0},
    {1e-3, 0.9, 0.999, 1e-8, 1e-2, true}, // AdamW's defaults
    {0.05, 0.8, 0.99, 1e-6, 0.5, true},
};

TEST(Adam, MatchesReferenceInDouble) {
  for (const AdamConfig &c : kAdamConfigs)
    runAdam<double>(c);
}

TEST(Adam, MatchesReferenceInFloat) {
  for (const AdamConfig &c : kAdamConfigs)
    runAdam<float>(c);
}

TEST(Adam, FirstStepMovesByLrTimesSign) {
  // With zero moments the bias corrections cancel: p -= lr g / (|g| + eps).
  double p[] = {1, 1}, g[] = {0.25, -4}, m[] = {0, 0}, v[] = {0, 0};
  adamUpdate(2, 0.01, 0.9, 0.999, 1e-8, 0.0, false, 1, p, g, m, v);
  EXPECT_NEAR(p[0], 1 - 0.01 * 0.25 / (0.25 + 1e-8), 1e-15);
  EXPECT_NEAR(p[1], 1 + 0.01 * 4 / (4 + 1e-8), 1e-15);
  EXPECT_NEAR(m[1], -0.4, 1e-15);
  EXPECT_NEAR(v[1], 0.016, 1e-15);
}

TEST(Adam, AdamWDecaysTheParamNotTheGradient) {
  // torch.optim.AdamW(lr=0.1, weight_decay=0.5), one step from p = 2, g =
  // 0.25: p = 2 * (1 - 0.05) - 0.1 * 0.25 / (0.25 + 1e-8); the moments see
  // the gradient alone (Adam's would see 0.25 + 0.5 * 2).
  double p = 2, g = 0.25, m = 0, v = 0;
  adamUpdate(1, 0.1, 0.9, 0.999, 1e-8, 0.5, true, 1, &p, &g, &m, &v);
  EXPECT_NEAR(p, 2 * 0.95 - 0.1 * 0.25 / (0.25 + 1e-8), 1e-15);
  EXPECT_NEAR(m, 0.025, 1e-15);
  EXPECT_NEAR(v, 0.001 * 0.0625, 1e-18);
}

/// clip_grad_norm_'s total norm in double: the norm of the per-tensor norms.
double referenceGradNorm(const std::vector<std::vector<float>> &grads,
                         double p) {
  std::vector<double> norms;
  for (const auto &g : grads) {
    double n = 0;
    for (float x : g)
      n = std::isinf(p) ? std::max(n, std::fabs(double(x)))
                        : n + std::pow(std::fabs(double(x)), p);
    norms.push_back(std::isinf(p) ? n : std::pow(n, 1 / p));
  }
  double total = 0;
  for (double n : norms)
    total = std::isinf(p) ? std::max(total, n) : total + std::pow(n, p);
  return std::isinf(p) ? total : std::pow(total, 1 / p);
}

/// Gradients of sizes that end inside, at and past the 65536-element chunks.
std::vector<std::vector<float>> clipGradients(float scale) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0, scale);
  std::vector<std::vector<float>> grads;
  for (int64_t n : {int64_t(3), kGradNormChunk - 1, kGradNormChunk,
                    2 * kGradNormChunk + 17, int64_t(1)}) {
    grads.emplace_back(n);
    for (float &x : grads.back())
      x = normal(rng);
  }
  return grads;
}

float clipCoefficientOf(const std::vector<std::vector<float>> &grads,
                        double maxNorm, double normType) {
  std::vector<const float *> pointers;
  std::vector<int64_t> sizes;
  for (const auto &g : grads) {
    pointers.push_back(g.data());
    sizes.push_back(int64_t(g.size()));
  }
  std::vector<double> workspace(
      clipCoefficientWorkspaceElements(sizes.data(), int(sizes.size())));
  float coefficient = -1;
  clipCoefficient<float>(int(grads.size()), pointers.data(), sizes.data(),
                         maxNorm, normType, workspace.data(), &coefficient);
  return coefficient;
}

TEST(ClipCoefficient, WorkspaceIsOnePartialPerChunk) {
  int64_t sizes[] = {1, kGradNormChunk, kGradNormChunk + 1, 0};
  EXPECT_EQ(clipCoefficientWorkspaceElements(sizes, 4), 1 + 1 + 2 + 0);
}

TEST(ClipCoefficient, MatchesTorchsNormOfNormsForEachNormType) {
  const double inf = std::numeric_limits<double>::infinity();
  for (double p : {2.0, 1.0, 3.0, inf}) {
    auto grads = clipGradients(0.01f);
    // A max_norm below the norm, so that the coefficient is not clamped.
    double norm = referenceGradNorm(grads, p);
    double maxNorm = 0.25 * norm;
    double want = maxNorm / (norm + 1e-6);
    float got = clipCoefficientOf(grads, maxNorm, p);
    EXPECT_NEAR(got, want, 2e-6 * want) << "p " << p;
  }
}

TEST(ClipCoefficient, IsOneWhenTheNormIsBelowMaxNorm) {
  auto grads = clipGradients(1e-4f);
  EXPECT_EQ(clipCoefficientOf(grads, 1e3, 2.0), 1.0f);
  // Zero gradients: max_norm / 1e-6, clamped.
  std::vector<std::vector<float>> zeros = {std::vector<float>(10, 0.0f)};
  EXPECT_EQ(clipCoefficientOf(zeros, 1.0, 2.0), 1.0f);
}

TEST(ClipCoefficient, ANaNOrInfiniteGradientGivesNaNOrZero) {
  // As torch with error_if_nonfinite=False: NaN anywhere makes the norm and
  // the coefficient NaN, for the 2-norm and the infinity norm alike; an
  // infinite one makes the coefficient 0.
  for (double p : {2.0, std::numeric_limits<double>::infinity()}) {
    auto grads = clipGradients(0.01f);
    grads[2][kGradNormChunk / 2] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_TRUE(std::isnan(clipCoefficientOf(grads, 1.0, p))) << "p " << p;
    grads = clipGradients(0.01f);
    grads[0][1] = -std::numeric_limits<float>::infinity();
    EXPECT_EQ(clipCoefficientOf(grads, 1.0, p), 0.0f) << "p " << p;
  }
}

TEST(ClipCoefficient, SameBitsForAnyNumberOfThreads) {
  auto grads = clipGradients(0.05f);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  float one = clipCoefficientOf(grads, 0.5, 2.0);
  omp_set_num_threads(std::max(threads, 3));
  float many = clipCoefficientOf(grads, 0.5, 2.0);
  omp_set_num_threads(threads);
  EXPECT_EQ(one, many);
}

/// Device d's share of gradients split over devices (device[t] is gradient
/// t's): their addresses, sizes and indices among all, as the kernels'
/// tables.
struct DeviceGradients {
  std::vector<const float *> pointers;
  std::vector<int64_t> sizes;
  std::vector<size_t> indices;

  DeviceGradients(const std::vector<std::vector<float>> &grads, const std::vector<int> &device,
                  int d) {
    for (size_t t = 0; t < grads.size(); ++t)
      if (device[t] == d) {
        pointers.push_back(grads[t].data());
        sizes.push_back(int64_t(grads[t].size()));
        indices.push_back(t);
      }
  }
  int count() const { return int(pointers.size()); }
};

/// The gradients split over devices, each a thread: device[t] is gradient
/// t's. Each device passes its own gradients, where their partials go among
/// every device's, and a sum over the threads, as a partitioned step does;
/// returns every device's coefficient.
std::vector<float> clipCoefficientOnDevices(const std::vector<std::vector<float>> &grads,
                                            const std::vector<int> &device, int devices,
                                            double maxNorm, double normType) {
  std::vector<int64_t> firstChunk;
  int64_t chunks = 0;
  for (const auto &g : grads) {
    firstChunk.push_back(chunks);
    int64_t n = int64_t(g.size());
    chunks += clipCoefficientWorkspaceElements(&n, 1);
  }
  std::vector<float> coefficients(devices, -1);
  ThreadRanks(devices).run([&](int d, const RankSum &sum) {
    const DeviceGradients mine(grads, device, d);
    std::vector<int64_t> deviceChunks;
    for (size_t t : mine.indices)
      deviceChunks.push_back(firstChunk[t]);
    deviceChunks.push_back(chunks);
    // Stale values where other devices' partials go: the kernel zeroes them.
    std::vector<double> workspace(chunks, 123.0);
    clipCoefficient<float>(mine.count(), mine.pointers.data(), mine.sizes.data(), maxNorm,
                           normType, workspace.data(), &coefficients[d], deviceChunks.data(),
                           sum);
  });
  return coefficients;
}

TEST(ClipCoefficient, DevicesGetTheOneDeviceCoefficientToTheBit) {
  // Interleaved over three devices, one of them with a single gradient,
  // and over two where one device has none.
  auto grads = clipGradients(0.05f);
  for (double p : {2.0, 1.0, 3.0, std::numeric_limits<double>::infinity()}) {
    const float one = clipCoefficientOf(grads, 0.1, p);
    ASSERT_LT(one, 1.0f) << "p " << p << ": the test needs a clipping coefficient";
    for (float got : clipCoefficientOnDevices(grads, {2, 0, 1, 0, 2}, 3, 0.1, p))
      EXPECT_EQ(got, one) << "p " << p;
    for (float got : clipCoefficientOnDevices(grads, {1, 1, 1, 1, 1}, 2, 0.1, p))
      EXPECT_EQ(got, one) << "p " << p;
  }
  // A NaN on one device makes every device's coefficient NaN.
  grads[3][5] = std::numeric_limits<float>::quiet_NaN();
  for (float got : clipCoefficientOnDevices(grads, {2, 0, 1, 0, 2}, 3, 0.5, 2.0))
    EXPECT_TRUE(std::isnan(got));
}

} // namespace

namespace {

/// foundInf over `grads`, as the generated step calls it.
float foundInfOf(const std::vector<std::vector<float>> &grads) {
  std::vector<const float *> pointers;
  std::vector<int64_t> sizes;
  for (const std::vector<float> &g : grads) {
    pointers.push_back(g.data());
    sizes.push_back(int64_t(g.size()));
  }
  float found = -1;
  foundInf<float>(int(grads.size()), pointers.data(), sizes.data(), &found);
  return found;
}

TEST(FoundInfTest, FiniteGradientsOfAnyMagnitudeAreNotFound) {
  std::vector<float> big(3 * kGradNormChunk + 5, 0.0f);
  big[7] = std::numeric_limits<float>::max();
  big[kGradNormChunk + 1] = -std::numeric_limits<float>::max();
  big.back() = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(foundInfOf({big, {1.0f, -2.0f}, {}}), 0.0f);
}

TEST(FoundInfTest, AnInfinityOrNaNAnywhereIsFound) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (float bad : {inf, -inf, nan}) {
    // In the last chunk of the second of three gradients, and alone.
    std::vector<float> g(2 * kGradNormChunk + 3, 0.5f);
    g[2 * kGradNormChunk + 1] = bad;
    EXPECT_EQ(foundInfOf({{1.0f}, g, {2.0f}}), 1.0f) << bad;
    EXPECT_EQ(foundInfOf({{bad}}), 1.0f) << bad;
  }
}

/// foundInf of gradients split over devices (device[t] is gradient t's), each
/// a thread summing over the others; every device's result.
std::vector<float> foundInfOnDevices(const std::vector<std::vector<float>> &grads,
                                     const std::vector<int> &device, int devices) {
  std::vector<float> found(devices, -1);
  ThreadRanks(devices).run([&](int d, const RankSum &sum) {
    const DeviceGradients mine(grads, device, d);
    foundInf<float>(mine.count(), mine.pointers.data(), mine.sizes.data(), &found[d], sum);
  });
  return found;
}

/// anyNotFinite<Tag> over half gradients given as their bits.
template <typename Tag> bool anyNotFiniteOf(const std::vector<std::vector<uint16_t>> &grads) {
  std::vector<const uint16_t *> pointers;
  std::vector<int64_t> sizes;
  for (const std::vector<uint16_t> &g : grads) {
    pointers.push_back(g.data());
    sizes.push_back(int64_t(g.size()));
  }
  return anyNotFinite<Tag>(int(grads.size()), pointers.data(), sizes.data());
}

/// Every one of the 65536 half values, alone and in the last chunk of the
/// second of three gradients, is found exactly when its float32 widening is
/// infinite or NaN (what foundInf of the widened gradient says).
template <typename Tag> void expectHalfCheckedAsItsWidening() {
  std::vector<uint16_t> zeros(2 * kGradNormChunk + 3, 0);
  EXPECT_FALSE(anyNotFiniteOf<Tag>({{}, zeros}));
  for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    const uint16_t half = static_cast<uint16_t>(bits);
    const bool bad = !std::isfinite(Tag::load(half));
    ASSERT_EQ(anyNotFiniteOf<Tag>({{half}}), bad) << bits;
    if (bits % 251 == 0 || bad) {
      std::vector<uint16_t> g = zeros;
      g[2 * kGradNormChunk + 1] = half;
      ASSERT_EQ(anyNotFiniteOf<Tag>({{0}, g, {0}}), bad) << bits;
    }
  }
}

TEST(FoundInfTest, HalfGradientsAreCheckedAsTheirWideningF16) {
  expectHalfCheckedAsItsWidening<F16>();
}

TEST(FoundInfTest, HalfGradientsAreCheckedAsTheirWideningBf16) {
  expectHalfCheckedAsItsWidening<Bf16>();
}

TEST(FoundInfTest, AHalfGradientsOverflowIsFoundBesideFiniteFloatOnes) {
  const std::vector<float> finite = {1.0f, 2.0f};
  const float *pointers[] = {finite.data()};
  const int64_t sizes[] = {2};
  float found = -1;
  foundInf<float>(1, pointers, sizes, &found, RankSum(),
                  /*halfNotFinite=*/true);
  EXPECT_EQ(found, 1.0f);
  foundInf<float>(1, pointers, sizes, &found, RankSum(),
                  /*halfNotFinite=*/false);
  EXPECT_EQ(found, 0.0f);
  // No float gradient at all (every one half): the half verdict alone.
  foundInf<float>(0, nullptr, nullptr, &found, RankSum(),
                  /*halfNotFinite=*/true);
  EXPECT_EQ(found, 1.0f);
}

TEST(FoundInfTest, EveryDeviceFindsAnotherDevicesHalfOverflow) {
  std::vector<float> found(3, -1);
  ThreadRanks(3).run([&](int d, const RankSum &sum) {
    const float one = 1.0f;
    const float *pointers[] = {&one};
    const int64_t sizes[] = {1};
    foundInf<float>(1, pointers, sizes, &found[d], sum,
                    /*halfNotFinite=*/d == 1);
  });
  EXPECT_EQ(found, std::vector<float>(3, 1.0f));
}

TEST(FoundInfTest, EveryDeviceFindsAnotherDevicesOverflow) {
  std::vector<std::vector<float>> grads = {{1.0f}, std::vector<float>(kGradNormChunk + 9, 0.5f),
                                           {2.0f, 3.0f}};
  EXPECT_EQ(foundInfOnDevices(grads, {0, 1, 2}, 3), std::vector<float>(3, 0.0f));
  grads[1][kGradNormChunk + 4] = std::numeric_limits<float>::infinity();
  // Device 0 and device 2 have finite gradients, device 3 none.
  EXPECT_EQ(foundInfOnDevices(grads, {0, 1, 2}, 4), std::vector<float>(4, 1.0f));
}

} // namespace
