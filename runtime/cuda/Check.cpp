//===- Check.cpp - CUDA, cuBLAS and cuDNN errors as KernelError -----------===//

#include "runtime/cuda/Check.h"

#include "absl/strings/str_format.h"

#include <cstring>

namespace cairn::cuda {

namespace {

/// "Gemm.cu:42", not the build machine's full path.
const char *baseName(const char *file) {
  const char *slash = std::strrchr(file, '/');
  return slash ? slash + 1 : file;
}

} // namespace

void throwCudaError(cudaError_t status, const char *call, const char *file, int line) {
  throw kernels::KernelError(absl::StrFormat("CUDA error %d (%s: %s) in %s at %s:%d",
                                             static_cast<int>(status), cudaGetErrorName(status),
                                             cudaGetErrorString(status), call, baseName(file),
                                             line));
}

void throwCublasError(cublasStatus_t status, const char *call, const char *file, int line) {
  throw kernels::KernelError(absl::StrFormat("cuBLAS error %d (%s) in %s at %s:%d",
                                             static_cast<int>(status),
                                             cublasLtGetStatusString(status), call,
                                             baseName(file), line));
}

void throwCudnnError(cudnnStatus_t status, const char *call, const char *file, int line) {
  throw kernels::KernelError(absl::StrFormat("cuDNN error %d (%s) in %s at %s:%d",
                                             static_cast<int>(status),
                                             cudnnGetErrorString(status), call, baseName(file),
                                             line));
}

} // namespace cairn::cuda
