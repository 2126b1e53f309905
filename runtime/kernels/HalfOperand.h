//===- HalfOperand.h - A half product's half or float32 tensors -*- C++ -*-===//
//
// A half product (HalfGemm.h, HalfConv.h) computes as autocast does: every
// operand rounded to the half type T, float32 sums, the result rounded to T.
// An operand or result it reads or writes is stored either as T's half
// elements or as float32 ones it rounds to T as it reads or writes them:
// autocast's cast of a float32 master weight (or of the input batch) into
// the product, and the cast of a weight gradient back to float32 out of it,
// fused (cairn-compute-half-in-float32). The bits are those of the cast and
// the half product, without the half copy.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_HALFOPERAND_H
#define CAIRN_RUNTIME_KERNELS_HALFOPERAND_H

#include "runtime/kernels/Convert.h"

#include <cstddef>
#include <cstdint>

namespace cairn::kernels {

/// A tensor a half product reads: T's half bits, or float32 values read
/// rounded to T. Converts from either pointer, so a call passes its buffer.
class HalfIn {
public:
  HalfIn(std::nullptr_t = nullptr) {}
  HalfIn(const uint16_t *half) : half(half) {}
  HalfIn(const float *single) : single(single) {}

  explicit operator bool() const { return half || single; }
  /// The tensor from element `offset` on.
  HalfIn operator+(int64_t offset) const {
    return single ? HalfIn(single + offset) : HalfIn(half + offset);
  }

  /// Elements [begin, end) into out[begin, end), T's float32 value of each,
  /// on the calling thread.
  template <typename T>
  void widenRun(float *out, int64_t begin, int64_t end) const;
  /// Elements [0, n) into out, threaded as castElements.
  template <typename T> void widen(float *out, int64_t n) const;

private:
  const uint16_t *half = nullptr;
  const float *single = nullptr;
};

/// A tensor a half product writes: T's half bits, or float32 values
/// written rounded to T.
class HalfOut {
public:
  HalfOut(std::nullptr_t = nullptr) {}
  HalfOut(uint16_t *half) : half(half) {}
  HalfOut(float *single) : single(single) {}

  explicit operator bool() const { return half || single; }
  HalfOut operator+(int64_t offset) const {
    return single ? HalfOut(single + offset) : HalfOut(half + offset);
  }
  /// The float32 elements, or null for half ones.
  float *float32() const { return single; }

  /// in[begin, end) rounded to T into elements [begin, end), on the
  /// calling thread.
  template <typename T>
  void narrowRun(const float *in, int64_t begin, int64_t end) const;
  /// in[0, n) rounded to T into elements [0, n), threaded as castElements.
  template <typename T> void narrow(const float *in, int64_t n) const;

private:
  uint16_t *half = nullptr;
  float *single = nullptr;
};

/// The pointer types of a product kernel's tensors for element type T:
/// float32 and double as themselves, F16 and Bf16 as HalfIn and HalfOut.
template <typename T> struct ProductOperands {
  using In = const T *;
  using Out = T *;
};
template <> struct ProductOperands<F16> {
  using In = HalfIn;
  using Out = HalfOut;
};
template <> struct ProductOperands<Bf16> {
  using In = HalfIn;
  using Out = HalfOut;
};
template <typename T> using ProductIn = typename ProductOperands<T>::In;
template <typename T> using ProductOut = typename ProductOperands<T>::Out;

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_HALFOPERAND_H
