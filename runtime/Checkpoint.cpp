//===- Checkpoint.cpp - Weights in and out of the arena -------------------===//
#include "runtime/Checkpoint.h"

#include "runtime/Safetensors.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

#include <cstring>
#include <map>

namespace cairn::runtime {

namespace {

constexpr const char *kOptimizerStepsKey = "cairn.optimizer_steps";

} // namespace

absl::StatusOr<int64_t> loadCheckpoint(const ModelLayout &layout, const std::string &path,
                                       unsigned char *arena) {
  std::map<std::string, std::string> metadata;
  absl::StatusOr<TensorMap> tensors = loadSafetensors(path, &metadata);
  if (!tensors.ok())
    return tensors.status();
  int64_t optimizerSteps = 0;
  if (auto it = metadata.find(kOptimizerStepsKey); it != metadata.end())
    if (!absl::SimpleAtoi(it->second, &optimizerSteps) || optimizerSteps < 0)
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: metadata '%s' is '%s', expected a count of steps", path, kOptimizerStepsKey,
          it->second));
  for (const auto &[name, tensor] : *tensors) {
    bool known = false;
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
  return optimizerSteps;
}

absl::Status saveCheckpoint(const ModelLayout &layout, const unsigned char *arena,
                            const std::string &path, bool optimizerState,
                            int64_t optimizerSteps) {
  TensorMap tensors;
  for (const TensorInfo *info : layout.state)
    if (optimizerState || layout.isStateDict(*info))
      tensors.emplace(info->name, readTensor(*info, arena));
  // "format": what safetensors.torch.save_file writes; some tools look for it.
  std::map<std::string, std::string> metadata = {{"format", "pt"}};
  if (optimizerState)
    metadata[kOptimizerStepsKey] = std::to_string(optimizerSteps);
  return saveSafetensors(path, tensors, metadata);
}

} // namespace cairn::runtime
