//===- Loss.cpp - Cross-entropy and mean squared error --------------------===//
//
// Per row, log-softmax is max-subtracted and kept in double:
//   logp[c] = (x[c] - max) - log(sum(exp(x - max))).
// The smoothed loss follows PyTorch's decomposition,
//   -(1 - eps) * logp[label] - eps / classes * sum(logp),
// and the smoothing term is skipped at eps == 0 as PyTorch does (so a -inf
// logit does not turn the loss into NaN). Labels are all checked before
// anything is written.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Loss.h"

#include "runtime/kernels/KernelError.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace cairn::kernels {

namespace {

template <typename I>
void checkLabels(int64_t rows, int64_t classes, const I *labels) {
  for (int64_t r = 0; r < rows; ++r)
    if (labels[r] < 0 || int64_t(labels[r]) >= classes)
      throw KernelError("cross-entropy label " +
                        std::to_string(int64_t(labels[r])) + " at row " +
                        std::to_string(r) + " is outside [0, " +
                        std::to_string(classes) + ")");
}

struct RowStats {
  double max;    // max over the row
  double logSum; // log(sum(exp(x - max)))
};

template <typename T> RowStats rowStats(int64_t classes, const T *x) {
  double mx = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < classes; ++c)
    mx = std::max(mx, double(x[c]));
  double s = 0;
  for (int64_t c = 0; c < classes; ++c)
    s += std::exp(double(x[c]) - mx);
  return {mx, std::log(s)};
}

} // namespace

template <typename T, typename I>
void crossEntropyForward(int64_t rows, int64_t classes, const T *logits,
                         const I *labels, double labelSmoothing, T *loss) {
  checkLabels(rows, classes, labels);
  double eps = labelSmoothing, total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const T *x = logits + r * classes;
    RowStats st = rowStats(classes, x);
    double nll = st.logSum - (double(x[labels[r]]) - st.max);
    if (eps == 0) {
      total += nll;
      continue;
    }
    double sumLogp = 0;
    for (int64_t c = 0; c < classes; ++c)
      sumLogp += double(x[c]) - st.max - st.logSum;
    total += (1 - eps) * nll - eps / double(classes) * sumLogp;
  }
  *loss = T(total / double(rows));
}

template <typename T, typename I>
void crossEntropyBackward(int64_t rows, int64_t classes, const T *dloss,
                          const T *logits, const I *labels,
                          double labelSmoothing, T *dlogits) {
  checkLabels(rows, classes, labels);
  double eps = labelSmoothing;
  double g = double(*dloss) / double(rows);
  double offTarget = eps / double(classes);
  for (int64_t r = 0; r < rows; ++r) {
    const T *x = logits + r * classes;
    T *dx = dlogits + r * classes;
    RowStats st = rowStats(classes, x);
    int64_t label = labels[r];
    for (int64_t c = 0; c < classes; ++c) {
      double p = std::exp(double(x[c]) - st.max - st.logSum);
      double target = offTarget + (c == label ? 1 - eps : 0.0);
      dx[c] = T(g * (p - target));
    }
  }
}

template <typename T>
void mseForward(int64_t n, const T *x, const T *t, T *loss) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = double(x[i]) - double(t[i]);
    s += d * d;
  }
  *loss = T(s / double(n));
}

template <typename T>
void mseBackward(int64_t n, const T *dloss, const T *x, const T *t, T *dx,
                 T *dt) {
  double g = 2 * double(*dloss) / double(n);
  for (int64_t i = 0; i < n; ++i) {
    T d = T(g * (double(x[i]) - double(t[i])));
    dx[i] = d;
    if (dt)
      dt[i] = -d;
  }
}

#define CAIRN_INSTANTIATE_CE(T, I)                                             \
  template void crossEntropyForward<T, I>(int64_t, int64_t, const T *,         \
                                          const I *, double, T *);             \
  template void crossEntropyBackward<T, I>(int64_t, int64_t, const T *,        \
                                           const T *, const I *, double, T *);
#define CAIRN_INSTANTIATE(T)                                                   \
  CAIRN_INSTANTIATE_CE(T, int32_t)                                             \
  CAIRN_INSTANTIATE_CE(T, int64_t)                                             \
  template void mseForward<T>(int64_t, const T *, const T *, T *);             \
  template void mseBackward<T>(int64_t, const T *, const T *, const T *, T *,  \
                               T *);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
#undef CAIRN_INSTANTIATE
#undef CAIRN_INSTANTIATE_CE

} // namespace cairn::kernels
