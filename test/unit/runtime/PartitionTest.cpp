//===- PartitionTest.cpp - A partitioned model's specs, checked together
//---===//
//
// describePartition on hand-made device specs (their steps never run), and
// the collectives of a run on one device (LocalTransport).
//
//===----------------------------------------------------------------------===//
#include "runtime/Partition.h"
#include "runtime/Collective.h"
#include "runtime/Executor.h"
#include "runtime/Program.h"
#include "runtime/kernels/KernelError.h"

#include <gtest/gtest.h>

using namespace cairn::runtime;

namespace {

constexpr int64_t kBatch = 4;

void noStep(unsigned char *, const StepContext &) {}

/// Device `device` of `devices` with `tensors`, each after the last.
ProgramSpec deviceSpec(int device, int devices,
                       std::vector<TensorInfo> tensors) {
  ProgramSpec spec;
  spec.model = "Split";
  spec.batch = kBatch;
  spec.device = device;
  spec.devices = devices;
  spec.trainStep = noStep;
  spec.forward = noStep;
  for (TensorInfo &tensor : tensors) {
    tensor.offset = spec.arenaBytes;
    spec.arenaBytes += tensorBytes(tensor);
  }
  spec.tensors = std::move(tensors);
  return spec;
}

TensorInfo tensor(const std::string &name, TensorRole role,
                  std::vector<int64_t> shape, DType dtype = DType::F32) {
  TensorInfo info;
  info.name = name;
  info.role = role;
  info.shape = std::move(shape);
  info.dtype = dtype;
  return info;
}

/// Device 0: the image and fc0; device 1: the label, fc1, output and loss.
struct TwoDevices {
  ProgramSpec first = deviceSpec(
      0, 2,
      {tensor("image", TensorRole::Input, {kBatch, 8}),
       tensor("fc0.weight", TensorRole::Param, {3, 8}),
       tensor("fc0.weight.exp_avg", TensorRole::OptimizerState, {3, 8})});
  ProgramSpec second =
      deviceSpec(1, 2,
                 {tensor("label", TensorRole::Input, {kBatch}, DType::I64),
                  tensor("fc1.weight", TensorRole::Param, {5, 3}),
                  tensor("output", TensorRole::Output, {kBatch, 5}),
                  tensor("loss", TensorRole::Output, {})});
  TwoDevices() {
    first.forwardInputs = {"image"};
    second.loss = {LossKind::CrossEntropy, "label", 0};
  }
  absl::StatusOr<PartitionLayout> describe() {
    const ProgramSpec *specs[] = {&first, &second};
    return describePartition(specs, 2);
  }
};

TEST(Partition, FindsEachResultAndTheInputsOfAllDevices) {
  TwoDevices model;
  absl::StatusOr<PartitionLayout> partition = model.describe();
  ASSERT_TRUE(partition.ok()) << partition.status();
  EXPECT_EQ(partition->size(), 2);
  EXPECT_EQ(partition->lossDevice, 1);
  EXPECT_EQ(partition->outputDevice, 1);
  EXPECT_EQ(partition->evalLossDevice, -1);
  ASSERT_EQ(partition->inputs.size(), 2u);
  EXPECT_EQ(partition->inputs[0]->name, "image");
  EXPECT_EQ(partition->inputs[1]->name, "label");
  ASSERT_EQ(partition->forwardInputs.size(), 1u);
  ASSERT_NE(partition->target, nullptr);
  EXPECT_EQ(partition->target->name, "label");
  EXPECT_EQ(partition->classes, 5);
  EXPECT_EQ(partition->stateNames,
            (std::set<std::string>{"fc0.weight", "fc0.weight.exp_avg",
                                   "fc1.weight"}));
  EXPECT_EQ(partition->devices[0].loss, nullptr);
}

TEST(Partition, AnInputMayBeOnSeveralDevicesAlike) {
  TwoDevices model;
  model.second.tensors.push_back(
      tensor("image", TensorRole::Input, {kBatch, 8}));
  model.second.tensors.back().offset = 0;
  EXPECT_TRUE(model.describe().ok());
  model.second.tensors.back().shape = {kBatch, 7};
  EXPECT_EQ(model.describe().status().message(),
            "model spec: input 'image' F32 [4, 7] on device 1 is 'image' F32 "
            "[4, 8] on another "
            "device");
}

TEST(Partition, RefusesWhatNoOneModelIs) {
  {
    TwoDevices model;
    model.first.tensors.push_back(tensor("loss", TensorRole::Output, {}));
    model.first.tensors.back().offset = 0;
    EXPECT_EQ(model.describe().status().message(),
              "model spec: tensor 'loss' is on devices 0 and 1");
  }
  {
    TwoDevices model;
    model.second.tensors.pop_back(); // the loss
    model.second.arenaBytes -= 4;
    EXPECT_EQ(model.describe().status().message(),
              "model spec: no device has the output 'loss'");
  }
  {
    TwoDevices model;
    model.second.device = 0;
    EXPECT_EQ(model.describe().status().message(),
              "model spec: the spec of device 1 of 2 says it is device 0 of 2");
  }
  {
    TwoDevices model;
    model.second.batch = 8;
    EXPECT_FALSE(model.describe().ok());
  }
  {
    // The label is on device 0, the output on device 1: eval could not
    // compare them there.
    TwoDevices model;
    model.second.loss.target = "image";
    EXPECT_EQ(
        model.describe().status().message(),
        "device 1: model spec: the loss's target 'image' is not an input");
  }
}

TEST(Partition, LossScalingChecksOnEveryDevice) {
  // found_inf is every device's verdict over every device's gradients.
  TwoDevices model;
  model.second.tensors.push_back(tensor("found_inf", TensorRole::Output, {}));
  model.second.tensors.back().offset = 0;
  absl::Status status = model.describe().status();
  EXPECT_NE(status.message().find("device 1 has 'found_inf' and device 0 lacks"),
            std::string::npos)
      << status;
  model.first.tensors.push_back(tensor("found_inf", TensorRole::Output, {}));
  model.first.tensors.back().offset = 0;
  absl::StatusOr<PartitionLayout> partition = model.describe();
  ASSERT_TRUE(partition.ok()) << partition.status();
  EXPECT_NE(partition->devices[0].foundInf, nullptr);
  EXPECT_NE(partition->devices[1].foundInf, nullptr);
}

TEST(Partition, EveryDeviceRunsOnOneBackend) {
  static const Backend kCuda = {"cuda"};
  {
    // One executable, one kind of device: a CPU device beside a CUDA one is no model.
    TwoDevices model;
    model.first.backend = &kCuda;
    EXPECT_EQ(model.describe().status().message(),
              "model Split on 2 devices: device 1 runs on cpu and device 0 on cuda; expected "
              "one backend");
  }
  {
    TwoDevices model;
    model.first.backend = &kCuda;
    model.second.backend = &kCuda;
    absl::StatusOr<PartitionLayout> partition = model.describe();
    ASSERT_TRUE(partition.ok()) << partition.status();
    EXPECT_EQ(partition->size(), 2);
  }
}

TEST(Partition, OneDeviceIsDescribeModel) {
  TwoDevices model;
  model.second.device = 0;
  model.second.devices = 1;
  const ProgramSpec *specs[] = {&model.second};
  // Without the forward's input and the loss's: only the spec checks apply.
  absl::StatusOr<PartitionLayout> partition = describePartition(specs, 1);
  ASSERT_TRUE(partition.ok()) << partition.status();
  EXPECT_EQ(partition->target->name, "label");
  specs[0] = &model.first; // no loss, no output
  model.first.devices = 1;
  EXPECT_EQ(describePartition(specs, 1).status().message(),
            "model spec: expected outputs 'loss' and 'output'");
}

TEST(Collective, OneRankAgreesWithItselfAndGathersItsOwn) {
  LocalTransport local;
  EXPECT_TRUE(agree(local, absl::OkStatus()).ok());
  absl::Status failed = agree(local, absl::NotFoundError("no data"));
  EXPECT_EQ(failed, absl::NotFoundError("no data"));
  EXPECT_FALSE(isPeerFailure(failed));
  TensorMap mine;
  mine["w"] = HostTensor{DType::F32, {1}, {1, 2, 3, 4}};
  absl::StatusOr<TensorMap> all = gatherTensors(local, mine, 0);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->at("w").bytes, mine.at("w").bytes);
  EXPECT_FALSE(local.send("x", 1, 1, 0).ok());
}

TEST(Collective, ATransferOutsideAPartitionedRunIsAKernelError) {
  StepContext context;
  unsigned char byte = 0;
  EXPECT_THROW(sendBytes(context, &byte, 1, 1, 0), cairn::kernels::KernelError);
  LocalTransport local;
  context.transport = &local;
  EXPECT_THROW(receiveBytes(context, &byte, 1, 1, 0),
               cairn::kernels::KernelError);
}

} // namespace
