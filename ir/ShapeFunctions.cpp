//===- ShapeFunctions.cpp - Shape rules of the cairn ops ------------------===//
//
// See ShapeFunctions.h. Every function first validates its input shapes (all
// dimensions >= 1, at most 2^48 elements), so dimensions are below 2^48 and
// the arithmetic on them cannot overflow; values that come from attributes
// (stride, padding, ...) can be anything and go through checked arithmetic.
//
//===----------------------------------------------------------------------===//

#include "ir/ShapeFunctions.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <limits>

using llvm::ArrayRef;

namespace cairn::shapes {

std::string format(ArrayRef<int64_t> shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    if (shape[i] == std::numeric_limits<int64_t>::min())
      out += "?";
    else
      out += std::to_string(shape[i]);
  }
  out += "]";
  return out;
}

namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// Sets `error` and returns std::nullopt, for one-line failure returns.
std::nullopt_t fail(std::string &error, std::string message) {
  error = std::move(message);
  return std::nullopt;
}

/// Checks that `shape`, named `what`, has dimensions >= 1 and at most 2^48
/// elements.
bool valid(const char *what, ArrayRef<int64_t> shape, std::string &error) {
  int64_t count = 1;
  for (int64_t d : shape)
    if (d < 1) {
      error = std::string("expected ") + what +
              " with dimensions >= 1 but got " + format(shape);
      return false;
    }
  for (int64_t d : shape) {
    // count <= 2^48 and d >= 1: test count * d > 2^48 without overflow.
    if (d > kMaxElements / count) {
      error = std::string("expected ") + what +
              " with at most 2^48 elements but got " + format(shape);
      return false;
    }
    count *= d;
  }
  return true;
}

/// Returns `shape` if it is a valid result, else an error naming it.
std::optional<Shape> result(Shape shape, std::string &error) {
  if (!valid("result", shape, error))
    return std::nullopt;
  return shape;
}

/// Checks that `values`, the attribute named `what`, holds `n` values each
/// >= `min`.
bool checkArray(const char *what, ArrayRef<int64_t> values, size_t n,
                int64_t min, std::string &error) {
  if (values.size() != n) {
    error = std::string("expected ") + what + " with " + str(n) +
            " values but got " + format(values);
    return false;
  }
  for (int64_t v : values)
    if (v < min) {
      error = std::string("expected ") + what + " with values >= " + str(min) +
              " but got " + format(values);
      return false;
    }
  return true;
}

/// The output size of one spatial dimension of a convolution or pooling
/// window, PyTorch's pooling_output_shape:
///   floor((in + 2 * pad - dil * (k - 1) - 1 [+ stride - 1 if ceil]) / stride)
///   + 1, minus one in ceil mode when the last window would start in the
///   right padding. In ceil mode a window may overhang the input.
/// Returns std::nullopt on overflow; a result < 1 means the window does not
/// fit.
std::optional<int64_t> windowOutput(int64_t in, int64_t kernel, int64_t stride,
                                    int64_t pad, int64_t dilation,
                                    bool ceilMode) {
  std::optional<int64_t> effective =
      llvm::checkedMulAdd<int64_t>(dilation, kernel - 1, 1);
  std::optional<int64_t> twoPad = llvm::checkedMul<int64_t>(pad, 2);
  if (!effective || !twoPad)
    return std::nullopt;
  std::optional<int64_t> padded = llvm::checkedAdd<int64_t>(in, *twoPad);
  if (!padded)
    return std::nullopt;
  // Both are >= 0: the difference cannot overflow.
  int64_t span = *padded - *effective;
  if (ceilMode) {
    std::optional<int64_t> rounded =
        llvm::checkedAdd<int64_t>(span, stride - 1);
    if (!rounded)
      return std::nullopt;
    span = *rounded;
  }
  // Floor division (rounding towards negative infinity, as PyTorch's div_rtn).
  int64_t quotient = span / stride;
  if (span % stride != 0 && span < 0)
    --quotient;
  int64_t out = quotient + 1;
  if (ceilMode) {
    std::optional<int64_t> lastStart =
        llvm::checkedMul<int64_t>(quotient, stride);
    if (!lastStart)
      return std::nullopt;
    if (*lastStart >= in + pad) // in + pad <= in + 2 * pad: no overflow
      --out;
  }
  return out;
}

