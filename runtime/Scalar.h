//===- Scalar.h - One element in any dtype, to and from double ---*- C++ -*-===//
//
// The runtime writes initial weights and normalised pixels in whatever dtype
// the model declares, and reads "loss" and "output" back for reports. These
// are the per-element conversions; the step functions never use them.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_SCALAR_H
#define CAIRN_RUNTIME_SCALAR_H

#include "runtime/Tensor.h"

#include <cstdint>

namespace cairn::runtime {

/// IEEE binary16 and bfloat16 bits of `value`, rounded to nearest even
/// (overflow gives infinity, NaN PyTorch's quiet NaN): kernels/Convert.h's.
uint16_t floatToHalf(float value);
uint16_t floatToBFloat16(float value);
float halfToFloat(uint16_t bits);
float bfloat16ToFloat(uint16_t bits);

/// Writes `value` at `dst` in `dtype`. F16 and BF16 round through float;
/// integer dtypes truncate toward zero (callers pass whole numbers).
void storeScalar(DType dtype, double value, void *dst);

/// The element at `src` as a double.
double loadScalar(DType dtype, const void *src);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_SCALAR_H
