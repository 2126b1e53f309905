//===- HalfGemm.h - Matrix products of half tensors on the CPU ---*- C++
//-*-===//
//
// A GEMM in f16 or bf16 (Convert.h's storage tags), computed as autocast
// computes it: the float32 product of the widened operands, rounded once
// into the result; an operand or the result may be float32, rounded to the
// half type as it is read or written (HalfOperand.h). Neither BLAS on the CPU
// multiplies half operands (Debian's OpenBLAS has no half GEMM, oneDNN's
// needs AVX-512), so the result is made tile by tile: for each tile of C,
// a panel of op(A)'s rows and one of op(B)'s columns are widened into
// float32 scratch a slice of K at a time, the float GEMM (Gemm.h) adds their
// product into the tile's float32 sums, and the tile is rounded into C. The
// scratch is a few panels and tiles, not float32 copies of whole tensors
// (what cairn.kernel.cast gave before): the memory plan holds it, sized by
// halfGemmWorkspaceElements, the rule the compiler reads too.
//
// The tiles run in parallel, each on one thread with its own slot of the
// scratch, its float GEMMs on that thread alone (as batchedGemm's): a
// tile's sums do not depend on the number of threads, and small float GEMMs
// on one thread each run far faster than one after another on all of them.
// The slots are a rule of the shape, so a bigger product gets more threads.
//
#ifndef CAIRN_RUNTIME_KERNELS_HALFGEMM_H
#define CAIRN_RUNTIME_KERNELS_HALFGEMM_H

#include "runtime/kernels/HalfOperand.h"

#include <algorithm>
#include <cstdint>

namespace cairn::kernels {

/// Rows of op(A) and columns of op(B) one tile takes at most (a multiple of
/// the float GEMM's register tiles), and K one panel takes at most: panels
/// of 64 x 256 floats (64 KiB) keep a tile's operands in the core's cache,
/// and its float GEMMs at about the speed of the whole product's.
constexpr int64_t kHalfGemmTileSide = 64;
constexpr int64_t kHalfGemmDepth = 256;
/// A slot (one thread's tiles) for every kHalfGemmElementsPerSlot elements
/// of the three tensors, at least 2 (where there are two tiles) and at most
/// kHalfGemmMaxSlots: a slot of 144 KiB for every 512 KiB of half tensors
/// (float32 copies of them took 1 MiB) keeps the scratch of a big product
/// under 0.3 of its tensors' bytes, while the products of a big model use 8
/// threads and a small one 2.
constexpr int64_t kHalfGemmElementsPerSlot = int64_t(1) << 18;
constexpr int64_t kHalfGemmMinSlots = 2;
constexpr int64_t kHalfGemmMaxSlots = 8;

/// How halfGemm splits an m x n x k product: tiles of C of `rows` x
/// `columns`, K in slices of `depth`, `slots` tiles at a time.
struct HalfGemmTiles {
  int64_t rows, columns, depth, slots;
};

/// A rule of the shape alone, so that every build of a model (any plan,
/// any recomputation, any machine) runs the same float GEMMs and rounds
/// alike.
inline HalfGemmTiles halfGemmTiles(int64_t m, int64_t n, int64_t k) {
  HalfGemmTiles t;
  t.rows = std::min(m, kHalfGemmTileSide);
  t.columns = std::min(n, kHalfGemmTileSide);
  t.depth = std::min(k, kHalfGemmDepth);
  const int64_t tiles =
      t.rows > 0 && t.columns > 0
          ? ((m + t.rows - 1) / t.rows) * ((n + t.columns - 1) / t.columns)
          : 0;
  t.slots = std::clamp((m * k + k * n + m * n) / kHalfGemmElementsPerSlot,
                       kHalfGemmMinSlots, kHalfGemmMaxSlots);
  t.slots = std::max(int64_t(1), std::min(t.slots, tiles));
  return t;
}

/// Floats of one slot: op(A)'s panel, op(B)'s and the tile's sums.
inline int64_t halfGemmSlotElements(const HalfGemmTiles &t) {
  return t.rows * t.depth + t.depth * t.columns + t.rows * t.columns;
}

/// Floats of scratch halfGemm takes. Inline, so that the compiler sizes the
/// planned workspace by this rule without linking the kernels.
inline int64_t halfGemmWorkspaceElements(int64_t m, int64_t n, int64_t k) {
  const HalfGemmTiles t = halfGemmTiles(m, n, k);
  return t.slots * halfGemmSlotElements(t);
}

/// C[m, n] = round(op(A) op(B) + bias), row-major as gemm (Gemm.h): op(A) is
/// [m, k] (A stored [k, m] when transA), op(B) is [k, n] (B stored [n, k]
/// when transB); T is F16 or Bf16, and each tensor is stored in T or in
/// float32 rounded to T (HalfOperand.h). `bias` (n elements, or null) starts
/// each row of the float32 product, as a linear's float GEMM adds x W^T to
/// it; with `relu`, relu is applied to the float32 sum before rounding (a
/// linear's folded relu). `workspace` holds halfGemmWorkspaceElements(m,
/// n, k) floats. C may not overlap A, B or the bias.
template <typename T>
void halfGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              HalfIn a, int64_t lda, HalfIn b, int64_t ldb, HalfIn bias,
              bool relu, HalfOut c, int64_t ldc, float *workspace);

/// Slots of a batch of `batch` m x n x k products (batch > 1): one a thread,
/// each thread taking whole products, one for every kHalfGemmElementsPerSlot
/// elements of all their tensors, between 2 and 8, at most `batch`.
inline int64_t batchedHalfGemmSlots(int64_t batch, int64_t m, int64_t n,
                                    int64_t k) {
  const int64_t slots =
      std::clamp(batch * (m * k + k * n + m * n) / kHalfGemmElementsPerSlot,
                 kHalfGemmMinSlots, kHalfGemmMaxSlots);
  return std::max(int64_t(1), std::min(slots, batch));
}

/// Floats of scratch batchedHalfGemm takes: halfGemm's for one product,
/// else a slot of halfGemmTiles(m, n, k) for each of its threads.
inline int64_t batchedHalfGemmWorkspaceElements(int64_t batch, int64_t m,
                                                int64_t n, int64_t k) {
  if (batch <= 1)
    return halfGemmWorkspaceElements(m, n, k);
  return batchedHalfGemmSlots(batch, m, n, k) *
         halfGemmSlotElements(halfGemmTiles(m, n, k));
}

/// `batch` products C_i = round(op(A_i) op(B_i)) as halfGemm computes each
/// (no bias or relu), for a batched matmul: A_i at a + aOffsets[i], or at
/// a + i * strideA where aOffsets is null (a stride of 0 broadcasts one
/// matrix), B_i likewise, C_i at c + i * m * n (row stride n). One product
/// is halfGemm's, its tiles across the threads; more run whole products on
/// the threads, each product's tiles in turn in its thread's slot: the same
/// tiles and slices, so each product has halfGemm's bits whatever the
/// threads. `workspace` holds batchedHalfGemmWorkspaceElements floats.
template <typename T>
void batchedHalfGemm(int64_t batch, bool transA, bool transB, int64_t m,
                     int64_t n, int64_t k, HalfIn a, int64_t lda,
                     int64_t strideA, const int64_t *aOffsets, HalfIn b,
                     int64_t ldb, int64_t strideB, const int64_t *bOffsets,
                     HalfOut c, float *workspace);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_HALFGEMM_H
