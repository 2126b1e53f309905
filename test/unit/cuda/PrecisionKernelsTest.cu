//===- PrecisionKernelsTest.cu - Casts and the loss scaler on the GPU -----===//
//
// PrecisionKernels.cu against its CPU twins: the casts give the same bits as
// kernels::castElements on every kind of value (normals, halfway ties,
// subnormals of both widths, overflow, infinities, NaN) and on every
// pattern of 16 bits, and refuse half to half as it does; foundInf as
// kernels::foundInf, a stale flag cleared; markNotFinite as
// kernels::anyNotFinite on half bits;
// skipSelect and the updates' `skip` write nothing on a skipped step and
// what they would without it on another, also replayed from a captured
// graph with the flag changing in between; lossScale follows the step
// scalars.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"
#include "runtime/kernels/Convert.h"
#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Optimizer.h"

#include "TestContext.h"

#include <limits>
#include <random>

using namespace cairn;
using namespace cairn::cuda::testing;
using kernels::CastType;

namespace {

/// Floats of every kind a cast meets, then random ones over a wide range.
std::vector<float> castInputs(size_t n) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.0f, 65520.0f, -65520.0f,
                          1e6f, -3e38f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::denorm_min(), 6.1e-5f, 5.96e-8f,
                          2.98e-8f, 2.99e-8f, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048,
                          1.0f + 1.0f / 256, 1.0f + 3.0f / 256, 1.17549435e-38f};
  std::mt19937_64 gen(7);
  std::uniform_int_distribution<int> exponent(-40, 40);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  while (v.size() < n)
    v.push_back(std::ldexp(mantissa(gen), exponent(gen)));
  v.resize(n);
  return v;
}

/// Casts `in` on both sides; the results' bits must be the same.
template <typename From, typename To>
void expectSameCast(const std::vector<From> &in, CastType from, CastType to) {
  TestContext tc;
  cuda::testing::DeviceBuffer<From> dIn(in);
  cuda::testing::DeviceBuffer<To> dOut(in.size());
  cuda::castElements(tc.cx, dIn.get(), from, dOut.get(), to, int64_t(in.size()));
  tc.sync();
  std::vector<To> cpu(in.size());
  kernels::castElements(in.data(), from, cpu.data(), to, int64_t(in.size()));
  std::vector<To> gpu = dOut.download();
  // Bitwise, NaN included (both sides write PyTorch's quiet NaN).
  std::vector<uint32_t> g(gpu.size()), c(cpu.size());
  for (size_t i = 0; i < gpu.size(); ++i) {
    std::memcpy(&g[i], &gpu[i], sizeof(To));
    std::memcpy(&c[i], &cpu[i], sizeof(To));
  }
  EXPECT_TRUE(allEqual(g, c)) << int(from) << " to " << int(to) << ", " << in.size()
                              << " elements";
}

/// Every pattern of 16 bits.
std::vector<uint16_t> allHalfBits() {
  std::vector<uint16_t> bits(1 << 16);
  for (size_t i = 0; i < bits.size(); ++i)
    bits[i] = static_cast<uint16_t>(i);
  return bits;
}

TEST(PrecisionKernels, CastsGiveTheCpuBits) {
  for (size_t n : {size_t(1), size_t(257), size_t(1000003)}) {
    std::vector<float> in = castInputs(n);
    expectSameCast<float, uint16_t>(in, CastType::F32, CastType::F16);
    expectSameCast<float, uint16_t>(in, CastType::F32, CastType::BF16);
    expectSameCast<float, float>(in, CastType::F32, CastType::F32);
  }
  const std::vector<uint16_t> bits = allHalfBits();
  expectSameCast<uint16_t, float>(bits, CastType::F16, CastType::F32);
  expectSameCast<uint16_t, float>(bits, CastType::BF16, CastType::F32);
  expectSameCast<uint16_t, uint16_t>(bits, CastType::F16, CastType::F16);
}

TEST(PrecisionKernels, HalfToHalfIsRefusedAsOnTheCpu) {
  TestContext tc;
  cuda::testing::DeviceBuffer<uint16_t> in(4), out(4);
  uint16_t host[4] = {};
  EXPECT_THROW(kernels::castElements(host, CastType::F16, host, CastType::BF16, 4),
               kernels::KernelError);
  EXPECT_THROW(cuda::castElements(tc.cx, in.get(), CastType::F16, out.get(), CastType::BF16, 4),
               kernels::KernelError);
  EXPECT_THROW(cuda::castElements(tc.cx, in.get(), CastType::BF16, out.get(), CastType::F16, 4),
               kernels::KernelError);
}

TEST(PrecisionKernels, EmptyCastWritesNothing) {
  TestContext tc;
  cuda::testing::DeviceBuffer<uint16_t> out(4);
  const std::vector<uint16_t> before = out.download();
  cuda::castElements(tc.cx, nullptr, CastType::F32, out.get(), CastType::F16, 0);
  tc.sync();
  EXPECT_TRUE(allEqual(out.download(), before));
}

