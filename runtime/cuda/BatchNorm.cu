//===- BatchNorm.cu - Batch normalisation through cuDNN -------------------===//
//
// batchNormTrainingForward, batchNormInferenceForward and batchNormBackward
// of Library.h: x is viewed as an NCHW tensor (n, c, spatial, 1) and
// normalised per channel (CUDNN_BATCHNORM_SPATIAL) with the biased batch
// variance, as kernels::batchNorm*.
//
// cuDNN computes them when the layer is affine: it needs scale and bias
// tensors (and writes both parameter gradients), and no memory may be
// allocated to stand in for missing ones. The training forward passes no
// running statistics (kernels::batchNormUpdateRunningStats updates them
// separately) and saves no mean or inverse variance; the backward passes
// none either, so cuDNN recomputes them from x. Those calls are
// deterministic and allocate nothing.
//
// Without gamma / beta, or when a parameter gradient is not wanted, or when
// the tensor is too large for cuDNN's int indexing, small kernels of our
// own do the same: one block per channel, statistics in double in two
// passes (mean, then squared deviations) like the CPU, every sum in a fixed
// order (each thread a fixed stride of elements, then a fixed tree), so the
// bits are the same on every run.
//
// With a sum over the replicas (--sync-batchnorm), SyncBatchNorm.cu's
// kernels take the statistics of every replica's examples.
//
// f16 and bf16 data (T kernels::F16 or Bf16, stored as uint16_t) go the same
// ways, with float32 parameters, statistics and parameter gradients: cuDNN's
// half batch norm (float32 scale and bias, float scaling factors) where it
// computes the call, else our kernels, which widen each element as they
// read it and round what they write (Convert.h), the CPU's arithmetic. A
// site whose half call cuDNN declines as unsupported (bf16 batch norm is
// newer than f16's in cuDNN) runs our kernels from then on.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Library.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/BatchNormChannels.h"
#include "runtime/cuda/Launch.h"
#include "runtime/cuda/SyncBatchNorm.h"

#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>

namespace cairn::cuda {

namespace {

template <typename T> struct DnnType;
template <> struct DnnType<float> { static constexpr cudnnDataType_t value = CUDNN_DATA_FLOAT; };
template <> struct DnnType<double> { static constexpr cudnnDataType_t value = CUDNN_DATA_DOUBLE; };
template <> struct DnnType<kernels::F16> {
  static constexpr cudnnDataType_t value = CUDNN_DATA_HALF;
};
template <> struct DnnType<kernels::Bf16> {
  static constexpr cudnnDataType_t value = CUDNN_DATA_BFLOAT16;
};

/// Descriptors of one call site: x (and y, dy, dx) and the per-channel
/// parameters. Making them synchronises nothing, so a site may be set up
/// while the step is captured.
class BatchNormSite final : public SiteState {
public:
  BatchNormSite(int64_t n, int64_t c, int64_t spatial, cudnnDataType_t type)
      : n(n), c(c), spatial(spatial), type(type) {}
  ~BatchNormSite() override {
    // Destruction cannot fail in a way worth reporting.
    if (param)
      cudnnDestroyTensorDescriptor(param);
    if (x)
      cudnnDestroyTensorDescriptor(x);
  }
  BatchNormSite(const BatchNormSite &) = delete;
  BatchNormSite &operator=(const BatchNormSite &) = delete;

  bool matches(int64_t n2, int64_t c2, int64_t spatial2, cudnnDataType_t type2) const {
    return n == n2 && c == c2 && spatial == spatial2 && type == type2;
  }

