//===- SyncBatchNorm.cu - Batch norm over every replica's examples --------===//
//
// --sync-batchnorm on a GPU: batch norm whose statistics are those of every
// data-parallel replica's examples. The passes are the CPU's
// (runtime/kernels/Normalization.cpp), with a sum over the replicas
// (DeviceCollectives.h's sumOverRanks, NCCL) between them, in the plan's
// workspace laid out as kernels::ReplicaSumLayout:
//   1. each channel's sum of x, and the example count: summed;
//   2. the means, and each channel's squared deviations from them: summed;
//   3. the forward's per-element map, or the running statistics' update; the
//      backward first sums dy and dy * (x - mean) per channel (this
//      replica's dbeta and dgamma, which the gradient sums add), sums those
//      over the replicas, then writes dx.
// cuDNN takes no outside statistics, so these are our own kernels: a block
// per channel for the sums, each thread a fixed stride of elements and the
// threads in a fixed tree (the same bits on every run), as BatchNorm.cu's.
// A replica with no examples still takes part in every sum.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/SyncBatchNorm.h"

#include "runtime/cuda/BatchNormChannels.h"
#include "runtime/cuda/Launch.h"
#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Normalization.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace cairn::cuda {

namespace {

/// Pass 1: ws[ch] = this replica's sum of channel ch, ws[c] = its count.
template <typename T, int Threads>
__global__ void __launch_bounds__(Threads)
    channelSumsKernel(int64_t n, int64_t c, int64_t spatial, const Data<T> *x, double *ws) {
  __shared__ double shared[Threads / 32];
  const int64_t count = n * spatial;
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    double sum = 0;
    for (int64_t k = threadIdx.x; k < count; k += Threads)
      sum += loadData<T>(x, channelIndex(k, c, spatial, ch));
    sum = groupSum<Threads>(sum, shared);
    if (threadIdx.x == 0)
      ws[ch] = sum;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0)
    ws[c] = static_cast<double>(count);
}

/// Pass 2, after the sums: ws[ch] becomes the mean, ws[c + 1 + ch] this
/// replica's squared deviations from it.
template <typename T, int Threads>
__global__ void __launch_bounds__(Threads)
    channelSquaresKernel(int64_t n, int64_t c, int64_t spatial, const Data<T> *x, double *ws) {
  __shared__ double shared[Threads / 32];
  const int64_t count = n * spatial;
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    const double mean = ws[ch] / ws[c];
    double sq = 0;
    for (int64_t k = threadIdx.x; k < count; k += Threads) {
      const double d = loadData<T>(x, channelIndex(k, c, spatial, ch)) - mean;
      sq += d * d;
    }
    // groupSum synchronises the block: every thread has read ws[ch].
    sq = groupSum<Threads>(sq, shared);
    if (threadIdx.x == 0) {
      ws[ch] = mean;
      ws[c + 1 + ch] = sq;
    }
  }
}

/// Every replica's mean and biased variance of channel ch, after pass 2.
struct Moments {
  double mean, var;
};
__device__ __forceinline__ Moments momentsOf(const double *ws, int64_t c, int64_t ch) {
  return {ws[ch], ws[c + 1 + ch] / ws[c]};
}

template <typename T>
__global__ void normalizeKernel(int64_t total, int64_t c, int64_t spatial, const Data<T> *x,
                                const Param<T> *gamma, const Param<T> *beta, double eps,
                                const double *ws, Data<T> *y) {
  CAIRN_GRID_STRIDE_LOOP(i, total) {
    const int64_t ch = (i / spatial) % c;
    const Moments m = momentsOf(ws, c, ch);
    const double scale = (gamma ? static_cast<double>(gamma[ch]) : 1.0) / sqrt(m.var + eps);
    const double shift = beta ? static_cast<double>(beta[ch]) : 0.0;
    y[i] = storeData<T>((loadData<T>(x, i) - m.mean) * scale + shift);
  }
}

