//===- CopyPlan.h - Strided copies as merged loops ---------------*- C++ -*-===//
//
// permute, extractSlice and insertSlice are one operation: a copy whose
// source and destination walk the same index space with different strides.
// The plan merges dimensions that are contiguous in both, so most copies
// become one or two loops, and splits an element of an odd size into bytes.
// The CPU kernels (Movement.cpp) and their CUDA twins (MovementKernels.cu)
// build the same plan here and differ only in how they run it; the struct
// goes to CUDA kernels by value.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_COPYPLAN_H
#define CAIRN_RUNTIME_KERNELS_COPYPLAN_H

#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Philox.h" // CAIRN_HOST_DEVICE

#include <cstddef>
#include <cstdint>
#include <string>

namespace cairn::kernels {

/// Tensors of at most 8 dimensions; a plan may hold one more, the bytes of
/// an odd-sized element.
constexpr int kMaxCopyRank = 8;
constexpr int kMaxCopyPlanRank = kMaxCopyRank + 1;

struct CopyPlan {
  int rank = 0;
  int64_t shape[kMaxCopyPlanRank];
  int64_t src[kMaxCopyPlanRank];
  int64_t dst[kMaxCopyPlanRank];
  int64_t srcOffset = 0;
  int64_t dstOffset = 0;
  bool empty = false;

  /// Appends a dimension inside the previous ones, merging where possible.
  void add(int64_t n, int64_t s, int64_t d) {
    if (n == 0)
      empty = true;
    if (n == 1)
      return;
    if (rank > 0 && src[rank - 1] == s * n && dst[rank - 1] == d * n) {
      shape[rank - 1] *= n;
      src[rank - 1] = s;
      dst[rank - 1] = d;
      return;
    }
    shape[rank] = n;
    src[rank] = s;
    dst[rank] = d;
    ++rank;
  }
  CAIRN_HOST_DEVICE int64_t count() const {
    int64_t c = 1;
    for (int d = 0; d < rank; ++d)
      c *= shape[d];
    return c;
  }
};

namespace copy_plan_detail {

/// Row-major element strides of `shape`.
inline void contiguousStrides(int rank, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= shape[d];
  }
}

/// `dims(plan, unit)` adds each dimension of a rank-`rank` copy to the plan,
/// with strides in elements times `unit` (the plan's element is `unit` of
/// the integer type chosen for elemBytes); then `run(E(), plan)` copies it,
/// E that integer type, unless the copy is empty.
template <typename Dims, typename Run>
void planCopy(const char *what, int rank, size_t elemBytes, const Dims &dims, const Run &run) {
  if (rank > kMaxCopyRank)
    throw KernelError(std::string(what) + " of rank " + std::to_string(rank) +
                      " exceeds the supported " + std::to_string(kMaxCopyRank));
  auto plan = [&](auto tag, int64_t unitsPerElem) {
    CopyPlan p;
    dims(p, unitsPerElem);
    if (unitsPerElem > 1)
      p.add(unitsPerElem, 1, 1);
    if (!p.empty)
      run(tag, static_cast<const CopyPlan &>(p));
  };
  switch (elemBytes) {
  case 1:
    return plan(uint8_t(), 1);
  case 2:
    return plan(uint16_t(), 1);
  case 4:
    return plan(uint32_t(), 1);
  case 8:
    return plan(uint64_t(), 1);
  default:
    return plan(uint8_t(), static_cast<int64_t>(elemBytes));
  }
}

} // namespace copy_plan_detail

/// The plans of permute, extractSlice and insertSlice (Movement.h's
/// arguments), each handed to `run(E(), plan)`.
template <typename Run>
void planPermute(int rank, const int64_t *inShape, const int64_t *perm, size_t elemBytes,
                 const Run &run) {
  copy_plan_detail::planCopy(
      "permute", rank, elemBytes,
      [&](CopyPlan &p, int64_t unit) {
        int64_t inStrides[kMaxCopyRank], outShape[kMaxCopyRank], outStrides[kMaxCopyRank];
        copy_plan_detail::contiguousStrides(rank, inShape, inStrides);
        for (int d = 0; d < rank; ++d)
          outShape[d] = inShape[perm[d]];
        copy_plan_detail::contiguousStrides(rank, outShape, outStrides);
        for (int d = 0; d < rank; ++d)
          p.add(outShape[d], inStrides[perm[d]] * unit, outStrides[d] * unit);
      },
      run);
}

template <typename Run>
void planExtractSlice(int rank, const int64_t *inShape, const int64_t *start,
                      const int64_t *step, const int64_t *outShape, size_t elemBytes,
                      const Run &run) {
  copy_plan_detail::planCopy(
      "extractSlice", rank, elemBytes,
      [&](CopyPlan &p, int64_t unit) {
        int64_t inStrides[kMaxCopyRank], outStrides[kMaxCopyRank];
        copy_plan_detail::contiguousStrides(rank, inShape, inStrides);
        copy_plan_detail::contiguousStrides(rank, outShape, outStrides);
        for (int d = 0; d < rank; ++d) {
          p.srcOffset += start[d] * inStrides[d] * unit;
          p.add(outShape[d], step[d] * inStrides[d] * unit, outStrides[d] * unit);
        }
      },
      run);
}

template <typename Run>
void planInsertSlice(int rank, const int64_t *fullShape, const int64_t *start,
                     const int64_t *step, const int64_t *partShape, size_t elemBytes,
                     const Run &run) {
  copy_plan_detail::planCopy(
      "insertSlice", rank, elemBytes,
      [&](CopyPlan &p, int64_t unit) {
        int64_t fullStrides[kMaxCopyRank], partStrides[kMaxCopyRank];
        copy_plan_detail::contiguousStrides(rank, fullShape, fullStrides);
        copy_plan_detail::contiguousStrides(rank, partShape, partStrides);
        for (int d = 0; d < rank; ++d) {
          p.dstOffset += start[d] * fullStrides[d] * unit;
          p.add(partShape[d], partStrides[d] * unit, step[d] * fullStrides[d] * unit);
        }
      },
      run);
}

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_COPYPLAN_H
