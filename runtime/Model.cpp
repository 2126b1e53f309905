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

} // namespace

bool isFloating(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

bool ModelLayout::isStateDict(const TensorInfo &tensor) const {
  return tensor.role == TensorRole::Param || tensor.role == TensorRole::Buffer;
}

const TensorInfo *ModelLayout::input(const std::string &name) const {
  for (const TensorInfo *tensor : inputs)
    if (tensor->name == name)
      return tensor;
  return nullptr;
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

namespace {

/// describeModel, or with !wholeModel describeDevice.
absl::StatusOr<ModelLayout> describe(const ProgramSpec &spec, bool wholeModel) {
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
    case TensorRole::Input:
      if (!isFloating(tensor.dtype) && tensor.dtype != DType::I32 && tensor.dtype != DType::I64)
        return specError(absl::StrFormat("input %s is neither floating-point nor I32/I64",
                                         describeTensor(tensor)));
      if (tensor.shape.empty() || tensor.shape[0] != spec.batch)
        return specError(absl::StrFormat("input %s does not start with the batch size %d",
                                         describeTensor(tensor), spec.batch));
      layout.inputs.push_back(&tensor);
      break;
    case TensorRole::Param:
    case TensorRole::Buffer:
    case TensorRole::OptimizerState:
      layout.state.push_back(&tensor);
      break;
    case TensorRole::Gradient:
      layout.gradients.push_back(&tensor);
      break;
    case TensorRole::Output:
      if (tensor.name == stepResultName(StepKind::Train))
        layout.loss = &tensor;
      else if (tensor.name == stepResultName(StepKind::Forward))
        layout.output = &tensor;
      else if (tensor.name == stepResultName(StepKind::EvalLoss))
        layout.evalLoss = &tensor;
      else if (tensor.name == "found_inf")
        layout.foundInf = &tensor;
      break;
    }
  }
  if (wholeModel && (!layout.loss || !layout.output))
    return specError("expected outputs 'loss' and 'output'");
  if (layout.loss && tensorBytes(*layout.loss) != dtypeSize(layout.loss->dtype))
    return specError(absl::StrFormat("output %s is not a scalar", describeTensor(*layout.loss)));
  // A device of a partitioned model runs every step, its result or not.
  if (layout.evalLoss ? !spec.evalLoss : wholeModel && spec.evalLoss)
    return specError("expected the eval_loss step and output 'eval_loss' together");
  if (layout.evalLoss && tensorBytes(*layout.evalLoss) != dtypeSize(layout.evalLoss->dtype))
    return specError(
        absl::StrFormat("output %s is not a scalar", describeTensor(*layout.evalLoss)));
  if (layout.foundInf && (layout.foundInf->dtype != DType::F32 ||
                          tensorBytes(*layout.foundInf) != dtypeSize(DType::F32)))
    return specError(absl::StrFormat("output %s is not a float32 scalar",
                                     describeTensor(*layout.foundInf)));
  const std::vector<int64_t> noOutput;
  const std::vector<int64_t> &out = layout.output ? layout.output->shape : noOutput;
  if (layout.output && (out.empty() || out[0] != spec.batch || !isFloating(layout.output->dtype)))
    return specError(absl::StrFormat("output %s is not floating-point [%d, ...]",
                                     describeTensor(*layout.output), spec.batch));
  for (const std::string &name : spec.forwardInputs) {
    const TensorInfo *input = layout.input(name);
    if (!input)
      return specError(absl::StrFormat("the forward step reads '%s', which is not an input",
                                       name));
    layout.forwardInputs.push_back(input);
  }
  // The loss's form belongs with the output it is computed from.
  if (layout.output && spec.loss.kind != LossKind::Unknown) {
    layout.target = layout.input(spec.loss.target);
    if (!layout.target)
      return specError(absl::StrFormat("the loss's target '%s' is not an input",
                                       spec.loss.target));
    if (spec.loss.kind == LossKind::CrossEntropy) {
      if (out.size() != 2 || out[1] < 1 || isFloating(layout.target->dtype) ||
          layout.target->shape != std::vector<int64_t>{spec.batch})
        return specError(absl::StrFormat(
            "cross_entropy of output %s against %s: expected [%d, classes] and integer [%d]",
            describeTensor(*layout.output), describeTensor(*layout.target), spec.batch,
            spec.batch));
      layout.classes = out[1];
    } else if (layout.target->shape != out || !isFloating(layout.target->dtype)) {
      return specError(absl::StrFormat("mse_loss of output %s against %s: expected one shape",
                                       describeTensor(*layout.output),
                                       describeTensor(*layout.target)));
    }
  }
  return layout;
}

} // namespace

absl::StatusOr<ModelLayout> describeModel(const ProgramSpec &spec) {
  return describe(spec, /*wholeModel=*/true);
}

absl::StatusOr<ModelLayout> describeDevice(const ProgramSpec &spec) {
  return describe(spec, /*wholeModel=*/false);
}

StepFunction stepFunction(const ProgramSpec &spec, StepKind kind) {
  switch (kind) {
  case StepKind::Train:
    return spec.trainStep;
  case StepKind::Forward:
    return spec.forward;
  case StepKind::EvalLoss:
    return spec.evalLoss;
  }
  return nullptr;
}

const char *stepResultName(StepKind kind) {
  switch (kind) {
  case StepKind::Train:
    return "loss";
  case StepKind::Forward:
    return "output";
  case StepKind::EvalLoss:
    return "eval_loss";
  }
  return "";
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
