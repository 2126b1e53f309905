//===- StridedWalk.h - Row-major walk over strided dimensions ----*- C++ -*-===//
//
// The odometer the data-movement, reduction and broadcast kernels share: a
// row-major walk over up to kMaxWalkRank dimensions that keeps one element
// offset per operand (`Operands` of them), each with its own strides.
// Internal to runtime/kernels.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_STRIDEDWALK_H
#define CAIRN_RUNTIME_KERNELS_STRIDEDWALK_H

#include <array>
#include <cstdint>

namespace cairn::kernels {

/// Eight tensor dimensions plus the extra one a tiled copy splits off.
constexpr int kMaxWalkRank = 9;

template <int Operands> struct StridedWalk {
  int rank = 0;
  int64_t size[kMaxWalkRank];
  int64_t stride[Operands][kMaxWalkRank];
  int64_t idx[kMaxWalkRank] = {};
  int64_t offset[Operands] = {};

  /// Appends a dimension (inner to those added before); callers keep
  /// rank <= kMaxWalkRank.
  void add(int64_t n, std::array<int64_t, Operands> strides) {
    size[rank] = n;
    for (int k = 0; k < Operands; ++k)
      stride[k][rank] = strides[k];
    ++rank;
  }
  int64_t count() const {
    int64_t c = 1;
    for (int d = 0; d < rank; ++d)
      c *= size[d];
    return c;
  }
  /// Jumps from the start to step `linear` (row-major), as `linear` calls
  /// of next() would: where a thread's chunk of the walk begins.
  void seek(int64_t linear) {
    for (int k = 0; k < Operands; ++k)
      offset[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      idx[d] = linear % size[d];
      linear /= size[d];
      for (int k = 0; k < Operands; ++k)
        offset[k] += idx[d] * stride[k][d];
    }
  }
  /// One step; after count() steps the walk is back at its start.
  void next() {
    for (int d = rank - 1; d >= 0; --d) {
      for (int k = 0; k < Operands; ++k)
        offset[k] += stride[k][d];
      if (++idx[d] < size[d])
        return;
      for (int k = 0; k < Operands; ++k)
        offset[k] -= stride[k][d] * size[d];
      idx[d] = 0;
    }
  }
};

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_STRIDEDWALK_H
