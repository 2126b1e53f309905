//===- Tensor.h - Minimal owning host tensor ---------------------*- C++ -*-===//
//
// The runtime's exchange format for data and weights I/O: a dtype, a shape and
// the little-endian, C-order bytes. No views, no strides: loaders produce it,
// the generated code copies it into its arena.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_TENSOR_H
#define CAIRN_RUNTIME_TENSOR_H

#include "runtime/DType.h"

#include "absl/status/statusor.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cairn::runtime {

/// Inverse of dtypeName (DType.h); nullopt for names the runtime does not
/// support.
std::optional<DType> parseDType(const std::string &name);

/// "[256, 784]"; "[]" for a scalar.
std::string formatShape(const std::vector<int64_t> &shape);

/// Element count of `shape`, rejecting negative dims and products above
/// `maxElements` (so byte counts computed from it cannot overflow).
absl::StatusOr<int64_t> checkedNumel(const std::vector<int64_t> &shape,
                                     int64_t maxElements = int64_t(1) << 48);

struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  /// Product of the shape (1 for a scalar).
  int64_t numel() const;
};

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_TENSOR_H
