//===- Elementwise.h - Activations, arithmetic, fills ------------*- C++ -*-===//
//
// Loops a compiler vectorises, split across threads (Parallel.h). Binary ops
// broadcast with NumPy rules through
// per-operand strides (in elements, 0 on a broadcast dimension) over the
// output shape. Outputs may alias an input of the same size (in place).
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_ELEMENTWISE_H
#define CAIRN_RUNTIME_KERNELS_ELEMENTWISE_H

#include "runtime/kernels/Convert.h"

#include <cstdint>

namespace cairn::kernels {

enum class Activation {
  Relu,
  Sigmoid,
  Tanh,
  GeluExact,
  GeluTanh,
  Silu,
  Hardswish
};

/// T is float or double, or F16 or Bf16 (Convert.h): half tensors read
/// widened to float and written rounded, the float kernel's bits between
/// casts.
template <typename T>
void activationForward(Activation kind, int64_t n, const StoredAs<T> *x,
                       StoredAs<T> *y);

/// dx = dy * f'(.), where `saved` is the forward input x for Relu, the
/// Gelus, Silu and Hardswish, and the forward output y for Sigmoid and Tanh.
template <typename T>
void activationBackward(Activation kind, int64_t n, const StoredAs<T> *dy,
                        const StoredAs<T> *saved, StoredAs<T> *dx);

/// y = x clamped to [min, max] (torch.clamp; also nn.Hardtanh and nn.ReLU6),
/// a bound taking part only where `hasMin` / `hasMax`; NaN stays NaN, and
/// min > max gives max everywhere, as in PyTorch.
template <typename T>
void clampForward(int64_t n, bool hasMin, double min, bool hasMax, double max,
                  const T *x, T *y);

/// dx = dy strictly inside the bounds, 0 on and beyond them and for NaN (x
/// the forward input), as PyTorch 2's clamp and hardtanh gradients.
template <typename T>
void clampBackward(int64_t n, bool hasMin, double min, bool hasMax, double max,
                   const T *dy, const T *x, T *dx);

/// nn.LeakyReLU: y = x > 0 ? x : x * slope.
template <typename T>
void leakyReluForward(int64_t n, double slope, const T *x, T *y);

/// dx = x > 0 ? dy : dy * slope (x the forward input; NaN takes the slope).
template <typename T>
void leakyReluBackward(int64_t n, double slope, const T *dy, const T *x,
                       T *dx);

enum class BinaryOp { Add, Sub, Mul, Div };

/// out[i] = a[i] op b[i], all of n elements.
template <typename T>
void binarySameShape(BinaryOp op, int64_t n, const T *a, const T *b, T *out);

/// out (shape outShape[0..rank)) = a op b, broadcast through the strides;
/// on F16 or Bf16 storage each element widened and the result rounded
/// (Convert.h), the float kernel's bits between casts.
template <typename T>
void binaryBroadcast(BinaryOp op, int rank, const int64_t *outShape,
                     const StoredAs<T> *a, const int64_t *aStrides,
                     const StoredAs<T> *b, const int64_t *bStrides,
                     StoredAs<T> *out);

/// y[i] = alpha * x[i].
template <typename T> void scale(int64_t n, T alpha, const T *x, T *y);
/// dst[i] += src[i] (gradient accumulation).
template <typename T> void accumulate(int64_t n, const T *src, T *dst);
/// out[i] = value.
template <typename T> void fill(int64_t n, T value, T *out);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_ELEMENTWISE_H