  int64_t n, c, spatial;
  cudnnDataType_t type;
  cudnnTensorDescriptor_t x = nullptr, param = nullptr;
  /// cuDNN declined this site's half data: our kernels run it.
  bool declined = false;
};

/// cuDNN indexes with int: the whole tensor must fit.
bool fitsCudnn(int64_t n, int64_t c, int64_t spatial) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  return n <= kMax && c <= kMax && spatial <= kMax && n * c * spatial <= kMax;
}

/// Runs `call`, the cuDNN function `name` for `site`; false where our
/// kernels must run it instead: half data that cuDNN declined as
/// unsupported, on this call or an earlier one of the site. Any other
/// failure throws, naming the function.
template <typename T, typename Call>
bool viaCudnn(BatchNormSite &site, const char *name, Call call) {
  if (site.declined)
    return false;
  const cudnnStatus_t status = call();
  if (status == CUDNN_STATUS_SUCCESS)
    return true;
  if (!std::is_same_v<kernels::StoredAs<T>, T> &&
      (status == CUDNN_STATUS_NOT_SUPPORTED || status == CUDNN_STATUS_BAD_PARAM)) {
    site.declined = true;
    return false;
  }
  throwCudnnError(status, name, __FILE__, __LINE__);
}

template <typename T>
BatchNormSite &siteFor(Context &cx, int siteId, int64_t n, int64_t c, int64_t spatial) {
  const cudnnDataType_t type = DnnType<T>::value;
  if (auto *site = dynamic_cast<BatchNormSite *>(cx.site(siteId));
      site && site->matches(n, c, spatial, type))
    return *site;
  auto site = std::make_unique<BatchNormSite>(n, c, spatial, type);
  CAIRN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&site->x));
  CAIRN_CUDNN_CHECK(cudnnSetTensor4dDescriptor(site->x, CUDNN_TENSOR_NCHW, type,
                                               static_cast<int>(n), static_cast<int>(c),
                                               static_cast<int>(spatial), 1));
  CAIRN_CUDNN_CHECK(cudnnCreateTensorDescriptor(&site->param));
  CAIRN_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(site->param, site->x, CUDNN_BATCHNORM_SPATIAL));
  BatchNormSite &result = *site;
  cx.setSite(siteId, std::move(site));
  return result;
}

// Our own kernels.

struct Moments {
  double mean, var; // biased
};

template <typename T, int Threads>
__device__ Moments channelMoments(int64_t n, int64_t c, int64_t spatial, const Data<T> *x,
                                  int64_t ch, double *shared) {
  const int64_t count = n * spatial;
  const double total = static_cast<double>(count);
  double sum = 0;
  for (int64_t k = threadIdx.x; k < count; k += Threads)
    sum += loadData<T>(x, channelIndex(k, c, spatial, ch));
  const double mean = groupSum<Threads>(sum, shared) / total;
  double sq = 0;
  for (int64_t k = threadIdx.x; k < count; k += Threads) {
    const double d = loadData<T>(x, channelIndex(k, c, spatial, ch)) - mean;
    sq += d * d;
  }
  return {mean, groupSum<Threads>(sq, shared) / total};
}

template <typename T, int Threads>
__global__ void __launch_bounds__(Threads)
    trainingForwardKernel(int64_t n, int64_t c, int64_t spatial, const Data<T> *x,
                          const Param<T> *gamma, const Param<T> *beta, double eps, Data<T> *y) {
  __shared__ double shared[Threads / 32];
  const int64_t count = n * spatial;
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    const Moments m = channelMoments<T, Threads>(n, c, spatial, x, ch, shared);
    const double scale = (gamma ? static_cast<double>(gamma[ch]) : 1.0) / sqrt(m.var + eps);
    const double shift = beta ? static_cast<double>(beta[ch]) : 0.0;
    for (int64_t k = threadIdx.x; k < count; k += Threads) {
      const int64_t i = channelIndex(k, c, spatial, ch);
      y[i] = storeData<T>((loadData<T>(x, i) - m.mean) * scale + shift);
    }
  }
}

