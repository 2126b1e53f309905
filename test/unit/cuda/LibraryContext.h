//===- LibraryContext.h - Set-up of the library wrappers' tests -*- C++ -*-===//
//
// What LibraryTest.cu and HalfLibraryTest.cu share: a Context as the
// executor makes one for the cuBLASLt and cuDNN wrappers (its own stream,
// both library handles on it, step scalars in mapped host memory), device
// copies of host vectors, and the planned workspace a wrapper gets.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_TEST_UNIT_CUDA_LIBRARYCONTEXT_H
#define CAIRN_TEST_UNIT_CUDA_LIBRARYCONTEXT_H

#include "runtime/cuda/Check.h"
#include "runtime/cuda/Context.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace cairn::cuda::testing {

/// A Context as the executor makes one: its own stream, both library
/// handles on it, step scalars in mapped host memory.
class Gpu {
public:
  Gpu() {
    CAIRN_CUDA_CHECK(cudaStreamCreateWithFlags(&cx.stream, cudaStreamNonBlocking));
    CAIRN_CUBLAS_CHECK(cublasLtCreate(&cx.blasLt));
    CAIRN_CUDNN_CHECK(cudnnCreate(&cx.dnn));
    CAIRN_CUDNN_CHECK(cudnnSetStream(cx.dnn, cx.stream));
    CAIRN_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&hostScalars), sizeof(StepScalars),
                                   cudaHostAllocMapped));
    *hostScalars = StepScalars();
    void *device = nullptr;
    CAIRN_CUDA_CHECK(cudaHostGetDevicePointer(&device, hostScalars, 0));
    cx.scalars = static_cast<const StepScalars *>(device);
  }
  ~Gpu() {
    cudaStreamSynchronize(cx.stream);
    cudnnDestroy(cx.dnn);
    cublasLtDestroy(cx.blasLt);
    cudaStreamDestroy(cx.stream);
    cudaFreeHost(hostScalars);
  }
  Gpu(const Gpu &) = delete;
  Gpu &operator=(const Gpu &) = delete;

  Context cx;

private:
  StepScalars *hostScalars = nullptr;
};

/// Device memory holding a copy of a host vector.
template <typename T> class DeviceArray {
public:
  explicit DeviceArray(const std::vector<T> &host) : n(host.size()) {
    CAIRN_CUDA_CHECK(
        cudaMalloc(reinterpret_cast<void **>(&data), std::max<size_t>(n, 1) * sizeof(T)));
    if (n)
      CAIRN_CUDA_CHECK(cudaMemcpy(data, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~DeviceArray() { cudaFree(data); }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;

  T *get() const { return data; }
  /// Waits for the stream's work, then copies back.
  std::vector<T> read(Gpu &gpu) const {
    CAIRN_CUDA_CHECK(cudaStreamSynchronize(gpu.cx.stream));
    std::vector<T> host(n);
    if (n)
      CAIRN_CUDA_CHECK(cudaMemcpy(host.data(), data, n * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

private:
  size_t n;
  T *data = nullptr;
};

/// The planned workspace a wrapper gets (bytes may be 0: no workspace).
class Workspace {
public:
  explicit Workspace(size_t bytes) : bytes(bytes) {
    if (bytes)
      CAIRN_CUDA_CHECK(cudaMalloc(&data, bytes));
  }
  ~Workspace() { cudaFree(data); }
  Workspace(const Workspace &) = delete;
  Workspace &operator=(const Workspace &) = delete;

  void *data = nullptr;
  size_t bytes;
};

} // namespace cairn::cuda::testing

#endif // CAIRN_TEST_UNIT_CUDA_LIBRARYCONTEXT_H