TEST(PrecisionKernels, LossScaleFollowsTheScalars) {
  TestContext tc;
  cuda::testing::DeviceBuffer<float> scale(1), inverse(1);
  for (double s : {65536.0, 3.0, 0.5}) {
    tc.setLossScale(s);
    cuda::lossScale(tc.cx, false, scale.get());
    cuda::lossScale(tc.cx, true, inverse.get());
    tc.sync();
    EXPECT_EQ(scale.download()[0], static_cast<float>(s));
    EXPECT_EQ(inverse.download()[0], static_cast<float>(1.0 / s));
  }
}

TEST(PrecisionKernels, FoundInfAsOnTheCpu) {
  TestContext tc;
  const std::vector<int64_t> sizes = {5, 0, 100003, 1};
  std::vector<std::vector<float>> grads;
  std::vector<cuda::testing::DeviceBuffer<float>> dGrads;
  for (size_t t = 0; t < sizes.size(); ++t) {
    grads.push_back(randomVector<float>(sizes[t], -1e30, 1e30, 20 + t));
    dGrads.emplace_back(grads.back());
  }
  cuda::testing::DeviceBuffer<float> found(1); // poisoned: NaN, a stale value
  auto run = [&]() {
    std::vector<const float *> dPointers, hPointers;
    for (size_t t = 0; t < sizes.size(); ++t) {
      dGrads[t].upload(grads[t]);
      dPointers.push_back(dGrads[t].get());
      hPointers.push_back(grads[t].data());
    }
    cuda::foundInf<float>(tc.cx, int(sizes.size()), dPointers.data(), sizes.data(), found.get());
    tc.sync();
    float cpu = -1;
    kernels::foundInf<float>(int(sizes.size()), hPointers.data(), sizes.data(), &cpu);
    return std::make_pair(found.download()[0], cpu);
  };
  auto [gpu, cpu] = run();
  EXPECT_EQ(gpu, 0.0f);
  EXPECT_EQ(cpu, 0.0f);
  grads[2][100002] = std::numeric_limits<float>::infinity();
  std::tie(gpu, cpu) = run();
  EXPECT_EQ(gpu, 1.0f);
  EXPECT_EQ(cpu, 1.0f);
  grads[2][100002] = 0;
  grads[3][0] = -std::numeric_limits<float>::quiet_NaN();
  std::tie(gpu, cpu) = run();
  EXPECT_EQ(gpu, 1.0f);
  EXPECT_EQ(cpu, 1.0f);
  grads[3][0] = 1;
  std::tie(gpu, cpu) = run();
  EXPECT_EQ(gpu, 0.0f) << "a flag set by an earlier step must be cleared";
}

/// markNotFinite after foundInf, as the generated step calls them for a
/// step with f16 or bf16 gradients: every 16-bit pattern, in the last
/// element of the second of two half gradients, sets the flag exactly when
/// kernels::anyNotFinite finds it (and its widening is not finite).
template <typename Tag> void expectMarkNotFiniteAsOnTheCpu() {
  TestContext tc;
  const std::vector<int64_t> sizes = {3, 70001};
  std::vector<std::vector<uint16_t>> grads = {std::vector<uint16_t>(3, 0),
                                              std::vector<uint16_t>(70001, 0x3c00u)};
  std::vector<cuda::testing::DeviceBuffer<uint16_t>> dGrads;
  for (const auto &g : grads)
    dGrads.emplace_back(g);
  cuda::testing::DeviceBuffer<float> found(1);
  const float one = 1.0f;
  cuda::testing::DeviceBuffer<float> finite(std::vector<float>{one});
  for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    grads[1].back() = static_cast<uint16_t>(bits);
    CAIRN_CUDA_CHECK(cudaMemcpy(dGrads[1].get() + sizes[1] - 1, &grads[1].back(), sizeof(uint16_t),
                                cudaMemcpyHostToDevice));
    const float *wide[] = {finite.get()};
    const int64_t wideSizes[] = {1};
    cuda::foundInf<float>(tc.cx, 1, wide, wideSizes, found.get());
    const uint16_t *dPointers[] = {dGrads[0].get(), dGrads[1].get()};
    cuda::markNotFinite<Tag>(tc.cx, 2, dPointers, sizes.data(), found.get());
    tc.sync();
    const uint16_t *hPointers[] = {grads[0].data(), grads[1].data()};
    const bool cpu = kernels::anyNotFinite<Tag>(2, hPointers, sizes.data());
    ASSERT_EQ(found.download()[0], cpu ? 1.0f : 0.0f) << bits;
    ASSERT_EQ(cpu, !std::isfinite(Tag::load(static_cast<uint16_t>(bits)))) << bits;
  }
}