/// Shared rule of convolution and pooling windows over [.., .., H, W].
std::optional<Shape> windowed(ArrayRef<int64_t> input, int64_t channels,
                              ArrayRef<int64_t> kernel,
                              ArrayRef<int64_t> stride,
                              ArrayRef<int64_t> padding,
                              ArrayRef<int64_t> dilation, bool ceilMode,
                              std::string &error) {
  Shape out = {input[0], channels, 0, 0};
  for (int i = 0; i < 2; ++i) {
    std::optional<int64_t> size =
        windowOutput(input[2 + i], kernel[i], stride[i], padding[i],
                     dilation[i], ceilMode);
    if (!size)
      return fail(error, "expected a window whose size fits in 64 bits but "
                         "got kernel " +
                             format(kernel) + ", padding " + format(padding) +
                             " and dilation " + format(dilation));
    if (*size < 1)
      return fail(error,
                  "expected an input whose padded height and width hold the "
                  "kernel " +
                      format(kernel) + " with dilation " + format(dilation) +
                      " but got " + format(input) + " with padding " +
                      format(padding));
    out[2 + i] = *size;
  }
  return result(out, error);
}

/// The pooling checks of PyTorch's pool2d_shape_check.
std::optional<Shape> pool2d(ArrayRef<int64_t> input, ArrayRef<int64_t> kernel,
                            ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                            ArrayRef<int64_t> dilation, bool ceilMode,
                            std::string &error) {
  if (!valid("input", input, error))
    return std::nullopt;
  if (input.size() != 4)
    return fail(error, "expected input of shape [N, C, H, W] but got " +
                           format(input));
  if (!checkArray("kernel_size", kernel, 2, 1, error) ||
      !checkArray("stride", stride, 2, 1, error) ||
      !checkArray("padding", padding, 2, 0, error) ||
      !checkArray("dilation", dilation, 2, 1, error))
    return std::nullopt;
  if (padding[0] > kernel[0] / 2 || padding[1] > kernel[1] / 2)
    return fail(error, "expected padding <= kernel_size / 2 but got padding " +
                           format(padding) + " and kernel_size " +
                           format(kernel));
  return windowed(input, input[1], kernel, stride, padding, dilation, ceilMode,
                  error);
}

} // namespace

std::optional<int64_t> numElements(ArrayRef<int64_t> shape,
                                   std::string &error) {
  if (!valid("a shape", shape, error))
    return std::nullopt;
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count;
}

std::optional<int64_t> normalizeDim(int64_t dim, int64_t rank,
                                    std::string &error) {
  if (rank < 1)
    return fail(error, "expected no dimension for a tensor of rank 0 but got " +
                           str(dim));
  if (dim < -rank || dim >= rank)
    return fail(error, "expected a dimension in [" + str(-rank) + ", " +
                           str(rank) + ") but got " + str(dim));
  return dim < 0 ? dim + rank : dim;
}

std::optional<Shape> broadcast(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                               std::string &error) {
  if (!valid("lhs", a, error) || !valid("rhs", b, error))
    return std::nullopt;
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      return fail(error, "expected broadcast-compatible shapes but got " +
                             format(a) + " and " + format(b));
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return result(out, error);
}

std::optional<Shape> matmul(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                            std::string &error) {
  if (!valid("lhs", a, error) || !valid("rhs", b, error))
    return std::nullopt;
  if (a.size() < 2 || b.size() < 2)
    return fail(error, "expected operands of rank >= 2 but got " + format(a) +
                           " and " + format(b));
  int64_t k = a.back();
  if (b[b.size() - 2] != k)
    return fail(error, "expected rhs with dimension -2 equal to the last "
                       "dimension of lhs " +
                           format(a) + " but got " + format(b));
  std::string inner;
  std::optional<Shape> batch =
      broadcast(a.drop_back(2), b.drop_back(2), inner);
  if (!batch)
    return fail(error, "expected broadcast-compatible batch dimensions but "
                       "got " +
                           format(a) + " and " + format(b));
  Shape out = *batch;
  out.push_back(a[a.size() - 2]);
  out.push_back(b.back());
  return result(out, error);
}

