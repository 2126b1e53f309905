//===- TestContext.h - Shared set-up of the CUDA kernel tests ----*- C++ -*-===//
//
// What every GPU kernel test needs to run a kernel as the executor does and
// to compare it with its CPU twin: a Context with its own stream and step
// scalars in mapped host memory (as CudaExecutor sets them up), device
// buffers that start poisoned (0xFF bytes: NaN, or -1 for integers) so an
// element a kernel forgets to write shows, seeded random inputs, and
// comparisons that report the first elements that differ.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_TEST_UNIT_CUDA_TESTCONTEXT_H
#define CAIRN_TEST_UNIT_CUDA_TESTCONTEXT_H

#include "runtime/cuda/Check.h"
#include "runtime/cuda/Context.h"
#include "runtime/kernels/Elementwise.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <type_traits>
#include <vector>

namespace cairn::cuda::testing {

/// A Context as the executor makes one, minus the library handles.
class TestContext {
public:
  TestContext() {
    CAIRN_CUDA_CHECK(cudaStreamCreateWithFlags(&cx.stream, cudaStreamNonBlocking));
    CAIRN_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&hostScalars), sizeof(StepScalars),
                                   cudaHostAllocMapped));
    *hostScalars = StepScalars{};
    StepScalars *deviceScalars = nullptr;
    CAIRN_CUDA_CHECK(
        cudaHostGetDevicePointer(reinterpret_cast<void **>(&deviceScalars), hostScalars, 0));
    cx.scalars = deviceScalars;
  }
  ~TestContext() {
    // Errors are ignored: a failed test has reported them already.
    cudaStreamSynchronize(cx.stream);
    cudaStreamDestroy(cx.stream);
    cudaFreeHost(hostScalars);
  }
  TestContext(const TestContext &) = delete;
  TestContext &operator=(const TestContext &) = delete;

  /// Waits for the kernels launched so far; a kernel's fault shows here.
  void sync() { CAIRN_CUDA_CHECK(cudaStreamSynchronize(cx.stream)); }

  /// The executor writes the scalars between steps, with nothing running.
  void setStep(int64_t step) {
    sync();
    hostScalars->step = step;
  }
  void setLrFactor(double factor) {
    sync();
    hostScalars->lrFactor = factor;
  }
  void setSeed(uint64_t seed) {
    sync();
    hostScalars->seed = seed;
  }
  void setLossScale(double scale) {
    sync();
    hostScalars->lossScale = scale;
  }

  Context cx;

private:
  StepScalars *hostScalars = nullptr;
};

