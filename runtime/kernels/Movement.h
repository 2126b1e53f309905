//===- Movement.h - Permute, slices, embedding gather ------------*- C++ -*-===//
//
// Data movement on row-major tensors. permute and the slice kernels copy
// elements of `elemBytes` bytes, so they serve every dtype.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_MOVEMENT_H
#define CAIRN_RUNTIME_KERNELS_MOVEMENT_H

#include <cstddef>
#include <cstdint>

namespace cairn::kernels {

/// out dimension i is in dimension perm[i].
void permute(int rank, const int64_t *inShape, const int64_t *perm,
             size_t elemBytes, const void *in, void *out);

/// out = in[start[d] : start[d] + step[d] * outShape[d] : step[d]] per d.
void extractSlice(int rank, const int64_t *inShape, const int64_t *start,
                  const int64_t *step, const int64_t *outShape,
                  size_t elemBytes, const void *in, void *out);

/// The adjoint: writes `part` (shape partShape) into the same positions of
/// `full` (shape fullShape); other elements of full are left as they are
/// (fill first for a slice's gradient; concat writes each input in turn).
void insertSlice(int rank, const int64_t *fullShape, const int64_t *start,
                 const int64_t *step, const int64_t *partShape,
                 size_t elemBytes, const void *part, void *full);

/// out[i, :] = weight[indices[i], :]; an index outside [0, numEmbeddings)
/// raises KernelError.
template <typename T, typename I>
void embeddingForward(int64_t numIndices, int64_t dim, int64_t numEmbeddings,
                      const I *indices, const T *weight, T *out);

/// dweight (overwritten) = scatter-add of dy rows by index; the row at
/// paddingIdx (-1: none) stays zero.
template <typename T, typename I>
void embeddingBackward(int64_t numIndices, int64_t dim, int64_t numEmbeddings,
                       const I *indices, const T *dy, int64_t paddingIdx,
                       T *dweight);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_MOVEMENT_H