std::optional<Shape> linear(ArrayRef<int64_t> input, ArrayRef<int64_t> weight,
                            const Shape *bias, std::string &error) {
  if (!valid("input", input, error) || !valid("weight", weight, error) ||
      (bias && !valid("bias", *bias, error)))
    return std::nullopt;
  if (weight.size() != 2)
    return fail(error,
                "expected weight of shape [out, in] but got " + format(weight));
  if (input.empty())
    return fail(error, "expected input of rank >= 1 but got " + format(input));
  if (input.back() != weight[1])
    return fail(error, "expected input with last dimension " +
                           str(weight[1]) + " but got " + format(input));
  if (bias && !(bias->size() == 1 && (*bias)[0] == weight[0]))
    return fail(error, "expected bias of shape " + format({weight[0]}) +
                           " but got " + format(*bias));
  Shape out(input.begin(), input.end());
  out.back() = weight[0];
  return result(out, error);
}

std::optional<Shape> conv2d(ArrayRef<int64_t> input, ArrayRef<int64_t> weight,
                            const Shape *bias, ArrayRef<int64_t> stride,
                            ArrayRef<int64_t> padding,
                            ArrayRef<int64_t> dilation, int64_t groups,
                            std::string &error) {
  if (!valid("input", input, error) || !valid("weight", weight, error) ||
      (bias && !valid("bias", *bias, error)))
    return std::nullopt;
  if (input.size() != 4)
    return fail(error, "expected input of shape [N, C, H, W] but got " +
                           format(input));
  if (weight.size() != 4)
    return fail(error, "expected weight of shape [O, C / groups, kh, kw] but "
                       "got " +
                           format(weight));
  if (!checkArray("stride", stride, 2, 1, error) ||
      !checkArray("padding", padding, 2, 0, error) ||
      !checkArray("dilation", dilation, 2, 1, error))
    return std::nullopt;
  if (groups < 1)
    return fail(error, "expected groups >= 1 but got " + str(groups));
  int64_t channels = input[1], out = weight[0];
  if (channels % groups != 0)
    return fail(error, "expected input channels divisible by groups " +
                           str(groups) + " but got " + format(input));
  if (out % groups != 0)
    return fail(error, "expected output channels divisible by groups " +
                           str(groups) + " but got weight " + format(weight));
  if (weight[1] != channels / groups)
    return fail(error, "expected weight of shape [" + str(out) + ", " +
                           str(channels / groups) + ", " + str(weight[2]) +
                           ", " + str(weight[3]) + "] for input " +
                           format(input) + " and groups " + str(groups) +
                           " but got " + format(weight));
  if (bias && !(bias->size() == 1 && (*bias)[0] == out))
    return fail(error, "expected bias of shape " + format({out}) +
                           " but got " + format(*bias));
  return windowed(input, out, weight.drop_front(2), stride, padding, dilation,
                  /*ceilMode=*/false, error);
}

std::optional<Shape> maxPool2d(ArrayRef<int64_t> input,
                               ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> stride,
                               ArrayRef<int64_t> padding,
                               ArrayRef<int64_t> dilation, bool ceilMode,
                               std::string &error) {
  return pool2d(input, kernel, stride, padding, dilation, ceilMode, error);
}

std::optional<Shape> avgPool2d(ArrayRef<int64_t> input,
                               ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> stride,
                               ArrayRef<int64_t> padding, bool ceilMode,
                               std::string &error) {
  const int64_t noDilation[] = {1, 1};
  return pool2d(input, kernel, stride, padding, noDilation, ceilMode, error);
}

