//===- Reduction.h - Sums over dimensions and their adjoint ------*- C++
//-*-===//
//
// reduceSum sums the dimensions flagged in `reduced` (the output has the
// input's layout with those dimensions removed, i.e. keepdim and not keepdim
// share memory layout) and multiplies by `alpha` (1/count gives a mean). On
// F16 or Bf16 storage (Convert.h) it reads the half input widened and writes
// a float32 result: the float kernel's bits on a widened copy.
// broadcastTo is its adjoint: it expands `in` over `outShape` through strides
// (0 on broadcast dimensions) and multiplies by alpha.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_REDUCTION_H
#define CAIRN_RUNTIME_KERNELS_REDUCTION_H

#include "runtime/kernels/Convert.h"

#include <cstdint>

namespace cairn::kernels {

template <typename T>
void reduceSum(int rank, const int64_t *inShape, const bool *reduced,
               ComputedIn<T> alpha, const StoredAs<T> *in, ComputedIn<T> *out);

template <typename T>
void broadcastTo(int rank, const int64_t *outShape, const int64_t *inStrides,
                 T alpha, const T *in, T *out);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_REDUCTION_H
