//===- MovementKernels.cu - Permute, slices, embedding --------------------===//
//
// The GPU twins of runtime/kernels/Movement.h.
//
// permute, extractSlice and insertSlice build the CPU's copy plan (a shape,
// source and destination strides in elements, size-1 dimensions dropped and
// neighbours contiguous on both sides merged; elements of 1, 2, 4 or 8 bytes
// move as integers of that width, other sizes as bytes with one more
// innermost dimension) and run it as one kernel: a thread per element, or,
// when the source's unit-stride dimension is not the innermost one, 32 x 32
// tiles transposed through shared memory so both sides are read and written
// a warp-wide line at a time.
//
// Embedding: the forward gathers rows. The backward writes each dweight
// element from the one thread that owns it, adding the dy rows of its
// index in index order, from zero and in T, as the CPU does: the same bits,
// with no atomics. Indices outside [0, numEmbeddings), which the CPU rejects
// with KernelError, cannot raise an error from a kernel; the forward writes
// zeros for them and the backward skips them (the runtime checks indices it
// gets from the host before they reach the device).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"

#include "runtime/cuda/Launch.h"
#include "runtime/kernels/CopyPlan.h"
#include "runtime/kernels/KernelError.h"

#include <string>

namespace cairn::cuda {

namespace {

using kernels::CopyPlan;
/// Transpose tiles: kTile x kTile elements, moved by kTile x kTileRows
/// threads.
constexpr int kTile = 32;
constexpr int kTileRows = 8;

/// Element i (row-major over the first `rank` dimensions of the plan) as a
/// source and a destination offset, the plan's base offsets included.
__device__ __forceinline__ void planOffsets(const CopyPlan &p, int rank, int64_t i, int64_t &s,
                                            int64_t &d) {
  s = p.srcOffset;
  d = p.dstOffset;
  for (int k = rank - 1; k > 0; --k) {
    int64_t rem;
    i = divMod(i, p.shape[k], rem);
    s += rem * p.src[k];
    d += rem * p.dst[k];
  }
  if (rank > 0) {
    s += i * p.src[0];
    d += i * p.dst[0];
  }
}

template <typename E>
__global__ void copyKernel(CopyPlan p, int64_t count, const E *__restrict__ in,
                           E *__restrict__ out) {
  CAIRN_GRID_STRIDE_LOOP(i, count) {
    int64_t s, d;
    planOffsets(p, p.rank, i, s, d);
    out[d] = in[s];
  }
}

/// The plan with dimension `unit` (source stride 1) moved to the end, just
/// before the innermost dimension (destination stride 1): dimensions
/// [0, rank - 2) are walked per tile, the last two are tiled.
struct TransposePlan {
  CopyPlan outer; // the other dimensions, with the plan's base offsets
  int64_t m;      // length of the source's unit-stride dimension
  int64_t n;      // length of the innermost dimension
  int64_t srcStrideN, dstStrideM;
  int64_t tilesM, tilesN;
};

/// One kTile x kTile tile per block step: read along m (the source's unit
/// stride), written along n (the destination's unit stride). The +1 column
/// keeps the transposed reads of shared memory free of bank conflicts.
template <typename E>
__global__ void __launch_bounds__(kTile * kTileRows)
    transposeKernel(TransposePlan t, const E *__restrict__ in, E *__restrict__ out) {
  __shared__ E tile[kTile][kTile + 1];
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  const int64_t perOuter = t.tilesM * t.tilesN;
  const int64_t tiles = t.outer.count() * perOuter;
  for (int64_t b = blockIdx.x; b < tiles; b += gridDim.x) {
    int64_t inOuter, tn;
    const int64_t o = divMod(b, perOuter, inOuter);
    const int64_t tm = divMod(inOuter, t.tilesN, tn);
    int64_t s, d;
    planOffsets(t.outer, t.outer.rank, o, s, d);
    const int64_t m0 = tm * kTile, n0 = tn * kTile;
    // tile[jn][im] = element (m0 + im, n0 + jn).
    for (int k = ty; k < kTile; k += kTileRows) {
      const int64_t i = m0 + tx, j = n0 + k;
      if (i < t.m && j < t.n)
        tile[k][tx] = in[s + i + j * t.srcStrideN];
    }
    __syncthreads();
    for (int k = ty; k < kTile; k += kTileRows) {
      const int64_t i = m0 + k, j = n0 + tx;
      if (i < t.m && j < t.n)
        out[d + i * t.dstStrideM + j] = tile[tx][k];
    }
    __syncthreads(); // the tile is free for the next step
  }
}

template <typename E> void runPlan(Context &cx, const CopyPlan &p, const void *in, void *out) {
  const E *src = static_cast<const E *>(in);
  E *dst = static_cast<E *>(out);
  const int last = p.rank - 1;
  // The source's unit-stride dimension, if it is not the innermost one
  // (chosen as on the CPU).
  int unitDim = -1;
  if (p.rank >= 2 && p.src[last] != 1 && p.dst[last] == 1)
    for (int d = 0; d < last; ++d)
      if (p.src[d] == 1)
        unitDim = d;
  if (unitDim < 0) {
    const int64_t count = p.count();
    copyKernel<E><<<blocksFor(count), kThreadsPerBlock, 0, cx.stream>>>(p, count, src, dst);
    CAIRN_CUDA_CHECK_LAUNCH();
    return;
  }
  TransposePlan t;
  for (int d = 0; d < last; ++d)
    if (d != unitDim) {
      // Not CopyPlan::add: the dimensions are already merged.
      t.outer.shape[t.outer.rank] = p.shape[d];
      t.outer.src[t.outer.rank] = p.src[d];
      t.outer.dst[t.outer.rank] = p.dst[d];
      ++t.outer.rank;
    }
  t.outer.srcOffset = p.srcOffset;
  t.outer.dstOffset = p.dstOffset;
  t.m = p.shape[unitDim];
  t.n = p.shape[last];
  t.srcStrideN = p.src[last];
  t.dstStrideM = p.dst[unitDim];
  t.tilesM = (t.m + kTile - 1) / kTile;
  t.tilesN = (t.n + kTile - 1) / kTile;
  const int64_t tiles = t.outer.count() * t.tilesM * t.tilesN;
  transposeKernel<E><<<static_cast<unsigned>(std::min(tiles, kMaxBlocks)),
                       dim3(kTile, kTileRows), 0, cx.stream>>>(t, src, dst);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T, typename I>
__global__ void embeddingForwardKernel(int64_t count, int64_t dim, int64_t numEmbeddings,
                                       const I *__restrict__ indices,
                                       const T *__restrict__ weight, T *__restrict__ out) {
  CAIRN_GRID_STRIDE_LOOP(k, count) {
    int64_t j;
    const int64_t i = divMod(k, dim, j);
    const int64_t row = static_cast<int64_t>(indices[i]);
    out[k] = row >= 0 && row < numEmbeddings ? weight[row * dim + j] : T(0);
  }
}

/// Embedding backward: a block owns a tile of kEmbRowsPerGroup * groups
/// rows by `width` columns of dweight (width * groups = kEmbThreads); thread
/// t owns column t % width of the tile's rows r with r % groups == t /
/// width, accumulated in shared memory. The block scans every index,
/// kEmbScan at a time, and lists the positions that fall in its rows in
/// position order; each owner then adds those dy rows in list order.
constexpr int kEmbThreads = 256;
constexpr int kEmbRowsPerGroup = 16;
constexpr int kEmbScanRounds = 4;
constexpr int kEmbScan = kEmbThreads * kEmbScanRounds;
/// A list entry: position in the scan (10 bits) above row in the tile (12).
constexpr int kEmbRowBits = 12;
static_assert(kEmbRowsPerGroup * kEmbThreads <= (1 << kEmbRowBits), "a tile row fits its bits");
static_assert(kEmbScan * (1 << kEmbRowBits) <= (1ll << 31), "an entry fits an int");

template <typename T, typename I>
__global__ void __launch_bounds__(kEmbThreads)
    embeddingBackwardKernel(int64_t numIndices, int64_t dim, int64_t numEmbeddings,
                            const I *__restrict__ indices, const T *__restrict__ dy,
                            int64_t paddingIdx, int width, int64_t colTiles, int64_t tiles,
                            T *__restrict__ dweight) {
  __shared__ T acc[kEmbRowsPerGroup * kEmbThreads];
  __shared__ int list[kEmbScan];
  __shared__ int warpCounts[kEmbScanRounds][kEmbThreads / 32];
  const int t = static_cast<int>(threadIdx.x);
  const int lane = t % 32, warp = t / 32;
  const int groups = kEmbThreads / width;
  const int group = t / width;
  const int64_t tileRows = static_cast<int64_t>(kEmbRowsPerGroup) * groups;

  for (int64_t b = blockIdx.x; b < tiles; b += gridDim.x) {
    const int64_t rowTile = b / colTiles;
    const int64_t row0 = rowTile * tileRows;
    const int64_t j = (b - rowTile * colTiles) * width + t % width;
    // acc[r * width + column] for the rows r this thread owns.
    for (int q = 0; q < kEmbRowsPerGroup; ++q)
      acc[(group + q * groups) * width + t % width] = T(0);

    for (int64_t base = 0; base < numIndices; base += kEmbScan) {
      // Positions base + round * kEmbThreads + t, loaded before any is used.
      int rowOf[kEmbScanRounds];
      for (int round = 0; round < kEmbScanRounds; ++round) {
        const int64_t pos = base + round * kEmbThreads + t;
        const int64_t idx = pos < numIndices ? static_cast<int64_t>(indices[pos]) : -1;
        const bool mine = idx >= row0 && idx < row0 + tileRows && idx < numEmbeddings &&
                          idx != paddingIdx;
        rowOf[round] = mine ? static_cast<int>(idx - row0) : -1;
      }
      unsigned masks[kEmbScanRounds];
      for (int round = 0; round < kEmbScanRounds; ++round) {
        masks[round] = __ballot_sync(0xffffffffu, rowOf[round] >= 0);
        if (lane == 0)
          warpCounts[round][warp] = __popc(masks[round]);
      }
      __syncthreads();
      // Entries go in position order: rounds, then warps, then lanes.
      int total = 0;
      for (int round = 0; round < kEmbScanRounds; ++round)
        for (int w = 0; w < kEmbThreads / 32; ++w) {
          if (w == warp && rowOf[round] >= 0)
            list[total + __popc(masks[round] & ((1u << lane) - 1))] =
                ((round * kEmbThreads + t) << kEmbRowBits) | rowOf[round];
          total += warpCounts[round][w];
        }
      __syncthreads();
      for (int e = 0; e < total; ++e) {
        const int entry = list[e];
        const int r = entry & ((1 << kEmbRowBits) - 1);
        if (r % groups == group && j < dim) {
          const int64_t pos = base + (entry >> kEmbRowBits);
          acc[r * width + t % width] += dy[pos * dim + j];
        }
      }
      __syncthreads(); // the counts and the list are free for the next scan
    }

    for (int q = 0; q < kEmbRowsPerGroup; ++q) {
      const int r = group + q * groups;
      if (row0 + r < numEmbeddings && j < dim)
        dweight[(row0 + r) * dim + j] = acc[r * width + t % width];
    }
  }
}

int64_t nextPow2(int64_t n) {
  int64_t p = 1;
  while (p < n)
    p *= 2;
  return p;
}

/// Runs `p` on `in` and `out` as elements of E.
auto copyTo(Context &cx, const void *in, void *out) {
  return [&cx, in, out](auto tag, const CopyPlan &p) { runPlan<decltype(tag)>(cx, p, in, out); };
}

} // namespace

void permute(Context &cx, int rank, const int64_t *inShape, const int64_t *perm,
             size_t elemBytes, const void *in, void *out) {
  kernels::planPermute(rank, inShape, perm, elemBytes, copyTo(cx, in, out));
}

void extractSlice(Context &cx, int rank, const int64_t *inShape, const int64_t *start,
                  const int64_t *step, const int64_t *outShape, size_t elemBytes,
                  const void *in, void *out) {
  kernels::planExtractSlice(rank, inShape, start, step, outShape, elemBytes,
                            copyTo(cx, in, out));
}

void insertSlice(Context &cx, int rank, const int64_t *fullShape, const int64_t *start,
                 const int64_t *step, const int64_t *partShape, size_t elemBytes,
                 const void *part, void *full) {
  kernels::planInsertSlice(rank, fullShape, start, step, partShape, elemBytes,
                           copyTo(cx, part, full));
}

template <typename T, typename I>
void embeddingForward(Context &cx, int64_t numIndices, int64_t dim, int64_t numEmbeddings,
                      const I *indices, const T *weight, T *out) {
  const int64_t count = numIndices * dim;
  if (count == 0)
    return;
  embeddingForwardKernel<T, I><<<blocksFor(count), kThreadsPerBlock, 0, cx.stream>>>(
      count, dim, numEmbeddings, indices, weight, out);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T, typename I>
void embeddingBackward(Context &cx, int64_t numIndices, int64_t dim, int64_t numEmbeddings,
                       const I *indices, const T *dy, int64_t paddingIdx, T *dweight) {
  if (numEmbeddings == 0 || dim == 0)
    return;
  // Narrow rows leave threads for more rows per tile rather than idle.
  const int width = static_cast<int>(std::min<int64_t>(kEmbThreads, nextPow2(dim)));
  const int64_t tileRows = static_cast<int64_t>(kEmbRowsPerGroup) * (kEmbThreads / width);
  const int64_t colTiles = (dim + width - 1) / width;
  const int64_t tiles = (numEmbeddings + tileRows - 1) / tileRows * colTiles;
  embeddingBackwardKernel<T, I><<<static_cast<unsigned>(std::min(tiles, kMaxBlocks)),
                                  kEmbThreads, 0, cx.stream>>>(
      numIndices, dim, numEmbeddings, indices, dy, paddingIdx, width, colTiles, tiles, dweight);
  CAIRN_CUDA_CHECK_LAUNCH();
}

#define CAIRN_INSTANTIATE(T, I)                                                              \
  template void embeddingForward<T, I>(Context &, int64_t, int64_t, int64_t, const I *,      \
                                       const T *, T *);                                      \
  template void embeddingBackward<T, I>(Context &, int64_t, int64_t, int64_t, const I *,     \
                                        const T *, int64_t, T *);
CAIRN_INSTANTIATE(float, int32_t)
CAIRN_INSTANTIATE(float, int64_t)
CAIRN_INSTANTIATE(double, int32_t)
CAIRN_INSTANTIATE(double, int64_t)
#undef CAIRN_INSTANTIATE

} // namespace cairn::cuda
