//===- Pool.h - 2-D pooling, forward and backward ----------------*- C++ -*-===//
//
// NCHW pooling with PyTorch's semantics (nn.MaxPool2d, nn.AvgPool2d,
// nn.AdaptiveAvgPool2d). Max pooling's backward recomputes the arg-max from
// x (the first maximum in window order wins, as PyTorch), so no index tensor
// is kept. Every backward overwrites dx.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_POOL_H
#define CAIRN_RUNTIME_KERNELS_POOL_H

#include "runtime/kernels/Convert.h"

#include <cstdint>

namespace cairn::kernels {

struct Pool2dShape {
  int64_t n, c, h, w;   // input
  int64_t kh, kw;       // window
  int64_t sh, sw;       // stride
  int64_t ph, pw;       // padding (-inf for max, 0 for avg)
  int64_t dh, dw;       // dilation (1 for avg)
  int64_t ho, wo;       // output size (ceil_mode already applied)
};

/// T: float, double, or F16 / Bf16 (Convert.h), half storage computed in
/// float: each element is read widened, compared in float and written
/// rounded, the bits of the float pool on widened copies and a cast. The
/// half backward's windows must not overlap (no stride below the dilated
/// window): an element overlapping windows share would have its gradients
/// summed in half, rounded at each add.
template <typename T>
void maxPool2dForward(const Pool2dShape &s, const StoredAs<T> *x,
                      StoredAs<T> *y);
template <typename T>
void maxPool2dBackward(const Pool2dShape &s, const StoredAs<T> *dy,
                       const StoredAs<T> *x, StoredAs<T> *dx);

/// Windows are clipped to input + padding; with countIncludePad the divisor
/// counts padding inside that, otherwise only real elements (PyTorch rules).
template <typename T>
void avgPool2dForward(const Pool2dShape &s, bool countIncludePad, const T *x,
                      T *y);
template <typename T>
void avgPool2dBackward(const Pool2dShape &s, bool countIncludePad, const T *dy,
                       T *dx);

/// Window i covers [floor(i*H/oh), ceil((i+1)*H/oh)), as PyTorch.
template <typename T>
void adaptiveAvgPool2dForward(int64_t n, int64_t c, int64_t h, int64_t w,
                              int64_t oh, int64_t ow, const T *x, T *y);
template <typename T>
void adaptiveAvgPool2dBackward(int64_t n, int64_t c, int64_t h, int64_t w,
                               int64_t oh, int64_t ow, const T *dy, T *dx);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_POOL_H
