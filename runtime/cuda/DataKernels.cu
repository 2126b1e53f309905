//===- DataKernels.cu - Fills, copies, zeroing and poison -----------------===//
//
// The data kernels of Kernels.h. Copies and byte fills go through
// cudaMemcpyAsync / cudaMemsetAsync on the step's stream, which a graph
// captures as memcpy and memset nodes; a typed fill needs a kernel because
// its value is wider than a byte.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"

#include "runtime/cuda/Launch.h"

namespace cairn::cuda {

namespace {

template <typename T> __global__ void fillKernel(int64_t n, T value, T *out) {
  CAIRN_GRID_STRIDE_LOOP(i, n)
  out[i] = value;
}

} // namespace

template <typename T> void fill(Context &cx, int64_t n, T value, T *out) {
  if (n <= 0)
    return;
  fillKernel<<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(n, value, out);
  CAIRN_CUDA_CHECK_LAUNCH();
}

void copyBytes(Context &cx, size_t bytes, const void *in, void *out) {
  // Nothing to copy; an empty copy would still be a node in the graph.
  if (bytes == 0 || in == out)
    return;
  CAIRN_CUDA_CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, cx.stream));
}

void zeroBytes(Context &cx, size_t bytes, void *out) {
  if (bytes == 0)
    return;
  CAIRN_CUDA_CHECK(cudaMemsetAsync(out, 0, bytes, cx.stream));
}

void poisonBytes(Context &cx, unsigned char *data, size_t bytes) {
  if (bytes == 0)
    return;
  CAIRN_CUDA_CHECK(cudaMemsetAsync(data, 0xFF, bytes, cx.stream));
}

template void fill<float>(Context &, int64_t, float, float *);
template void fill<double>(Context &, int64_t, double, double *);
template void fill<int32_t>(Context &, int64_t, int32_t, int32_t *);
template void fill<int64_t>(Context &, int64_t, int64_t, int64_t *);

} // namespace cairn::cuda
