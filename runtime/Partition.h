//===- Partition.h - A model's devices, checked together ---------*- C++ -*-===//
//
// A partitioned model comes as one ProgramSpec per device (Program.h). Every
// rank checks all of them, so that all reach the same verdict without a word
// exchanged: each device's spec as describeDevice checks it, and together
// one model: one "loss", one "output" (and one "eval_loss" where the steps
// have one), no tensor on two devices but the inputs, which agree in dtype
// and shape wherever they are. A model on one device is the case of one
// spec, checked by describeModel as ever.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_PARTITION_H
#define CAIRN_RUNTIME_PARTITION_H

#include "runtime/Model.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace cairn::runtime {

struct PartitionLayout {
  /// Device d's tensors by role.
  std::vector<ModelLayout> devices;
  /// The devices holding "loss", "output" and "eval_loss" (-1: none).
  int lossDevice = 0;
  int outputDevice = 0;
  int evalLossDevice = -1;
  /// Every input of the model once (its first device's), devices in order:
  /// what the data feeds, on every rank.
  std::vector<const TensorInfo *> inputs;
  /// Likewise, the inputs of the forward steps (what `predict` feeds).
  std::vector<const TensorInfo *> forwardInputs;
  /// The output device's loss target and class count (ModelLayout's).
  const TensorInfo *target = nullptr;
  int64_t classes = 0;
  /// Every Param, Buffer and OptimizerState of the model, all devices'.
  std::set<std::string> stateNames;

  int size() const { return static_cast<int>(devices.size()); }
};

/// Checks specs[0..devices) together (see above). Errors start with
/// "model spec" and name the device where there are several.
absl::StatusOr<PartitionLayout> describePartition(const ProgramSpec *const *specs, int devices);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_PARTITION_H
