//===- Optimizer.cpp - SGD and Adam updates, in place ---------------------===//
//
// Each element is updated in double from its stored T values and rounded
// once per stored tensor, by the bodies in ScalarOps.h that the CUDA
// kernels share. The order of operations follows PyTorch 1.13's
// _single_tensor_sgd and _single_tensor_adam, whose scalars (bias
// corrections, step size) are Python floats, i.e. double. Weight decay is
// skipped at 0 as PyTorch does, so an infinite parameter stays infinite
// rather than becoming NaN through 0 * inf.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Optimizer.h"

#include "runtime/kernels/Convert.h"
#include "runtime/kernels/LaneSum.h"
#include "runtime/kernels/Parallel.h"
#include "runtime/kernels/ScalarOps.h"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace cairn::kernels {

template <typename T>
void sgdUpdate(int64_t n, double lr, double momentum, double dampening,
               double weightDecay, bool nesterov, bool firstStep, T *param,
               const T *grad, T *momentumBuffer) {
  const ops::SgdHyper h = {lr, momentum, dampening, weightDecay, nesterov};
  for (int64_t i = 0; i < n; ++i)
    ops::sgdElement(h, firstStep, param, grad, momentumBuffer, i);
}

template <typename T>
void adamUpdate(int64_t n, double lr, double beta1, double beta2, double eps,
                double weightDecay, bool decoupledWeightDecay, int64_t step,
                T *param, const T *grad, T *expAvg, T *expAvgSq) {
  const ops::AdamHyper h = {lr,  beta1,       beta2,
                            eps, weightDecay, decoupledWeightDecay};
  const ops::AdamBias bias = ops::adamBias(h, step);
  for (int64_t i = 0; i < n; ++i)
    ops::adamElement(h, bias, param, grad, expAvg, expAvgSq, i);
}

/// Calls f(g, begin, end, chunk) for every chunk of kGradNormChunk elements
/// of the `count` gradients grads[t] of sizes[t] elements, the chunks of
/// one gradient in parallel; `chunk` numbers them across all gradients, or
/// from firstChunks[t] for gradient t where given. Returns the number of
/// chunks (firstChunks[count] where given).
template <typename T, typename F>
int64_t forEachGradChunk(int count, const T *const *grads, const int64_t *sizes, F f,
                         const int64_t *firstChunks = nullptr) {
  int64_t first = 0;
  for (int t = 0; t < count; ++t) {
    if (firstChunks)
      first = firstChunks[t];
    const T *g = grads[t];
    const int64_t n = sizes[t];
    const int64_t chunks = (n + kGradNormChunk - 1) / kGradNormChunk;
    parallelForEach(chunks, kGradNormChunk, [&](int64_t c) {
      const int64_t begin = c * kGradNormChunk;
      const int64_t end = begin + kGradNormChunk < n ? begin + kGradNormChunk : n;
      f(g, begin, end, first + c);
    });
    first += chunks;
  }
  return firstChunks ? firstChunks[count] : first;
}

template <typename T>
void clipCoefficient(int count, const T *const *grads, const int64_t *sizes, double maxNorm,
                     double normType, double *workspace, T *coefficient,
                     const int64_t *deviceChunks, const RankSum &devices) {
  // Every device's partials: 0 but where this device writes its own.
  if (deviceChunks)
    std::fill(workspace, workspace + deviceChunks[count], 0.0);
  // One partial per chunk, in parallel; then all of them in order.
  int64_t chunks = forEachGradChunk(
      count, grads, sizes, [&](const T *g, int64_t begin, int64_t end, int64_t chunk) {
        double sum = 0;
        if (!std::isinf(normType)) {
          sum = laneSum(end - begin, [&](int64_t i) {
            return ops::gradNormTerm(double(g[begin + i]), normType);
          });
        } else {
          for (int64_t i = begin; i < end; ++i)
            sum = ops::combineGradNormTerms(sum, ops::gradNormTerm(double(g[i]), normType),
                                            normType);
        }
        workspace[chunk] = sum;
      },
      deviceChunks);
  if (devices)
    devices(workspace, chunks);
  double combined = 0;
  for (int64_t c = 0; c < chunks; ++c)
    combined = ops::combineGradNormTerms(combined, workspace[c], normType);
  coefficient[0] = ops::clipCoefficientOf<T>(combined, normType, maxNorm);
}

template <typename T>
void foundInf(int count, const T *const *grads, const int64_t *sizes, T *found,
              const RankSum &devices, bool halfNotFinite) {
  std::atomic<bool> any{halfNotFinite};
  forEachGradChunk(count, grads, sizes, [&](const T *g, int64_t begin, int64_t end, int64_t) {
    // x - x is 0 for a finite x and NaN for an infinite or NaN one, and a
    // NaN makes the sum NaN (!= 0): no branch per element.
    double sum = laneSum(end - begin, [&](int64_t i) {
      return double(g[begin + i]) - double(g[begin + i]);
    });
    if (sum != 0)
      any.store(true, std::memory_order_relaxed);
  });
  double anywhere = any.load() ? 1 : 0;
  if (devices)
    devices(&anywhere, 1);
  found[0] = anywhere != 0 ? T(1) : T(0);
}

template void foundInf<float>(int, const float *const *, const int64_t *, float *, const RankSum &,
                              bool);
template void foundInf<double>(int, const double *const *, const int64_t *, double *,
                               const RankSum &, bool);

template <typename Tag>
bool anyNotFinite(int count, const uint16_t *const *grads, const int64_t *sizes) {
  // An exponent field all ones is an infinity or a NaN, in the half type as
  // in its widening.
  constexpr uint16_t exponent = Tag::kExponentBits;
  std::atomic<bool> any{false};
  forEachGradChunk(count, grads, sizes,
                   [&](const uint16_t *g, int64_t begin, int64_t end, int64_t) {
                     unsigned bad = 0;
                     for (int64_t i = begin; i < end; ++i)
                       bad |= (g[i] & exponent) == exponent;
                     if (bad)
                       any.store(true, std::memory_order_relaxed);
                   });
  return any.load();
}

template bool anyNotFinite<F16>(int, const uint16_t *const *, const int64_t *);
template bool anyNotFinite<Bf16>(int, const uint16_t *const *, const int64_t *);

template void clipCoefficient<float>(int, const float *const *, const int64_t *, double, double,
                                     double *, float *, const int64_t *, const RankSum &);
template void clipCoefficient<double>(int, const double *const *, const int64_t *, double, double,
                                      double *, double *, const int64_t *, const RankSum &);

template void sgdUpdate<float>(int64_t, double, double, double, double, bool,
                               bool, float *, const float *, float *);
template void sgdUpdate<double>(int64_t, double, double, double, double, bool,
                                bool, double *, const double *, double *);
template void adamUpdate<float>(int64_t, double, double, double, double,
                                double, bool, int64_t, float *, const float *,
                                float *, float *);
template void adamUpdate<double>(int64_t, double, double, double, double,
                                 double, bool, int64_t, double *,
                                 const double *, double *, double *);

} // namespace cairn::kernels
