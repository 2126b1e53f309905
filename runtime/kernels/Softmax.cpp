//===- Softmax.cpp - softmax and log_softmax ------------------------------===//
//
// A block of up to kBlock neighbouring columns (consecutive inner positions)
// is processed together, so every pass reads contiguous runs and keeps its
// per-column max and sums in stack arrays; with inner == 1 a block is one
// contiguous row. Exponentials and sums are taken in double.
// Every pass reads x (or y) at an element before writing that element, so y
// may alias x and dx may alias dy.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cairn::kernels {

namespace {

constexpr int64_t kBlock = 64;

/// One block: `cols` columns of `dim` rows each, row r starting at
/// x + r * stride. Works for the contiguous case with cols = 1.
template <typename T>
void forwardBlock(bool log, int64_t dim, int64_t stride, int64_t cols,
                  const T *x, T *y) {
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

template <typename T>
void backwardBlock(bool log, int64_t dim, int64_t stride, int64_t cols,
                   const T *dy, const T *y, T *dx) {
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

} // namespace

template <typename T>
void softmaxForward(bool log, int64_t outer, int64_t dim, int64_t inner,
                    const T *x, T *y) {
  if (dim == 0)
    return;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t base = o * dim * inner;
    for (int64_t c0 = 0; c0 < inner; c0 += kBlock)
      forwardBlock(log, dim, inner, std::min(kBlock, inner - c0),
                   x + base + c0, y + base + c0);
  }
}

template <typename T>
void softmaxBackward(bool log, int64_t outer, int64_t dim, int64_t inner,
                     const T *dy, const T *y, T *dx) {
  if (dim == 0)
    return;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t base = o * dim * inner;
    for (int64_t c0 = 0; c0 < inner; c0 += kBlock)
      backwardBlock(log, dim, inner, std::min(kBlock, inner - c0),
                    dy + base + c0, y + base + c0, dx + base + c0);
  }
}

#define CAIRN_INSTANTIATE(T)                                                   \
  template void softmaxForward<T>(bool, int64_t, int64_t, int64_t, const T *,  \
                                  T *);                                        \
  template void softmaxBackward<T>(bool, int64_t, int64_t, int64_t, const T *, \
                                   const T *, T *);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
#undef CAIRN_INSTANTIATE

} // namespace cairn::kernels
