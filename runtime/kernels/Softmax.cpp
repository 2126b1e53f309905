//===- Softmax.cpp - softmax and log_softmax ------------------------------===//
//
// A block of up to kBlock neighbouring columns (consecutive inner positions)
// is processed together, so every pass reads contiguous runs and keeps its
// per-column max and sums in stack arrays; with inner == 1 a block is one
// contiguous row. Sums are taken in double; exponentials too, but for a
// float row (inner == 1, the common last-dimension softmax), whose
// exponentials are FastMath.h's float exp, and whose backward sums run in
// independent double lanes, so both vectorise; short float rows go sixteen
// at a time, transposed so that each vector lane runs one row.
// Every pass reads x (or y) at an element before writing that element, so y
// may alias x and dx may alias dy.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Softmax.h"

#include "runtime/kernels/Convert.h"
#include "runtime/kernels/FastMath.h"
#include "runtime/kernels/LaneSum.h"
#include "runtime/kernels/Parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace cairn::kernels {

namespace {

constexpr int64_t kBlock = 64;

/// The end of one float row's softmax, given its max and the double sum of
/// its exponentials `e`: y = e / sum, or for a log-softmax x - (max +
/// log(sum)). `e` may be y itself.
void finishFloatRow(bool log, int64_t dim, const float *x, const float *e,
                    float mx, double sum, float *y) {
  if (log) {
    const double shift = double(mx) + std::log(sum);
    for (int64_t r = 0; r < dim; ++r)
      y[r] = float(double(x[r]) - shift);
    return;
  }
  const double inv = 1 / sum;
  for (int64_t r = 0; r < dim; ++r)
    y[r] = float(double(e[r]) * inv);
}

/// One contiguous float row: the exponentials vectorise; their sum, the
/// normaliser and the log stay in double.
void forwardFloatRow(bool log, int64_t dim, const float *x, float *y) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < dim; ++r)
    mx = std::max(mx, x[r]);
  // y holds the exponentials until the sum is known (it may alias x, but
  // a log-softmax needs x after the sum: it keeps them in e).
  float e[kBlock];
  double sum = 0;
  for (int64_t r0 = 0; r0 < dim; r0 += kBlock) {
    const int64_t len = std::min(kBlock, dim - r0);
    for (int64_t r = 0; r < len; ++r)
      e[r] = fastmath::exp(x[r0 + r] - mx);
    for (int64_t r = 0; r < len; ++r)
      sum += double(e[r]);
    if (!log)
      std::copy(e, e + len, y + r0);
  }
  finishFloatRow(log, dim, x, y, mx, sum, y);
}

/// Rows this short go kLanes at a time, transposed (forwardShortFloatRows).
constexpr int64_t kShortRow = 64;
constexpr int64_t kLanes = 16;

