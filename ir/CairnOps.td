//===- CairnOps.td - Ops of cairn --------------------------*- tablegen -*-===//
//
// The layers of a PyTorch model, one op each, with PyTorch's shape rules (see
// ShapeFunctions.h). Tensors are ranked and statically shaped.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_IR_CAIRNOPS_TD
#define CAIRN_IR_CAIRNOPS_TD

include "ir/CairnDialect.td"
include "ir/CairnAttrs.td"
include "ir/CairnInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Cairn_Tensor : RankedTensorOf<[F16, BF16, F32, F64, I32, I64]>;
def Cairn_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
def Cairn_IndexTensor : RankedTensorOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Cairn_ConstantOp : Cairn_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let description = [{
    Produces the tensor held by `value`; the result type is the value's type.

    ```mlir
    %c = cairn.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Cairn_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Cairn_BinaryOp<string mnemonic, string what>
    : Cairn_Op<mnemonic, [Pure]> {
  let summary = "elementwise " # what # " with NumPy broadcasting";
  let description = [{
    Applies the operation elementwise after broadcasting both operands to a
    common shape (NumPy rules: dimensions aligned on the right, each pair equal
    or one of them 1). Operands and result share their element type.

    ```mlir
    %r = cairn.}] # mnemonic # [{ %a, %b : tensor<64x10xf32>, tensor<10xf32> -> tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$lhs, Cairn_FloatTensor:$rhs);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Cairn_AddOp : Cairn_BinaryOp<"add", "addition">;
def Cairn_SubOp : Cairn_BinaryOp<"sub", "subtraction">;
def Cairn_MulOp : Cairn_BinaryOp<"mul", "multiplication">;
def Cairn_DivOp : Cairn_BinaryOp<"div", "division">;

