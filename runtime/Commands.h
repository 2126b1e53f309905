//===- Commands.h - The commands of a training executable -------*- C++ -*-===//
//
// train, eval, init, step and predict on an open Session (Session.h). Each
// returns the failure it ends with; Main.cpp prints it and sets the exit
// code. Output files are written atomically and only at the end.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_COMMANDS_H
#define CAIRN_RUNTIME_COMMANDS_H

#include "runtime/Session.h"

#include "absl/status/status.h"

namespace cairn::runtime {

/// Trains for --epochs or --steps, evaluating after each epoch (or at the
/// end), with checkpoints, metrics and the loss scaler.
absl::Status runTrain(Session &session);
/// The loss (and a classifier's accuracy) over the test split.
absl::Status runEval(Session &session);
/// Writes the initial weights of --seed to --save.
absl::Status runInit(Session &session);
/// One forward and training step on --batch; every gradient, the loss, the
/// output and the updated state to --out.
absl::Status runStep(Session &session);
/// The eval-mode forward over every example of --input, its outputs to --out.
absl::Status runPredict(Session &session);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_COMMANDS_H