/// `count` (at most kLanes) contiguous float rows of `dim` (at most
/// kShortRow) elements, the same bits as forwardFloatRow on each. The rows
/// are copied transposed, row k into lane k, so that each step of a row's
/// max, exponentials and double sum, in the row's own order, is one vector
/// operation across the rows: a short row alone leaves its dependent chains
/// of max and add waiting, and its exponentials too few to fill a vector.
void forwardShortFloatRows(bool log, int64_t dim, int64_t count, const float *x,
                           float *y) {
  alignas(64) float t[kShortRow][kLanes];
  alignas(64) float mx[kLanes];
  alignas(64) double sum[kLanes];
  for (int64_t k = 0; k < count; ++k)
    for (int64_t r = 0; r < dim; ++r)
      t[r][k] = x[k * dim + r];
  for (int64_t k = count; k < kLanes; ++k) // unused lanes: any finite value
    for (int64_t r = 0; r < dim; ++r)
      t[r][k] = 0;
  for (int64_t k = 0; k < kLanes; ++k) {
    mx[k] = -std::numeric_limits<float>::infinity();
    sum[k] = 0;
  }
  for (int64_t r = 0; r < dim; ++r)
    for (int64_t k = 0; k < kLanes; ++k)
      mx[k] = std::max(mx[k], t[r][k]);
  for (int64_t r = 0; r < dim; ++r)
    for (int64_t k = 0; k < kLanes; ++k) {
      const float e = fastmath::exp(t[r][k] - mx[k]);
      sum[k] += double(e);
      if (!log)
        t[r][k] = e;
    }
  if (log) {
    for (int64_t k = 0; k < kLanes; ++k)
      sum[k] = double(mx[k]) + std::log(sum[k]);
    for (int64_t r = 0; r < dim; ++r)
      for (int64_t k = 0; k < kLanes; ++k)
        t[r][k] = float(double(t[r][k]) - sum[k]);
  } else {
    for (int64_t k = 0; k < kLanes; ++k)
      sum[k] = 1 / sum[k];
    for (int64_t r = 0; r < dim; ++r)
      for (int64_t k = 0; k < kLanes; ++k)
        t[r][k] = float(double(t[r][k]) * sum[k]);
  }
  for (int64_t k = 0; k < count; ++k)
    for (int64_t r = 0; r < dim; ++r)
      y[k * dim + r] = t[r][k];
}

/// One block: `cols` columns of `dim` rows each, row r starting at
/// x + r * stride. Works for the contiguous case with cols = 1.
template <typename T>
void forwardBlock(bool log, int64_t dim, int64_t stride, int64_t cols,
                  const T *x, T *y) {
  if constexpr (std::is_same_v<T, float>)
    if (cols == 1)
      return forwardFloatRow(log, dim, x, y);
  double mx[kBlock], sum[kBlock];
  std::fill(mx, mx + cols, -std::numeric_limits<double>::infinity());
  std::fill(sum, sum + cols, 0.0);
  for (int64_t r = 0; r < dim; ++r)
    for (int64_t c = 0; c < cols; ++c)
      mx[c] = std::max(mx[c], double(x[r * stride + c]));
  if (log) {
    for (int64_t r = 0; r < dim; ++r)
      for (int64_t c = 0; c < cols; ++c)
        sum[c] += std::exp(double(x[r * stride + c]) - mx[c]);
    for (int64_t c = 0; c < cols; ++c)
      sum[c] = mx[c] + std::log(sum[c]);
    for (int64_t r = 0; r < dim; ++r)
      for (int64_t c = 0; c < cols; ++c)
        y[r * stride + c] = T(double(x[r * stride + c]) - sum[c]);
    return;
  }
  // y holds the exponentials until the sums are known.
  for (int64_t r = 0; r < dim; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      double e = std::exp(double(x[r * stride + c]) - mx[c]);
      sum[c] += e;
      y[r * stride + c] = T(e);
    }
  for (int64_t c = 0; c < cols; ++c)
    sum[c] = 1 / sum[c];
  for (int64_t r = 0; r < dim; ++r)
    for (int64_t c = 0; c < cols; ++c)
      y[r * stride + c] = T(double(y[r * stride + c]) * sum[c]);
}

/// The backward of one contiguous float row: sums in double lanes, the
/// log-softmax's exponentials by FastMath.h, vectorised.
void backwardFloatRow(bool log, int64_t dim, const float *dy, const float *y,
                      float *dx) {
  if (log) {
    const double sum = laneSum(dim, [&](int64_t r) { return double(dy[r]); });
    for (int64_t r = 0; r < dim; ++r)
      dx[r] = float(double(dy[r]) - double(fastmath::exp(y[r])) * sum);
    return;
  }
  const double sum =
      laneSum(dim, [&](int64_t r) { return double(dy[r]) * double(y[r]); });
  for (int64_t r = 0; r < dim; ++r)
    dx[r] = float(double(y[r]) * (double(dy[r]) - sum));
}

