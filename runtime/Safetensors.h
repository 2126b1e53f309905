//===- Safetensors.h - safetensors weights files -----------------*- C++ -*-===//
//
// The format (https://github.com/huggingface/safetensors): 8 bytes of header
// size N (u64, little-endian), N bytes of JSON
//   {"__metadata__": {str: str}, name: {"dtype", "shape", "data_offsets"}}
// then the byte buffer. Offsets are relative to the buffer; as the spec
// requires, the tensors must tile the buffer exactly (no holes, no overlap).
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_SAFETENSORS_H
#define CAIRN_RUNTIME_SAFETENSORS_H

#include "runtime/Tensor.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <map>
#include <string>
#include <vector>

namespace cairn::runtime {

using TensorMap = std::map<std::string, HostTensor>;

/// Loads every tensor; `metadata`, when given, receives "__metadata__".
/// Errors name the file and, where there is one, the tensor.
absl::StatusOr<TensorMap> loadSafetensors(const std::string &path,
                                          std::map<std::string, std::string> *metadata = nullptr);

/// Writes the tensors in name order, the header padded with spaces to a
/// multiple of 8 bytes, through a temporary file renamed into place.
absl::Status saveSafetensors(const std::string &path, const TensorMap &tensors,
                             const std::map<std::string, std::string> &metadata = {});

/// OK when `tensors[name]` exists with this dtype and shape; otherwise an
/// error such as "m.safetensors: tensor 'fc1.weight' has shape [256, 784] but
/// the model expects [128, 784]". `path` only labels the message.
absl::Status checkTensor(const TensorMap &tensors, const std::string &name, DType dtype,
                         const std::vector<int64_t> &shape, const std::string &path);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_SAFETENSORS_H
