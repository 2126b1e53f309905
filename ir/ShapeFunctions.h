//===- ShapeFunctions.h - Shape rules of the cairn ops ----------*- C++ -*-===//
//
// One definition of every shape rule, shared by the op verifiers and the
// frontend. Plain C++ over integer vectors: no MLIR types.
//
// Every function returns the result shape, or std::nullopt after setting
// `error` to a lowercase message that says what was expected and what was
// found (naming the shapes), e.g.
//   "expected input with last dimension 784 but got [64, 1, 28, 28]".
// The frontend prefixes it with the layer name; the verifiers with the op.
//
// Input shapes must have every dimension >= 1 and at most 2^48 elements; so
// must every shape produced. All arithmetic is checked: a user writing
// Linear(10**18, 5) gets an error, never undefined behaviour.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_IR_SHAPEFUNCTIONS_H
#define CAIRN_IR_SHAPEFUNCTIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace cairn::shapes {

using Shape = llvm::SmallVector<int64_t, 4>;

/// The largest element count a tensor may have: 2^48.
constexpr int64_t kMaxElements = int64_t(1) << 48;

/// Formats a shape as "[64, 784]"; "[]" for a scalar. A dimension < 0 that is
/// INT64_MIN (MLIR's dynamic size) prints as "?".
std::string format(llvm::ArrayRef<int64_t> shape);

/// NumPy broadcasting: dimensions aligned on the right, each pair equal or one
/// of them 1.
std::optional<Shape> broadcast(llvm::ArrayRef<int64_t> a,
                               llvm::ArrayRef<int64_t> b, std::string &error);

/// torch.matmul for operands of rank >= 2: [...batch, M, K] x [...batch, K, N]
/// -> [...broadcast(batch), M, N].
std::optional<Shape> matmul(llvm::ArrayRef<int64_t> a,
                            llvm::ArrayRef<int64_t> b, std::string &error);

/// nn.Linear: input [..., in], weight [out, in], bias [out] -> [..., out].
std::optional<Shape> linear(llvm::ArrayRef<int64_t> input,
                            llvm::ArrayRef<int64_t> weight, const Shape *bias,
                            std::string &error);

/// nn.Conv2d: input [N, C, H, W], weight [O, C / groups, kh, kw], bias [O];
/// stride, padding (symmetric) and dilation hold (h, w).
std::optional<Shape> conv2d(llvm::ArrayRef<int64_t> input,
                            llvm::ArrayRef<int64_t> weight, const Shape *bias,
                            llvm::ArrayRef<int64_t> stride,
                            llvm::ArrayRef<int64_t> padding,
                            llvm::ArrayRef<int64_t> dilation, int64_t groups,
                            std::string &error);

/// nn.MaxPool2d on [N, C, H, W], with PyTorch's rules: padding at most half the
/// kernel, and in ceil mode the last window must start inside the input or
/// the left padding.
std::optional<Shape> maxPool2d(llvm::ArrayRef<int64_t> input,
                               llvm::ArrayRef<int64_t> kernel,
                               llvm::ArrayRef<int64_t> stride,
                               llvm::ArrayRef<int64_t> padding,
                               llvm::ArrayRef<int64_t> dilation, bool ceilMode,
                               std::string &error);

/// nn.AvgPool2d on [N, C, H, W] (max pooling's rules with dilation 1).
std::optional<Shape> avgPool2d(llvm::ArrayRef<int64_t> input,
                               llvm::ArrayRef<int64_t> kernel,
                               llvm::ArrayRef<int64_t> stride,
                               llvm::ArrayRef<int64_t> padding, bool ceilMode,
                               std::string &error);

/// nn.AdaptiveAvgPool2d on [N, C, H, W] -> [N, C, oh, ow].
std::optional<Shape> adaptiveAvgPool2d(llvm::ArrayRef<int64_t> input,
                                       llvm::ArrayRef<int64_t> outputSize,
                                       std::string &error);

/// nn.BatchNorm1d/2d: input of rank 2, 3 or 4 with numFeatures channels at
/// dimension 1; the result has the input's shape.
std::optional<Shape> batchNorm(llvm::ArrayRef<int64_t> input,
                               int64_t numFeatures, std::string &error);

/// nn.LayerNorm: the trailing dimensions of input equal normalizedShape
/// (non-empty); the result has the input's shape.
std::optional<Shape> layerNorm(llvm::ArrayRef<int64_t> input,
                               llvm::ArrayRef<int64_t> normalizedShape,
                               std::string &error);

/// nn.Embedding: indices of any rank, weight [num, dim] -> indices + [dim].
std::optional<Shape> embedding(llvm::ArrayRef<int64_t> indices,
                               llvm::ArrayRef<int64_t> weight,
                               std::string &error);

/// Tensor.reshape: target may hold one -1, inferred from the element count.
std::optional<Shape> reshape(llvm::ArrayRef<int64_t> input,
                             llvm::ArrayRef<int64_t> target,
                             std::string &error);

/// Tensor.permute with a normalized permutation of [0, rank).
std::optional<Shape> permute(llvm::ArrayRef<int64_t> input,
                             llvm::ArrayRef<int64_t> perm, std::string &error);

/// torch.cat along a normalized dim: >= 1 input, same rank, equal except at
/// dim; the result's dim is the sum.
std::optional<Shape> concat(llvm::ArrayRef<Shape> inputs, int64_t dim,
                            std::string &error);

/// Strided slice, one (start, limit, step) per dimension, normalized:
/// 0 <= start < limit <= size, step >= 1; size ceil((limit - start) / step).
std::optional<Shape> slice(llvm::ArrayRef<int64_t> input,
                           llvm::ArrayRef<int64_t> start,
                           llvm::ArrayRef<int64_t> limit,
                           llvm::ArrayRef<int64_t> step, std::string &error);

/// sum / mean over dims (non-empty, sorted, unique, in [0, rank)): the result
/// drops them, or keeps them as 1 with keepdim.
std::optional<Shape> reduce(llvm::ArrayRef<int64_t> input,
                            llvm::ArrayRef<int64_t> dims, bool keepdim,
                            std::string &error);

/// Cross entropy of logits [N, C] against labels [N]: a scalar ([]).
std::optional<Shape> crossEntropy(llvm::ArrayRef<int64_t> logits,
                                  llvm::ArrayRef<int64_t> labels,
                                  std::string &error);

/// Python-style dimension: dim in [-rank, rank) -> [0, rank).
std::optional<int64_t> normalizeDim(int64_t dim, int64_t rank,
                                    std::string &error);

/// The element count of a shape whose dimensions are all >= 1 and whose
/// count is at most 2^48 (1 for a scalar); otherwise an error.
std::optional<int64_t> numElements(llvm::ArrayRef<int64_t> shape,
                                   std::string &error);

} // namespace cairn::shapes

#endif // CAIRN_IR_SHAPEFUNCTIONS_H
