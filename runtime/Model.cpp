//===- Model.cpp - The spec's tensors, checked and found by role ----------===//
#include "runtime/Model.h"

#include "absl/strings/str_format.h"

#include <cstring>
#include <set>

namespace cairn::runtime {

namespace {

absl::Status specError(const std::string &what) {
  return absl::InvalidArgumentError("model spec: " + what);
}

bool isFloating(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

} // namespace

bool ModelLayout::isStateDict(const TensorInfo &tensor) const {
  return tensor.role == TensorRole::Param || tensor.role == TensorRole::Buffer;
}

size_t tensorBytes(const TensorInfo &tensor) {
  int64_t numel = 1;
  for (int64_t dim : tensor.shape)
    numel *= dim;
  return static_cast<size_t>(numel) * dtypeSize(tensor.dtype);
}

std::string describeTensor(const TensorInfo &tensor) {
  return absl::StrFormat("'%s' %s %s", tensor.name, dtypeName(tensor.dtype),
                         formatShape(tensor.shape));
}

absl::StatusOr<ModelLayout> describeModel(const ProgramSpec &spec) {
  ModelLayout layout;
  layout.spec = &spec;
  if (spec.batch < 1)
    return specError(absl::StrFormat("batch is %d, expected at least 1", spec.batch));
  if (!spec.trainStep || !spec.forward)
    return specError("trainStep or forward is missing");
  std::set<std::string> names;
  for (const TensorInfo &tensor : spec.tensors) {
    if (!names.insert(tensor.name).second)
      return specError(absl::StrFormat("tensor '%s' is declared twice", tensor.name));
    absl::StatusOr<int64_t> numel = checkedNumel(tensor.shape);
    if (!numel.ok())
      return specError(absl::StrFormat("tensor '%s': %s", tensor.name, numel.status().message()));
    size_t bytes = static_cast<size_t>(*numel) * dtypeSize(tensor.dtype);
    if (tensor.offset > spec.arenaBytes || bytes > spec.arenaBytes - tensor.offset)
      return specError(absl::StrFormat("tensor %s at offset %d does not fit in the %d-byte arena",
                                       describeTensor(tensor), tensor.offset, spec.arenaBytes));
    switch (tensor.role) {
    case TensorRole::Input: {
      bool floating = isFloating(tensor.dtype);
      if (!floating && tensor.dtype != DType::I32 && tensor.dtype != DType::I64)
        return specError(absl::StrFormat("input %s is neither floating-point nor I32/I64",
                                         describeTensor(tensor)));
      const TensorInfo *&slot = floating ? layout.image : layout.label;
      if (slot)
        return specError(absl::StrFormat("inputs '%s' and '%s' are both %s; the runtime feeds "
                                         "one floating-point image and one integer label",
                                         slot->name, tensor.name,
                                         floating ? "floating-point" : "integer"));
      slot = &tensor;
      break;
    }
    case TensorRole::Param:
    case TensorRole::Buffer:
    case TensorRole::OptimizerState:
      layout.state.push_back(&tensor);
      break;
    case TensorRole::Gradient:
      layout.gradients.push_back(&tensor);
      break;
    case TensorRole::Output:
      if (tensor.name == "loss")
        layout.loss = &tensor;
      else if (tensor.name == "output")
        layout.output = &tensor;
      break;
    }
  }
  if (!layout.image || !layout.label)
    return specError("expected a floating-point image input and an integer label input");
  if (!layout.loss || !layout.output)
    return specError("expected outputs 'loss' and 'output'");
  if (layout.image->shape.empty() || layout.image->shape[0] != spec.batch)
    return specError(absl::StrFormat("input %s does not start with the batch size %d",
                                     describeTensor(*layout.image), spec.batch));
  if (layout.label->shape != std::vector<int64_t>{spec.batch})
    return specError(absl::StrFormat("input %s is not [%d]", describeTensor(*layout.label),
                                     spec.batch));
  if (tensorBytes(*layout.loss) != dtypeSize(layout.loss->dtype))
    return specError(absl::StrFormat("output %s is not a scalar", describeTensor(*layout.loss)));
  const std::vector<int64_t> &out = layout.output->shape;
  if (out.size() != 2 || out[0] != spec.batch || out[1] < 1 || !isFloating(layout.output->dtype))
    return specError(absl::StrFormat("output %s is not floating-point [%d, classes]",
                                     describeTensor(*layout.output), spec.batch));
  layout.classes = out[1];
  return layout;
}

HostTensor readTensor(const TensorInfo &tensor, const unsigned char *arena) {
  HostTensor host;
  host.dtype = tensor.dtype;
  host.shape = tensor.shape;
  host.bytes.assign(arena + tensor.offset, arena + tensor.offset + tensorBytes(tensor));
  return host;
}

void writeTensor(const TensorInfo &tensor, const HostTensor &host, unsigned char *arena) {
  std::memcpy(arena + tensor.offset, host.bytes.data(), tensorBytes(tensor));
}

} // namespace cairn::runtime
