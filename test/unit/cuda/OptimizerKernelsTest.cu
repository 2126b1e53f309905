//===- OptimizerKernelsTest.cu - Fused SGD and Adam on the GPU ------------===//
//
// OptimizerKernels.cu against kernels::sgdUpdate / kernels::adamUpdate run
// tensor by tensor, over several steps with fresh gradients each step. The
// tensor list is longer than two launches' worth (kMaxUpdateTensorsPerLaunch)
// and mixes empty tensors, sizes around the kernel's chunk and one of a
// million elements. Both sides run ScalarOps.h's per-element bodies; the
// device may fuse a multiply and an add that the host rounds twice, so the
// float results agree to about an ulp rather than bit for bit. The updates
// are also replayed from a captured graph, the step changing in between, and
// follow the scheduled lr's factor in the step scalars. clipCoefficient
// against kernels::clipCoefficient over the same tensors.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"
#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Optimizer.h"

#include "TestContext.h"

#include <limits>
#include <random>
#include <string>

using namespace cairn;
using namespace cairn::cuda::testing;

namespace {

constexpr int kSteps = 4;

/// 110 tensors: three launches, the last one partial.
std::vector<size_t> tensorSizes() {
  std::vector<size_t> sizes = {1, 7, 0, 8191, 8192, 8193, 1000003, 16385, 0};
  std::mt19937_64 gen(1);
  while (sizes.size() < 110)
    sizes.push_back(1 + gen() % 3000);
  return sizes;
}

/// An ulp or so per step. An element that differs by an ulp while near 1
/// keeps that absolute difference as it moves towards 0, hence the
/// absolute term (about an ulp of 1).
template <typename T> constexpr Tolerance updateTolerance() {
  return sizeof(T) == 4 ? Tolerance{1e-5, 2.5e-7} : Tolerance{1e-12, 1e-15};
}

/// Every tensor of an update on both sides: host vectors the CPU kernels
/// update, device copies the GPU kernels update.
template <typename T> struct TensorSet {
  std::vector<size_t> sizes = tensorSizes();
  std::vector<std::vector<T>> param, grad, state0, state1;
  std::vector<DeviceBuffer<T>> dParam, dGrad, dState0, dState1;

  /// state1 is kept non-negative (Adam's exp_avg_sq).
  explicit TensorSet(uint64_t seed) {
    for (size_t t = 0; t < sizes.size(); ++t) {
      const size_t n = sizes[t];
      param.push_back(randomVector<T>(n, -1, 1, seed + 4 * t));
      grad.push_back(std::vector<T>(n));
      state0.push_back(randomVector<T>(n, -0.1, 0.1, seed + 4 * t + 1));
      state1.push_back(randomVector<T>(n, 0, 0.01, seed + 4 * t + 2));
      dParam.emplace_back(param.back());
      dGrad.emplace_back(n);
      dState0.emplace_back(state0.back());
      dState1.emplace_back(state1.back());
    }
  }

  /// The kernels' table; states left out are null.
  std::vector<cuda::UpdateTensor> table(int states) const {
    std::vector<cuda::UpdateTensor> tensors;
    for (size_t t = 0; t < sizes.size(); ++t)
      tensors.push_back({dParam[t].get(), dGrad[t].get(), states > 0 ? dState0[t].get() : nullptr,
                         states > 1 ? dState1[t].get() : nullptr, int64_t(sizes[t])});
    return tensors;
  }

  void newGradients(uint64_t seed) {
    for (size_t t = 0; t < sizes.size(); ++t) {
      grad[t] = randomVector<T>(sizes[t], -1, 1, seed + t);
      dGrad[t].upload(grad[t]);
    }
  }

  void expectMatches(int states, const std::string &what) const {
    const Tolerance tol = updateTolerance<T>();
    for (size_t t = 0; t < sizes.size(); ++t) {
      EXPECT_TRUE(allClose(dParam[t].download(), param[t], tol.rtol, tol.atol))
          << what << ": param of tensor " << t << " (" << sizes[t] << " elements)";
      if (states > 0)
        EXPECT_TRUE(allClose(dState0[t].download(), state0[t], tol.rtol, tol.atol))
            << what << ": state 0 of tensor " << t;
      if (states > 1)
        EXPECT_TRUE(allClose(dState1[t].download(), state1[t], tol.rtol, tol.atol))
            << what << ": state 1 of tensor " << t;
    }
  }
};

template <typename T> class OptimizerKernels : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(OptimizerKernels, FloatTypes);

struct SgdConfig {
  double lr, momentum, dampening, weightDecay;
  bool nesterov;
};

constexpr SgdConfig kSgdConfigs[] = {
    {0.1, 0, 0, 0, false},         // plain
    {0.05, 0, 0, 1e-2, false},     // weight decay, no momentum (no buffer)
    {0.01, 0.9, 0, 0, false},      // momentum
    {0.01, 0.9, 0.1, 1e-4, false}, // momentum with dampening and decay
    {0.02, 0.8, 0, 5e-4, true},    // nesterov
};

std::string describe(const SgdConfig &c) {
  return "SGD lr " + std::to_string(c.lr) + " momentum " + std::to_string(c.momentum) +
         " dampening " + std::to_string(c.dampening) + " decay " + std::to_string(c.weightDecay) +
         (c.nesterov ? " nesterov" : "");
}

template <typename T> void cpuSgd(TensorSet<T> &s, const SgdConfig &c, int64_t step) {
  for (size_t t = 0; t < s.sizes.size(); ++t)
    kernels::sgdUpdate<T>(s.sizes[t], c.lr, c.momentum, c.dampening, c.weightDecay, c.nesterov,
                          step == 0, s.param[t].data(), s.grad[t].data(),
                          c.momentum != 0 ? s.state0[t].data() : nullptr);
}

TYPED_TEST(OptimizerKernels, SgdOverSeveralSteps) {
  using T = TypeParam;
  TestContext tc;
  for (const SgdConfig &c : kSgdConfigs) {
    TensorSet<T> s(100);
    const int states = c.momentum != 0 ? 1 : 0;
    const std::vector<cuda::UpdateTensor> tensors = s.table(states);
    for (int64_t step = 0; step < kSteps; ++step) {
      s.newGradients(1000 * (step + 1));
      tc.setStep(step);
      cuda::sgdUpdate<T>(tc.cx, int(tensors.size()), tensors.data(), c.lr, c.momentum, c.dampening,
                         c.weightDecay, c.nesterov);
      cpuSgd(s, c, step);
      s.expectMatches(states, describe(c) + ", step " + std::to_string(step));
    }
  }
}

struct AdamConfig {
  double lr, beta1, beta2, eps, weightDecay;
  bool decoupled; // AdamW
};

constexpr AdamConfig kAdamConfigs[] = {
    {1e-3, 0.9, 0.999, 1e-8, 0, false},
    {1e-2, 0.8, 0.99, 1e-6, 1e-2, false},
    {1e-2, 0.9, 0.999, 1e-8, 0.1, true},
};

template <typename T> void cpuAdam(TensorSet<T> &s, const AdamConfig &c, int64_t step) {
  for (size_t t = 0; t < s.sizes.size(); ++t)
    kernels::adamUpdate<T>(s.sizes[t], c.lr, c.beta1, c.beta2, c.eps, c.weightDecay, c.decoupled,
                           step + 1,
                           s.param[t].data(), s.grad[t].data(), s.state0[t].data(),
                           s.state1[t].data());
}

TYPED_TEST(OptimizerKernels, AdamOverSeveralSteps) {
  using T = TypeParam;
  TestContext tc;
  for (const AdamConfig &c : kAdamConfigs) {
    TensorSet<T> s(200);
    const std::vector<cuda::UpdateTensor> tensors = s.table(2);
    for (int64_t step = 0; step < kSteps + 1; ++step) {
      s.newGradients(2000 * (step + 1));
      tc.setStep(step);
      cuda::adamUpdate<T>(tc.cx, int(tensors.size()), tensors.data(), c.lr, c.beta1, c.beta2, c.eps,
                          c.weightDecay, c.decoupled);
      cpuAdam(s, c, step);
      s.expectMatches(2, "Adam lr " + std::to_string(c.lr) + ", step " + std::to_string(step));
    }
  }
}

/// One SGD and one Adam multi-tensor update captured into a CUDA graph, as
/// the executor captures a step; replayed by launch().
template <typename T> class CapturedUpdates {
public:
  CapturedUpdates(TestContext &tc, const SgdConfig &sgd,
                  const std::vector<cuda::UpdateTensor> &sgdTensors, const AdamConfig &adam,
                  const std::vector<cuda::UpdateTensor> &adamTensors) {
    CAIRN_CUDA_CHECK(cudaStreamBeginCapture(tc.cx.stream, cudaStreamCaptureModeThreadLocal));
    cuda::sgdUpdate<T>(tc.cx, int(sgdTensors.size()), sgdTensors.data(), sgd.lr, sgd.momentum,
                       sgd.dampening, sgd.weightDecay, sgd.nesterov);
    cuda::adamUpdate<T>(tc.cx, int(adamTensors.size()), adamTensors.data(), adam.lr, adam.beta1,
                        adam.beta2, adam.eps, adam.weightDecay, adam.decoupled);
    CAIRN_CUDA_CHECK(cudaStreamEndCapture(tc.cx.stream, &graph));
    CAIRN_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  }
  ~CapturedUpdates() {
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  CapturedUpdates(const CapturedUpdates &) = delete;
  CapturedUpdates &operator=(const CapturedUpdates &) = delete;

  void launch(TestContext &tc) { CAIRN_CUDA_CHECK(cudaGraphLaunch(exec, tc.cx.stream)); }

private:
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

/// Captured once, replayed every step: the first SGD step and Adam's bias
/// correction must follow the step scalars, not the step at capture.
TYPED_TEST(OptimizerKernels, ReplayedFromAGraph) {
  using T = TypeParam;
  TestContext tc;
  const SgdConfig sgd = kSgdConfigs[3];
  const AdamConfig adam = kAdamConfigs[1];
  TensorSet<T> sSgd(300), sAdam(400);
  const std::vector<cuda::UpdateTensor> sgdTensors = sSgd.table(1), adamTensors = sAdam.table(2);
  CapturedUpdates<T> updates(tc, sgd, sgdTensors, adam, adamTensors);
  for (int64_t step = 0; step < kSteps; ++step) {
    sSgd.newGradients(3000 * (step + 1));
    sAdam.newGradients(4000 * (step + 1));
    tc.setStep(step);
    updates.launch(tc);
    tc.sync();
    cpuSgd(sSgd, sgd, step);
    cpuAdam(sAdam, adam, step);
    sSgd.expectMatches(1, "graph SGD, step " + std::to_string(step));
    sAdam.expectMatches(2, "graph Adam, step " + std::to_string(step));
  }
}

/// The scheduled lr's factor comes from the step scalars, changing between
/// replays of one graph.
TYPED_TEST(OptimizerKernels, ScheduledLrFromTheStepScalars) {
  using T = TypeParam;
  TestContext tc;
  const SgdConfig sgd = kSgdConfigs[3];
  const AdamConfig adam = kAdamConfigs[2];
  TensorSet<T> sSgd(600), sAdam(700);
  const std::vector<cuda::UpdateTensor> sgdTensors = sSgd.table(1), adamTensors = sAdam.table(2);
  CapturedUpdates<T> updates(tc, sgd, sgdTensors, adam, adamTensors);
  const double factors[] = {0.25, 1.0, 0.5, 0.01};
  for (int64_t step = 0; step < 4; ++step) {
    sSgd.newGradients(5000 * (step + 1));
    sAdam.newGradients(6000 * (step + 1));
    tc.setStep(step);
    tc.setLrFactor(factors[step]);
    updates.launch(tc);
    tc.sync();
    SgdConfig scaledSgd = sgd;
    scaledSgd.lr *= factors[step];
    AdamConfig scaledAdam = adam;
    scaledAdam.lr *= factors[step];
    cpuSgd(sSgd, scaledSgd, step);
    cpuAdam(sAdam, scaledAdam, step);
    sSgd.expectMatches(1, "scheduled SGD, step " + std::to_string(step));
    sAdam.expectMatches(2, "scheduled Adam, step " + std::to_string(step));
  }
  tc.setLrFactor(1.0);
}

/// clip_grad_norm_'s coefficient of 110 gradients (three launches, a
/// million-element one over several chunks) as on the CPU, for the 2-norm,
/// the 1-norm and the infinity norm, with and without clamping to 1. The
/// partials are summed in another order: an ulp or so apart.
TYPED_TEST(OptimizerKernels, ClipCoefficientAsOnTheCpu) {
  using T = TypeParam;
  TestContext tc;
  TensorSet<T> s(800);
  s.newGradients(9000);
  std::vector<const T *> host, device;
  std::vector<int64_t> sizes;
  for (size_t t = 0; t < s.sizes.size(); ++t) {
    host.push_back(s.grad[t].data());
    device.push_back(s.dGrad[t].get());
    sizes.push_back(int64_t(s.sizes[t]));
  }
  const int count = int(sizes.size());
  const int64_t partials = kernels::clipCoefficientWorkspaceElements(sizes.data(), count);
  std::vector<double> cpuWorkspace(partials);
  DeviceBuffer<double> workspace(partials);
  DeviceBuffer<T> coefficient(1);
  const double inf = std::numeric_limits<double>::infinity();
  for (double normType : {2.0, 1.0, inf})
    for (double maxNorm : {0.5, 1e9}) {
      T want = -1;
      kernels::clipCoefficient<T>(count, host.data(), sizes.data(), maxNorm, normType,
                                  cpuWorkspace.data(), &want);
      cuda::clipCoefficient<T>(tc.cx, count, device.data(), sizes.data(), maxNorm, normType,
                               workspace.get(), coefficient.get());
      tc.sync();
      const Tolerance tol = updateTolerance<T>();
      EXPECT_TRUE(allClose(coefficient.download(), std::vector<T>{want}, tol.rtol, 0))
          << "norm " << normType << ", max_norm " << maxNorm;
    }
}

/// A model split across two GPUs: each device passes its own gradients and
/// their places among the one-GPU partials (cairn-partition-devices'
/// device_chunks), and the sum over the devices (here device 0's partials
/// handed to device 1 by the host, as NCCL's sum would give them) makes
/// device 1's partials and coefficient the one GPU's, to the bit. Device 1
/// holds a middle run and every ninth gradient, so its gradients' partials
/// are not one run (several launches).
TYPED_TEST(OptimizerKernels, ClipCoefficientOfASplitModelIsTheOneGpuBits) {
  using T = TypeParam;
  TestContext tc;
  TensorSet<T> s(800);
  s.newGradients(9100);
  const int count = int(s.sizes.size());
  std::vector<const T *> all;
  std::vector<int64_t> sizes, firstChunk;
  int64_t partials = 0;
  for (int t = 0; t < count; ++t) {
    all.push_back(s.dGrad[t].get());
    sizes.push_back(int64_t(s.sizes[t]));
    firstChunk.push_back(partials);
    partials += kernels::clipCoefficientWorkspaceElements(&sizes.back(), 1);
  }
  auto onDevice1 = [](int t) { return (t >= 30 && t < 70) || t % 9 == 0; };
  struct Device {
    std::vector<const T *> grads;
    std::vector<int64_t> sizes, chunks;
  } devices[2];
  for (int t = 0; t < count; ++t) {
    Device &d = devices[onDevice1(t) ? 1 : 0];
    d.grads.push_back(all[t]);
    d.sizes.push_back(sizes[t]);
    d.chunks.push_back(firstChunk[t]);
  }
  for (Device &d : devices)
    d.chunks.push_back(partials);
  DeviceBuffer<double> oneWorkspace(partials), workspace0(partials), workspace1(partials);
  DeviceBuffer<T> one(1), coefficient0(1), coefficient1(1);
  std::vector<double> fromDevice0;
  const kernels::RankSum keep = [&](double *values, int64_t n) {
    tc.sync();
    fromDevice0.resize(n);
    CAIRN_CUDA_CHECK(
        cudaMemcpy(fromDevice0.data(), values, n * sizeof(double), cudaMemcpyDeviceToHost));
  };
  const kernels::RankSum add = [&](double *values, int64_t n) {
    tc.sync();
    ASSERT_EQ(size_t(n), fromDevice0.size());
    std::vector<double> mine(n);
    CAIRN_CUDA_CHECK(cudaMemcpy(mine.data(), values, n * sizeof(double), cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < n; ++i)
      mine[i] += fromDevice0[i];
    CAIRN_CUDA_CHECK(cudaMemcpyAsync(values, mine.data(), n * sizeof(double),
                                     cudaMemcpyHostToDevice, tc.cx.stream));
    tc.sync();
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (double normType : {2.0, 1.0, inf}) {
    SCOPED_TRACE("norm " + std::to_string(normType));
    cuda::clipCoefficient<T>(tc.cx, count, all.data(), sizes.data(), 0.5, normType,
                             oneWorkspace.get(), one.get());
    cuda::clipCoefficient<T>(tc.cx, int(devices[0].grads.size()), devices[0].grads.data(),
                             devices[0].sizes.data(), 0.5, normType, workspace0.get(),
                             coefficient0.get(), devices[0].chunks.data(), keep);
    cuda::clipCoefficient<T>(tc.cx, int(devices[1].grads.size()), devices[1].grads.data(),
                             devices[1].sizes.data(), 0.5, normType, workspace1.get(),
                             coefficient1.get(), devices[1].chunks.data(), add);
    tc.sync();
    EXPECT_TRUE(allEqual(workspace1.download(), oneWorkspace.download()));
    EXPECT_TRUE(allEqual(coefficient1.download(), one.download()));
    // Device 0 saw only its own partials: a smaller norm (the largest
    // magnitude may be its own, so not for the infinity norm).
    if (!std::isinf(normType))
      EXPECT_FALSE(allEqual(coefficient0.download(), one.download()));
  }
}

TEST(OptimizerKernelsEdges, NothingToUpdate) {
  TestContext tc;
  cuda::sgdUpdate<float>(tc.cx, 0, nullptr, 0.1, 0.9, 0, 0, false);
  cuda::adamUpdate<float>(tc.cx, 0, nullptr, 1e-3, 0.9, 0.999, 1e-8, 0, false);
  // Only empty tensors: no launch, and null pointers are never touched.
  std::vector<cuda::UpdateTensor> empty(60,
                                        cuda::UpdateTensor{nullptr, nullptr, nullptr, nullptr, 0});
  cuda::sgdUpdate<float>(tc.cx, int(empty.size()), empty.data(), 0.1, 0.9, 0, 0, false);
  cuda::adamUpdate<double>(tc.cx, int(empty.size()), empty.data(), 1e-3, 0.9, 0.999, 1e-8, 0,
                           false);
  tc.sync();
}

TEST(OptimizerKernelsEdges, MissingStateIsAnError) {
  TestContext tc;
  TensorSet<float> s(500);
  std::vector<cuda::UpdateTensor> tensors = s.table(2);
  tensors[57].state0 = nullptr;
  EXPECT_THROW(
      cuda::sgdUpdate<float>(tc.cx, int(tensors.size()), tensors.data(), 0.1, 0.9, 0, 0, false),
      kernels::KernelError);
  tensors[57] = s.table(2)[57];
  tensors[101].state1 = nullptr;
  EXPECT_THROW(cuda::adamUpdate<float>(tc.cx, int(tensors.size()), tensors.data(), 1e-3, 0.9, 0.999,
                                       1e-8, 0, false),
               kernels::KernelError);
}

} // namespace
