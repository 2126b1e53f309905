//===- Normalization.cpp - BatchNorm and LayerNorm ------------------------===//
//
// Statistics are accumulated in double whatever T is, in two passes (mean,
// then squared deviations), so float results stay within PyTorch's rounding.
// BatchNorm walks channel c as n contiguous runs of `spatial` elements and
// applies per-element maps in T's compute type (float for F16 and Bf16
// storage, each element widened as it is read and rounded as it is written)
// with coefficients from those statistics;
// LayerNorm works in double throughout. Channels (BatchNorm) and rows
// (LayerNorm) are split across threads; every sum keeps its serial order.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/Normalization.h"

#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/LaneSum.h"
#include "runtime/kernels/Parallel.h"

#include <cmath>
#include <vector>

namespace cairn::kernels {

namespace {

struct Moments {
  double mean;
  double var; // biased
};

/// Sum of channel ch of x viewed as [n, c, spatial].
template <typename T>
double channelSum(int64_t n, int64_t c, int64_t spatial, const StoredAs<T> *x,
                  int64_t ch) {
  double sum = 0;
  for (int64_t b = 0; b < n; ++b) {
    const StoredAs<T> *run = x + (b * c + ch) * spatial;
    sum += laneSum(spatial,
                   [&](int64_t i) { return double(Storage<T>::load(run[i])); });
  }
  return sum;
}

/// Sum of the squared deviations of channel ch from `mean`.
template <typename T>
double channelSquares(int64_t n, int64_t c, int64_t spatial,
                      const StoredAs<T> *x, int64_t ch, double mean) {
  double sq = 0;
  for (int64_t b = 0; b < n; ++b) {
    const StoredAs<T> *run = x + (b * c + ch) * spatial;
    sq += laneSum(spatial, [&](int64_t i) {
      const double d = double(Storage<T>::load(run[i])) - mean;
      return d * d;
    });
  }
  return sq;
}

/// Mean and biased variance of channel ch of x viewed as [n, c, spatial].
template <typename T>
Moments channelMoments(int64_t n, int64_t c, int64_t spatial,
                       const StoredAs<T> *x, int64_t ch) {
  const double count = double(n * spatial);
  const double mean = channelSum<T>(n, c, spatial, x, ch) / count;
  return {mean, channelSquares<T>(n, c, spatial, x, ch, mean) / count};
}

/// The batch statistics of every channel: computed channel by channel where
/// they are asked for when the batch is this process's alone; over every
/// replica's examples, up front, when `replicas` sums across them (the sums
/// of x and the example count, then the squared deviations from the mean
/// they give, the same two passes as one process takes), in `workspace`
/// (ReplicaSumLayout).
template <typename T> class BatchMoments {
public:
  BatchMoments(int64_t n, int64_t c, int64_t spatial, const StoredAs<T> *x,
               double *workspace, const RankSum &replicas)
      : n(n), c(c), spatial(spatial), x(x), total(double(n * spatial)) {
    if (!replicas)
      return;
    if (!workspace)
      throw KernelError("batch norm synchronised over the replicas needs its "
                        "workspace for the sums");
    const ReplicaSumLayout at{c};
    means = workspace + at.means();
    squares = workspace + at.squares();
    parallelForEach(c, n * spatial, [&](int64_t ch) {
      means[ch] = channelSum<T>(n, c, spatial, x, ch);
    });
    workspace[at.count()] = total;
    replicas(workspace, c + 1);
    total = workspace[at.count()];
    for (int64_t ch = 0; ch < c; ++ch)
      means[ch] /= total;
    parallelForEach(c, n * spatial, [&](int64_t ch) {
      squares[ch] = channelSquares<T>(n, c, spatial, x, ch, means[ch]);
    });
    replicas(squares, c);
  }

  /// Channel ch's mean and biased variance. Thread-safe.
  Moments operator()(int64_t ch) const {
    return means ? Moments{means[ch], squares[ch] / total}
                 : channelMoments<T>(n, c, spatial, x, ch);
  }
  /// How many examples (times spatial) the statistics are over.
  double count() const { return total; }

private:
  int64_t n, c, spatial;
  const StoredAs<T> *x;
  double total;
  // Over every replica (in the workspace); null for this process alone.
  double *means = nullptr, *squares = nullptr;
};

/// x - mean in T, with the mean split into a rounded head and its rounding
/// error: x - head is exact when x is near the mean, so a mean that is large
/// next to the spread costs no digits.
template <typename T> struct Centered {
  T head, tail;
  explicit Centered(double mean)
      : head(T(mean)), tail(T(mean - double(head))) {}
  T operator()(T x) const { return (x - head) - tail; }
};

/// y = (x - mean) * scale + shift over channel ch, in T's compute type so
/// the loop vectorizes.
template <typename T>
void normalizeChannel(int64_t n, int64_t c, int64_t spatial,
                      const StoredAs<T> *x, int64_t ch, double mean,
                      double scale, double shift, StoredAs<T> *y) {
  using S = Storage<T>;
  using C = ComputedIn<T>;
  const Centered<C> center(mean);
  const C a = C(scale), b0 = C(shift);
  for (int64_t b = 0; b < n; ++b) {
    const int64_t base = (b * c + ch) * spatial;
    for (int64_t i = 0; i < spatial; ++i)
      y[base + i] = S::store(center(S::load(x[base + i])) * a + b0);
  }
}

template <typename T> Moments rowMoments(int64_t cols, const T *row) {
  const double mean =
      laneSum(cols, [&](int64_t j) { return double(row[j]); }) / double(cols);
  const double sq = laneSum(cols, [&](int64_t j) {
    const double d = double(row[j]) - mean;
    return d * d;
  });
  return {mean, sq / double(cols)};
}

} // namespace

template <typename T>
void batchNormTrainingForward(int64_t n, int64_t c, int64_t spatial,
                              const StoredAs<T> *x, const ComputedIn<T> *gamma,
                              const ComputedIn<T> *beta, double eps,
                              StoredAs<T> *y, double *workspace,
                              const RankSum &replicas) {
  const BatchMoments<T> moments(n, c, spatial, x, workspace, replicas);
  parallelForEach(c, 4 * n * spatial, [&](int64_t ch) {
    const Moments m = moments(ch);
    const double scale =
        (gamma ? double(gamma[ch]) : 1.0) / std::sqrt(m.var + eps);
    normalizeChannel<T>(n, c, spatial, x, ch, m.mean, scale,
                        beta ? double(beta[ch]) : 0.0, y);
  });
}

template <typename T>
void batchNormInferenceForward(int64_t n, int64_t c, int64_t spatial,
                               const StoredAs<T> *x, const ComputedIn<T> *gamma,
                               const ComputedIn<T> *beta,
                               const ComputedIn<T> *runningMean,
                               const ComputedIn<T> *runningVar, double eps,
                               StoredAs<T> *y) {
  parallelForEach(c, 2 * n * spatial, [&](int64_t ch) {
    const double scale = (gamma ? double(gamma[ch]) : 1.0) /
                         std::sqrt(double(runningVar[ch]) + eps);
    normalizeChannel<T>(n, c, spatial, x, ch, double(runningMean[ch]), scale,
                        beta ? double(beta[ch]) : 0.0, y);
  });
}

template <typename T>
void batchNormBackward(int64_t n, int64_t c, int64_t spatial,
                       const StoredAs<T> *dy, const StoredAs<T> *x,
                       const ComputedIn<T> *gamma, double eps, StoredAs<T> *dx,
                       ComputedIn<T> *dgamma, ComputedIn<T> *dbeta,
                       double *workspace, const RankSum &replicas) {
  using S = Storage<T>;
  using C = ComputedIn<T>;
  const BatchMoments<T> moments(n, c, spatial, x, workspace, replicas);
  const double count = moments.count();
  // sum(dy) and sum(dy * (x - mean)) over channel ch of this process's
  // batch; with them, sum(dy * xhat), xhat = (x - mean) * invStd.
  auto sumGradients = [&](int64_t ch, const Moments &m, double &sumDy,
                          double &sumDyXc) {
    sumDy = 0;
    sumDyXc = 0;
    for (int64_t b = 0; b < n; ++b) {
      const int64_t base = (b * c + ch) * spatial;
      const StoredAs<T> *g = dy + base, *xr = x + base;
      sumDy +=
          laneSum(spatial, [&](int64_t i) { return double(S::load(g[i])); });
      sumDyXc += laneSum(spatial, [&](int64_t i) {
        return double(S::load(g[i])) * (double(S::load(xr[i])) - m.mean);
      });
    }
    const double invStd = 1.0 / std::sqrt(m.var + eps);
    if (dgamma)
      dgamma[ch] = C(sumDyXc * invStd);
    if (dbeta)
      dbeta[ch] = C(sumDy);
  };
  // dx = gamma * invStd * (dy - mean(dy) - xhat * mean(dy * xhat)), as
  // cDy * dy + cXc * (x - mean) + c0 in C so it vectorizes; the coefficients
  // carry the double statistics (sums and count over every replica's
  // examples with replicas).
  auto writeDx = [&](int64_t ch, const Moments &m, double sumDy,
                     double sumDyXc) {
    const double invStd = 1.0 / std::sqrt(m.var + eps);
    const double k = (gamma ? double(gamma[ch]) : 1.0) * invStd;
    const Centered<C> center(m.mean);
    const C cDy = C(k), cXc = C(-k * invStd * invStd * sumDyXc / count),
            c0 = C(-k * sumDy / count);
    for (int64_t b = 0; b < n; ++b) {
      const int64_t base = (b * c + ch) * spatial;
      for (int64_t i = 0; i < spatial; ++i)
        dx[base + i] = S::store(cDy * S::load(dy[base + i]) +
                                cXc * center(S::load(x[base + i])) + c0);
    }
  };
  if (!replicas) {
    parallelForEach(c, 6 * n * spatial, [&](int64_t ch) {
      const Moments m = moments(ch);
      double sumDy, sumDyXc;
      sumGradients(ch, m, sumDy, sumDyXc);
      writeDx(ch, m, sumDy, sumDyXc);
    });
    return;
  }
  // The parameter gradients keep this replica's sums (the gradient sums add
  // the replicas'); dx needs every replica's.
  double *sums = workspace + ReplicaSumLayout{c}.gradientSums();
  parallelForEach(c, 4 * n * spatial, [&](int64_t ch) {
    sumGradients(ch, moments(ch), sums[ch], sums[c + ch]);
  });
  replicas(sums, 2 * c);
  parallelForEach(c, 3 * n * spatial, [&](int64_t ch) {
    writeDx(ch, moments(ch), sums[ch], sums[c + ch]);
  });
}

template <typename T>
void batchNormUpdateRunningStats(int64_t n, int64_t c, int64_t spatial,
                                 const StoredAs<T> *x, double momentum,
                                 ComputedIn<T> *runningMean,
                                 ComputedIn<T> *runningVar,
                                 int64_t *numBatchesTracked, double *workspace,
                                 const RankSum &replicas) {
  using C = ComputedIn<T>;
  const BatchMoments<T> moments(n, c, spatial, x, workspace, replicas);
  const double count = moments.count();
  parallelForEach(c, 2 * n * spatial, [&](int64_t ch) {
    const Moments m = moments(ch);
    // PyTorch divides by count - 1 unguarded: one element gives NaN.
    const double unbiased = m.var * count / (count - 1);
    runningMean[ch] =
        C((1 - momentum) * double(runningMean[ch]) + momentum * m.mean);
    runningVar[ch] =
        C((1 - momentum) * double(runningVar[ch]) + momentum * unbiased);
  });
  if (numBatchesTracked)
    *numBatchesTracked += 1;
}

template <typename T>
void layerNormForward(int64_t rows, int64_t cols, const T *x, const T *gamma,
                      const T *beta, double eps, T *y) {
  parallelFor(rows, 4 * cols, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T *xr = x + r * cols;
      T *yr = y + r * cols;
      const Moments m = rowMoments(cols, xr);
      const double invStd = 1.0 / std::sqrt(m.var + eps);
      for (int64_t j = 0; j < cols; ++j) {
        double v = (double(xr[j]) - m.mean) * invStd;
        if (gamma)
          v *= double(gamma[j]);
        if (beta)
          v += double(beta[j]);
        yr[j] = T(v);
      }
    }
  });
}

