//===- CairnTrainingOps.td - Ops of the training step ------*- tablegen -*-===//
//
// The ops that autodiff (passes/Autodiff.cpp) emits for the backward pass and
// the optimizer update: one gradient op per forward op that needs more than
// the existing elementwise, reduction and data-movement ops, with PyTorch's
// semantics. Included at the end of CairnOps.td; verifiers in
// CairnTrainingOps.cpp.
//
// Naming: `dy` is the gradient of the forward op's result, `input` (x) and
// `output` (y) are the forward op's input and result; every result has the
// type of the value it is the gradient of.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_IR_CAIRNTRAININGOPS_TD
#define CAIRN_IR_CAIRNTRAININGOPS_TD

//===----------------------------------------------------------------------===//
// Elementwise and softmax
//===----------------------------------------------------------------------===//

class Cairn_ActivationGradOp<string mnemonic, string from, string rule,
                             string operand>
    : Cairn_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "gradient of " # from;
  let description = "Elementwise `" # rule # "`; operands and result have "
    # "one type.\n\n```mlir\n%dx = cairn." # mnemonic # " %dy, %"
    # !if(!eq(operand, "input"), "x", "y") # " : tensor<64x256xf32>\n```";
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$dy `,` $" # operand # " attr-dict `:` type($result)";
}

/// relu_grad reads relu's result, as PyTorch's threshold_backward does:
/// y > 0 exactly when x > 0 (NaN in neither), and relu's input need not be
/// kept for the backward pass when only relu reads it.
def Cairn_ReluGradOp : Cairn_ActivationGradOp<"relu_grad", "relu",
    "dx = y > 0 ? dy : 0", "output"> {
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$output);
}

/// sigmoid_grad and tanh_grad read the forward result y.
def Cairn_SigmoidGradOp : Cairn_ActivationGradOp<"sigmoid_grad", "sigmoid",
    "dx = dy * y * (1 - y)", "output"> {
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$output);
}

def Cairn_TanhGradOp : Cairn_ActivationGradOp<"tanh_grad", "tanh",
    "dx = dy * (1 - y * y)", "output"> {
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$output);
}

/// silu_grad and hardswish_grad read the forward input x, as PyTorch's
/// silu_backward and hardswish_backward do.
def Cairn_SiluGradOp : Cairn_ActivationGradOp<"silu_grad", "silu",
    "dx = dy * s * (1 + x * (1 - s)), s = sigmoid(x)", "input"> {
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$input);
}

def Cairn_HardswishGradOp : Cairn_ActivationGradOp<"hardswish_grad",
    "hardswish", "dx = x <= -3 ? 0 : x >= 3 ? dy : dy * (x / 3 + 0.5)",
    "input"> {
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$input);
}

