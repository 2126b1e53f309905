//===- Tensor.cpp - Minimal owning host tensor ----------------------------===//
#include "runtime/Tensor.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace cairn::runtime {

namespace {
struct DTypeInfo {
  DType dtype;
  const char *name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "F32", 4},  {DType::F64, "F64", 8}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::I32, "I32", 4}, {DType::I64, "I64", 8},
    {DType::U8, "U8", 1},
};
} // namespace

const char *dtypeName(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.name;
  return "?";
}

size_t dtypeSize(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.size;
  return 0;
}

std::optional<DType> parseDType(const std::string &name) {
  for (const DTypeInfo &info : kDTypes)
    if (name == info.name)
      return info.dtype;
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
