//===- Checkpoint.h - Weights in and out of the arena ------------*- C++ -*-===//
//
// Checkpoints are safetensors files keyed by state_dict names, so PyTorch
// reads them with safetensors.torch.load_file. A saved file also carries the
// optimizer state under its own names ("fc1.weight.momentum_buffer"); PyTorch
// ignores those with load_state_dict(strict=False). With the optimizer state
// goes the count of optimizer steps taken, in the file's metadata
// ("cairn.optimizer_steps"), so a resumed run continues Adam's bias
// correction, SGD's momentum and the lr schedule where they stopped; and,
// for a step with loss scaling, the loss scaler's state
// ("cairn.loss_scale", "cairn.loss_scale_growth_tracker",
// "cairn.skipped_steps").
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CHECKPOINT_H
#define CAIRN_RUNTIME_CHECKPOINT_H

#include "runtime/LossScaler.h"
#include "runtime/Model.h"
#include "runtime/Safetensors.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>

namespace cairn::runtime {

/// How far training got: what a checkpoint records beside the tensors.
struct TrainingProgress {
  int64_t optimizerSteps = 0;
  std::optional<LossScaleState> lossScale; // a step with loss scaling
};

/// Loads `path` into the arena: every Param and Buffer must be present with
/// the spec's dtype and shape; optimizer state is loaded where present and
/// zero otherwise; any other tensor is an error, but for the names in
/// `otherDevices` (the state of a partitioned model's other devices, which
/// the file holds too), which are left to their devices. Errors name the
/// file and the tensor. Returns the progress the file records (0 optimizer
/// steps and no loss scale when it records none). On error the arena's
/// state is unspecified.
absl::StatusOr<TrainingProgress> loadCheckpoint(const ModelLayout &layout, const std::string &path,
                                                unsigned char *arena,
                                                const std::set<std::string> &otherDevices = {});

/// Every Param and Buffer, and with `optimizerState` every OptimizerState,
/// copied from the arena: what saveCheckpoint writes.
TensorMap checkpointTensors(const ModelLayout &layout, const unsigned char *arena,
                            bool optimizerState);

/// Writes `tensors` (checkpointTensors', of one device or gathered from
/// all), and with `optimizerState` the `progress`, to `path` atomically.
absl::Status writeCheckpoint(const std::string &path, const TensorMap &tensors,
                             bool optimizerState, const TrainingProgress &progress = {});

/// Writes every Param and Buffer, and with `optimizerState` every
/// OptimizerState and the `progress`, to `path` atomically. Without it the
/// file is exactly a state_dict (load_state_dict(strict=True) accepts it).
absl::Status saveCheckpoint(const ModelLayout &layout, const unsigned char *arena,
                            const std::string &path, bool optimizerState,
                            const TrainingProgress &progress = {});

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_CHECKPOINT_H