std::optional<Shape> adaptiveAvgPool2d(ArrayRef<int64_t> input,
                                       ArrayRef<int64_t> outputSize,
                                       std::string &error) {
  if (!valid("input", input, error))
    return std::nullopt;
  if (input.size() != 4)
    return fail(error, "expected input of shape [N, C, H, W] but got " +
                           format(input));
  if (!checkArray("output_size", outputSize, 2, 1, error))
    return std::nullopt;
  return result({input[0], input[1], outputSize[0], outputSize[1]}, error);
}

std::optional<Shape> batchNorm(ArrayRef<int64_t> input, int64_t numFeatures,
                               std::string &error) {
  if (!valid("input", input, error))
    return std::nullopt;
  if (input.size() < 2 || input.size() > 4)
    return fail(error, "expected input of rank 2, 3 or 4 ([N, C], [N, C, L] "
                       "or [N, C, H, W]) but got " +
                           format(input));
  if (input[1] != numFeatures)
    return fail(error, "expected input with " + str(numFeatures) +
                           " channels at dimension 1 but got " +
                           format(input));
  return Shape(input.begin(), input.end());
}

std::optional<Shape> layerNorm(ArrayRef<int64_t> input,
                               ArrayRef<int64_t> normalizedShape,
                               std::string &error) {
  if (!valid("input", input, error))
    return std::nullopt;
  if (normalizedShape.empty())
    return fail(error, "expected a non-empty normalized shape but got []");
  if (!valid("normalized shape", normalizedShape, error))
    return std::nullopt;
  if (input.size() < normalizedShape.size() ||
      input.take_back(normalizedShape.size()) != normalizedShape)
    return fail(error, "expected input with trailing dimensions " +
                           format(normalizedShape) + " but got " +
                           format(input));
  return Shape(input.begin(), input.end());
}

std::optional<Shape> embedding(ArrayRef<int64_t> indices,
                               ArrayRef<int64_t> weight, std::string &error) {
  if (!valid("indices", indices, error) || !valid("weight", weight, error))
    return std::nullopt;
  if (weight.size() != 2)
    return fail(error, "expected weight of shape [num_embeddings, "
                       "embedding_dim] but got " +
                           format(weight));
  Shape out(indices.begin(), indices.end());
  out.push_back(weight[1]);
  return result(out, error);
}

std::optional<Shape> reshape(ArrayRef<int64_t> input, ArrayRef<int64_t> target,
                             std::string &error) {
  if (!valid("input", input, error))
    return std::nullopt;
  int64_t count = 1;
  for (int64_t d : input)
    count *= d;
  int inferred = -1, holes = 0;
  int64_t known = 1; // product of the known target dimensions, <= count
  bool tooMany = false;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      inferred = static_cast<int>(i);
      ++holes;
      continue;
    }
    if (target[i] < 1)
      return fail(error, "expected target dimensions >= 1 or -1 but got " +
                             format(target));
    if (target[i] > count / known)
      tooMany = true;
    else
      known *= target[i];
  }
  if (holes > 1)
    return fail(error, "expected at most one -1 in the target shape but got " +
                           format(target));
  Shape out(target.begin(), target.end());
  if (tooMany || (holes ? count % known != 0 : count != known))
    return fail(error, "expected a target shape with " + str(count) +
                           " elements, as input " + format(input) +
                           ", but got " + format(target));
  if (holes)
    out[inferred] = count / known;
  return out;
}

std::optional<Shape> permute(ArrayRef<int64_t> input, ArrayRef<int64_t> perm,
                             std::string &error) {
  if (!valid("input", input, error))
    return std::nullopt;
  int64_t rank = static_cast<int64_t>(input.size());
  llvm::SmallVector<bool, 8> seen(input.size(), false);
  bool ok = perm.size() == input.size();
  for (int64_t p : perm) {
    if (!ok)
      break;
    ok = p >= 0 && p < rank && !seen[p];
    if (ok)
      seen[p] = true;
  }
  if (!ok)
    return fail(error, "expected a permutation of [0, " + str(rank) +
                           ") for input " + format(input) + " but got " +
                           format(perm));
  Shape out;
  for (int64_t p : perm)
    out.push_back(input[p]);
  return out;
}