class Cairn_UnaryOp<string mnemonic, string what>
    : Cairn_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what # ", elementwise";
  let description = [{
    Applies the function to every element; the result has the input's type.

    ```mlir
    %r = cairn.}] # mnemonic # [{ %x : tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Cairn_ReluOp : Cairn_UnaryOp<"relu", "max(x, 0)">;
def Cairn_SigmoidOp : Cairn_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Cairn_TanhOp : Cairn_UnaryOp<"tanh", "hyperbolic tangent">;
def Cairn_SiluOp : Cairn_UnaryOp<"silu", "x * sigmoid(x) (nn.SiLU)">;
def Cairn_HardswishOp
    : Cairn_UnaryOp<"hardswish", "x * min(max(x + 3, 0), 6) / 6 (nn.Hardswish)">;

def Cairn_CastOp : Cairn_Op<"cast", [Pure]> {
  let summary = "element type conversion (Tensor.to(dtype))";
  let description = [{
    Converts every element to the result's floating-point type, rounding
    to nearest even as PyTorch's `.to(torch.float16)` does; the shape is
    the input's. `cairn-autocast` inserts them, one per value and type.

    ```mlir
    %h = cairn.cast %w : tensor<256x784xf32> -> tensor<256x784xf16>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Cairn_ClampOp : Cairn_Op<"clamp", [Pure, SameOperandsAndResultType]> {
  let summary = "clamp to [min, max], elementwise";
  let description = [{
    torch.clamp, and nn.Hardtanh and nn.ReLU6, which PyTorch defines as it:
    `min(max(x, min), max)` with either bound absent (not both); NaN stays
    NaN, and min > max gives max everywhere. Its gradient passes strictly
    inside the bounds (clamp_grad).

    ```mlir
    %r = cairn.clamp %x {max = 6.0 : f64, min = 0.0 : f64} : tensor<8x128xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input,
                       OptionalAttr<Cairn_F64Attr>:$min,
                       OptionalAttr<Cairn_F64Attr>:$max);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Cairn_LeakyReluOp : Cairn_Op<"leaky_relu", [Pure, SameOperandsAndResultType]> {
  let summary = "leaky rectifier, elementwise";
  let description = [{
    nn.LeakyReLU: `x > 0 ? x : x * negative_slope`.

    ```mlir
    %r = cairn.leaky_relu %x {negative_slope = 0.01 : f64} : tensor<8x128xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input, Cairn_F64Attr:$negative_slope);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Cairn_GeluOp : Cairn_Op<"gelu", [Pure, SameOperandsAndResultType]> {
  let summary = "Gaussian error linear unit, elementwise";
  let description = [{
    nn.GELU: `x * Phi(x)`, exact (`approximate = "none"`, the default) or with
    the tanh approximation (`approximate = "tanh"`).

    ```mlir
    %r = cairn.gelu %x {approximate = "tanh"} : tensor<8x128xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

class Cairn_SoftmaxBase<string mnemonic, string what>
    : Cairn_Op<mnemonic, [Pure, SameOperandsAndResultShape]> {
  let summary = what # " along one dimension";
  let description = [{
    nn.functional.}] # mnemonic # [{ along `dim`, normalized to [0, rank).
    The result has the input's type, or is float32 for an f16 or bf16 input:
    autocast's float32 softmax of the input's float32 copy, which a target
    with half-storage kernels reads from the half input itself.

    ```mlir
    %r = cairn.}] # mnemonic # [{ %x {dim = 1 : i64} : tensor<64x10xf32>
    %s = cairn.}] # mnemonic # [{ %h {dim = 1 : i64} : tensor<64x10xbf16> -> tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input, Cairn_I64Attr:$dim);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat =
      "$input attr-dict `:` custom<SoftmaxTypes>(type($input), type($result))";
  let hasVerifier = 1;
}

def Cairn_SoftmaxOp : Cairn_SoftmaxBase<"softmax", "softmax">;
def Cairn_LogSoftmaxOp : Cairn_SoftmaxBase<"log_softmax", "log of softmax">;

//===----------------------------------------------------------------------===//
// Linear algebra and convolution
//===----------------------------------------------------------------------===//

def Cairn_MatmulOp : Cairn_Op<"matmul", [Pure]> {
  let summary = "batched matrix product, as torch.matmul";
  let description = [{
    `[...batch, M, K] x [...batch, K, N] -> [...broadcast(batch), M, N]`; both
    operands have rank >= 2 and their batch dimensions broadcast. With
    `transpose_lhs` (`transpose_rhs`) the last two dimensions of that operand
    are swapped before the product; autodiff uses them for the gradients.
    Both default to false.

    ```mlir
    %r = cairn.matmul %a, %b : tensor<8x64x32xf32>, tensor<32x16xf32> -> tensor<8x64x16xf32>
    %g = cairn.matmul %dy, %b {transpose_rhs = true} : tensor<8x64x16xf32>, tensor<32x16xf32> -> tensor<8x64x32xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$lhs, Cairn_FloatTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_lhs,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_rhs);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Cairn_LinearOp : Cairn_Op<"linear", [Pure]> {
  let summary = "nn.Linear: x W^T + b";
  let description = [{
    input `[..., in]`, weight `[out, in]`, optional bias `[out]`; result
    `[..., out]`.

    ```mlir
    %y = cairn.linear %x, %w, %b : (tensor<64x784xf32>, tensor<10x784xf32>, tensor<10xf32>) -> tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input, Cairn_FloatTensor:$weight,
                       Optional<Cairn_FloatTensor>:$bias);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_Conv2dOp : Cairn_Op<"conv2d", [Pure]> {
  let summary = "nn.Conv2d";
  let description = [{
    input `[N, C, H, W]`, weight `[O, C / groups, kh, kw]`, optional bias
    `[O]`; `stride`, `padding` (symmetric) and `dilation` hold (h, w). The
    result is `[N, O, Ho, Wo]` with
    `Ho = floor((H + 2 ph - dh (kh - 1) - 1) / sh) + 1`, and likewise `Wo`.

    ```mlir
    %y = cairn.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>}
        : (tensor<8x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input, Cairn_FloatTensor:$weight,
                       Optional<Cairn_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, Cairn_I64Attr:$groups);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalization, embedding, dropout
//===----------------------------------------------------------------------===//

def Cairn_BatchNormOp : Cairn_Op<"batch_norm", [Pure, AttrSizedOperandSegments]> {
  let summary = "nn.BatchNorm1d / nn.BatchNorm2d";
  let description = [{
    Normalizes input `[N, C]`, `[N, C, L]` or `[N, C, H, W]` per channel.
    `weight` and `bias` (the affine part) are both present or both absent, as
    are `running_mean` and `running_var`; each is `[C]`. In training mode the
    batch statistics are used (and the running ones updated with `momentum` by
    the lowering); in eval mode (`training = false`) the running statistics
    are required.

    ```mlir
    %y = cairn.batch_norm %x weight %g bias %b mean %m var %v {eps = 1.000000e-05 : f64, momentum = 1.000000e-01 : f64, training = true}
        : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<8x16x4x4xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input,
                       Optional<Cairn_FloatTensor>:$weight,
                       Optional<Cairn_FloatTensor>:$bias,
                       Optional<Cairn_FloatTensor>:$running_mean,
                       Optional<Cairn_FloatTensor>:$running_var,
                       Cairn_F64Attr:$eps, Cairn_F64Attr:$momentum, BoolAttr:$training);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? (`mean` $running_mean^)?
    (`var` $running_var^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_LayerNormOp : Cairn_Op<"layer_norm", [Pure, AttrSizedOperandSegments]> {
  let summary = "nn.LayerNorm";
  let description = [{
    Normalizes over the trailing `normalized_rank` dimensions of the input;
    the optional `weight` and `bias` have the shape of those dimensions.

    ```mlir
    %y = cairn.layer_norm %x weight %g bias %b {eps = 1.000000e-05 : f64, normalized_rank = 1 : i64}
        : (tensor<8x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x16x64xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input,
                       Optional<Cairn_FloatTensor>:$weight,
                       Optional<Cairn_FloatTensor>:$bias,
                       Cairn_I64Attr:$normalized_rank, Cairn_F64Attr:$eps);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`weight` $weight^)? (`bias` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_EmbeddingOp : Cairn_Op<"embedding", [Pure]> {
  let summary = "nn.Embedding: rows of weight gathered by index";
  let description = [{
    indices of any shape, weight `[num, dim]`; the result is
    `indices.shape + [dim]` with the weight's element type. Rows at
    `padding_idx` (in [0, num)) get no gradient.

    ```mlir
    %e = cairn.embedding %ids, %w {padding_idx = 0 : i64} : (tensor<8x32xi64>, tensor<1000x64xf32>) -> tensor<8x32x64xf32>
    ```
  }];
  let arguments = (ins Cairn_IndexTensor:$indices, Cairn_FloatTensor:$weight,
                       OptionalAttr<Cairn_I64Attr>:$padding_idx);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $indices `,` $weight attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_DropoutOp : Cairn_Op<"dropout", [Pure, SameOperandsAndResultType]> {
  let summary = "nn.Dropout";
  let description = [{
    In training mode, zeroes each element with probability `p` (0 <= p < 1)
    and scales the others by 1 / (1 - p); in eval mode it is the identity.
    `stream` (>= 0) is a per-op id keying the counter-based random number
    generator, so a recomputed dropout draws the same mask.

    ```mlir
    %y = cairn.dropout %x {p = 5.000000e-01 : f64, stream = 0 : i64, training = true} : tensor<64x256xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input, Cairn_F64Attr:$p,
                       BoolAttr:$training, Cairn_I64Attr:$stream);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def Cairn_MaxPool2dOp : Cairn_Op<"max_pool2d", [Pure]> {
  let summary = "nn.MaxPool2d";
  let description = [{
    input `[N, C, H, W]`; `kernel_size`, `stride`, `padding` and `dilation`
    hold (h, w). PyTorch's rules: padding <= kernel_size / 2, and with
    `ceil_mode` the last window must start inside the input or left padding.

    ```mlir
    %y = cairn.max_pool2d %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}
        : tensor<8x16x32x32xf32> -> tensor<8x16x16x16xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_size,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, BoolAttr:$ceil_mode);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Cairn_AvgPool2dOp : Cairn_Op<"avg_pool2d", [Pure]> {
  let summary = "nn.AvgPool2d";
  let description = [{
    Max pooling's shape rules with dilation 1; `count_include_pad` says
    whether the padding counts in the divisor.

    ```mlir
    %y = cairn.avg_pool2d %x {ceil_mode = false, count_include_pad = true, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}
        : tensor<8x16x32x32xf32> -> tensor<8x16x16x16xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_size,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       BoolAttr:$ceil_mode, BoolAttr:$count_include_pad);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Cairn_AdaptiveAvgPool2dOp : Cairn_Op<"adaptive_avg_pool2d", [Pure]> {
  let summary = "nn.AdaptiveAvgPool2d";
  let description = [{
    input `[N, C, H, W]` -> `[N, C, oh, ow]` with `output_size = [oh, ow]`.

    ```mlir
    %y = cairn.adaptive_avg_pool2d %x {output_size = array<i64: 1, 1>} : tensor<8x512x7x7xf32> -> tensor<8x512x1x1xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input,
                       DenseI64ArrayAttr:$output_size);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Cairn_ReshapeOp : Cairn_Op<"reshape", [Pure]> {
  let summary = "same elements, new shape";
  let description = [{
    The result has the input's element type and element count.

    ```mlir
    %y = cairn.reshape %x : tensor<64x1x28x28xf32> -> tensor<64x784xf32>
    ```
  }];
  let arguments = (ins Cairn_Tensor:$input);
  let results = (outs Cairn_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Cairn_PermuteOp : Cairn_Op<"permute", [Pure]> {
  let summary = "Tensor.permute";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`.

    ```mlir
    %y = cairn.permute %x {permutation = array<i64: 0, 2, 1>} : tensor<8x16x64xf32> -> tensor<8x64x16xf32>
    ```
  }];
  let arguments = (ins Cairn_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Cairn_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Cairn_ConcatOp : Cairn_Op<"concat", [Pure]> {
  let summary = "torch.cat";
  let description = [{
    At least one input, all of the same rank and element type, equal except
    at `dim`; the result's `dim` is the sum.

    ```mlir
    %y = cairn.concat %a, %b {dim = 1 : i64} : (tensor<8x16xf32>, tensor<8x32xf32>) -> tensor<8x48xf32>
    ```
  }];
  let arguments = (ins Variadic<Cairn_Tensor>:$inputs, Cairn_I64Attr:$dim);
  let results = (outs Cairn_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $result)";
  let hasVerifier = 1;
}

def Cairn_SliceOp : Cairn_Op<"slice", [Pure]> {
  let summary = "strided slice";
  let description = [{
    One normalized `start`, `limit` and `step` per dimension:
    0 <= start < limit <= size and step >= 1; the result dimension is
    `ceil((limit - start) / step)`.

    ```mlir
    %y = cairn.slice %x {limit = array<i64: 8, 10>, start = array<i64: 0, 2>, step = array<i64: 1, 2>} : tensor<8x10xf32> -> tensor<8x4xf32>
    ```
  }];
  let arguments = (ins Cairn_Tensor:$input, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$step);
  let results = (outs Cairn_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions and losses
//===----------------------------------------------------------------------===//

class Cairn_ReduceOp<string mnemonic, string what>
    : Cairn_Op<mnemonic, [Pure]> {
  let summary = what # " over dimensions";
  let description = [{
    Reduces over `dims` (non-empty, sorted, unique, in [0, rank)); the result
    drops them, or keeps them as 1 with `keepdim`. Its element type is the
    input's, or float32 for an f16 or bf16 input (summed in float32 from
    the half values: what a cast to float32 and the sum give).

    ```mlir
    %y = cairn.}] # mnemonic # [{ %x {dims = array<i64: 1>, keepdim = false} : tensor<8x16xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input, DenseI64ArrayAttr:$dims,
                       BoolAttr:$keepdim);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Cairn_SumOp : Cairn_ReduceOp<"sum", "sum">;
def Cairn_MeanOp : Cairn_ReduceOp<"mean", "mean">;

def Cairn_CrossEntropyOp : Cairn_Op<"cross_entropy", [Pure]> {
  let summary = "nn.CrossEntropyLoss, mean over the batch";
  let description = [{
    logits `[N, C]` and class labels `[N]`; the result is a rank-0 tensor of
    the logits' element type. `label_smoothing` is in [0, 1].

    ```mlir
    %l = cairn.cross_entropy %logits, %labels {label_smoothing = 0.000000e+00 : f64} : (tensor<64x10xf32>, tensor<64xi64>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$logits, Cairn_IndexTensor:$labels,
                       Cairn_F64Attr:$label_smoothing);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_MseLossOp : Cairn_Op<"mse_loss", [Pure]> {
  let summary = "nn.MSELoss, mean over all elements";
  let description = [{
    input and target of the same type; the result is a rank-0 tensor of their
    element type.

    ```mlir
    %l = cairn.mse_loss %y, %t : (tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input, Cairn_FloatTensor:$target);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $target attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

include "ir/CairnTrainingOps.td"

#endif // CAIRN_IR_CAIRNOPS_TD