def Cairn_ClampGradOp : Cairn_Op<"clamp_grad", [Pure, SameOperandsAndResultType]> {
  let summary = "gradient of clamp";
  let description = [{
    Elementwise `dx = min < x < max ? dy : 0` (an absent bound passes
    everything; NaN gives 0), where x is clamp's input: PyTorch 2's gradient
    of torch.clamp, hardtanh and relu6, which is 0 on the bounds.

    ```mlir
    %dx = cairn.clamp_grad %dy, %x {max = 6.0 : f64, min = 0.0 : f64} : tensor<8x128xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$input,
                       OptionalAttr<Cairn_F64Attr>:$min,
                       OptionalAttr<Cairn_F64Attr>:$max);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$dy `,` $input attr-dict `:` type($result)";
}

def Cairn_LeakyReluGradOp : Cairn_Op<"leaky_relu_grad", [Pure, SameOperandsAndResultType]> {
  let summary = "gradient of leaky_relu";
  let description = [{
    Elementwise `dx = x > 0 ? dy : dy * negative_slope`, where x is
    leaky_relu's input, as PyTorch's leaky_relu_backward.

    ```mlir
    %dx = cairn.leaky_relu_grad %dy, %x {negative_slope = 0.01 : f64} : tensor<8x128xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$input,
                       Cairn_F64Attr:$negative_slope);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$dy `,` $input attr-dict `:` type($result)";
}

def Cairn_GeluGradOp : Cairn_Op<"gelu_grad", [Pure, SameOperandsAndResultType]> {
  let summary = "gradient of gelu";
  let description = [{
    Elementwise `dx = dy * gelu'(x)` where x is gelu's input, for the exact
    form (`approximate = "none"`, the default) or the tanh approximation, as
    PyTorch's gelu_backward.

    ```mlir
    %dx = cairn.gelu_grad %dy, %x {approximate = "tanh"} : tensor<8x128xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$input,
                       DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$dy `,` $input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

class Cairn_SoftmaxGradBase<string mnemonic, string from, string rule>
    : Cairn_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "gradient of " # from # " along one dimension";
  let description = [{
    `}] # rule # [{` along `dim` (in [0, rank)), where y is the forward op's
    result.

    ```mlir
    %dx = cairn.}] # mnemonic # [{ %dy, %y {dim = 1 : i64} : tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$output,
                       Cairn_I64Attr:$dim);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$dy `,` $output attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Cairn_SoftmaxGradOp : Cairn_SoftmaxGradBase<"softmax_grad", "softmax",
    "dx = y * (dy - sum(dy * y, dim))">;
def Cairn_LogSoftmaxGradOp : Cairn_SoftmaxGradBase<"log_softmax_grad",
    "log_softmax", "dx = dy - exp(y) * sum(dy, dim)">;

//===----------------------------------------------------------------------===//
// Linear and convolution
//===----------------------------------------------------------------------===//

def Cairn_LinearGradInputOp : Cairn_Op<"linear_grad_input", [Pure]> {
  let summary = "gradient of linear with respect to its input";
  let description = [{
    `dx = dy W`: dy `[..., out]`, weight `[out, in]`; the result is
    `[..., in]` with dy's leading dimensions (the input's type).

    ```mlir
    %dx = cairn.linear_grad_input %dy, %w : (tensor<64x10xf32>, tensor<10x784xf32>) -> tensor<64x784xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$weight);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $dy `,` $weight attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_LinearGradWeightOp : Cairn_Op<"linear_grad_weight", [Pure]> {
  let summary = "gradient of linear with respect to its weight";
  let description = [{
    `dW = sum over the leading dimensions of dy^T x`: dy `[..., out]` and
    input `[..., in]` with the same leading dimensions; the result is the
    weight's type `[out, in]`. The bias gradient is a `cairn.sum` of dy over
    its leading dimensions.

    ```mlir
    %dw = cairn.linear_grad_weight %dy, %x : (tensor<64x10xf32>, tensor<64x784xf32>) -> tensor<10x784xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$input);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $dy `,` $input attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_Conv2dGradInputOp : Cairn_Op<"conv2d_grad_input", [Pure]> {
  let summary = "gradient of conv2d with respect to its input";
  let description = [{
    The transposed convolution of dy `[N, O, Ho, Wo]` with the weight
    `[O, C / groups, kh, kw]`; the result has the forward input's type
    `[N, C, H, W]`, which with the attributes (those of the forward conv2d)
    must give dy's shape. Input rows and columns that no window reached get 0.
    An optional `bias` `[C]` (a ConvTranspose2d's) is added to each channel
    before the result is rounded to its type, as the product's own sums are:
    in half precision, one rounding, as autocast's conv_transpose2d.

    ```mlir
    %dx = cairn.conv2d_grad_input %dy, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>}
        : (tensor<8x16x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<8x3x32x32xf32>
    %y = cairn.conv2d_grad_input %x, %w bias %b {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>}
        : (tensor<8x16x7x7xf32>, tensor<16x3x3x3xf32>, tensor<3xf32>) -> tensor<8x3x13x13xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$weight,
                       Optional<Cairn_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, Cairn_I64Attr:$groups);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $dy `,` $weight (`bias` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_Conv2dGradWeightOp : Cairn_Op<"conv2d_grad_weight", [Pure]> {
  let summary = "gradient of conv2d with respect to its weight";
  let description = [{
    The correlation of the input `[N, C, H, W]` with dy `[N, O, Ho, Wo]`,
    summed over the batch; the result has the weight's type
    `[O, C / groups, kh, kw]`. The bias gradient is a `cairn.sum` of dy over
    dimensions [0, 2, 3].

    ```mlir
    %dw = cairn.conv2d_grad_weight %dy, %x {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>}
        : (tensor<8x16x32x32xf32>, tensor<8x3x32x32xf32>) -> tensor<16x3x3x3xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$input,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, Cairn_I64Attr:$groups);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $dy `,` $input attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalization and embedding
//===----------------------------------------------------------------------===//

def Cairn_BatchNormGradOp : Cairn_Op<"batch_norm_grad", [Pure]> {
  let summary = "gradient of batch_norm in training mode";
  let description = [{
    The backward of a training-mode batch_norm: the batch mean and biased
    variance are recomputed from the input (nothing is saved). dy and input
    are `[N, C]`, `[N, C, L]` or `[N, C, H, W]`; the optional weight is
    `[C]`. Results: the input's gradient (its type) and the weight's and
    bias's gradients, both `[C]` (unused when the layer has no affine part).

    ```mlir
    %dx, %dw, %db = cairn.batch_norm_grad %dy, %x weight %g {eps = 1.000000e-05 : f64}
        : (tensor<8x16x4x4xf32>, tensor<8x16x4x4xf32>, tensor<16xf32>) -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$input,
                       Optional<Cairn_FloatTensor>:$weight,
                       Cairn_F64Attr:$eps);
  let results = (outs Cairn_FloatTensor:$grad_input,
                      Cairn_FloatTensor:$grad_weight,
                      Cairn_FloatTensor:$grad_bias);
  let assemblyFormat = [{
    $dy `,` $input (`weight` $weight^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_BatchNormRunningUpdateOp
    : Cairn_Op<"batch_norm_running_update", [Pure]> {
  let summary = "new running statistics of a training-mode batch_norm";
  let description = [{
    From the batch mean and the unbiased batch variance of the input (divisor
    `N * spatial - 1`), as nn.BatchNorm in training mode:
    `new_mean = (1 - momentum) * running_mean + momentum * mean`, likewise
    `new_var` with the variance, and `new_count = num_batches_tracked + 1`.
    running_mean and running_var are `[C]`, num_batches_tracked is
    `tensor<i64>`; each result has the type of the operand it replaces.

    ```mlir
    %m, %v, %n = cairn.batch_norm_running_update %x, %mean, %var, %count {momentum = 1.000000e-01 : f64}
        : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<i64>) -> (tensor<16xf32>, tensor<16xf32>, tensor<i64>)
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$input,
                       Cairn_FloatTensor:$running_mean,
                       Cairn_FloatTensor:$running_var,
                       TensorOf<[I64]>:$num_batches_tracked,
                       Cairn_F64Attr:$momentum);
  let results = (outs Cairn_FloatTensor:$new_running_mean,
                      Cairn_FloatTensor:$new_running_var,
                      TensorOf<[I64]>:$new_num_batches_tracked);
  let assemblyFormat = [{
    $input `,` $running_mean `,` $running_var `,` $num_batches_tracked
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_LayerNormGradOp : Cairn_Op<"layer_norm_grad", [Pure]> {
  let summary = "gradient of layer_norm";
  let description = [{
    The backward of layer_norm over the trailing `normalized_rank`
    dimensions, statistics recomputed from the input. The optional weight has
    the normalized shape. Results: the input's gradient (its type) and the
    weight's and bias's gradients, both of the normalized shape (unused when
    the layer has no affine part).

    ```mlir
    %dx, %dw, %db = cairn.layer_norm_grad %dy, %x weight %g {eps = 1.000000e-05 : f64, normalized_rank = 1 : i64}
        : (tensor<8x16x64xf32>, tensor<8x16x64xf32>, tensor<64xf32>) -> (tensor<8x16x64xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$input,
                       Optional<Cairn_FloatTensor>:$weight,
                       Cairn_I64Attr:$normalized_rank, Cairn_F64Attr:$eps);
  let results = (outs Cairn_FloatTensor:$grad_input,
                      Cairn_FloatTensor:$grad_weight,
                      Cairn_FloatTensor:$grad_bias);
  let assemblyFormat = [{
    $dy `,` $input (`weight` $weight^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_EmbeddingGradOp : Cairn_Op<"embedding_grad", [Pure]> {
  let summary = "gradient of embedding with respect to its weight";
  let description = [{
    Scatter-adds the rows of dy `indices.shape + [dim]` into a zero
    `[num_embeddings, dim]` tensor at their indices; the row at `padding_idx`
    (when given) stays 0.

    ```mlir
    %dw = cairn.embedding_grad %dy, %ids {num_embeddings = 1000 : i64, padding_idx = 0 : i64}
        : (tensor<8x32x64xf32>, tensor<8x32xi64>) -> tensor<1000x64xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_IndexTensor:$indices,
                       Cairn_I64Attr:$num_embeddings,
                       OptionalAttr<Cairn_I64Attr>:$padding_idx);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $dy `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def Cairn_MaxPool2dGradOp : Cairn_Op<"max_pool2d_grad", [Pure]> {
  let summary = "gradient of max_pool2d";
  let description = [{
    Routes each element of dy to the position of its window's maximum in the
    input (the first one in row-major order on ties, as PyTorch), summing
    where windows overlap. The attributes are the forward op's; the result
    has the input's type.

    ```mlir
    %dx = cairn.max_pool2d_grad %dy, %x {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}
        : (tensor<8x16x16x16xf32>, tensor<8x16x32x32xf32>) -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy, Cairn_FloatTensor:$input,
                       DenseI64ArrayAttr:$kernel_size,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, BoolAttr:$ceil_mode);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $dy `,` $input attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_AvgPool2dGradOp : Cairn_Op<"avg_pool2d_grad", [Pure]> {
  let summary = "gradient of avg_pool2d";
  let description = [{
    Spreads each element of dy over its window, divided by the forward op's
    divisor. The attributes are the forward op's; the result type is the
    forward input's.

    ```mlir
    %dx = cairn.avg_pool2d_grad %dy {ceil_mode = false, count_include_pad = true, kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>}
        : tensor<8x16x16x16xf32> -> tensor<8x16x32x32xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy,
                       DenseI64ArrayAttr:$kernel_size,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       BoolAttr:$ceil_mode, BoolAttr:$count_include_pad);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$dy attr-dict `:` type($dy) `->` type($result)";
  let hasVerifier = 1;
}

def Cairn_AdaptiveAvgPool2dGradOp
    : Cairn_Op<"adaptive_avg_pool2d_grad", [Pure]> {
  let summary = "gradient of adaptive_avg_pool2d";
  let description = [{
    Spreads each element of dy `[N, C, oh, ow]` evenly over its adaptive
    window; the forward `output_size` is dy's spatial dimensions and the
    result type is the forward input's `[N, C, H, W]`.

    ```mlir
    %dx = cairn.adaptive_avg_pool2d_grad %dy : tensor<8x512x1x1xf32> -> tensor<8x512x7x7xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dy);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "$dy attr-dict `:` type($dy) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Cairn_SliceGradOp : Cairn_Op<"slice_grad", [Pure]> {
  let summary = "gradient of slice";
  let description = [{
    Places dy at the positions the forward slice read (same `start`, `limit`
    and `step`) in a zero tensor of the forward input's type.

    ```mlir
    %dx = cairn.slice_grad %dy {limit = array<i64: 8, 10>, start = array<i64: 0, 2>, step = array<i64: 1, 2>} : tensor<8x4xf32> -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins Cairn_Tensor:$dy, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$step);
  let results = (outs Cairn_Tensor:$result);
  let assemblyFormat = "$dy attr-dict `:` type($dy) `->` type($result)";
  let hasVerifier = 1;
}

def Cairn_BroadcastOp : Cairn_Op<"broadcast", [Pure]> {
  let summary = "NumPy broadcast to the result shape";
  let description = [{
    Repeats the input along the dimensions where the result is larger
    (NumPy rules: aligned on the right, each input dimension equal to the
    result's or 1). Autodiff uses it for the gradients of sum and mean.

    ```mlir
    %y = cairn.broadcast %x : tensor<64x1xf32> -> tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Cairn_Tensor:$input);
  let results = (outs Cairn_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Cairn_CrossEntropyGradOp : Cairn_Op<"cross_entropy_grad", [Pure]> {
  let summary = "gradient of cross_entropy with respect to the logits";
  let description = [{
    `dlogits = dloss * (softmax(logits) - target) / N`, with the target
    `(1 - label_smoothing) * onehot(labels) + label_smoothing / C`; dloss is
    the rank-0 gradient of the loss and the result has the logits' type.

    ```mlir
    %dl = cairn.cross_entropy_grad %dloss, %logits, %labels {label_smoothing = 0.000000e+00 : f64}
        : (tensor<f32>, tensor<64x10xf32>, tensor<64xi64>) -> tensor<64x10xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dloss, Cairn_FloatTensor:$logits,
                       Cairn_IndexTensor:$labels,
                       Cairn_F64Attr:$label_smoothing);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $dloss `,` $logits `,` $labels attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_MseLossGradOp : Cairn_Op<"mse_loss_grad", [Pure]> {
  let summary = "gradient of mse_loss with respect to the input";
  let description = [{
    `dinput = dloss * 2 * (input - target) / numel`; the target's gradient
    is its negation. dloss is rank 0; the result has the input's type.

    ```mlir
    %di = cairn.mse_loss_grad %dloss, %y, %t : (tensor<f32>, tensor<64x1xf32>, tensor<64x1xf32>) -> tensor<64x1xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$dloss, Cairn_FloatTensor:$input,
                       Cairn_FloatTensor:$target);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $dloss `,` $input `,` $target attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

def Cairn_ClipCoefficientOp : Cairn_Op<"clip_coefficient", [Pure]> {
  let summary = "torch.nn.utils.clip_grad_norm_'s scale of every gradient";
  let description = [{
    The gradients' total `norm_type`-norm (the norm of their norms; infinity
    is the largest magnitude), then
    `min(max_norm / (total + 1e-6), 1)` in the gradients' element type, which
    autodiff multiplies every gradient by before the updates. All gradients
    share one element type; the result is a rank-0 tensor of it.

    ```mlir
    %c = cairn.clip_coefficient %dw, %db {max_norm = 1.000000e+00 : f64, norm_type = 2.000000e+00 : f64}
        : (tensor<10x784xf32>, tensor<10xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<Cairn_FloatTensor>:$grads,
                       Cairn_F64Attr:$max_norm, Cairn_F64Attr:$norm_type);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $grads attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Loss scaling (torch.amp.GradScaler)
//===----------------------------------------------------------------------===//

def Cairn_LossScaleOp : Cairn_Op<"loss_scale", [Pure]> {
  let summary = "the loss scaler's scale of this step, or its inverse";
  let description = [{
    The scale S the runtime's loss scaler gives this step
    (StepContext::lossScale: dynamic, fixed, or 1), as a rank-0 float32
    tensor; with `inverse`, 1 / S. In a step built with loss scaling,
    autodiff seeds d(loss) = S, so that small half-precision gradients do
    not flush to zero, and multiplies every parameter's gradient by 1 / S
    before anything reads it.

    ```mlir
    %s = cairn.loss_scale : tensor<f32>
    %inv = cairn.loss_scale {inverse} : tensor<f32>
    ```
  }];
  let arguments = (ins UnitAttr:$inverse);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Cairn_FoundInfOp : Cairn_Op<"found_inf", [Pure]> {
  let summary = "whether any gradient has an infinite or NaN element";
  let description = [{
    1 when an element of the gradients is infinite or NaN, else 0, as a
    rank-0 float32 tensor: GradScaler's found_inf. The updates of a step
    with loss scaling take it, and leave every parameter, optimizer state
    and running statistic as it was when it is 1 (the step is skipped).

    ```mlir
    %f = cairn.found_inf %dw, %db : (tensor<10x784xf32>, tensor<10xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Variadic<Cairn_FloatTensor>:$grads);
  let results = (outs Cairn_FloatTensor:$result);
  let assemblyFormat = [{
    $grads attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_SkipSelectOp : Cairn_Op<"skip_select", [Pure]> {
  let summary = "the old value on a skipped step, else the new one";
  let description = [{
    `old` where `found_inf` (a rank-0 float32 `cairn.found_inf`) is nonzero,
    else `updated`: how a step with loss scaling commits the running statistics
    a training-mode batch norm computed in the forward, so that a skipped
    step leaves them and `num_batches_tracked` untouched. `updated`, `old` and
    the result have one type.

    ```mlir
    %m = cairn.skip_select %found, %updated_mean, %mean : (tensor<f32>, tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$found_inf, Cairn_Tensor:$updated,
                       Cairn_Tensor:$old);
  let results = (outs Cairn_Tensor:$result);
  let assemblyFormat = [{
    $found_inf `,` $updated `,` $old attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_SGDUpdateOp : Cairn_Op<"sgd_update", [Pure, AttrSizedOperandSegments]> {
  let summary = "one torch.optim.SGD step for one parameter";
  let description = [{
    PyTorch 1.13's SGD for one tensor:
    `g = grad + weight_decay * param`; with momentum,
    `buf = first step ? g : momentum * buf + (1 - dampening) * g` and
    `g = nesterov ? g + momentum * buf : buf`; `new_param = param - lr * g`.
    The momentum buffer is an operand (and `new_momentum_buffer` a result)
    exactly when momentum != 0. Whether this is the first step is not in the
    IR: it comes from the runtime's step counter (StepContext::step == 0).
    Every operand and result has the parameter's type, but `found_inf`: in a
    step with loss scaling, the rank-0 float32 `cairn.found_inf` of the
    gradients, and where it is nonzero the results are the operands (the
    step is skipped).

    ```mlir
    %p, %b = cairn.sgd_update %w, %dw momentum_buffer %buf {dampening = 0.000000e+00 : f64, lr = 1.000000e-01 : f64, momentum = 9.000000e-01 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64}
        : (tensor<10x784xf32>, tensor<10x784xf32>, tensor<10x784xf32>) -> (tensor<10x784xf32>, tensor<10x784xf32>)
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$param, Cairn_FloatTensor:$grad,
                       Optional<Cairn_FloatTensor>:$momentum_buffer,
                       Optional<Cairn_FloatTensor>:$found_inf,
                       Cairn_F64Attr:$lr, Cairn_F64Attr:$momentum,
                       Cairn_F64Attr:$dampening, Cairn_F64Attr:$weight_decay,
                       BoolAttr:$nesterov);
  let results = (outs Cairn_FloatTensor:$new_param,
                      Optional<Cairn_FloatTensor>:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad (`momentum_buffer` $momentum_buffer^)? (`found_inf` $found_inf^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Cairn_AdamUpdateOp : Cairn_Op<"adam_update", [Pure]> {
  let summary = "one torch.optim.Adam or AdamW step for one parameter";
  let description = [{
    PyTorch 1.13's Adam for one tensor, with t the 1-based step:
    `g = grad + weight_decay * param`,
    `m = beta1 * exp_avg + (1 - beta1) * g`,
    `v = beta2 * exp_avg_sq + (1 - beta2) * g^2`,
    `new_param = param - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)`;
    with `decoupled_weight_decay` (AdamW), `g = grad` and the param is first
    scaled by `1 - lr * weight_decay`. t is not in the IR: it comes from the runtime's step counter
    (StepContext::step + 1). Every operand and result has the parameter's
    type (but `found_inf`, as in sgd_update: nonzero skips the step); the
    results are the new param, exp_avg (m) and exp_avg_sq (v).

    ```mlir
    %p, %m, %v = cairn.adam_update %w, %dw, %m0, %v0 {beta1 = 9.000000e-01 : f64, beta2 = 9.990000e-01 : f64, eps = 1.000000e-08 : f64, lr = 1.000000e-03 : f64, weight_decay = 0.000000e+00 : f64}
        : (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
    ```
  }];
  let arguments = (ins Cairn_FloatTensor:$param, Cairn_FloatTensor:$grad,
                       Cairn_FloatTensor:$exp_avg, Cairn_FloatTensor:$exp_avg_sq,
                       Optional<Cairn_FloatTensor>:$found_inf,
                       Cairn_F64Attr:$lr, Cairn_F64Attr:$beta1,
                       Cairn_F64Attr:$beta2, Cairn_F64Attr:$eps,
                       Cairn_F64Attr:$weight_decay,
                       DefaultValuedAttr<BoolAttr, "false">:$decoupled_weight_decay);
  let results = (outs Cairn_FloatTensor:$new_param,
                      Cairn_FloatTensor:$new_exp_avg,
                      Cairn_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq (`found_inf` $found_inf^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // CAIRN_IR_CAIRNTRAININGOPS_TD
