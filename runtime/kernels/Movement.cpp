//===- Movement.cpp - Permute, slices, embedding gather -------------------===//
//
// permute, extractSlice and insertSlice are all one strided copy: a shape,
// source strides and destination strides (in elements). The copy drops
// size-1 dimensions and merges neighbours contiguous in both, then copies
// rows: memcpy when the innermost run is contiguous on both sides, a 2-D
// tiled transpose when the source's unit-stride dimension is not innermost
// (so neither side is read with a cache-line stride per element), and a
// strided loop otherwise. Elements of 1, 2, 4 and 8 bytes move as integers
// of that width; other sizes move as bytes with one more innermost dimension.
// Rows (or tiles' rows) split across threads.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Movement.h"

#include "runtime/kernels/CopyPlan.h"
#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Parallel.h"
#include "runtime/kernels/StridedWalk.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace cairn::kernels {

namespace {

static_assert(kMaxCopyPlanRank <= kMaxWalkRank, "a plan must fit a StridedWalk");
/// Transpose tiles: long along the source's unit-stride dimension, so each
/// source cache line is used up before eviction; short along the innermost
/// destination dimension, which bounds the source lines a tile keeps live
/// (a square tile thrashes when the source stride is a power of two).
constexpr int64_t kTileUnit = 64;
constexpr int64_t kTileInner = 8;

/// A walk over dims [0, rank) of a plan except `skip1` and `skip2`; offset[0]
/// is the source's, offset[1] the destination's.
StridedWalk<2> walkExcept(const CopyPlan &p, int skip1, int skip2) {
  StridedWalk<2> w;
  for (int d = 0; d < p.rank; ++d)
    if (d != skip1 && d != skip2)
      w.add(p.shape[d], {p.src[d], p.dst[d]});
  return w;
}

/// One element. Through memcpy (one load and store once inlined), because
/// the bytes may hold floats and E is an integer type.
template <typename E> void copyOne(E *dst, const E *src) {
  std::memcpy(dst, src, sizeof(E));
}

template <typename E>
void copyTyped(const CopyPlan &p, const E *in, E *out) {
  in += p.srcOffset;
  out += p.dstOffset;
  if (p.rank == 0) {
    copyOne(out, in);
    return;
  }
  int last = p.rank - 1;
  int64_t n = p.shape[last], ss = p.src[last], ds = p.dst[last];

  // The source's unit-stride dimension, if it is not the innermost one.
  int unitDim = -1;
  if (ss != 1 && ds == 1)
    for (int d = 0; d < last; ++d)
      if (p.src[d] == 1)
        unitDim = d;
  if (unitDim >= 0) {
    int64_t m = p.shape[unitDim], ds2 = p.dst[unitDim];
    const StridedWalk<2> walk = walkExcept(p, unitDim, last);
    parallelFor(walk.count(), 2 * m * n, [&](int64_t begin, int64_t end) {
      StridedWalk<2> w = walk;
      w.seek(begin);
      for (int64_t k = begin; k < end; ++k, w.next()) {
        const E *s = in + w.offset[0];
        E *o = out + w.offset[1];
        for (int64_t i0 = 0; i0 < m; i0 += kTileUnit)
          for (int64_t j0 = 0; j0 < n; j0 += kTileInner) {
            int64_t i1 = std::min(m, i0 + kTileUnit);
            int64_t j1 = std::min(n, j0 + kTileInner);
            for (int64_t i = i0; i < i1; ++i)
              for (int64_t j = j0; j < j1; ++j)
                copyOne(o + i * ds2 + j, s + i + j * ss);
          }
      }
    });
    return;
  }

  const StridedWalk<2> walk = walkExcept(p, last, last);
  parallelFor(walk.count(), n, [&](int64_t begin, int64_t end) {
    StridedWalk<2> w = walk;
    w.seek(begin);
    for (int64_t k = begin; k < end; ++k, w.next()) {
      const E *s = in + w.offset[0];
      E *o = out + w.offset[1];
      if (ss == 1 && ds == 1)
        std::memcpy(o, s, size_t(n) * sizeof(E));
      else
        for (int64_t j = 0; j < n; ++j)
          copyOne(o + j * ds, s + j * ss);
    }
  });
}

template <typename I>
void checkIndices(int64_t numIndices, int64_t numEmbeddings,
                  const I *indices) {
  for (int64_t i = 0; i < numIndices; ++i)
    if (indices[i] < 0 || int64_t(indices[i]) >= numEmbeddings)
      throw KernelError("embedding index " +
                        std::to_string(int64_t(indices[i])) +
                        " at position " + std::to_string(i) +
                        " is outside [0, " + std::to_string(numEmbeddings) +
                        ")");
}

/// Runs `p` on `in` and `out` as elements of E.
auto copyTo(const void *in, void *out) {
  return [in, out](auto tag, const CopyPlan &p) {
    using E = decltype(tag);
    copyTyped(p, static_cast<const E *>(in), static_cast<E *>(out));
  };
}

} // namespace

void permute(int rank, const int64_t *inShape, const int64_t *perm,
             size_t elemBytes, const void *in, void *out) {
  planPermute(rank, inShape, perm, elemBytes, copyTo(in, out));
}

void extractSlice(int rank, const int64_t *inShape, const int64_t *start,
                  const int64_t *step, const int64_t *outShape,
                  size_t elemBytes, const void *in, void *out) {
  planExtractSlice(rank, inShape, start, step, outShape, elemBytes,
                   copyTo(in, out));
}

void insertSlice(int rank, const int64_t *fullShape, const int64_t *start,
                 const int64_t *step, const int64_t *partShape,
                 size_t elemBytes, const void *part, void *full) {
  planInsertSlice(rank, fullShape, start, step, partShape, elemBytes,
                  copyTo(part, full));
}

template <typename T, typename I>
void embeddingForward(int64_t numIndices, int64_t dim, int64_t numEmbeddings,
                      const I *indices, const T *weight, T *out) {
  checkIndices(numIndices, numEmbeddings, indices);
  for (int64_t i = 0; i < numIndices; ++i)
    std::copy(weight + int64_t(indices[i]) * dim,
              weight + (int64_t(indices[i]) + 1) * dim, out + i * dim);
}

template <typename T, typename I>
void embeddingBackward(int64_t numIndices, int64_t dim, int64_t numEmbeddings,
                       const I *indices, const T *dy, int64_t paddingIdx,
                       T *dweight) {
  checkIndices(numIndices, numEmbeddings, indices);
  std::fill(dweight, dweight + numEmbeddings * dim, T(0));
  for (int64_t i = 0; i < numIndices; ++i) {
    int64_t row = indices[i];
    if (row == paddingIdx)
      continue;
    T *w = dweight + row * dim;
    const T *g = dy + i * dim;
    for (int64_t j = 0; j < dim; ++j)
      w[j] += g[j];
  }
}

#define CAIRN_INSTANTIATE(T, I)                                                \
  template void embeddingForward<T, I>(int64_t, int64_t, int64_t, const I *,   \
                                       const T *, T *);                        \
  template void embeddingBackward<T, I>(int64_t, int64_t, int64_t, const I *,  \
                                        const T *, int64_t, T *);
CAIRN_INSTANTIATE(float, int32_t)
CAIRN_INSTANTIATE(float, int64_t)
CAIRN_INSTANTIATE(double, int32_t)
CAIRN_INSTANTIATE(double, int64_t)
#undef CAIRN_INSTANTIATE

} // namespace cairn::kernels
