//===- Model.h - The spec's tensors, checked and found by role ---*- C++ -*-===//
//
// A ProgramSpec comes from generated code, so a bad one is a compiler bug;
// describeModel still checks it once (every tensor inside the arena, the
// inputs and outputs the runtime feeds and reads present with sane shapes)
// so such a bug is an error message rather than a wild write.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_MODEL_H
#define CAIRN_RUNTIME_MODEL_H

#include "runtime/Program.h"

#include "absl/status/statusor.h"

#include <string>
#include <vector>

namespace cairn::runtime {

struct ModelLayout {
  const ProgramSpec *spec = nullptr;
  /// Every Input, in spec order; each starts with the batch dimension.
  std::vector<const TensorInfo *> inputs;
  /// The inputs the forward step reads (ProgramSpec::forwardInputs).
  std::vector<const TensorInfo *> forwardInputs;
  const TensorInfo *loss = nullptr;   // Output "loss", one element
  const TensorInfo *output = nullptr; // Output "output", [batch, ...]
  /// Output "eval_loss", one element: ProgramSpec::evalLoss's, or null.
  const TensorInfo *evalLoss = nullptr;
  /// Output "found_inf", one float32 (LossScaler.h): the training step scales
  /// its loss and writes 1 here when it skipped its updates; else null.
  const TensorInfo *foundInf = nullptr;
  /// The input the loss compares the output with (ProgramSpec::loss), or
  /// null when eval cannot compute the loss.
  const TensorInfo *target = nullptr;
  /// CrossEntropy: the output is [batch, classes] and the target holds
  /// class indices below it; 0 otherwise (no accuracy).
  int64_t classes = 0;
  /// Every Param, Buffer and OptimizerState, in spec order.
  std::vector<const TensorInfo *> state;
  std::vector<const TensorInfo *> gradients;

  /// The Param or Buffer (not OptimizerState) tensors: a state_dict.
  bool isStateDict(const TensorInfo &tensor) const;
  /// The Input named `name`, or null.
  const TensorInfo *input(const std::string &name) const;
};

using StepFunction = void (*)(unsigned char *arena, const StepContext &ctx);
/// `spec`'s function for step `kind` (null where it has none).
StepFunction stepFunction(const ProgramSpec &spec, StepKind kind);
/// The Output tensor step `kind` writes: "loss", "output" or "eval_loss".
const char *stepResultName(StepKind kind);

/// F32, F64, F16 or BF16.
bool isFloating(DType dtype);

/// Checks `spec` and sorts its tensors by role. Errors start with
/// "model spec:" and name the tensor.
absl::StatusOr<ModelLayout> describeModel(const ProgramSpec &spec);

/// As describeModel, for one device's spec of a partitioned model, which
/// may lack "loss", "output" and "eval_loss" (they are on some device;
/// Partition.h checks the devices together). What it has is checked alike.
absl::StatusOr<ModelLayout> describeDevice(const ProgramSpec &spec);

/// Bytes `tensor` takes in the arena (valid once describeModel accepted it).
size_t tensorBytes(const TensorInfo &tensor);

/// "'image' F32 [64, 1, 28, 28]", for messages.
std::string describeTensor(const TensorInfo &tensor);

/// A copy of `tensor`'s bytes in `arena`.
HostTensor readTensor(const TensorInfo &tensor, const unsigned char *arena);

/// Copies `host` (same dtype and shape as `tensor`) into `arena`.
void writeTensor(const TensorInfo &tensor, const HostTensor &host, unsigned char *arena);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_MODEL_H
