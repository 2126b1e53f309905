//===- Checkpoint.h - Weights in and out of the arena ------------*- C++ -*-===//
//
// Checkpoints are safetensors files keyed by state_dict names, so PyTorch
// reads them with safetensors.torch.load_file. A saved file also carries the
// optimizer state under its own names ("fc1.weight.momentum_buffer"); PyTorch
// ignores those with load_state_dict(strict=False). With the optimizer state
// goes the count of optimizer steps taken, in the file's metadata
// ("cairn.optimizer_steps"), so a resumed run continues Adam's bias
// correction, SGD's momentum and the lr schedule where they stopped.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CHECKPOINT_H
#define CAIRN_RUNTIME_CHECKPOINT_H

#include "runtime/Model.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstdint>
#include <string>

namespace cairn::runtime {

/// Loads `path` into the arena: every Param and Buffer must be present with
/// the spec's dtype and shape; optimizer state is loaded where present and
/// zero otherwise; any other tensor is an error. Errors name the file and
/// the tensor. Returns the optimizer steps the file records (0 when it
/// records none). On error the arena's state is unspecified.
absl::StatusOr<int64_t> loadCheckpoint(const ModelLayout &layout, const std::string &path,
                                       unsigned char *arena);

/// Writes every Param and Buffer, and with `optimizerState` every
/// OptimizerState and the count of `optimizerSteps` taken, to `path`
/// atomically. Without it the file is exactly a state_dict
/// (load_state_dict(strict=True) accepts it).
absl::Status saveCheckpoint(const ModelLayout &layout, const unsigned char *arena,
                            const std::string &path, bool optimizerState,
                            int64_t optimizerSteps = 0);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_CHECKPOINT_H
