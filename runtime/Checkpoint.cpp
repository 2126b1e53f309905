//===- Checkpoint.cpp - Weights in and out of the arena -------------------===//
#include "runtime/Checkpoint.h"

#include "runtime/Safetensors.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

#include <cmath>
#include <cstring>
#include <map>
#include <type_traits>

namespace cairn::runtime {

namespace {

constexpr const char *kOptimizerStepsKey = "cairn.optimizer_steps";
constexpr const char *kLossScaleKey = "cairn.loss_scale";
constexpr const char *kGrowthTrackerKey = "cairn.loss_scale_growth_tracker";
constexpr const char *kSkippedStepsKey = "cairn.skipped_steps";

/// Reads metadata `key` into `value` when present; false when it is there
/// but malformed.
template <typename T>
bool readMetadata(const std::map<std::string, std::string> &metadata, const char *key,
                  T &value, bool &present) {
  auto it = metadata.find(key);
  present = it != metadata.end();
  if (!present)
    return true;
  if constexpr (std::is_same_v<T, float>)
    return absl::SimpleAtof(it->second, &value) && std::isfinite(value) && value > 0;
  else
    return absl::SimpleAtoi(it->second, &value) && value >= 0;
}

} // namespace

absl::StatusOr<TrainingProgress> loadCheckpoint(const ModelLayout &layout,
                                                const std::string &path, unsigned char *arena,
                                                const std::set<std::string> &otherDevices) {
  std::map<std::string, std::string> metadata;
  absl::StatusOr<TensorMap> tensors = loadSafetensors(path, &metadata);
  if (!tensors.ok())
    return tensors.status();
  TrainingProgress progress;
  LossScaleState lossScale;
  bool present[4];
  auto malformed = [&](const char *key, const char *expected) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: metadata '%s' is '%s', expected %s", path, key, metadata.at(key), expected));
  };
  if (!readMetadata(metadata, kOptimizerStepsKey, progress.optimizerSteps, present[0]))
    return malformed(kOptimizerStepsKey, "a count of steps");
  if (!readMetadata(metadata, kLossScaleKey, lossScale.scale, present[1]))
    return malformed(kLossScaleKey, "a positive finite scale");
  if (!readMetadata(metadata, kGrowthTrackerKey, lossScale.growthTracker, present[2]))
    return malformed(kGrowthTrackerKey, "a count of steps");
  if (!readMetadata(metadata, kSkippedStepsKey, lossScale.skippedSteps, present[3]))
    return malformed(kSkippedStepsKey, "a count of steps");
  if (present[1] && present[2] && present[3])
    progress.lossScale = lossScale;
  else if (present[1] || present[2] || present[3])
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: metadata has part of the loss scaler's state; expected all of '%s', '%s' and "
        "'%s' or none",
        path, kLossScaleKey, kGrowthTrackerKey, kSkippedStepsKey));
  for (const auto &[name, tensor] : *tensors) {
    bool known = otherDevices.count(name) > 0;
    for (const TensorInfo *info : layout.state)
      known |= info->name == name;
    if (!known)
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: tensor '%s' is not a parameter, buffer or optimizer state of model %s", path,
          name, layout.spec->model));
  }
  for (const TensorInfo *info : layout.state) {
    if (!layout.isStateDict(*info) && !tensors->count(info->name)) {
      std::memset(arena + info->offset, 0, tensorBytes(*info));
      continue;
    }
    if (absl::Status status = checkTensor(*tensors, info->name, info->dtype, info->shape, path);
        !status.ok())
      return status;
    writeTensor(*info, tensors->at(info->name), arena);
  }
  return progress;
}

TensorMap checkpointTensors(const ModelLayout &layout, const unsigned char *arena,
                            bool optimizerState) {
  TensorMap tensors;
  for (const TensorInfo *info : layout.state)
    if (optimizerState || layout.isStateDict(*info))
      tensors.emplace(info->name, readTensor(*info, arena));
  return tensors;
}

absl::Status writeCheckpoint(const std::string &path, const TensorMap &tensors,
                             bool optimizerState, const TrainingProgress &progress) {
  // "format": what safetensors.torch.save_file writes; some tools look for it.
  std::map<std::string, std::string> metadata = {{"format", "pt"}};
  if (optimizerState) {
    metadata[kOptimizerStepsKey] = std::to_string(progress.optimizerSteps);
    if (progress.lossScale) {
      // %.9g: a float32 round-trips.
      metadata[kLossScaleKey] = absl::StrFormat("%.9g", progress.lossScale->scale);
      metadata[kGrowthTrackerKey] = std::to_string(progress.lossScale->growthTracker);
      metadata[kSkippedStepsKey] = std::to_string(progress.lossScale->skippedSteps);
    }
  }
  return saveSafetensors(path, tensors, metadata);
}

absl::Status saveCheckpoint(const ModelLayout &layout, const unsigned char *arena,
                            const std::string &path, bool optimizerState,
                            const TrainingProgress &progress) {
  return writeCheckpoint(path, checkpointTensors(layout, arena, optimizerState), optimizerState,
                         progress);
}

} // namespace cairn::runtime