std::optional<Shape> concat(ArrayRef<Shape> inputs, int64_t dim,
                            std::string &error) {
  if (inputs.empty())
    return fail(error, "expected at least one input but got none");
  for (const Shape &s : inputs)
    if (!valid("input", s, error))
      return std::nullopt;
  const Shape &first = inputs.front();
  int64_t rank = static_cast<int64_t>(first.size());
  if (dim < 0 || dim >= rank)
    return fail(error, "expected dim in [0, " + str(rank) + ") for input " +
                           format(first) + " but got " + str(dim));
  Shape out = first;
  for (size_t i = 1; i < inputs.size(); ++i) {
    const Shape &s = inputs[i];
    bool ok = s.size() == first.size();
    for (int64_t d = 0; ok && d < rank; ++d)
      ok = d == dim || s[d] == first[d];
    if (!ok)
      return fail(error, "expected input #" + str(i) + " to match input #0 " +
                             format(first) + " except at dimension " +
                             str(dim) + " but got " + format(s));
    out[dim] += s[dim]; // each < 2^48: fits, checked below
    if (out[dim] > kMaxElements)
      return fail(error, "expected a result with at most 2^48 elements but "
                         "got a dimension " +
                             str(dim) + " beyond 2^48");
  }
  return result(out, error);
}

std::optional<Shape> slice(ArrayRef<int64_t> input, ArrayRef<int64_t> start,
                           ArrayRef<int64_t> limit, ArrayRef<int64_t> step,
                           std::string &error) {
  if (!valid("input", input, error))
    return std::nullopt;
  if (start.size() != input.size() || limit.size() != input.size() ||
      step.size() != input.size())
    return fail(error, "expected start, limit and step with one value per "
                       "dimension of input " +
                           format(input) + " but got " + format(start) + ", " +
                           format(limit) + " and " + format(step));
  Shape out;
  for (size_t d = 0; d < input.size(); ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > input[d])
      return fail(error, "expected 0 <= start <= limit <= " + str(input[d]) +
                             " at dimension " + str(d) + " but got start " +
                             str(start[d]) + " and limit " + str(limit[d]));
    if (step[d] < 1)
      return fail(error, "expected step >= 1 at dimension " + str(d) +
                             " but got " + str(step[d]));
    if (start[d] == limit[d])
      return fail(error, "expected a non-empty slice at dimension " + str(d) +
                             " but got start = limit = " + str(start[d]));
    out.push_back((limit[d] - start[d] - 1) / step[d] + 1);
  }
  return out;
}

std::optional<Shape> reduce(ArrayRef<int64_t> input, ArrayRef<int64_t> dims,
                            bool keepdim, std::string &error) {
  if (!valid("input", input, error))
    return std::nullopt;
  int64_t rank = static_cast<int64_t>(input.size());
  bool ok = !dims.empty();
  for (size_t i = 0; ok && i < dims.size(); ++i)
    ok = dims[i] >= 0 && dims[i] < rank && (i == 0 || dims[i - 1] < dims[i]);
  if (!ok)
    return fail(error, "expected a non-empty, sorted list of unique dims in "
                       "[0, " +
                           str(rank) + ") for input " + format(input) +
                           " but got " + format(dims));
  Shape out;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (next < dims.size() && dims[next] == d) {
      ++next;
      if (keepdim)
        out.push_back(1);
      continue;
    }
    out.push_back(input[d]);
  }
  return out;
}

std::optional<Shape> crossEntropy(ArrayRef<int64_t> logits,
                                  ArrayRef<int64_t> labels,
                                  std::string &error) {
  if (!valid("logits", logits, error) || !valid("labels", labels, error))
    return std::nullopt;
  if (logits.size() != 2)
    return fail(error,
                "expected logits of shape [N, C] but got " + format(logits));
  if (labels.size() != 1 || labels[0] != logits[0])
    return fail(error, "expected labels of shape " + format({logits[0]}) +
                           " but got " + format(labels));
  return Shape{};
}

} // namespace cairn::shapes