/// The backward's sums of this replica: dbeta = sum(dy), dgamma =
/// sum(dy * (x - mean)) * invStd, and both sums into the workspace.
template <typename T, int Threads>
__global__ void __launch_bounds__(Threads)
    gradientSumsKernel(int64_t n, int64_t c, int64_t spatial, const Data<T> *dy, const Data<T> *x,
                       double eps, double *ws, Param<T> *dgamma, Param<T> *dbeta) {
  __shared__ double shared[Threads / 32];
  const kernels::ReplicaSumLayout at{c};
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    const Moments m = momentsOf(ws, c, ch);
    double sumDy, sumDyXc;
    channelGradientSums<T, Threads>(n, c, spatial, dy, x, ch, m.mean, shared, sumDy, sumDyXc);
    if (threadIdx.x == 0) {
      if (dgamma)
        dgamma[ch] = Param<T>(sumDyXc * (1.0 / sqrt(m.var + eps)));
      if (dbeta)
        dbeta[ch] = Param<T>(sumDy);
      ws[at.gradientSums() + ch] = sumDy;
      ws[at.gradientSums() + c + ch] = sumDyXc;
    }
  }
}

/// dx = k (dy - mean(dy) - (x - mean) invStd^2 mean(dy (x - mean))), the
/// means over every replica's examples, k = gamma invStd.
template <typename T>
__global__ void inputGradKernel(int64_t total, int64_t c, int64_t spatial, const Data<T> *dy,
                                const Data<T> *x, const Param<T> *gamma, double eps,
                                const double *ws, Data<T> *dx) {
  const kernels::ReplicaSumLayout at{c};
  CAIRN_GRID_STRIDE_LOOP(i, total) {
    const int64_t ch = (i / spatial) % c;
    const Moments m = momentsOf(ws, c, ch);
    const double count = ws[at.count()];
    const double sumDy = ws[at.gradientSums() + ch], sumDyXc = ws[at.gradientSums() + c + ch];
    const double invStd = 1.0 / sqrt(m.var + eps);
    const double k0 = (gamma ? static_cast<double>(gamma[ch]) : 1.0) * invStd;
    const double cXc = -k0 * invStd * invStd * sumDyXc / count, c0 = -k0 * sumDy / count;
    dx[i] = storeData<T>(k0 * loadData<T>(dy, i) + cXc * (loadData<T>(x, i) - m.mean) + c0);
  }
}

template <typename T>
__global__ void runningUpdateKernel(int64_t c, double momentum, const double *ws,
                                    Param<T> *runningMean, Param<T> *runningVar,
                                    int64_t *numBatchesTracked) {
  CAIRN_GRID_STRIDE_LOOP(ch, c) {
    const Moments m = momentsOf(ws, c, ch);
    const double count = ws[c];
    // PyTorch divides by count - 1 unguarded: one element gives NaN.
    const double unbiased = m.var * count / (count - 1);
    runningMean[ch] =
        Param<T>((1 - momentum) * static_cast<double>(runningMean[ch]) + momentum * m.mean);
    runningVar[ch] =
        Param<T>((1 - momentum) * static_cast<double>(runningVar[ch]) + momentum * unbiased);
  }
  if (numBatchesTracked && blockIdx.x == 0 && threadIdx.x == 0)
    *numBatchesTracked += 1;
}

/// Launches `kernel<Threads>` with a block per channel (at least one, so
/// the count is written with no channels).
template <typename Launch> void launchChannels(int64_t c, Launch launch) {
  const unsigned blocks = channelBlocks(c);
  if (c >= kManyChannels)
    launch(std::integral_constant<int, 256>(), blocks);
  else
    launch(std::integral_constant<int, 1024>(), blocks);
  CAIRN_CUDA_CHECK_LAUNCH();
}

/// Passes 1 and 2 with their sums: every replica's moments in `ws`.
template <typename T>
void replicaMoments(Context &cx, int64_t n, int64_t c, int64_t spatial, const Data<T> *x,
                    double *ws, const kernels::RankSum &replicas) {
  if (!ws)
    throw kernels::KernelError(
        "batch norm synchronised over the replicas needs its workspace for the sums");
  launchChannels(c, [&](auto threads, unsigned blocks) {
    constexpr int Threads = decltype(threads)::value;
    channelSumsKernel<T, Threads><<<blocks, Threads, 0, cx.stream>>>(n, c, spatial, x, ws);
  });
  replicas(ws, c + 1);
  launchChannels(c, [&](auto threads, unsigned blocks) {
    constexpr int Threads = decltype(threads)::value;
    channelSquaresKernel<T, Threads><<<blocks, Threads, 0, cx.stream>>>(n, c, spatial, x, ws);
  });
  replicas(ws + kernels::ReplicaSumLayout{c}.squares(), c);
}

} // namespace

