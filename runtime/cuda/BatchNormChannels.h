//===- BatchNormChannels.h - A block per batch norm channel ------*- C++ -*-===//
//
// What Cairn's own batch norm kernels share (BatchNorm.cu, SyncBatchNorm.cu;
// included by .cu files only): a block of threads owns a channel of x viewed
// as [n, c, spatial], each thread a fixed stride of its elements, and the
// threads' sums meet in a fixed tree, so the bits are the same on every run.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CUDA_BATCHNORMCHANNELS_H
#define CAIRN_RUNTIME_CUDA_BATCHNORMCHANNELS_H

#include "runtime/cuda/Launch.h"
#include "runtime/kernels/Convert.h"

#include <algorithm>
#include <cstdint>

namespace cairn::cuda {

/// Channels at or beyond which blocks of 256 threads fill the GPU; fewer
/// channels get 1024 threads each.
constexpr int64_t kManyChannels = 2 * 132;

/// A block per channel, at least one.
inline unsigned channelBlocks(int64_t c) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(c, kMaxBlocks)));
}

/// Batch norm's data (x, y, dy, dx) is stored as T, which may be f16 or bf16
/// storage (kernels::F16, Bf16: uint16_t), its parameters and statistics in
/// ComputedIn<T> (float32 beside half data, as autocast keeps them), as
/// kernels::batchNorm*.
template <typename T> using Data = kernels::StoredAs<T>;
template <typename T> using Param = kernels::ComputedIn<T>;

/// Element i of the data, widened to double.
template <typename T>
__device__ __forceinline__ double loadData(const kernels::StoredAs<T> *data, int64_t i) {
  return static_cast<double>(kernels::Storage<T>::load(data[i]));
}
/// A result element: rounded to ComputedIn<T>, then stored (to half, as a
/// cast of the float kernel's result would).
template <typename T> __device__ __forceinline__ kernels::StoredAs<T> storeData(double value) {
  return kernels::Storage<T>::store(static_cast<kernels::ComputedIn<T>>(value));
}

/// Element k of channel ch, k in [0, n * spatial): x[b, ch, i] with
/// k = b * spatial + i.
__device__ __forceinline__ int64_t channelIndex(int64_t k, int64_t c, int64_t spatial,
                                                int64_t ch) {
  int64_t i;
  const int64_t b = divMod(k, spatial, i);
  return (b * c + ch) * spatial + i;
}

/// The backward's sums over channel ch, in every thread of the block:
/// sum(dy) and sum(dy * (x - mean)).
template <typename T, int Threads>
__device__ void channelGradientSums(int64_t n, int64_t c, int64_t spatial,
                                    const kernels::StoredAs<T> *dy, const kernels::StoredAs<T> *x,
                                    int64_t ch, double mean, double *shared, double &sumDy,
                                    double &sumDyXc) {
  const int64_t count = n * spatial;
  sumDy = 0;
  sumDyXc = 0;
  for (int64_t k = threadIdx.x; k < count; k += Threads) {
    const int64_t i = channelIndex(k, c, spatial, ch);
    const double g = loadData<T>(dy, i);
    sumDy += g;
    sumDyXc += g * (loadData<T>(x, i) - mean);
  }
  sumDy = groupSum<Threads>(sumDy, shared);
  sumDyXc = groupSum<Threads>(sumDyXc, shared);
}

} // namespace cairn::cuda

#endif // CAIRN_RUNTIME_CUDA_BATCHNORMCHANNELS_H
