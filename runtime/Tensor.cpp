//===- Tensor.cpp - Minimal owning host tensor ----------------------------===//
#include "runtime/Tensor.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace cairn::runtime {

std::optional<DType> parseDType(const std::string &name) {
  for (DType dtype : {DType::F32, DType::F64, DType::F16, DType::BF16,
                      DType::I32, DType::I64, DType::U8})
    if (name == dtypeName(dtype))
      return dtype;
  return std::nullopt;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  return "[" + absl::StrJoin(shape, ", ") + "]";
}

absl::StatusOr<int64_t> checkedNumel(const std::vector<int64_t> &shape,
                                     int64_t maxElements) {
  int64_t numel = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return absl::InvalidArgumentError(
          absl::StrFormat("shape %s has a negative dimension", formatShape(shape)));
    // Divide rather than multiply so the check itself cannot overflow.
    if (dim != 0 && numel > maxElements / dim)
      return absl::InvalidArgumentError(absl::StrFormat(
          "shape %s has more than %d elements", formatShape(shape), maxElements));
    numel *= dim;
  }
  return numel;
}

int64_t HostTensor::numel() const {
  int64_t numel = 1;
  for (int64_t dim : shape)
    numel *= dim;
  return numel;
}

} // namespace cairn::runtime
