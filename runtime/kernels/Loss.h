//===- Loss.h - Cross-entropy and mean squared error -------------*- C++ -*-===//
//
// Mean reductions, as nn.CrossEntropyLoss and nn.MSELoss by default. Labels
// out of [0, classes) raise KernelError naming the label and its row.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_LOSS_H
#define CAIRN_RUNTIME_KERNELS_LOSS_H

#include <cstdint>

namespace cairn::kernels {

/// *loss = mean over rows of cross-entropy(logits[row], labels[row]) with
/// label smoothing eps: target = (1 - eps) * onehot + eps / classes.
/// I is int32_t or int64_t.
template <typename T, typename I>
void crossEntropyForward(int64_t rows, int64_t classes, const T *logits,
                         const I *labels, double labelSmoothing, T *loss);

/// dlogits = *dloss * (softmax(logits) - target) / rows.
template <typename T, typename I>
void crossEntropyBackward(int64_t rows, int64_t classes, const T *dloss,
                          const T *logits, const I *labels,
                          double labelSmoothing, T *dlogits);

/// *loss = mean((x - t)^2) over n elements.
template <typename T>
void mseForward(int64_t n, const T *x, const T *t, T *loss);
/// dx = *dloss * 2 (x - t) / n; dt = -dx (dt may be null).
template <typename T>
void mseBackward(int64_t n, const T *dloss, const T *x, const T *t, T *dx,
                 T *dt);

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_LOSS_H