template <typename T>
void layerNormBackward(int64_t rows, int64_t cols, const T *dy, const T *x,
                       const T *gamma, double eps, T *dx, T *dgamma, T *dbeta) {
  // Rows are independent for dx; each row's statistics are kept for the
  // parameter gradients, which sum over rows in row order, one column per
  // thread, so the sums do not depend on the number of threads.
  std::vector<double> means(rows), invStds(rows);
  parallelFor(rows, 8 * cols, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T *xr = x + r * cols, *gr = dy + r * cols;
      T *dxr = dx + r * cols;
      const Moments m = rowMoments(cols, xr);
      const double invStd = 1.0 / std::sqrt(m.var + eps);
      means[r] = m.mean;
      invStds[r] = invStd;
      // With g = dy * gamma:
      // dx = invStd * (g - mean(g) - xhat * mean(g * xhat)).
      double sumG = 0, sumGXhat = 0;
      for (int64_t j = 0; j < cols; ++j) {
        const double xhat = (double(xr[j]) - m.mean) * invStd;
        const double g = double(gr[j]) * (gamma ? double(gamma[j]) : 1.0);
        sumG += g;
        sumGXhat += g * xhat;
      }
      const double meanG = sumG / double(cols);
      const double meanGXhat = sumGXhat / double(cols);
      for (int64_t j = 0; j < cols; ++j) {
        const double xhat = (double(xr[j]) - m.mean) * invStd;
        const double g = double(gr[j]) * (gamma ? double(gamma[j]) : 1.0);
        dxr[j] = T(invStd * (g - meanG - xhat * meanGXhat));
      }
    }
  });
  if (!dgamma && !dbeta)
    return;
  // A thread's columns are summed together, row after row: each row's
  // run of them is contiguous (one column at a time strode through all of
  // x and dy per column), and each column still adds its rows in order.
  parallelFor(cols, 3 * rows, [&](int64_t begin, int64_t end) {
    const int64_t width = end - begin;
    std::vector<double> gammaAcc(width, 0.0), betaAcc(width, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const T *gr = dy + r * cols + begin, *xr = x + r * cols + begin;
      const double mean = means[r], invStd = invStds[r];
      for (int64_t j = 0; j < width; ++j) {
        const double g = double(gr[j]);
        gammaAcc[j] += g * ((double(xr[j]) - mean) * invStd);
        betaAcc[j] += g;
      }
    }
    for (int64_t j = 0; j < width; ++j) {
      if (dgamma)
        dgamma[begin + j] = T(gammaAcc[j]);
      if (dbeta)
        dbeta[begin + j] = T(betaAcc[j]);
    }
  });
}