template <typename T>
__global__ void inferenceKernel(int64_t total, int64_t c, int64_t spatial, const Data<T> *x,
                                const Param<T> *gamma, const Param<T> *beta,
                                const Param<T> *runningMean, const Param<T> *runningVar, double eps,
                                Data<T> *y) {
  CAIRN_GRID_STRIDE_LOOP(i, total) {
    const int64_t ch = (i / spatial) % c;
    const double scale = (gamma ? static_cast<double>(gamma[ch]) : 1.0) /
                         sqrt(static_cast<double>(runningVar[ch]) + eps);
    const double shift = beta ? static_cast<double>(beta[ch]) : 0.0;
    y[i] = storeData<T>((loadData<T>(x, i) - static_cast<double>(runningMean[ch])) * scale + shift);
  }
}

/// dx = gamma invStd (dy - mean(dy) - xhat mean(dy xhat)); dgamma = sum(dy
/// xhat), dbeta = sum(dy), each written when not null.
template <typename T, int Threads>
__global__ void __launch_bounds__(Threads)
    backwardKernel(int64_t n, int64_t c, int64_t spatial, const Data<T> *dy, const Data<T> *x,
                   const Param<T> *gamma, double eps, Data<T> *dx, Param<T> *dgamma,
                   Param<T> *dbeta) {
  __shared__ double shared[Threads / 32];
  const int64_t count = n * spatial;
  const double total = static_cast<double>(count);
  for (int64_t ch = blockIdx.x; ch < c; ch += gridDim.x) {
    const Moments m = channelMoments<T, Threads>(n, c, spatial, x, ch, shared);
    const double invStd = 1.0 / sqrt(m.var + eps);
    double sumDy, sumDyXc;
    channelGradientSums<T, Threads>(n, c, spatial, dy, x, ch, m.mean, shared, sumDy, sumDyXc);
    if (threadIdx.x == 0) {
      if (dgamma)
        dgamma[ch] = Param<T>(sumDyXc * invStd);
      if (dbeta)
        dbeta[ch] = Param<T>(sumDy);
    }
    const double k0 = (gamma ? static_cast<double>(gamma[ch]) : 1.0) * invStd;
    const double cXc = -k0 * invStd * invStd * sumDyXc / total, c0 = -k0 * sumDy / total;
    for (int64_t k = threadIdx.x; k < count; k += Threads) {
      const int64_t i = channelIndex(k, c, spatial, ch);
      dx[i] = storeData<T>(k0 * loadData<T>(dy, i) + cXc * (loadData<T>(x, i) - m.mean) + c0);
    }
  }
}

} // namespace

