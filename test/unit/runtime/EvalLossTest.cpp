//===- EvalLossTest.cpp - The model's loss of one test example ------------===//
//
// exampleLoss against torch's values, written out: F.cross_entropy with
// label smoothing, and F.mse_loss, per example.
//
//===----------------------------------------------------------------------===//
#include "runtime/EvalLoss.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace cairn::runtime;

namespace {

void noStep(unsigned char *, const StepContext &) {}

/// A spec of batch 2 whose inputs are `input` (floating, [2, 3]) and the
/// target `target`, its output `output` ([2, 3]) and its loss `form`.
ProgramSpec makeSpec(DType targetType, std::vector<int64_t> targetShape,
                     LossForm form) {
  ProgramSpec spec;
  spec.model = "M";
  spec.batch = 2;
  spec.trainStep = noStep;
  spec.forward = noStep;
  spec.loss = form;
  spec.forwardInputs = {"x"};
  size_t offset = 0;
  auto add = [&](const char *name, DType dtype, std::vector<int64_t> shape,
                 TensorRole role) {
    TensorInfo info;
    info.name = name;
    info.dtype = dtype;
    info.shape = std::move(shape);
    info.role = role;
    info.offset = offset;
    spec.tensors.push_back(info);
    offset += 64;
  };
  add("x", DType::F32, {2, 3}, TensorRole::Input);
  add("t", targetType, std::move(targetShape), TensorRole::Input);
  add("output", DType::F32, {2, 3}, TensorRole::Output);
  add("loss", DType::F32, {}, TensorRole::Output);
  spec.arenaBytes = offset;
  return spec;
}

TEST(EvalLoss, CrossEntropyWithLabelSmoothingAsTorch) {
  ProgramSpec spec =
      makeSpec(DType::I64, {2}, {LossKind::CrossEntropy, "t", 0.1});
  absl::StatusOr<ModelLayout> layout = describeModel(spec);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->classes, 3);
  const float logits[] = {1, 2, 3, 0.5f, -1, 0.25f};
  const int64_t labels[] = {2, 1};
  auto bytes = [](const void *p) {
    return static_cast<const unsigned char *>(p);
  };
  // F.cross_entropy(tensor([[1., 2., 3.]]), tensor([2]), label_smoothing=0.1):
  // with lse = log(e + e^2 + e^3), 0.9 (lse - 3) + 0.1 (lse - 2).
  const double lse0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  bool correct = false;
  EXPECT_NEAR(exampleLoss(*layout, bytes(logits), bytes(labels), 0, correct),
              0.9 * (lse0 - 3) + 0.1 * (lse0 - 2), 1e-12);
  EXPECT_TRUE(correct);
  const double lse1 = std::log(std::exp(0.5) + std::exp(-1.0) + std::exp(0.25));
  EXPECT_NEAR(exampleLoss(*layout, bytes(logits), bytes(labels), 1, correct),
              0.9 * (lse1 + 1) + 0.1 * (lse1 - (0.5 - 1 + 0.25) / 3), 1e-12);
  EXPECT_FALSE(correct); // the argmax is class 0
}

TEST(EvalLoss, MseLossIsTheExamplesMeanSquaredError) {
  ProgramSpec spec = makeSpec(DType::F32, {2, 3}, {LossKind::MseLoss, "t", 0});
  absl::StatusOr<ModelLayout> layout = describeModel(spec);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->classes, 0);
  const float output[] = {1, 2, 3, 0, 0, 0};
  const float target[] = {1, 0, 4, 0.5f, 0, 0};
  bool correct = true;
  EXPECT_DOUBLE_EQ(
      exampleLoss(*layout, reinterpret_cast<const unsigned char *>(output),
                  reinterpret_cast<const unsigned char *>(target), 0, correct),
      (0 + 4 + 1) / 3.0);
  EXPECT_FALSE(correct);
  EXPECT_DOUBLE_EQ(
      exampleLoss(*layout, reinterpret_cast<const unsigned char *>(output),
                  reinterpret_cast<const unsigned char *>(target), 1, correct),
      0.25 / 3);
}

TEST(EvalLoss, ATargetThatDoesNotFitIsASpecError) {
  // mse_loss against a target of another shape, cross_entropy against floats.
  EXPECT_FALSE(
      describeModel(makeSpec(DType::F32, {2, 2}, {LossKind::MseLoss, "t", 0}))
          .ok());
  EXPECT_FALSE(
      describeModel(makeSpec(DType::F32, {2}, {LossKind::CrossEntropy, "t", 0}))
          .ok());
  EXPECT_FALSE(describeModel(makeSpec(DType::I64, {2},
                                      {LossKind::CrossEntropy, "nope", 0}))
                   .ok());
}

TEST(EvalLoss, TheEvalLossStepComesWithItsScalarOutput) {
  // A loss of another form: the eval_loss step writes the scalar "eval_loss".
  ProgramSpec spec = makeSpec(DType::F32, {2, 3}, {});
  spec.evalLoss = noStep;
  EXPECT_FALSE(describeModel(spec).ok()); // the step without its output
  TensorInfo evalLoss;
  evalLoss.name = "eval_loss";
  evalLoss.dtype = DType::F32;
  evalLoss.role = TensorRole::Output;
  evalLoss.offset = spec.arenaBytes;
  spec.tensors.push_back(evalLoss);
  spec.arenaBytes += 64;
  absl::StatusOr<ModelLayout> layout = describeModel(spec);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->evalLoss, &spec.tensors.back());
  EXPECT_EQ(layout->target, nullptr);
  EXPECT_EQ(stepFunction(spec, StepKind::EvalLoss), &noStep);

  spec.tensors.back().shape = {2}; // not a scalar
  EXPECT_FALSE(describeModel(spec).ok());
  spec.tensors.back().shape = {};
  spec.evalLoss = nullptr; // the output without its step
  EXPECT_FALSE(describeModel(spec).ok());
}

} // namespace