/// n elements of device memory, poisoned until written. Copies in and out
/// synchronise the whole device, so they are ordered with the test
/// stream's kernels (which does not synchronise with the legacy stream).
template <typename T> class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t n) : count(n) {
    CAIRN_CUDA_CHECK(
        cudaMalloc(reinterpret_cast<void **>(&ptr), std::max<size_t>(n, 1) * sizeof(T)));
    CAIRN_CUDA_CHECK(cudaMemset(ptr, 0xFF, std::max<size_t>(n, 1) * sizeof(T)));
    CAIRN_CUDA_CHECK(cudaDeviceSynchronize());
  }
  explicit DeviceBuffer(const std::vector<T> &host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() {
    if (ptr)
      cudaFree(ptr);
  }
  DeviceBuffer(DeviceBuffer &&other) noexcept : ptr(other.ptr), count(other.count) {
    other.ptr = nullptr;
    other.count = 0;
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(DeviceBuffer &&) = delete;

  T *get() const { return ptr; }
  size_t size() const { return count; }

  void upload(const std::vector<T> &host) {
    ASSERT_EQ(host.size(), count);
    CAIRN_CUDA_CHECK(cudaDeviceSynchronize());
    CAIRN_CUDA_CHECK(cudaMemcpy(ptr, host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
    CAIRN_CUDA_CHECK(cudaDeviceSynchronize());
  }
  std::vector<T> download() const {
    std::vector<T> host(count);
    CAIRN_CUDA_CHECK(cudaDeviceSynchronize());
    CAIRN_CUDA_CHECK(cudaMemcpy(host.data(), ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

private:
  T *ptr = nullptr;
  size_t count = 0;
};

/// Sizes the element-wise kernels are checked at: partial blocks and warps
/// (1, 7) and one past a million (grid-stride loops).
inline constexpr size_t kSizes[] = {1, 7, 1000003};
/// Every activation and arithmetic operator of Elementwise.h.
inline constexpr kernels::Activation kActivations[] = {
    kernels::Activation::Relu,      kernels::Activation::Sigmoid,  kernels::Activation::Tanh,
    kernels::Activation::GeluExact, kernels::Activation::GeluTanh, kernels::Activation::Silu,
    kernels::Activation::Hardswish};
inline constexpr kernels::BinaryOp kBinaryOps[] = {kernels::BinaryOp::Add, kernels::BinaryOp::Sub,
                                                   kernels::BinaryOp::Mul, kernels::BinaryOp::Div};

/// n values uniform in [lo, hi), the same for the same seed.
template <typename T> std::vector<T> randomVector(size_t n, double lo, double hi, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(n);
  for (T &x : v)
    x = static_cast<T>(dist(gen));
  return v;
}

/// Integers uniform in [lo, hi].
template <typename I> std::vector<I> randomInts(size_t n, int64_t lo, int64_t hi, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<I> v(n);
  for (I &x : v)
    x = static_cast<I>(dist(gen));
  return v;
}

/// |gpu - cpu| <= rtol * |cpu| + atol + allowance(i) everywhere, a NaN
/// matching a NaN and an infinity the same infinity. Names the first few
/// elements that differ.
template <typename T, typename Allowance>
::testing::AssertionResult allCloseBy(const std::vector<T> &gpu, const std::vector<T> &cpu,
                                      double rtol, double atol, Allowance allowance,
                                      const char *what) {
  if (gpu.size() != cpu.size())
    return ::testing::AssertionFailure()
           << "sizes differ: " << gpu.size() << " on the GPU, " << cpu.size() << " on the CPU";
  std::ostringstream os;
  os.precision(17);
  size_t bad = 0;
  for (size_t i = 0; i < gpu.size(); ++i) {
    const double g = gpu[i], c = cpu[i], allowed = allowance(i);
    bool ok;
    if (std::isnan(c) || std::isnan(g))
      ok = std::isnan(c) && std::isnan(g);
    else if (std::isinf(c) || std::isinf(g))
      ok = g == c;
    else
      ok = std::fabs(g - c) <= rtol * std::fabs(c) + atol + allowed;
    if (!ok && bad++ < 5) {
      os << "\n  [" << i << "] GPU " << g << ", CPU " << c;
      if (allowed != 0)
        os << ", allowed " << allowed;
    }
  }
  if (bad == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << gpu.size() << " elements differ (rtol "
                                       << rtol << ", atol " << atol << what << "):" << os.str();
}

template <typename T>
::testing::AssertionResult allClose(const std::vector<T> &gpu, const std::vector<T> &cpu,
                                    double rtol, double atol = 0) {
  return allCloseBy(gpu, cpu, rtol, atol, [](size_t) { return 0.0; }, "");
}

/// The same bits everywhere (so -0 differs from +0), except that any NaN
/// matches any NaN: the GPU's arithmetic returns a canonical NaN where the
/// CPU's keeps an operand's payload.
template <typename T>
::testing::AssertionResult allEqual(const std::vector<T> &gpu, const std::vector<T> &cpu) {
  if (gpu.size() != cpu.size())
    return ::testing::AssertionFailure()
           << "sizes differ: " << gpu.size() << " on the GPU, " << cpu.size() << " on the CPU";
  auto same = [](T g, T c) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(g) && std::isnan(c))
        return true;
    return std::memcmp(&g, &c, sizeof(T)) == 0;
  };
  std::ostringstream os;
  os.precision(17);
  size_t bad = 0;
  for (size_t i = 0; i < gpu.size(); ++i)
    if (!same(gpu[i], cpu[i]) && bad++ < 5)
      os << "\n  [" << i << "] GPU " << +gpu[i] << ", CPU " << +cpu[i];
  if (bad == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << gpu.size() << " elements differ bitwise:" << os.str();
}

/// allClose with an absolute allowance per element on top: where a result
/// is a difference of larger terms, each side's rounding is a few ulps of
/// those terms, not of the result; `allowance[i]` is that error.
template <typename T>
::testing::AssertionResult allCloseWithin(const std::vector<T> &gpu, const std::vector<T> &cpu,
                                          double rtol, double atol,
                                          const std::vector<double> &allowance) {
  if (allowance.size() != cpu.size())
    return ::testing::AssertionFailure() << allowance.size() << " allowances for "
                                         << cpu.size() << " elements";
  return allCloseBy(
      gpu, cpu, rtol, atol, [&](size_t i) { return allowance[i]; }, ", plus the allowance");
}

/// Tolerances of a comparison with the CPU for element type T.
struct Tolerance {
  double rtol, atol;
};
/// For element-wise results computed in double and rounded once: the
/// double results differ in their last bit where CUDA's exp, tanh or erf
/// differ from glibc's, or where the device fuses a multiply-add. Where the
/// formula cancels (1 + tanh(u) for a very negative u in GELU, 1 - y * y
/// near |y| = 1) that last bit, an absolute error of about 1e-16 times the
/// operands' size, is a large relative error of a tiny result; the
/// absolute term covers it.
template <typename T> constexpr Tolerance elementwiseTolerance() {
  return sizeof(T) == 4 ? Tolerance{1e-5, 1e-7} : Tolerance{1e-12, 1e-13};
}

} // namespace cairn::cuda::testing

#endif // CAIRN_TEST_UNIT_CUDA_TESTCONTEXT_H
