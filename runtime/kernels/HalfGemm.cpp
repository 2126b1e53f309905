//===- HalfGemm.cpp - Matrix products of half tensors on the CPU ----------===//
//
// A panel keeps its operand's layout (a transposed operand's panel is a
// block of its stored columns), so each float GEMM is a block of the whole
// product with the same transposes. Tile q of a slot's thread is row block
// q / (tiles per row) and column block q % (tiles per row); thread t takes
// tiles t, t + T, ... in slot t.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/HalfGemm.h"

#include "runtime/kernels/Gemm.h"
#include "runtime/kernels/KernelError.h"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

namespace cairn::kernels {

namespace {

/// Widens `rows` runs of `columns` elements, `stride` apart, into the
/// contiguous float32 block `out`.
template <typename T>
void widenBlock(HalfIn in, int64_t stride, int64_t rows, int64_t columns,
                float *out) {
  for (int64_t r = 0; r < rows; ++r)
    (in + r * stride).widenRun<T>(out + r * columns, 0, columns);
}

/// One tile of C: rows [i, i + rows) and columns [j, j + columns), its sums
/// in `tile`, its panels in `panelA` and `panelB`.
template <typename T>
void computeTile(bool transA, bool transB, int64_t k, int64_t depth, HalfIn a,
                 int64_t lda, HalfIn b, int64_t ldb, HalfIn bias, bool relu,
                 HalfOut c, int64_t ldc, int64_t i, int64_t j, int64_t rows,
                 int64_t columns, float *panelA, float *panelB, float *tile) {
  if (bias)
    widenBlock<T>(bias + j, 0, rows, columns, tile);
  else if (k == 0)
    std::fill(tile, tile + rows * columns, 0.0f);
  for (int64_t p = 0; p < k; p += depth) {
    const int64_t d = std::min(depth, k - p);
    if (transA) // A is [k, m]: d runs of `rows`.
      widenBlock<T>(a + p * lda + i, lda, d, rows, panelA);
    else
      widenBlock<T>(a + i * lda + p, lda, rows, d, panelA);
    if (transB) // B is [n, k]: `columns` runs of d.
      widenBlock<T>(b + j * ldb + p, ldb, columns, d, panelB);
    else
      widenBlock<T>(b + p * ldb + j, ldb, d, columns, panelB);
    // The first slice writes the sums (over the bias, if any), the others
    // add to them.
    gemm<float>(transA, transB, rows, columns, d, 1.0f, panelA,
                transA ? rows : d, panelB, transB ? d : columns,
                bias || p > 0 ? 1.0f : 0.0f, tile, columns);
  }
  if (relu)
    for (int64_t e = 0; e < rows * columns; ++e)
      tile[e] = std::max(tile[e], 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    (c + (i + r) * ldc + j).narrowRun<T>(tile + r * columns, 0, columns);
}

/// Checked before the parallel region, so that no float GEMM throws in it.
void checkShape(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                int64_t ldc) {
  for (auto [value, name] : {std::pair{m, "m"},
                             {n, "n"},
                             {k, "k"},
                             {lda, "lda"},
                             {ldb, "ldb"},
                             {ldc, "ldc"}})
    if (value < 0 || value > std::numeric_limits<int32_t>::max())
      throw KernelError(std::string("halfGemm: ") + name +
                        " out of range: " + std::to_string(value));
}

} // namespace

template <typename T>
void halfGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              HalfIn a, int64_t lda, HalfIn b, int64_t ldb, HalfIn bias,
              bool relu, HalfOut c, int64_t ldc, float *workspace) {
  checkShape(m, n, k, lda, ldb, ldc);
  if (m == 0 || n == 0)
    return;
  const HalfGemmTiles t = halfGemmTiles(m, n, k);
  const int64_t tilesPerRow = (n + t.columns - 1) / t.columns;
  const int64_t tiles = (m + t.rows - 1) / t.rows * tilesPerRow;
  const int64_t slot = halfGemmSlotElements(t);
  const int threads =
      omp_in_parallel()
          ? 1
          : int(std::min<int64_t>(omp_get_max_threads(), t.slots));
  // The tiles of slot `thread` of `count`.
  auto run = [&](int thread, int count) {
    float *panelA = workspace + thread * slot;
    float *panelB = panelA + t.rows * t.depth;
    float *tile = panelB + t.depth * t.columns;
    for (int64_t q = thread; q < tiles; q += count) {
      const int64_t i = q / tilesPerRow * t.rows;
      const int64_t j = q % tilesPerRow * t.columns;
      computeTile<T>(transA, transB, k, t.depth, a, lda, b, ldb, bias, relu, c,
                     ldc, i, j, std::min(t.rows, m - i),
                     std::min(t.columns, n - j), panelA, panelB, tile);
    }
  };
  if (threads > 1) {
    // Inside the region each float GEMM runs on its thread alone.
#pragma omp parallel num_threads(threads)
    run(omp_get_thread_num(), omp_get_num_threads());
    return;
  }
  // One thread: so are the float GEMMs, which would otherwise thread each
  // tile (and sum it otherwise) where the pool has more.
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  run(0, 1);
  omp_set_num_threads(before);
}

template <typename T>
void batchedHalfGemm(int64_t batch, bool transA, bool transB, int64_t m,
                     int64_t n, int64_t k, HalfIn a, int64_t lda,
                     int64_t strideA, const int64_t *aOffsets, HalfIn b,
                     int64_t ldb, int64_t strideB, const int64_t *bOffsets,
                     HalfOut c, float *workspace) {
  auto aAt = [&](int64_t i) {
    return a + (aOffsets ? aOffsets[i] : i * strideA);
  };
  auto bAt = [&](int64_t i) {
    return b + (bOffsets ? bOffsets[i] : i * strideB);
  };
  if (batch == 1)
    return halfGemm<T>(transA, transB, m, n, k, aAt(0), lda, bAt(0), ldb,
                       nullptr, false, c, n, workspace);
  checkShape(m, n, k, lda, ldb, n);
  if (batch <= 0 || m == 0 || n == 0)
    return;
  const HalfGemmTiles t = halfGemmTiles(m, n, k);
  const int64_t tilesPerRow = (n + t.columns - 1) / t.columns;
  const int64_t tiles = (m + t.rows - 1) / t.rows * tilesPerRow;
  const int64_t slot = halfGemmSlotElements(t);
  const int64_t slots = batchedHalfGemmSlots(batch, m, n, k);
  const int threads =
      omp_in_parallel() ? 1
                        : int(std::min<int64_t>(omp_get_max_threads(), slots));
  // The products of slot `thread` of `count`, each tile in turn.
  auto run = [&](int thread, int count) {
    float *panelA = workspace + thread * slot;
    float *panelB = panelA + t.rows * t.depth;
    float *tile = panelB + t.depth * t.columns;
    for (int64_t p = thread; p < batch; p += count)
      for (int64_t q = 0; q < tiles; ++q) {
        const int64_t i = q / tilesPerRow * t.rows;
        const int64_t j = q % tilesPerRow * t.columns;
        computeTile<T>(transA, transB, k, t.depth, aAt(p), lda, bAt(p), ldb,
                       nullptr, false, c + p * m * n, n, i, j,
                       std::min(t.rows, m - i), std::min(t.columns, n - j),
                       panelA, panelB, tile);
      }
  };
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    run(omp_get_thread_num(), omp_get_num_threads());
    return;
  }
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  run(0, 1);
  omp_set_num_threads(before);
}

template void halfGemm<F16>(bool, bool, int64_t, int64_t, int64_t, HalfIn,
                            int64_t, HalfIn, int64_t, HalfIn, bool, HalfOut,
                            int64_t, float *);
template void halfGemm<Bf16>(bool, bool, int64_t, int64_t, int64_t, HalfIn,
                             int64_t, HalfIn, int64_t, HalfIn, bool, HalfOut,
                             int64_t, float *);
template void batchedHalfGemm<F16>(int64_t, bool, bool, int64_t, int64_t,
                                   int64_t, HalfIn, int64_t, int64_t,
                                   const int64_t *, HalfIn, int64_t, int64_t,
                                   const int64_t *, HalfOut, float *);
template void batchedHalfGemm<Bf16>(int64_t, bool, bool, int64_t, int64_t,
                                    int64_t, HalfIn, int64_t, int64_t,
                                    const int64_t *, HalfIn, int64_t, int64_t,
                                    const int64_t *, HalfOut, float *);

} // namespace cairn::kernels
