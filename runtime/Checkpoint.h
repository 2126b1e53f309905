//===- Checkpoint.h - Weights in and out of the arena ------------*- C++ -*-===//
//
// Checkpoints are safetensors files keyed by state_dict names, so PyTorch
// reads them with safetensors.torch.load_file. A saved file also carries the
// optimizer state under its own names ("fc1.weight.momentum_buffer"); PyTorch
// ignores those with load_state_dict(strict=False).
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CHECKPOINT_H
#define CAIRN_RUNTIME_CHECKPOINT_H

#include "runtime/Model.h"

#include "absl/status/status.h"

#include <string>

namespace cairn::runtime {

/// Loads `path` into the arena: every Param and Buffer must be present with
/// the spec's dtype and shape; optimizer state is loaded where present and
/// zero otherwise; any other tensor is an error. Errors name the file and
/// the tensor. On error the arena's state is unspecified.
absl::Status loadCheckpoint(const ModelLayout &layout, const std::string &path,
                            unsigned char *arena);

/// Writes every Param and Buffer, and with `optimizerState` every
/// OptimizerState, to `path` atomically. Without it the file is exactly a
/// state_dict (load_state_dict(strict=True) accepts it).
absl::Status saveCheckpoint(const ModelLayout &layout, const unsigned char *arena,
                            const std::string &path, bool optimizerState);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_CHECKPOINT_H