template <typename T>
void syncBatchNormTrainingForward(Context &cx, int64_t n, int64_t c, int64_t spatial,
                                  const Data<T> *x, const Param<T> *gamma, const Param<T> *beta,
                                  double eps, Data<T> *y, double *workspace,
                                  const kernels::RankSum &replicas) {
  replicaMoments<T>(cx, n, c, spatial, x, workspace, replicas);
  const int64_t total = n * c * spatial;
  if (total == 0)
    return;
  normalizeKernel<T><<<blocksFor(total), kThreadsPerBlock, 0, cx.stream>>>(
      total, c, spatial, x, gamma, beta, eps, workspace, y);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void syncBatchNormBackward(Context &cx, int64_t n, int64_t c, int64_t spatial, const Data<T> *dy,
                           const Data<T> *x, const Param<T> *gamma, double eps, Data<T> *dx,
                           Param<T> *dgamma, Param<T> *dbeta, double *workspace,
                           const kernels::RankSum &replicas) {
  replicaMoments<T>(cx, n, c, spatial, x, workspace, replicas);
  launchChannels(c, [&](auto threads, unsigned blocks) {
    constexpr int Threads = decltype(threads)::value;
    gradientSumsKernel<T, Threads><<<blocks, Threads, 0, cx.stream>>>(n, c, spatial, dy, x, eps,
                                                                      workspace, dgamma, dbeta);
  });
  replicas(workspace + kernels::ReplicaSumLayout{c}.gradientSums(), 2 * c);
  const int64_t total = n * c * spatial;
  if (total == 0)
    return;
  inputGradKernel<T><<<blocksFor(total), kThreadsPerBlock, 0, cx.stream>>>(
      total, c, spatial, dy, x, gamma, eps, workspace, dx);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void syncBatchNormUpdateRunningStats(Context &cx, int64_t n, int64_t c, int64_t spatial,
                                     const Data<T> *x, double momentum, Param<T> *runningMean,
                                     Param<T> *runningVar, int64_t *numBatchesTracked,
                                     double *workspace, const kernels::RankSum &replicas) {
  replicaMoments<T>(cx, n, c, spatial, x, workspace, replicas);
  runningUpdateKernel<T><<<blocksFor(c), kThreadsPerBlock, 0, cx.stream>>>(
      c, momentum, workspace, runningMean, runningVar, numBatchesTracked);
  CAIRN_CUDA_CHECK_LAUNCH();
}

/// T the data's tag, D its storage, P the parameters' and statistics' type.
#define CAIRN_INSTANTIATE(T, D, P)                                                                 \
  template void syncBatchNormTrainingForward<T>(Context &, int64_t, int64_t, int64_t, const D *,   \
                                                const P *, const P *, double, D *, double *,       \
                                                const kernels::RankSum &);                         \
  template void syncBatchNormBackward<T>(Context &, int64_t, int64_t, int64_t, const D *,          \
                                         const D *, const P *, double, D *, P *, P *, double *,    \
                                         const kernels::RankSum &);                                \
  template void syncBatchNormUpdateRunningStats<T>(Context &, int64_t, int64_t, int64_t,           \
                                                   const D *, double, P *, P *, int64_t *,         \
                                                   double *, const kernels::RankSum &);
CAIRN_INSTANTIATE(float, float, float)
CAIRN_INSTANTIATE(double, double, double)
CAIRN_INSTANTIATE(kernels::F16, uint16_t, float)
CAIRN_INSTANTIATE(kernels::Bf16, uint16_t, float)
#undef CAIRN_INSTANTIATE

} // namespace cairn::cuda
