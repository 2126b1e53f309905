//===- LossForm.h - What eval computes the model's loss from ----*- C++ -*-===//
//
// The model's loss as a function of the forward step's output, where the
// compiler recognised it: cross_entropy(self(x), label) or
// mse_loss(self(x), target) (either order), `label` and `target` inputs of
// the model, `self(x)` called with the loss's own inputs. `eval` and the
// test loss after `train` then run the eval-mode forward and compute the
// loss per example from "output" and the target input: exact over every
// test example, the last partial batch included. Any other loss trains as
// written; the executables then report no test loss. Plain C++: the
// compiler fills ProgramSpec::loss with it.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_LOSSFORM_H
#define CAIRN_RUNTIME_LOSSFORM_H

#include <string>

namespace cairn::runtime {

enum class LossKind { Unknown, CrossEntropy, MseLoss };

struct LossForm {
  LossKind kind = LossKind::Unknown;
  std::string target;        // the input the output is compared with
  double labelSmoothing = 0; // CrossEntropy's label_smoothing
};

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_LOSSFORM_H