template <typename T>
void backwardBlock(bool log, int64_t dim, int64_t stride, int64_t cols,
                   const T *dy, const T *y, T *dx) {
  if constexpr (std::is_same_v<T, float>)
    if (cols == 1)
      return backwardFloatRow(log, dim, dy, y, dx);
  double sum[kBlock];
  std::fill(sum, sum + cols, 0.0);
  if (log) {
    for (int64_t r = 0; r < dim; ++r)
      for (int64_t c = 0; c < cols; ++c)
        sum[c] += double(dy[r * stride + c]);
    for (int64_t r = 0; r < dim; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        int64_t i = r * stride + c;
        dx[i] = T(double(dy[i]) - std::exp(double(y[i])) * sum[c]);
      }
    return;
  }
  for (int64_t r = 0; r < dim; ++r)
    for (int64_t c = 0; c < cols; ++c)
      sum[c] += double(dy[r * stride + c]) * double(y[r * stride + c]);
  for (int64_t r = 0; r < dim; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      int64_t i = r * stride + c;
      dx[i] = T(double(y[i]) * (double(dy[i]) - sum[c]));
    }
}

/// Calls f(base, cols) for every block of columns: outer rows times
/// ceil(inner / kBlock) blocks, split across threads.
template <typename F>
void forEachBlock(int64_t outer, int64_t dim, int64_t inner, F f) {
  const int64_t perRow = (inner + kBlock - 1) / kBlock;
  parallelFor(outer * perRow, 8 * dim * std::min(kBlock, inner),
              [&](int64_t begin, int64_t end) {
                for (int64_t b = begin; b < end; ++b) {
                  const int64_t o = b / perRow, c0 = (b % perRow) * kBlock;
                  f(o * dim * inner + c0, std::min(kBlock, inner - c0));
                }
              });
}

} // namespace

template <typename T>
void softmaxForward(bool log, int64_t outer, int64_t dim, int64_t inner,
                    const T *x, T *y) {
  if (dim == 0)
    return;
  if constexpr (std::is_same_v<T, float>)
    if (inner == 1 && dim <= kShortRow) {
      const int64_t groups = (outer + kLanes - 1) / kLanes;
      parallelFor(groups, 8 * dim * kLanes, [&](int64_t begin, int64_t end) {
        for (int64_t g = begin; g < end; ++g) {
          const int64_t row = g * kLanes;
          forwardShortFloatRows(log, dim, std::min(kLanes, outer - row),
                                x + row * dim, y + row * dim);
        }
      });
      return;
    }
  forEachBlock(outer, dim, inner, [&](int64_t base, int64_t cols) {
    forwardBlock(log, dim, inner, cols, x + base, y + base);
  });
}

template <typename T>
void softmaxForward(bool log, int64_t outer, int64_t dim, int64_t inner,
                    const uint16_t *x, float *y) {
  castElements(x, T::kCastType, y, CastType::F32, outer * dim * inner);
  softmaxForward<float>(log, outer, dim, inner, y, y);
}

template <typename T>
void softmaxBackward(bool log, int64_t outer, int64_t dim, int64_t inner,
                     const T *dy, const T *y, T *dx) {
  if (dim == 0)
    return;
  forEachBlock(outer, dim, inner, [&](int64_t base, int64_t cols) {
    backwardBlock(log, dim, inner, cols, dy + base, y + base, dx + base);
  });
}

#define CAIRN_INSTANTIATE(T)                                                   \
  template void softmaxForward<T>(bool, int64_t, int64_t, int64_t, const T *,  \
                                  T *);                                        \
  template void softmaxBackward<T>(bool, int64_t, int64_t, int64_t, const T *, \
                                   const T *, T *);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
#undef CAIRN_INSTANTIATE
template void softmaxForward<F16>(bool, int64_t, int64_t, int64_t,
                                  const uint16_t *, float *);
template void softmaxForward<Bf16>(bool, int64_t, int64_t, int64_t,
                                   const uint16_t *, float *);

} // namespace cairn::kernels
