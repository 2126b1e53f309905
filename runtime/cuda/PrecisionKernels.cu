//===- PrecisionKernels.cu - Casts and the loss scaler's kernels ----------===//
//
// Half precision on the GPU stores f16 and bf16 tensors and computes in
// float32, as on the CPU (passes/ComputeHalfInFloat32.cpp): the casts
// convert with runtime/kernels/Convert.h's bit-exact rounding, compiled for
// the device, so both backends store the same half bits for the same float.
//
// The loss scaler's kernels read and write device memory only: the scale
// comes from the step scalars (the host's LossScaler sets it before each
// step), the found-inf flag is a float32 of the arena that the update
// kernels read on the device, so a captured graph replays a skipped step as
// well as an applied one; the host reads the flag back after the step.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"

#include "runtime/cuda/Launch.h"
#include "runtime/kernels/Convert.h"
#include "runtime/kernels/KernelError.h"

namespace cairn::cuda {

namespace {

using kernels::CastType;

template <CastType From, CastType To>
__global__ void castKernel(int64_t n, const void *in, void *out) {
  CAIRN_GRID_STRIDE_LOOP(i, n) {
    float value;
    if constexpr (From == CastType::F32)
      value = static_cast<const float *>(in)[i];
    else if constexpr (From == CastType::F16)
      value = kernels::floatFromHalf(static_cast<const uint16_t *>(in)[i]);
    else
      value = kernels::floatFromBfloat16(static_cast<const uint16_t *>(in)[i]);
    if constexpr (To == CastType::F32)
      static_cast<float *>(out)[i] = value;
    else if constexpr (To == CastType::F16)
      static_cast<uint16_t *>(out)[i] = kernels::halfFromFloat(value);
    else
      static_cast<uint16_t *>(out)[i] = kernels::bfloat16FromFloat(value);
  }
}

template <CastType From> void launchCast(Context &cx, int64_t n, const void *in, void *out,
                                         CastType to) {
  const unsigned blocks = blocksFor(n);
  switch (to) {
  case CastType::F32:
    castKernel<From, CastType::F32><<<blocks, kThreadsPerBlock, 0, cx.stream>>>(n, in, out);
    break;
  case CastType::F16:
    castKernel<From, CastType::F16><<<blocks, kThreadsPerBlock, 0, cx.stream>>>(n, in, out);
    break;
  case CastType::BF16:
    castKernel<From, CastType::BF16><<<blocks, kThreadsPerBlock, 0, cx.stream>>>(n, in, out);
    break;
  }
}

__global__ void lossScaleKernel(const StepScalars *scalars, bool inverse, float *out) {
  const double scale = scalars->lossScale;
  // GradScaler's inverse: 1 / scale in double, rounded once (as on the CPU).
  out[0] = static_cast<float>(inverse ? 1.0 / scale : scale);
}

/// Sets *found to 1 where an element of `grad` is infinite or NaN. Only
/// ever writes 1, so the blocks of all the gradients' launches may race.
template <typename T> __global__ void foundInfKernel(int64_t n, const T *grad, T *found) {
  bool bad = false;
  CAIRN_GRID_STRIDE_LOOP(i, n) {
    if (!isfinite(grad[i]))
      bad = true;
  }
  if (__syncthreads_or(bad) && threadIdx.x == 0)
    *found = T(1);
}

/// foundInfKernel for half bits: the exponent field all ones (`exponent`,
/// the storage tag's kExponentBits) is an infinity or a NaN, as in the
/// float32 widening.
__global__ void halfNotFiniteKernel(int64_t n, const uint16_t *grad, uint16_t exponent,
                                    float *found) {
  bool bad = false;
  CAIRN_GRID_STRIDE_LOOP(i, n) {
    if ((grad[i] & exponent) == exponent)
      bad = true;
  }
  if (__syncthreads_or(bad) && threadIdx.x == 0)
    *found = 1.0f;
}

__global__ void skipSelectKernel(int64_t words, const uint32_t *updated, const float *found,
                                 uint32_t *old) {
  if (*found != 0.0f)
    return;
  CAIRN_GRID_STRIDE_LOOP(i, words)
  old[i] = updated[i];
}

__global__ void skipSelectBytesKernel(int64_t bytes, const unsigned char *updated,
                                      const float *found, unsigned char *old) {
  if (*found != 0.0f)
    return;
  CAIRN_GRID_STRIDE_LOOP(i, bytes)
  old[i] = updated[i];
}

} // namespace

void castElements(Context &cx, const void *in, CastType from, void *out, CastType to,
                  int64_t n) {
  // As on the CPU: the IR converts half to half through float32.
  if (from != to && from != CastType::F32 && to != CastType::F32)
    throw kernels::KernelError("cast: f16 and bf16 convert through float32, not to each other");
  if (n <= 0)
    return;
  if (from == to) {
    const size_t width = from == CastType::F32 ? 4 : 2;
    copyBytes(cx, static_cast<size_t>(n) * width, in, out);
    return;
  }
  switch (from) {
  case CastType::F32:
    launchCast<CastType::F32>(cx, n, in, out, to);
    break;
  case CastType::F16:
    launchCast<CastType::F16>(cx, n, in, out, to);
    break;
  case CastType::BF16:
    launchCast<CastType::BF16>(cx, n, in, out, to);
    break;
  }
  CAIRN_CUDA_CHECK_LAUNCH();
}

void lossScale(Context &cx, bool inverse, float *out) {
  lossScaleKernel<<<1, 1, 0, cx.stream>>>(cx.scalars, inverse, out);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void foundInf(Context &cx, int count, const T *const *grads, const int64_t *sizes, T *found) {
  zeroBytes(cx, sizeof(T), found);
  for (int t = 0; t < count; ++t) {
    if (sizes[t] <= 0)
      continue;
    foundInfKernel<T><<<blocksFor(sizes[t]), kThreadsPerBlock, 0, cx.stream>>>(sizes[t],
                                                                               grads[t], found);
    CAIRN_CUDA_CHECK_LAUNCH();
  }
}

template <typename Tag>
void markNotFinite(Context &cx, int count, const uint16_t *const *grads, const int64_t *sizes,
                   float *found) {
  for (int t = 0; t < count; ++t) {
    if (sizes[t] <= 0)
      continue;
    halfNotFiniteKernel<<<blocksFor(sizes[t]), kThreadsPerBlock, 0, cx.stream>>>(
        sizes[t], grads[t], Tag::kExponentBits, found);
    CAIRN_CUDA_CHECK_LAUNCH();
  }
}

void skipSelect(Context &cx, size_t bytes, const void *updated, const float *found, void *old) {
  if (bytes == 0 || updated == old)
    return;
  const bool words = bytes % 4 == 0 && reinterpret_cast<uintptr_t>(updated) % 4 == 0 &&
                     reinterpret_cast<uintptr_t>(old) % 4 == 0;
  if (words) {
    const int64_t n = static_cast<int64_t>(bytes / 4);
    skipSelectKernel<<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(
        n, static_cast<const uint32_t *>(updated), found, static_cast<uint32_t *>(old));
  } else {
    const int64_t n = static_cast<int64_t>(bytes);
    skipSelectBytesKernel<<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(
        n, static_cast<const unsigned char *>(updated), found, static_cast<unsigned char *>(old));
  }
  CAIRN_CUDA_CHECK_LAUNCH();
}

template void foundInf<float>(Context &, int, const float *const *, const int64_t *, float *);
template void foundInf<double>(Context &, int, const double *const *, const int64_t *, double *);
template void markNotFinite<kernels::F16>(Context &, int, const uint16_t *const *, const int64_t *,
                                          float *);
template void markNotFinite<kernels::Bf16>(Context &, int, const uint16_t *const *, const int64_t *,
                                           float *);

} // namespace cairn::cuda
