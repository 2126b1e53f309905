//===- Partition.cpp - A model's devices, checked together ----------------===//
#include "runtime/Partition.h"

#include "runtime/Executor.h"

#include "absl/strings/str_format.h"

#include <map>

namespace cairn::runtime {

namespace {

absl::Status partitionError(const std::string &what) {
  return absl::InvalidArgumentError("model spec: " + what);
}

/// The device holding output `name`: exactly one when `required`, else at
/// most one (-1 for none).
absl::StatusOr<int> findOutput(const PartitionLayout &partition, const char *name,
                               bool required) {
  int found = -1;
  for (int d = 0; d < partition.size(); ++d) {
    const ModelLayout &layout = partition.devices[d];
    const TensorInfo *tensor = std::string(name) == "loss"     ? layout.loss
                               : std::string(name) == "output" ? layout.output
                                                               : layout.evalLoss;
    if (!tensor)
      continue;
    if (found >= 0)
      return partitionError(
          absl::StrFormat("output '%s' is on devices %d and %d; expected one", name, found, d));
    found = d;
  }
  if (found < 0 && required)
    return partitionError(absl::StrFormat("no device has the output '%s'", name));
  return found;
}

/// Every device of one model runs on the same backend as device 0 (one
/// executable, one kind of device per process).
absl::Status checkSameBackend(const ProgramSpec &spec, const ProgramSpec &first, int d) {
  auto name = [](const ProgramSpec &s) {
    return std::string(s.backend ? s.backend->name : "cpu");
  };
  if (name(spec) != name(first))
    return absl::InvalidArgumentError(absl::StrFormat(
        "model %s on %d devices: device %d runs on %s and device 0 on %s; expected one backend",
        spec.model, spec.devices, d, name(spec), name(first)));
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<PartitionLayout> describePartition(const ProgramSpec *const *specs, int devices) {
  PartitionLayout partition;
  if (devices < 1 || !specs)
    return partitionError(absl::StrFormat("%d devices, expected at least 1", devices));
  for (int d = 0; d < devices; ++d) {
    if (!specs[d])
      return partitionError(absl::StrFormat("device %d has no spec", d));
    if (specs[d]->device != d || specs[d]->devices != devices)
      return partitionError(absl::StrFormat(
          "the spec of device %d of %d says it is device %d of %d", d, devices,
          specs[d]->device, specs[d]->devices));
  }
  if (devices == 1) {
    absl::StatusOr<ModelLayout> layout = describeModel(*specs[0]);
    if (!layout.ok())
      return layout.status();
    partition.devices.push_back(std::move(*layout));
    const ModelLayout &only = partition.devices[0];
    partition.inputs = only.inputs;
    partition.forwardInputs = only.forwardInputs;
    partition.target = only.target;
    partition.classes = only.classes;
    for (const TensorInfo *tensor : only.state)
      partition.stateNames.insert(tensor->name);
    partition.evalLossDevice = only.evalLoss ? 0 : -1;
    return partition;
  }

  std::map<std::string, int> owner; // a non-input tensor's device
  std::map<std::string, const TensorInfo *> inputs;
  for (int d = 0; d < devices; ++d) {
    const ProgramSpec &spec = *specs[d];
    absl::StatusOr<ModelLayout> layout = describeDevice(spec);
    if (!layout.ok())
      return absl::Status(layout.status().code(),
                          absl::StrFormat("device %d: %s", d, layout.status().message()));
    if (absl::Status status = checkSameBackend(spec, *specs[0], d); !status.ok())
      return status;
    if (spec.batch != specs[0]->batch)
      return partitionError(absl::StrFormat("device %d's batch is %d, device 0's %d", d,
                                            spec.batch, specs[0]->batch));
    if (!spec.evalLoss != !specs[0]->evalLoss)
      return partitionError(absl::StrFormat(
          "device %d %s an eval_loss step and device 0 %s; every device runs every step", d,
          spec.evalLoss ? "has" : "lacks", specs[0]->evalLoss ? "has" : "lacks"));
    // Loss scaling's found_inf is every device's (their gradients' check,
    // summed over the devices in the step): on every device or none.
    if (d > 0 && !partition.devices.front().foundInf != !layout->foundInf)
      return partitionError(absl::StrFormat(
          "device %d %s 'found_inf' and device 0 %s; a step with loss scaling has it on every "
          "device",
          d, layout->foundInf ? "has" : "lacks",
          partition.devices.front().foundInf ? "has" : "lacks"));
    for (const TensorInfo &tensor : spec.tensors) {
      if (&tensor == layout->foundInf)
        continue;
      if (tensor.role != TensorRole::Input) {
        auto [it, fresh] = owner.emplace(tensor.name, d);
        if (!fresh)
          return partitionError(absl::StrFormat("tensor '%s' is on devices %d and %d",
                                                tensor.name, it->second, d));
        if (tensor.role == TensorRole::Param || tensor.role == TensorRole::Buffer ||
            tensor.role == TensorRole::OptimizerState)
          partition.stateNames.insert(tensor.name);
        continue;
      }
      auto [it, fresh] = inputs.emplace(tensor.name, &tensor);
      if (fresh) {
        partition.inputs.push_back(&tensor);
      } else if (it->second->dtype != tensor.dtype || it->second->shape != tensor.shape) {
        return partitionError(absl::StrFormat("input %s on device %d is %s on another device",
                                              describeTensor(tensor), d,
                                              describeTensor(*it->second)));
      }
    }
    partition.devices.push_back(std::move(*layout));
  }
  for (const auto &[name, device] : owner)
    if (inputs.count(name))
      return partitionError(absl::StrFormat(
          "tensor '%s' is an input on one device and not on device %d", name, device));
  for (const ModelLayout &layout : partition.devices)
    for (const TensorInfo *input : layout.forwardInputs) {
      bool seen = false;
      for (const TensorInfo *known : partition.forwardInputs)
        seen |= known->name == input->name;
      if (!seen)
        partition.forwardInputs.push_back(input);
    }

  absl::StatusOr<int> loss = findOutput(partition, "loss", /*required=*/true);
  if (!loss.ok())
    return loss.status();
  absl::StatusOr<int> output = findOutput(partition, "output", /*required=*/true);
  if (!output.ok())
    return output.status();
  absl::StatusOr<int> evalLoss =
      findOutput(partition, "eval_loss", /*required=*/specs[0]->evalLoss != nullptr);
  if (!evalLoss.ok())
    return evalLoss.status();
  partition.lossDevice = *loss;
  partition.outputDevice = *output;
  partition.evalLossDevice = *evalLoss;
  partition.target = partition.devices[*output].target;
  partition.classes = partition.devices[*output].classes;
  return partition;
}

} // namespace cairn::runtime
