//===- Checkpoint.cpp - Weights in and out of the arena -------------------===//
#include "runtime/Checkpoint.h"

#include "runtime/Safetensors.h"

#include "absl/strings/str_format.h"

#include <cstring>

namespace cairn::runtime {

absl::Status loadCheckpoint(const ModelLayout &layout, const std::string &path,
                            unsigned char *arena) {
  absl::StatusOr<TensorMap> tensors = loadSafetensors(path);
  if (!tensors.ok())
    return tensors.status();
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
  return absl::OkStatus();
}

absl::Status saveCheckpoint(const ModelLayout &layout, const unsigned char *arena,
                            const std::string &path, bool optimizerState) {
  TensorMap tensors;
  for (const TensorInfo *info : layout.state)
    if (optimizerState || layout.isStateDict(*info))
      tensors.emplace(info->name, readTensor(*info, arena));
  // What safetensors.torch.save_file writes; some tools look for it.
  return saveSafetensors(path, tensors, {{"format", "pt"}});
}

} // namespace cairn::runtime
