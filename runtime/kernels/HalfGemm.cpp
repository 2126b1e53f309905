//===- HalfGemm.cpp - Matrix products of half tensors on the CPU ----------===//
//
// A panel keeps its operand's layout (a transposed operand's panel is a
// block of its stored columns), so each float GEMM is a block of the whole
// product with the same transposes. Tile q is row block q / (tiles per
// row) and column block q % (tiles per row); thread t takes tiles t, t + T,
// ... (a batch: products t, t + T, ...) in slot t.
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

/// The tiles of an m x n result: halfGemmTiles(m, n, k), tile q being row
/// block q / perRow and column block q % perRow.
struct TileGrid {
  HalfGemmTiles t;
  int64_t m, n, perRow, count;

  TileGrid(int64_t m, int64_t n, int64_t k)
      : t(halfGemmTiles(m, n, k)), m(m), n(n),
        perRow(t.columns > 0 ? (n + t.columns - 1) / t.columns : 0),
        count(t.rows > 0 ? (m + t.rows - 1) / t.rows * perRow : 0) {}
};

/// One thread's slot of the workspace: op(A)'s panel, op(B)'s and the
/// tile's float32 sums.
struct Slot {
  float *panelA, *panelB, *tile;
};

/// Tile q of C, in `slot`.
template <typename T>
void computeTile(const TileGrid &g, int64_t q, bool transA, bool transB,
                 int64_t k, HalfIn a, int64_t lda, HalfIn b, int64_t ldb,
                 HalfIn bias, bool relu, HalfOut c, int64_t ldc,
                 const Slot &slot) {
  const int64_t i = q / g.perRow * g.t.rows, j = q % g.perRow * g.t.columns;
  const int64_t rows = std::min(g.t.rows, g.m - i);
  const int64_t columns = std::min(g.t.columns, g.n - j);
  const int64_t depth = g.t.depth;
  float *tile = slot.tile;
  if (bias)
    widenBlock<T>(bias + j, 0, rows, columns, tile);
  else if (k == 0)
    std::fill(tile, tile + rows * columns, 0.0f);
  for (int64_t p = 0; p < k; p += depth) {
    const int64_t d = std::min(depth, k - p);
    if (transA) // A is [k, m]: d runs of `rows`.
      widenBlock<T>(a + p * lda + i, lda, d, rows, slot.panelA);
    else
      widenBlock<T>(a + i * lda + p, lda, rows, d, slot.panelA);
    if (transB) // B is [n, k]: `columns` runs of d.
      widenBlock<T>(b + j * ldb + p, ldb, columns, d, slot.panelB);
    else
      widenBlock<T>(b + p * ldb + j, ldb, d, columns, slot.panelB);
    // The first slice writes the sums (over the bias, if any), the others
    // add to them.
    gemm<float>(transA, transB, rows, columns, d, 1.0f, slot.panelA,
                transA ? rows : d, slot.panelB, transB ? d : columns,
                bias || p > 0 ? 1.0f : 0.0f, tile, columns);
  }
  if (relu)
    for (int64_t e = 0; e < rows * columns; ++e)
      tile[e] = std::max(tile[e], 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    (c + (i + r) * ldc + j).narrowRun<T>(tile + r * columns, 0, columns);
}

/// Calls run(slot, thread, count) on up to `slots` threads of the pool, each
/// with its own slot of `workspace`. Inside the parallel region each float
/// GEMM runs on its thread alone; on one thread the pool is set to one
/// around it, so the float GEMMs do not thread a tile (and sum it
/// otherwise) where the pool has more.
template <typename Run>
void inSlots(const HalfGemmTiles &t, int64_t slots, float *workspace,
             Run &&run) {
  const int64_t size = halfGemmSlotElements(t);
  const int threads =
      omp_in_parallel() ? 1
                        : int(std::min<int64_t>(omp_get_max_threads(), slots));
  auto start = [&](int thread, int count) {
    float *panelA = workspace + thread * size;
    float *panelB = panelA + t.rows * t.depth;
    run(Slot{panelA, panelB, panelB + t.depth * t.columns}, thread, count);
  };
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    start(omp_get_thread_num(), omp_get_num_threads());
    return;
  }
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  start(0, 1);
  omp_set_num_threads(before);
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
  const TileGrid grid(m, n, k);
  // Slot t takes tiles t, t + T, ...
  inSlots(grid.t, grid.t.slots, workspace,
          [&](const Slot &slot, int thread, int count) {
            for (int64_t q = thread; q < grid.count; q += count)
              computeTile<T>(grid, q, transA, transB, k, a, lda, b, ldb, bias,
                             relu, c, ldc, slot);
          });
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
  const TileGrid grid(m, n, k);
  // Slot t takes products t, t + T, ..., each tile in turn.
  inSlots(grid.t, batchedHalfGemmSlots(batch, m, n, k), workspace,
          [&](const Slot &slot, int thread, int count) {
            for (int64_t p = thread; p < batch; p += count)
              for (int64_t q = 0; q < grid.count; ++q)
                computeTile<T>(grid, q, transA, transB, k, aAt(p), lda, bAt(p),
                               ldb, nullptr, false, c + p * m * n, n, slot);
          });
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