#define CAIRN_INSTANTIATE_BATCH_NORM(T)                                        \
  template void batchNormTrainingForward<T>(                                   \
      int64_t, int64_t, int64_t, const StoredAs<T> *, const ComputedIn<T> *,   \
      const ComputedIn<T> *, double, StoredAs<T> *, double *,                  \
      const RankSum &);                                                        \
  template void batchNormInferenceForward<T>(                                  \
      int64_t, int64_t, int64_t, const StoredAs<T> *, const ComputedIn<T> *,   \
      const ComputedIn<T> *, const ComputedIn<T> *, const ComputedIn<T> *,     \
      double, StoredAs<T> *);                                                  \
  template void batchNormBackward<T>(                                          \
      int64_t, int64_t, int64_t, const StoredAs<T> *, const StoredAs<T> *,     \
      const ComputedIn<T> *, double, StoredAs<T> *, ComputedIn<T> *,           \
      ComputedIn<T> *, double *, const RankSum &);                             \
  template void batchNormUpdateRunningStats<T>(                                \
      int64_t, int64_t, int64_t, const StoredAs<T> *, double, ComputedIn<T> *, \
      ComputedIn<T> *, int64_t *, double *, const RankSum &);
#define CAIRN_INSTANTIATE_LAYER_NORM(T)                                        \
  template void layerNormForward<T>(int64_t, int64_t, const T *, const T *,    \
                                    const T *, double, T *);                   \
  template void layerNormBackward<T>(int64_t, int64_t, const T *, const T *,   \
                                     const T *, double, T *, T *, T *);
CAIRN_INSTANTIATE_BATCH_NORM(float)
CAIRN_INSTANTIATE_BATCH_NORM(double)
CAIRN_INSTANTIATE_BATCH_NORM(F16)
CAIRN_INSTANTIATE_BATCH_NORM(Bf16)
CAIRN_INSTANTIATE_LAYER_NORM(float)
CAIRN_INSTANTIATE_LAYER_NORM(double)
#undef CAIRN_INSTANTIATE_BATCH_NORM
#undef CAIRN_INSTANTIATE_LAYER_NORM

} // namespace cairn::kernels
