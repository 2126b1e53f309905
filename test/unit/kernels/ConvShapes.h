//===- ConvShapes.h - Convolution shapes for the kernel tests ---*- C++ -*-===//
//
// What ConvTest and ConvLibraryTest both build shapes with: ho and wo from
// PyTorch's formula, a name for messages, and the three tensors' sizes.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_TEST_UNIT_KERNELS_CONVSHAPES_H
#define CAIRN_TEST_UNIT_KERNELS_CONVSHAPES_H

#include "runtime/kernels/Conv.h"

#include <cstdint>
#include <string>

namespace cairn::kernels::testing {

/// A shape with ho/wo from PyTorch's formula.
inline Conv2dShape shape(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o,
                         int64_t kh, int64_t kw, int64_t sh = 1, int64_t sw = 1,
                         int64_t ph = 0, int64_t pw = 0, int64_t dh = 1,
                         int64_t dw = 1, int64_t groups = 1) {
  Conv2dShape s{n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups, 0, 0};
  s.ho = (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1;
  s.wo = (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
  return s;
}

inline std::string describe(const Conv2dShape &s) {
  return "n" + std::to_string(s.n) + " c" + std::to_string(s.c) + " " +
         std::to_string(s.h) + "x" + std::to_string(s.w) + " o" +
         std::to_string(s.o) + " k" + std::to_string(s.kh) + "x" +
         std::to_string(s.kw) + " s" + std::to_string(s.sh) + "," +
         std::to_string(s.sw) + " p" + std::to_string(s.ph) + "," +
         std::to_string(s.pw) + " d" + std::to_string(s.dh) + "," +
         std::to_string(s.dw) + " g" + std::to_string(s.groups);
}

inline int64_t xSize(const Conv2dShape &s) { return s.n * s.c * s.h * s.w; }
inline int64_t wSize(const Conv2dShape &s) {
  return s.o * (s.c / s.groups) * s.kh * s.kw;
}
inline int64_t ySize(const Conv2dShape &s) { return s.n * s.o * s.ho * s.wo; }

} // namespace cairn::kernels::testing

#endif // CAIRN_TEST_UNIT_KERNELS_CONVSHAPES_H
