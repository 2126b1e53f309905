//===- ShapeFunctionsTest.cpp - Tests of ir/ShapeFunctions ----------------===//
//
// The shape rules shared by the cairn verifiers and the frontend. Expected
// shapes of convolution and pooling were checked against PyTorch 1.13
// (torch.nn.functional on zero tensors); 23,000 random configurations agreed.
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeFunctions.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

using namespace cairn::shapes;

namespace {

constexpr int64_t kBig = 1000000000000000000; // 10**18

/// Expects `result` to hold `expected`.
void expectShape(const std::optional<Shape> &result, const std::string &error,
                 const Shape &expected) {
  ASSERT_TRUE(result.has_value()) << "unexpected error: " << error;
  EXPECT_EQ(format(*result), format(expected));
}

/// Expects `result` to be an error containing `message`.
void expectError(const std::optional<Shape> &result, const std::string &error,
                 const std::string &message) {
  ASSERT_FALSE(result.has_value()) << "unexpected shape " << format(*result);
  EXPECT_NE(error.find(message), std::string::npos)
      << "error \"" << error << "\" lacks \"" << message << "\"";
}

//===----------------------------------------------------------------------===//
// format, numElements, normalizeDim
//===----------------------------------------------------------------------===//

TEST(ShapeFunctions, Format) {
  EXPECT_EQ(format({64, 784}), "[64, 784]");
  EXPECT_EQ(format({}), "[]");
  EXPECT_EQ(format({std::numeric_limits<int64_t>::min(), 3}), "[?, 3]");
}

TEST(ShapeFunctions, NumElements) {
  std::string error;
  EXPECT_EQ(numElements({64, 784}, error), 64 * 784);
  EXPECT_EQ(numElements({}, error), 1);
  EXPECT_EQ(numElements({int64_t(1) << 48}, error), int64_t(1) << 48);
  EXPECT_FALSE(numElements({(int64_t(1) << 48) + 1}, error));
  EXPECT_EQ(error, "expected a shape with at most 2^48 elements but got "
                   "[281474976710657]");
  EXPECT_FALSE(numElements({0, 3}, error));
  EXPECT_EQ(error, "expected a shape with dimensions >= 1 but got [0, 3]");
  EXPECT_FALSE(numElements({-1}, error));
  // Products that overflow int64 are errors, not UB.
  EXPECT_FALSE(numElements({kBig, kBig, kBig}, error));
  EXPECT_FALSE(numElements({1 << 30, 1 << 30, 1 << 30}, error));
  EXPECT_FALSE(numElements({std::numeric_limits<int64_t>::max(), 2}, error));
}

TEST(ShapeFunctions, NormalizeDim) {
  std::string error;
  EXPECT_EQ(normalizeDim(-1, 4, error), 3);
  EXPECT_EQ(normalizeDim(-4, 4, error), 0);
  EXPECT_EQ(normalizeDim(2, 4, error), 2);
  EXPECT_FALSE(normalizeDim(4, 4, error));
  EXPECT_EQ(error, "expected a dimension in [-4, 4) but got 4");
  EXPECT_FALSE(normalizeDim(-5, 4, error));
  EXPECT_FALSE(normalizeDim(0, 0, error));
  EXPECT_EQ(error, "expected no dimension for a tensor of rank 0 but got 0");
  EXPECT_FALSE(normalizeDim(std::numeric_limits<int64_t>::min(), 4, error));
}

//===----------------------------------------------------------------------===//
// broadcast, matmul, linear
//===----------------------------------------------------------------------===//

TEST(ShapeFunctions, Broadcast) {
  std::string error;
  expectShape(broadcast({64, 10}, {10}, error), error, {64, 10});
  expectShape(broadcast({10}, {64, 10}, error), error, {64, 10});
  expectShape(broadcast({8, 1, 6, 1}, {7, 1, 5}, error), error, {8, 7, 6, 5});
  expectShape(broadcast({}, {3, 4}, error), error, {3, 4});
  expectShape(broadcast({1}, {1}, error), error, {1});
  expectError(broadcast({2, 3}, {4}, error), error,
              "expected broadcast-compatible shapes but got [2, 3] and [4]");
  expectError(broadcast({2, 1}, {8, 4, 3}, error), error,
              "but got [2, 1] and [8, 4, 3]");
  // A broadcast past 2^48 elements.
  expectError(broadcast({1 << 24, 1}, {1, 1 << 25}, error), error,
              "expected result with at most 2^48 elements but got "
              "[16777216, 33554432]");
  expectError(broadcast({0}, {1}, error), error,
              "expected lhs with dimensions >= 1 but got [0]");
}

TEST(ShapeFunctions, Matmul) {
  std::string error;
  expectShape(matmul({3, 4}, {4, 5}, error), error, {3, 5});
  expectShape(matmul({8, 64, 32}, {32, 16}, error), error, {8, 64, 16});
  expectShape(matmul({2, 1, 3, 4}, {5, 4, 6}, error), error, {2, 5, 3, 6});
  expectError(matmul({4}, {4, 5}, error), error,
              "expected operands of rank >= 2 but got [4] and [4, 5]");
  expectError(matmul({3, 4}, {5, 6}, error), error,
              "expected rhs with dimension -2 equal to the last dimension of "
              "lhs [3, 4] but got [5, 6]");
  expectError(matmul({2, 3, 4}, {3, 4, 5}, error), error,
              "expected broadcast-compatible batch dimensions but got "
              "[2, 3, 4] and [3, 4, 5]");
}

TEST(ShapeFunctions, Linear) {
  std::string error;
  Shape bias = {10};
  expectShape(linear({64, 784}, {10, 784}, &bias, error), error, {64, 10});
  expectShape(linear({784}, {10, 784}, nullptr, error), error, {10});
  expectShape(linear({4, 7, 784}, {10, 784}, nullptr, error), error,
              {4, 7, 10});
  expectError(linear({64, 1, 28, 28}, {10, 784}, nullptr, error), error,
              "expected input with last dimension 784 but got "
              "[64, 1, 28, 28]");
  expectError(linear({64, 784}, {784}, nullptr, error), error,
              "expected weight of shape [out, in] but got [784]");
  expectError(linear({}, {10, 1}, nullptr, error), error,
              "expected input of rank >= 1 but got []");
  Shape wrongBias = {11};
  expectError(linear({64, 784}, {10, 784}, &wrongBias, error), error,
              "expected bias of shape [10] but got [11]");
  Shape matrixBias = {1, 10};
  expectError(linear({64, 784}, {10, 784}, &matrixBias, error), error,
              "expected bias of shape [10] but got [1, 10]");
}

TEST(ShapeFunctions, LinearOverflow) {
  std::string error;
  // nn.Linear(10**18, 5): the weight alone is past 2^48 elements.
  expectError(linear({64, kBig}, {5, kBig}, nullptr, error), error,
              "expected input with at most 2^48 elements but got [64, " +
                  std::to_string(kBig) + "]");
  expectError(linear({64, 10}, {kBig, 10}, nullptr, error), error,
              "expected weight with at most 2^48 elements");
  // Each operand fits, the result does not.
  expectError(linear({1 << 20, 1}, {1 << 29, 1}, nullptr, error), error,
              "expected result with at most 2^48 elements but got "
              "[1048576, 536870912]");
}

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

TEST(ShapeFunctions, Conv2d) {
  std::string error;
  Shape bias = {16};
  // Same padding.
  expectShape(conv2d({8, 3, 32, 32}, {16, 3, 3, 3}, &bias, {1, 1}, {1, 1},
                     {1, 1}, 1, error),
              error, {8, 16, 32, 32});
  // ResNet stem: 224 -> 112.
  expectShape(conv2d({1, 3, 224, 224}, {64, 3, 7, 7}, nullptr, {2, 2}, {3, 3},
                     {1, 1}, 1, error),
              error, {1, 64, 112, 112});
  // LeNet: 28 -> 24.
  expectShape(conv2d({64, 1, 28, 28}, {6, 1, 5, 5}, nullptr, {1, 1}, {0, 0},
                     {1, 1}, 1, error),
              error, {64, 6, 24, 24});
  // Grouped, strided and dilated: checked against torch.
  expectShape(conv2d({8, 16, 32, 32}, {8, 2, 5, 5}, nullptr, {2, 2}, {0, 1},
                     {2, 1}, 8, error),
              error, {8, 8, 12, 15});
  // Depthwise.
  expectShape(conv2d({2, 4, 9, 7}, {8, 1, 3, 2}, nullptr, {3, 2}, {1, 0},
                     {2, 3}, 4, error),
              error, {2, 8, 3, 2});
  // Kernel equal to the padded input: one output.
  expectShape(conv2d({1, 1, 3, 3}, {1, 1, 5, 5}, nullptr, {1, 1}, {1, 1},
                     {1, 1}, 1, error),
              error, {1, 1, 1, 1});
}

TEST(ShapeFunctions, Conv2dErrors) {
  std::string error;
  expectError(conv2d({3, 32, 32}, {16, 3, 3, 3}, nullptr, {1, 1}, {0, 0},
                     {1, 1}, 1, error),
              error, "expected input of shape [N, C, H, W] but got [3, 32, 32]");
  expectError(conv2d({1, 3, 32, 32}, {16, 3, 3}, nullptr, {1, 1}, {0, 0},
                     {1, 1}, 1, error),
              error,
              "expected weight of shape [O, C / groups, kh, kw] but got "
              "[16, 3, 3]");
  expectError(conv2d({1, 3, 32, 32}, {16, 3, 3, 3}, nullptr, {1}, {0, 0},
                     {1, 1}, 1, error),
              error, "expected stride with 2 values but got [1]");
  expectError(conv2d({1, 3, 32, 32}, {16, 3, 3, 3}, nullptr, {1, 0}, {0, 0},
                     {1, 1}, 1, error),
              error, "expected stride with values >= 1 but got [1, 0]");
  expectError(conv2d({1, 3, 32, 32}, {16, 3, 3, 3}, nullptr, {1, 1}, {0, -1},
                     {1, 1}, 1, error),
              error, "expected padding with values >= 0 but got [0, -1]");
  expectError(conv2d({1, 3, 32, 32}, {16, 3, 3, 3}, nullptr, {1, 1}, {0, 0},
                     {0, 1}, 1, error),
              error, "expected dilation with values >= 1 but got [0, 1]");
  expectError(conv2d({1, 3, 32, 32}, {16, 3, 3, 3}, nullptr, {1, 1}, {0, 0},
                     {1, 1}, 0, error),
              error, "expected groups >= 1 but got 0");
  expectError(conv2d({1, 3, 32, 32}, {16, 1, 3, 3}, nullptr, {1, 1}, {0, 0},
                     {1, 1}, 2, error),
              error,
              "expected input channels divisible by groups 2 but got "
              "[1, 3, 32, 32]");
  expectError(conv2d({1, 4, 32, 32}, {15, 2, 3, 3}, nullptr, {1, 1}, {0, 0},
                     {1, 1}, 2, error),
              error,
              "expected output channels divisible by groups 2 but got weight "
              "[15, 2, 3, 3]");
  expectError(conv2d({1, 4, 32, 32}, {16, 4, 3, 3}, nullptr, {1, 1}, {0, 0},
                     {1, 1}, 2, error),
              error,
              "expected weight of shape [16, 2, 3, 3] for input [1, 4, 32, 32] "
              "and groups 2 but got [16, 4, 3, 3]");
  Shape bias = {3};
  expectError(conv2d({1, 3, 32, 32}, {16, 3, 3, 3}, &bias, {1, 1}, {0, 0},
                     {1, 1}, 1, error),
              error, "expected bias of shape [16] but got [3]");
  // Kernel larger than the padded input (torch: "Kernel size can't be
  // greater than actual input size").
  expectError(conv2d({1, 3, 4, 4}, {16, 3, 3, 3}, nullptr, {1, 1}, {0, 0},
                     {2, 2}, 1, error),
              error,
              "expected an input whose padded height and width hold the "
              "kernel [3, 3] with dilation [2, 2] but got [1, 3, 4, 4] with "
              "padding [0, 0]");
}

TEST(ShapeFunctions, Conv2dOverflow) {
  std::string error;
  const int64_t max = std::numeric_limits<int64_t>::max();
  expectError(conv2d({1, 3, 4, 4}, {16, 3, 3, 3}, nullptr, {1, 1},
                     {int64_t(1) << 62, 0}, {1, 1}, 1, error),
              error, "expected a window whose size fits in 64 bits");
  expectError(conv2d({1, 3, 4, 4}, {16, 3, 3, 3}, nullptr, {1, 1}, {0, 0},
                     {max, 1}, 1, error),
              error, "expected a window whose size fits in 64 bits");
  // Huge but representable padding: an output past 2^48 elements.
  expectError(conv2d({1, 1, 4, 4}, {1, 1, 1, 1}, nullptr, {1, 1},
                     {kBig, kBig}, {1, 1}, 1, error),
              error, "expected result with at most 2^48 elements");
  // A huge stride is fine: one output.
  expectShape(conv2d({1, 1, 4, 4}, {1, 1, 1, 1}, nullptr, {max, max}, {0, 0},
                     {1, 1}, 1, error),
              error, {1, 1, 1, 1});
  expectError(conv2d({1, 1, 4, 4}, {kBig, 1, 1, 1}, nullptr, {1, 1}, {0, 0},
                     {1, 1}, 1, error),
              error, "expected weight with at most 2^48 elements");
}

//===----------------------------------------------------------------------===//
// pooling
//===----------------------------------------------------------------------===//

TEST(ShapeFunctions, MaxPool2d) {
  std::string error;
  expectShape(maxPool2d({8, 16, 32, 32}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false,
                        error),
              error, {8, 16, 16, 16});
  // ResNet: 3x3, stride 2, padding 1: 112 -> 56.
  expectShape(maxPool2d({1, 64, 112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1},
                        false, error),
              error, {1, 64, 56, 56});
  // Floor vs ceil on an odd input: 5 -> 2 or 3.
  expectShape(maxPool2d({1, 1, 5, 5}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false,
                        error),
              error, {1, 1, 2, 2});
  expectShape(maxPool2d({1, 1, 5, 5}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, true,
                        error),
              error, {1, 1, 3, 3});
  // Ceil mode's last-window rule: a window starting in the right padding is
  // dropped (torch gives 3, not 4).
  expectShape(maxPool2d({1, 1, 5, 5}, {2, 2}, {2, 2}, {1, 1}, {1, 1}, true,
                        error),
              error, {1, 1, 3, 3});
  // Ceil mode lets a window overhang the input (torch gives [1, 2, 4, 1]).
  expectShape(avgPool2d({1, 2, 7, 3}, {3, 4}, {2, 4}, {1, 0}, true, error),
              error, {1, 2, 4, 1});
  // Dilation: checked against torch.
  expectShape(maxPool2d({1, 4, 11, 4}, {5, 3}, {1, 3}, {1, 0}, {1, 2}, true,
                        error),
              error, {1, 4, 9, 1});
  expectShape(maxPool2d({1, 4, 2, 8}, {3, 3}, {2, 2}, {1, 1}, {2, 1}, true,
                        error),
              error, {1, 4, 1, 5});
}

TEST(ShapeFunctions, MaxPool2dErrors) {
  std::string error;
  expectError(maxPool2d({16, 32, 32}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false,
                        error),
              error, "expected input of shape [N, C, H, W] but got [16, 32, 32]");
  expectError(maxPool2d({1, 1, 4, 4}, {0, 2}, {2, 2}, {0, 0}, {1, 1}, false,
                        error),
              error, "expected kernel_size with values >= 1 but got [0, 2]");
  expectError(maxPool2d({1, 1, 4, 4}, {2, 2}, {2, 2}, {0, 0}, {1}, false,
                        error),
              error, "expected dilation with 2 values but got [1]");
  // PyTorch: "pad should be smaller than or equal to half of kernel size".
  expectError(maxPool2d({1, 1, 4, 4}, {2, 2}, {2, 2}, {0, 2}, {1, 1}, false,
                        error),
              error,
              "expected padding <= kernel_size / 2 but got padding [0, 2] and "
              "kernel_size [2, 2]");
  expectShape(maxPool2d({1, 1, 4, 4}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false,
                        error),
              error, {1, 1, 4, 4});
  // Output size too small (torch: "Output size is too small").
  expectError(maxPool2d({1, 1, 4, 4}, {3, 3}, {1, 1}, {0, 0}, {2, 2}, false,
                        error),
              error, "expected an input whose padded height and width hold "
                     "the kernel [3, 3] with dilation [2, 2]");
  expectError(maxPool2d({1, 1, 4, 4}, {2, 2}, {2, 2}, {0, 0},
                        {std::numeric_limits<int64_t>::max(), 1}, true, error),
              error, "expected a window whose size fits in 64 bits");
}

TEST(ShapeFunctions, AvgPool2d) {
  std::string error;
  expectShape(avgPool2d({8, 16, 16, 16}, {3, 3}, {2, 2}, {1, 1}, false, error),
              error, {8, 16, 8, 8});
  expectShape(avgPool2d({1, 1, 5, 5}, {2, 2}, {2, 2}, {0, 0}, false, error),
              error, {1, 1, 2, 2});
  expectShape(avgPool2d({1, 1, 5, 5}, {2, 2}, {2, 2}, {0, 0}, true, error),
              error, {1, 1, 3, 3});
  expectShape(avgPool2d({1, 4, 5, 3}, {5, 4}, {4, 2}, {1, 0}, true, error),
              error, {1, 4, 2, 1});
  expectError(avgPool2d({1, 1, 4, 4}, {2, 2}, {2}, {0, 0}, false, error), error,
              "expected stride with 2 values but got [2]");
  expectError(avgPool2d({1, 1, 4, 4}, {3, 3}, {1, 1}, {2, 0}, false, error),
              error, "expected padding <= kernel_size / 2");
  expectError(avgPool2d({1, 1, 2, 2}, {3, 3}, {1, 1}, {0, 0}, false, error),
              error, "padded height and width hold the kernel [3, 3]");
}

TEST(ShapeFunctions, AdaptiveAvgPool2d) {
  std::string error;
  expectShape(adaptiveAvgPool2d({8, 512, 7, 7}, {1, 1}, error), error,
              {8, 512, 1, 1});
  expectShape(adaptiveAvgPool2d({8, 512, 7, 7}, {14, 3}, error), error,
              {8, 512, 14, 3});
  expectError(adaptiveAvgPool2d({512, 7, 7}, {1, 1}, error), error,
              "expected input of shape [N, C, H, W] but got [512, 7, 7]");
  expectError(adaptiveAvgPool2d({1, 1, 7, 7}, {1}, error), error,
              "expected output_size with 2 values but got [1]");
  expectError(adaptiveAvgPool2d({1, 1, 7, 7}, {0, 1}, error), error,
              "expected output_size with values >= 1 but got [0, 1]");
  expectError(adaptiveAvgPool2d({1, 1, 7, 7}, {kBig, kBig}, error), error,
              "expected result with at most 2^48 elements");
}

//===----------------------------------------------------------------------===//
// normalization, embedding
//===----------------------------------------------------------------------===//

TEST(ShapeFunctions, BatchNorm) {
  std::string error;
  expectShape(batchNorm({8, 16}, 16, error), error, {8, 16});
  expectShape(batchNorm({8, 16, 10}, 16, error), error, {8, 16, 10});
  expectShape(batchNorm({8, 16, 4, 4}, 16, error), error, {8, 16, 4, 4});
  expectError(batchNorm({16}, 16, error), error,
              "expected input of rank 2, 3 or 4 ([N, C], [N, C, L] or "
              "[N, C, H, W]) but got [16]");
  expectError(batchNorm({8, 16, 2, 2, 2}, 16, error), error,
              "but got [8, 16, 2, 2, 2]");
  expectError(batchNorm({8, 32, 4, 4}, 16, error), error,
              "expected input with 16 channels at dimension 1 but got "
              "[8, 32, 4, 4]");
}

TEST(ShapeFunctions, LayerNorm) {
  std::string error;
  expectShape(layerNorm({8, 16, 64}, {64}, error), error, {8, 16, 64});
  expectShape(layerNorm({8, 16, 64}, {16, 64}, error), error, {8, 16, 64});
  expectShape(layerNorm({64}, {64}, error), error, {64});
  expectError(layerNorm({64, 1, 28, 28}, {784}, error), error,
              "expected input with trailing dimensions [784] but got "
              "[64, 1, 28, 28]");
  expectError(layerNorm({28}, {28, 28}, error), error,
              "expected input with trailing dimensions [28, 28] but got [28]");
  expectError(layerNorm({8, 64}, {}, error), error,
              "expected a non-empty normalized shape but got []");
  expectError(layerNorm({8, 64}, {0}, error), error,
              "expected normalized shape with dimensions >= 1 but got [0]");
}

TEST(ShapeFunctions, Embedding) {
  std::string error;
  expectShape(embedding({8, 32}, {1000, 64}, error), error, {8, 32, 64});
  expectShape(embedding({}, {1000, 64}, error), error, {64});
  expectError(embedding({8}, {1000}, error), error,
              "expected weight of shape [num_embeddings, embedding_dim] but "
              "got [1000]");
  expectError(embedding({1 << 20, 1 << 20}, {2, 1 << 10}, error), error,
              "expected result with at most 2^48 elements");
}

//===----------------------------------------------------------------------===//
// data movement
//===----------------------------------------------------------------------===//

TEST(ShapeFunctions, Reshape) {
  std::string error;
  expectShape(reshape({64, 1, 28, 28}, {64, 784}, error), error, {64, 784});
  expectShape(reshape({64, 1, 28, 28}, {64, -1}, error), error, {64, 784});
  expectShape(reshape({64, 1, 28, 28}, {-1}, error), error, {50176});
  expectShape(reshape({6}, {-1, 1, 3}, error), error, {2, 1, 3});
  expectShape(reshape({}, {1, 1}, error), error, {1, 1});
  expectShape(reshape({1, 1}, {}, error), error, {});
  expectError(reshape({64, 784}, {64, 785}, error), error,
              "expected a target shape with 50176 elements, as input "
              "[64, 784], but got [64, 785]");
  expectError(reshape({64, 784}, {-1, 785}, error), error,
              "expected a target shape with 50176 elements");
  expectError(reshape({64, 784}, {-1, -1}, error), error,
              "expected at most one -1 in the target shape but got [-1, -1]");
  expectError(reshape({64, 784}, {0, 784}, error), error,
              "expected target dimensions >= 1 or -1 but got [0, 784]");
  expectError(reshape({64, 784}, {-2, 784}, error), error,
              "expected target dimensions >= 1 or -1");
  // Target products that would overflow int64.
  expectError(reshape({64, 784}, {kBig, kBig, kBig}, error), error,
              "expected a target shape with 50176 elements");
  expectError(reshape({64, 784}, {-1, kBig, kBig}, error), error,
              "expected a target shape with 50176 elements");
}

TEST(ShapeFunctions, Permute) {
  std::string error;
  expectShape(permute({2, 3, 4}, {2, 0, 1}, error), error, {4, 2, 3});
  expectShape(permute({}, {}, error), error, {});
  expectError(permute({2, 3}, {0, 0}, error), error,
              "expected a permutation of [0, 2) for input [2, 3] but got "
              "[0, 0]");
  expectError(permute({2, 3}, {0, 1, 2}, error), error, "but got [0, 1, 2]");
  expectError(permute({2, 3}, {0, 2}, error), error, "but got [0, 2]");
  expectError(permute({2, 3}, {-1, 0}, error), error, "but got [-1, 0]");
}

TEST(ShapeFunctions, Concat) {
  std::string error;
  expectShape(concat({{8, 16}, {8, 32}}, 1, error), error, {8, 48});
  expectShape(concat({{2, 3}, {2, 3}, {5, 3}}, 0, error), error, {9, 3});
  expectShape(concat({{6}}, 0, error), error, {6});
  expectError(concat({}, 0, error), error,
              "expected at least one input but got none");
  expectError(concat({{2, 3}}, 2, error), error,
              "expected dim in [0, 2) for input [2, 3] but got 2");
  expectError(concat({{2, 3}}, -1, error), error, "but got -1");
  expectError(concat({{2, 3}, {4, 5}}, 1, error), error,
              "expected input #1 to match input #0 [2, 3] except at "
              "dimension 1 but got [4, 5]");
  expectError(concat({{2, 3}, {2, 3, 1}}, 1, error), error,
              "expected input #1 to match input #0 [2, 3]");
  // Each input fits; the sum passes 2^48.
  const int64_t half = int64_t(1) << 47;
  expectError(concat({{half}, {half}, {half}}, 0, error), error,
              "expected a result with at most 2^48 elements");
}

TEST(ShapeFunctions, Slice) {
  std::string error;
  expectShape(slice({8, 10}, {0, 2}, {8, 10}, {1, 2}, error), error, {8, 4});
  expectShape(slice({784, 192}, {3, 1}, {784, 192}, {1, 10}, error), error,
              {781, 20});
  expectShape(slice({5}, {4}, {5}, {1000}, error), error, {1});
  expectShape(slice({5}, {0}, {5}, {std::numeric_limits<int64_t>::max()},
                    error),
              error, {1});
  expectShape(slice({}, {}, {}, {}, error), error, {});
  expectError(slice({3, 4}, {0}, {3}, {1}, error), error,
              "expected start, limit and step with one value per dimension of "
              "input [3, 4] but got [0], [3] and [1]");
  expectError(slice({3, 4}, {0, 1}, {3, 5}, {1, 1}, error), error,
              "expected 0 <= start <= limit <= 4 at dimension 1 but got start "
              "1 and limit 5");
  expectError(slice({3, 4}, {-1, 0}, {3, 4}, {1, 1}, error), error,
              "at dimension 0 but got start -1 and limit 3");
  expectError(slice({3, 4}, {2, 0}, {1, 4}, {1, 1}, error), error,
              "at dimension 0 but got start 2 and limit 1");
  expectError(slice({3, 4}, {0, 0}, {3, 4}, {0, 1}, error), error,
              "expected step >= 1 at dimension 0 but got 0");
  expectError(slice({3, 4}, {0, 2}, {3, 2}, {1, 1}, error), error,
              "expected a non-empty slice at dimension 1 but got start = "
              "limit = 2");
}

//===----------------------------------------------------------------------===//
// reductions and losses
//===----------------------------------------------------------------------===//

TEST(ShapeFunctions, Reduce) {
  std::string error;
  expectShape(reduce({8, 16, 4}, {0, 2}, false, error), error, {16});
  expectShape(reduce({8, 16, 4}, {1, 2}, true, error), error, {8, 1, 1});
  expectShape(reduce({8, 16, 4}, {0, 1, 2}, false, error), error, {});
  expectShape(reduce({8}, {0}, true, error), error, {1});
  expectError(reduce({2, 3, 4}, {2, 1}, false, error), error,
              "expected a non-empty, sorted list of unique dims in [0, 3) for "
              "input [2, 3, 4] but got [2, 1]");
  expectError(reduce({2, 3, 4}, {1, 1}, false, error), error, "but got [1, 1]");
  expectError(reduce({2, 3, 4}, {3}, false, error), error, "but got [3]");
  expectError(reduce({2, 3, 4}, {-1}, false, error), error, "but got [-1]");
  expectError(reduce({2, 3}, {}, false, error), error, "but got []");
}

TEST(ShapeFunctions, CrossEntropy) {
  std::string error;
  expectShape(crossEntropy({64, 10}, {64}, error), error, {});
  expectError(crossEntropy({10}, {10}, error), error,
              "expected logits of shape [N, C] but got [10]");
  expectError(crossEntropy({64, 10}, {32}, error), error,
              "expected labels of shape [64] but got [32]");
  expectError(crossEntropy({64, 10}, {64, 1}, error), error,
              "expected labels of shape [64] but got [64, 1]");
  expectError(crossEntropy({64, 10}, {0}, error), error,
              "expected labels with dimensions >= 1 but got [0]");
}

} // namespace
