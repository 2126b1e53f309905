//===- GpuTestMain.cpp - gtest main that skips without a GPU --------------===//
//
// The CUDA kernel tests compare each GPU kernel with its CPU twin
// (runtime/kernels/) on the same inputs. Without a usable device (no GPU, or
// no driver: cudaGetDeviceCount then returns cudaErrorInsufficientDriver,
// 35, and leaves the count alone) they print why and exit 77, which ctest
// reports as skipped.
//
//===----------------------------------------------------------------------===//

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>

int main(int argc, char **argv) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    std::printf("skipped: no CUDA device to run the GPU kernel tests on (cudaGetDeviceCount: "
                "%s, %d devices)\n",
                status == cudaSuccess ? "success" : cudaGetErrorString(status),
                status == cudaSuccess ? count : 0);
    return 77;
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
