//===- EvalLoss.h - The model's loss of one test example --------*- C++ -*-===//
//
// eval's loss: the model's loss (ProgramSpec::loss, a LossForm the compiler
// recognised) of one example, from the forward step's output and the target
// input as they lie in the arena, in double. Per example, so the test loss
// covers every example, a padded last batch included: a cross-entropy's term
// is torch's (1 - s) * nll + s * (mean over the classes of -log p) with
// label smoothing s, an mse_loss's the mean of the example's squared errors
// (the mean over a batch's elements is the mean of its examples' means).
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_EVALLOSS_H
#define CAIRN_RUNTIME_EVALLOSS_H

#include "runtime/Model.h"

#include <cstdint>

namespace cairn::runtime {

/// Example `row`'s term of the model's loss; `correct` tells whether a
/// cross-entropy's argmax is the label (false for an mse_loss). `layout`
/// has a target (describeModel found one).
double exampleLoss(const ModelLayout &layout, const unsigned char *output,
                   const unsigned char *target, int64_t row, bool &correct);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_EVALLOSS_H