TEST(PrecisionKernels, MarkNotFiniteAsOnTheCpuF16) {
  expectMarkNotFiniteAsOnTheCpu<kernels::F16>();
}

TEST(PrecisionKernels, MarkNotFiniteAsOnTheCpuBf16) {
  expectMarkNotFiniteAsOnTheCpu<kernels::Bf16>();
}

TEST(PrecisionKernels, SkipSelectCommitsUnlessSkipped) {
  TestContext tc;
  for (size_t bytes : {size_t(4096), size_t(6), size_t(4 * 100003)}) {
    std::vector<unsigned char> old(bytes), updated(bytes);
    for (size_t i = 0; i < bytes; ++i) {
      old[i] = static_cast<unsigned char>(i * 7);
      updated[i] = static_cast<unsigned char>(i * 13 + 1);
    }
    cuda::testing::DeviceBuffer<unsigned char> dOld(old), dUpdated(updated);
    cuda::testing::DeviceBuffer<float> found(std::vector<float>{1.0f});
    cuda::skipSelect(tc.cx, bytes, dUpdated.get(), found.get(), dOld.get());
    tc.sync();
    EXPECT_TRUE(allEqual(dOld.download(), old)) << bytes << " bytes, skipped";
    found.upload({0.0f});
    cuda::skipSelect(tc.cx, bytes, dUpdated.get(), found.get(), dOld.get());
    tc.sync();
    EXPECT_TRUE(allEqual(dOld.download(), updated)) << bytes << " bytes, applied";
  }
}

/// SGD with momentum and Adam, from a captured graph replayed with the flag
/// set, then cleared: the skipped replay leaves every tensor's bits, the
/// applied one matches the CPU's update.
TEST(PrecisionKernels, UpdatesSkipOnTheFlagInAGraph) {
  TestContext tc;
  const int64_t n = 20000;
  const std::vector<float> param = randomVector<float>(n, -1, 1, 1);
  const std::vector<float> grad = randomVector<float>(n, -1, 1, 2);
  const std::vector<float> m = randomVector<float>(n, -0.1, 0.1, 3);
  const std::vector<float> v = randomVector<float>(n, 0, 0.01, 4);
  cuda::testing::DeviceBuffer<float> dParam(param), dGrad(grad), dM(m), dV(v), dSkip(1);
  for (bool adam : {false, true}) {
    dParam.upload(param);
    dM.upload(m);
    dV.upload(v);
    const cuda::UpdateTensor tensors[] = {{dParam.get(), dGrad.get(), dM.get(),
                                           adam ? dV.get() : nullptr, n}};
    cudaGraph_t captured = nullptr;
    cudaGraphExec_t exec = nullptr;
    tc.setStep(3);
    CAIRN_CUDA_CHECK(cudaStreamBeginCapture(tc.cx.stream, cudaStreamCaptureModeThreadLocal));
    if (adam)
      cuda::adamUpdate<float>(tc.cx, 1, tensors, 1e-3, 0.9, 0.999, 1e-8, 0.01, true, dSkip.get());
    else
      cuda::sgdUpdate<float>(tc.cx, 1, tensors, 0.1, 0.9, 0, 1e-4, false, dSkip.get());
    CAIRN_CUDA_CHECK(cudaStreamEndCapture(tc.cx.stream, &captured));
    CAIRN_CUDA_CHECK(cudaGraphInstantiate(&exec, captured, 0));
    cudaGraphDestroy(captured);

    dSkip.upload({1.0f});
    CAIRN_CUDA_CHECK(cudaGraphLaunch(exec, tc.cx.stream));
    tc.sync();
    EXPECT_TRUE(allEqual(dParam.download(), param)) << (adam ? "Adam" : "SGD") << ", skipped";
    EXPECT_TRUE(allEqual(dM.download(), m)) << (adam ? "Adam" : "SGD") << ", skipped";

    dSkip.upload({0.0f});
    CAIRN_CUDA_CHECK(cudaGraphLaunch(exec, tc.cx.stream));
    tc.sync();
    cudaGraphExecDestroy(exec);
    std::vector<float> p = param, mm = m, vv = v;
    if (adam)
      kernels::adamUpdate<float>(n, 1e-3, 0.9, 0.999, 1e-8, 0.01, true, 4, p.data(), grad.data(),
                                 mm.data(), vv.data());
    else
      kernels::sgdUpdate<float>(n, 0.1, 0.9, 0, 1e-4, false, false, p.data(), grad.data(),
                                mm.data());
    EXPECT_TRUE(allClose(dParam.download(), p, 1e-5, 2.5e-7)) << (adam ? "Adam" : "SGD");
    EXPECT_TRUE(allClose(dM.download(), mm, 1e-5, 2.5e-7)) << (adam ? "Adam" : "SGD");
  }
}

} // namespace