template <typename T>
void batchNormTrainingForward(Context &cx, int site, int64_t n, int64_t c, int64_t spatial,
                              const Data<T> *x, const Param<T> *gamma, const Param<T> *beta,
                              double eps, Data<T> *y, double *workspace,
                              const kernels::RankSum &replicas) {
  if (replicas)
    return syncBatchNormTrainingForward<T>(cx, n, c, spatial, x, gamma, beta, eps, y, workspace,
                                           replicas);
  if (n * c * spatial == 0)
    return;
  if (gamma && beta && fitsCudnn(n, c, spatial)) {
    BatchNormSite &plan = siteFor<T>(cx, site, n, c, spatial);
    const Param<T> one = 1, zero = 0;
    if (viaCudnn<T>(plan, "cudnnBatchNormalizationForwardTraining", [&] {
          return cudnnBatchNormalizationForwardTraining(
              cx.dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, plan.x, x, plan.x, y, plan.param, gamma,
              beta, /*exponentialAverageFactor=*/0.0, /*resultRunningMean=*/nullptr,
              /*resultRunningVariance=*/nullptr, eps, /*resultSaveMean=*/nullptr,
              /*resultSaveInvVariance=*/nullptr);
        }))
      return;
  }
  if (c >= kManyChannels)
    trainingForwardKernel<T, 256>
        <<<channelBlocks(c), 256, 0, cx.stream>>>(n, c, spatial, x, gamma, beta, eps, y);
  else
    trainingForwardKernel<T, 1024>
        <<<channelBlocks(c), 1024, 0, cx.stream>>>(n, c, spatial, x, gamma, beta, eps, y);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void batchNormInferenceForward(Context &cx, int site, int64_t n, int64_t c, int64_t spatial,
                               const Data<T> *x, const Param<T> *gamma, const Param<T> *beta,
                               const Param<T> *runningMean, const Param<T> *runningVar, double eps,
                               Data<T> *y) {
  const int64_t total = n * c * spatial;
  if (total == 0)
    return;
  if (gamma && beta && fitsCudnn(n, c, spatial)) {
    BatchNormSite &plan = siteFor<T>(cx, site, n, c, spatial);
    const Param<T> one = 1, zero = 0;
    if (viaCudnn<T>(plan, "cudnnBatchNormalizationForwardInference", [&] {
          return cudnnBatchNormalizationForwardInference(cx.dnn, CUDNN_BATCHNORM_SPATIAL, &one,
                                                         &zero, plan.x, x, plan.x, y, plan.param,
                                                         gamma, beta, runningMean, runningVar, eps);
        }))
      return;
  }
  inferenceKernel<T><<<blocksFor(total), kThreadsPerBlock, 0, cx.stream>>>(
      total, c, spatial, x, gamma, beta, runningMean, runningVar, eps, y);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void batchNormBackward(Context &cx, int site, int64_t n, int64_t c, int64_t spatial,
                       const Data<T> *dy, const Data<T> *x, const Param<T> *gamma, double eps,
                       Data<T> *dx, Param<T> *dgamma, Param<T> *dbeta, double *workspace,
                       const kernels::RankSum &replicas) {
  if (replicas)
    return syncBatchNormBackward<T>(cx, n, c, spatial, dy, x, gamma, eps, dx, dgamma, dbeta,
                                    workspace, replicas);
  if (n * c * spatial == 0)
    return;
  if (gamma && dgamma && dbeta && fitsCudnn(n, c, spatial)) {
    BatchNormSite &plan = siteFor<T>(cx, site, n, c, spatial);
    const Param<T> one = 1, zero = 0;
    if (viaCudnn<T>(plan, "cudnnBatchNormalizationBackward", [&] {
          return cudnnBatchNormalizationBackward(
              cx.dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, plan.x, x, plan.x, dy,
              plan.x, dx, plan.param, gamma, dgamma, dbeta, eps, /*savedMean=*/nullptr,
              /*savedInvVariance=*/nullptr);
        }))
      return;
  }
  if (c >= kManyChannels)
    backwardKernel<T, 256><<<channelBlocks(c), 256, 0, cx.stream>>>(n, c, spatial, dy, x, gamma,
                                                                    eps, dx, dgamma, dbeta);
  else
    backwardKernel<T, 1024><<<channelBlocks(c), 1024, 0, cx.stream>>>(n, c, spatial, dy, x, gamma,
                                                                      eps, dx, dgamma, dbeta);
  CAIRN_CUDA_CHECK_LAUNCH();
}

/// T the data's tag, D its storage, P the parameters' type.
#define CAIRN_INSTANTIATE(T, D, P)                                                                 \
  template void batchNormTrainingForward<T>(Context &, int, int64_t, int64_t, int64_t, const D *,  \
                                            const P *, const P *, double, D *, double *,           \
                                            const kernels::RankSum &);                             \
  template void batchNormInferenceForward<T>(Context &, int, int64_t, int64_t, int64_t, const D *, \
                                             const P *, const P *, const P *, const P *, double,   \
                                             D *);                                                 \
  template void batchNormBackward<T>(Context &, int, int64_t, int64_t, int64_t, const D *,         \
                                     const D *, const P *, double, D *, P *, P *, double *,        \
                                     const kernels::RankSum &);
CAIRN_INSTANTIATE(float, float, float)
CAIRN_INSTANTIATE(double, double, double)
CAIRN_INSTANTIATE(kernels::F16, uint16_t, float)
CAIRN_INSTANTIATE(kernels::Bf16, uint16_t, float)
#undef CAIRN_INSTANTIATE

} // namespace cairn::cuda
