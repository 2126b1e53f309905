//===- Check.h - CUDA, cuBLAS and cuDNN errors as KernelError ----*- C++ -*-===//
//
// Every call into CUDA or its libraries goes through one of these: a failure
// throws kernels::KernelError with the call, the library's message and the
// source line, which the runtime reports as one "error: ..." line.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CUDA_CHECK_H
#define CAIRN_RUNTIME_CUDA_CHECK_H

#include "runtime/kernels/KernelError.h"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

namespace cairn::cuda {

[[noreturn]] void throwCudaError(cudaError_t status, const char *call, const char *file,
                                 int line);
[[noreturn]] void throwCublasError(cublasStatus_t status, const char *call, const char *file,
                                   int line);
[[noreturn]] void throwCudnnError(cudnnStatus_t status, const char *call, const char *file,
                                  int line);

} // namespace cairn::cuda

#define CAIRN_CUDA_CHECK(call)                                                             \
  do {                                                                                     \
    cudaError_t cairnStatus = (call);                                                      \
    if (cairnStatus != cudaSuccess)                                                        \
      ::cairn::cuda::throwCudaError(cairnStatus, #call, __FILE__, __LINE__);               \
  } while (false)
#define CAIRN_CUBLAS_CHECK(call)                                                           \
  do {                                                                                     \
    cublasStatus_t cairnStatus = (call);                                                   \
    if (cairnStatus != CUBLAS_STATUS_SUCCESS)                                              \
      ::cairn::cuda::throwCublasError(cairnStatus, #call, __FILE__, __LINE__);             \
  } while (false)
#define CAIRN_CUDNN_CHECK(call)                                                            \
  do {                                                                                     \
    cudnnStatus_t cairnStatus = (call);                                                    \
    if (cairnStatus != CUDNN_STATUS_SUCCESS)                                               \
      ::cairn::cuda::throwCudnnError(cairnStatus, #call, __FILE__, __LINE__);              \
  } while (false)
/// After a kernel launch: a bad configuration shows up here, not later.
#define CAIRN_CUDA_CHECK_LAUNCH() CAIRN_CUDA_CHECK(cudaGetLastError())

#endif // CAIRN_RUNTIME_CUDA_CHECK_H
