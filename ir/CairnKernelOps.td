//===- CairnKernelOps.td - Kernels of the planned step -----*- tablegen -*-===//
//
// One op per kernel kind: the typed description of what a kernel reads,
// writes and needs (operands, attributes, workspace). A kernel lives in a
// `cairn.step` and works in destination-passing style: it reads the buffers
// (or views) of its inputs and writes the buffers of its outputs, in ODS
// order inputs, outputs, then its workspace. An absent optional operand (a
// bias, a gradient nothing reads) is simply not there. Every size a call
// needs is an attribute, so emitters only print.
//
// The printed form is the same for every kernel:
//
//   cairn.kernel.linear ins(%x, %w, _ : memref<64x784xf32>, memref<256x784xf32>)
//                       outs(%y : memref<64x256xf32>) {in = 784 : i64, ...}
//
// where `_` is an absent optional operand and a variadic group (concat's
// inputs) takes the rest of its list.
//
// Adding a kind: one def here, its lowering (passes/LowerToKernels), and its
// CPU and CUDA bodies (codegen/).
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_IR_CAIRNKERNELOPS_TD
#define CAIRN_IR_CAIRNKERNELOPS_TD

include "ir/CairnDialect.td"
include "ir/CairnAttrs.td"
include "ir/CairnInterfaces.td"

/// Output element i depends on input element i alone (a broadcast one for
/// binary ops), read before element i is written: the output may be written
/// over an input of the same size that dies at the kernel (C++ in
/// CairnKernelOps.h).
def Cairn_ElementwiseKernel : NativeOpTrait<"ElementwiseKernel"> {
  let cppNamespace = "::cairn::OpTrait";
}

/// A kernel with `numInputs` input groups, `numOutputs` output groups and,
/// when `hasWorkspace`, an optional workspace buffer last; `segmented` when
/// two or more of the groups are optional or variadic (ODS then records each
/// group's size); `groups` spells each group: 1 (one buffer), ? (optional),
/// + (one or more).
class Cairn_KernelOp<string mnemonic, int numInputs, int numOutputs,
                     bit hasWorkspace, bit segmented, string groups,
                     list<Trait> traits = []>
    : Op<Cairn_Dialect, "kernel." # mnemonic,
         !listconcat(traits, [HasParent<"StepOp">, KernelOpInterface],
                     !if(segmented, [AttrSizedOperandSegments], []))> {
  let description = [{
    A kernel of the planned step (see CairnKernelOps.td for the printed
    form shared by every kernel).
  }];
  /// C++ a kind adds to its op class.
  code extraKernelDeclaration = "";
  let extraClassDeclaration =
      "static constexpr unsigned kNumInputs = " # numInputs # ";\n" #
      "static constexpr unsigned kNumOutputs = " # numOutputs # ";\n" #
      "static constexpr bool kHasWorkspace = " #
      !if(hasWorkspace, "true", "false") # ";\n" #
      "static constexpr bool kSegmented = " #
      !if(segmented, "true", "false") # ";\n" #
      "static constexpr ::llvm::StringLiteral kGroups = \"" # groups #
      "\";\n" # extraKernelDeclaration # [{
    static ::mlir::ParseResult parse(::mlir::OpAsmParser &parser,
                                     ::mlir::OperationState &result) {
      return ::cairn::detail::parseKernelOp(parser, result, kNumInputs,
                                            kNumOutputs, kHasWorkspace,
                                            kSegmented);
    }
    void print(::mlir::OpAsmPrinter &printer) {
      ::cairn::detail::printKernelOp(printer, *this);
    }
  }];
}

//===----------------------------------------------------------------------===//
// Data
//===----------------------------------------------------------------------===//

def Cairn_FillKernelOp : Cairn_KernelOp<"fill", 0, 1, 0, 0, "1"> {
  let summary = "fills a buffer with one value";
  let arguments = (ins Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       AnyAttrOf<[Cairn_F64Attr, Cairn_I64Attr]>:$value);
}

def Cairn_ConstantKernelOp : Cairn_KernelOp<"constant", 0, 1, 0, 0, "1"> {
  let summary = "copies a table of values into a buffer";
  let arguments = (ins Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       AnyAttrOf<[DenseF64ArrayAttr, DenseI64ArrayAttr]>:$values);
}

def Cairn_CopyKernelOp : Cairn_KernelOp<"copy", 1, 1, 0, 0, "11"> {
  let summary = "copies a buffer into another of the same size";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result);
}

def Cairn_CastKernelOp : Cairn_KernelOp<"cast", 1, 1, 0, 0, "11"> {
  let summary = "result = input converted to the result's element type";
  let description = [{
    Converts `n` elements between float32 and f16 or bf16 (rounding to
    nearest even, NaN kept, overflow to infinity), as PyTorch's `.to()`.
    Not element-wise in the in-place sense: the two sides differ in size.
  }];
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
}

//===----------------------------------------------------------------------===//
// Transfers between devices
//===----------------------------------------------------------------------===//

// A partitioned program (cairn-partition-devices) moves a value that another
// device reads with one send on the device that computes it and one receive
// on the device that reads it. `tag` numbers the step's transfers in the
// order every device runs them, so blocking sends and receives cannot wait
// on each other in a cycle.

def Cairn_SendKernelOp : Cairn_KernelOp<"send", 1, 0, 0, 0, "1"> {
  let summary = "sends a buffer's bytes to device `peer`";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_I64Attr:$peer,
                       Cairn_I64Attr:$tag);
}

def Cairn_ReceiveKernelOp : Cairn_KernelOp<"receive", 0, 1, 0, 0, "1"> {
  let summary = "receives a buffer's bytes from device `peer`";
  let arguments = (ins Cairn_MemRef:$result,
                       Cairn_I64Attr:$peer,
                       Cairn_I64Attr:$tag);
}

// A step compiled for one of R data-parallel replicas (cairn-all-reduce-
// gradients) sums its gradients across the replicas in buckets, in place: a
// start right after the backward completes a bucket's last gradient, which
// starts summing them over every replica, and a wait right before the first
// kernel that needs one of them, which waits for the sums. Between the two
// the step runs on: the sum overlaps the backward. The bucket's buffer is
// the sum's workspace (the other replicas' copies of this one's chunk of the
// gradients: runtime/SumChunks.h).

def Cairn_AllReduceStartKernelOp : Cairn_KernelOp<"all_reduce_start", 1, 1, 0, 0, "+1"> {
  let summary = "starts summing `grads` across the replicas, in place, with `bucket` as workspace";
  let arguments = (ins Variadic<Cairn_MemRef>:$grads,
                       Cairn_MemRef:$bucket,
                       Cairn_I64Attr:$index);
  let hasVerifier = 1;
}

def Cairn_AllReduceWaitKernelOp : Cairn_KernelOp<"all_reduce_wait", 2, 1, 0, 1, "1++"> {
  let summary = "waits for the sums of `grads` (in place) that a start with `bucket` began";
  let arguments = (ins Cairn_MemRef:$bucket,
                       Variadic<Cairn_MemRef>:$grads,
                       Variadic<Cairn_MemRef>:$new_grads,
                       Cairn_I64Attr:$index);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

def Cairn_AddKernelOp : Cairn_KernelOp<"add", 2, 1, 0, 0, "111", [Cairn_ElementwiseKernel]> {
  let summary = "result = lhs + rhs, NumPy broadcasting by strides (0 repeats)";
  let arguments = (ins Cairn_MemRef:$lhs,
                       Cairn_MemRef:$rhs,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       DenseI64ArrayAttr:$lhs_strides,
                       DenseI64ArrayAttr:$rhs_strides);
}

def Cairn_SubKernelOp : Cairn_KernelOp<"sub", 2, 1, 0, 0, "111", [Cairn_ElementwiseKernel]> {
  let summary = "result = lhs - rhs, NumPy broadcasting by strides (0 repeats)";
  let arguments = (ins Cairn_MemRef:$lhs,
                       Cairn_MemRef:$rhs,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       DenseI64ArrayAttr:$lhs_strides,
                       DenseI64ArrayAttr:$rhs_strides);
}

def Cairn_MulKernelOp : Cairn_KernelOp<"mul", 2, 1, 0, 0, "111", [Cairn_ElementwiseKernel]> {
  let summary = "result = lhs * rhs, NumPy broadcasting by strides (0 repeats)";
  let arguments = (ins Cairn_MemRef:$lhs,
                       Cairn_MemRef:$rhs,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       DenseI64ArrayAttr:$lhs_strides,
                       DenseI64ArrayAttr:$rhs_strides);
}

def Cairn_DivKernelOp : Cairn_KernelOp<"div", 2, 1, 0, 0, "111", [Cairn_ElementwiseKernel]> {
  let summary = "result = lhs / rhs, NumPy broadcasting by strides (0 repeats)";
  let arguments = (ins Cairn_MemRef:$lhs,
                       Cairn_MemRef:$rhs,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       DenseI64ArrayAttr:$lhs_strides,
                       DenseI64ArrayAttr:$rhs_strides);
}

def Cairn_ReluKernelOp : Cairn_KernelOp<"relu", 1, 1, 0, 0, "11", [Cairn_ElementwiseKernel]> {
  let summary = "result = relu(input)";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
}

def Cairn_SigmoidKernelOp : Cairn_KernelOp<"sigmoid", 1, 1, 0, 0, "11", [Cairn_ElementwiseKernel]> {
  let summary = "result = sigmoid(input)";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
}

def Cairn_TanhKernelOp : Cairn_KernelOp<"tanh", 1, 1, 0, 0, "11", [Cairn_ElementwiseKernel]> {
  let summary = "result = tanh(input)";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
}

def Cairn_SiluKernelOp : Cairn_KernelOp<"silu", 1, 1, 0, 0, "11", [Cairn_ElementwiseKernel]> {
  let summary = "result = silu(input)";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
}

def Cairn_HardswishKernelOp : Cairn_KernelOp<"hardswish", 1, 1, 0, 0, "11", [Cairn_ElementwiseKernel]> {
  let summary = "result = hardswish(input)";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
}

def Cairn_ClampKernelOp : Cairn_KernelOp<"clamp", 1, 1, 0, 0, "11", [Cairn_ElementwiseKernel]> {
  let summary = "result = clamp(input, min, max), either bound absent";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       OptionalAttr<Cairn_F64Attr>:$min,
                       OptionalAttr<Cairn_F64Attr>:$max);
}

def Cairn_LeakyReluKernelOp : Cairn_KernelOp<"leaky_relu", 1, 1, 0, 0, "11", [Cairn_ElementwiseKernel]> {
  let summary = "result = leaky_relu(input, negative_slope)";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       Cairn_F64Attr:$negative_slope);
}

def Cairn_GeluKernelOp : Cairn_KernelOp<"gelu", 1, 1, 0, 0, "11", [Cairn_ElementwiseKernel]> {
  let summary = "result = gelu(input), exact or tanh-approximated";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       BoolAttr:$tanh);
}

def Cairn_ReluGradKernelOp : Cairn_KernelOp<"relu_grad", 2, 1, 0, 0, "111", [Cairn_ElementwiseKernel]> {
  let summary = "gradient of relu from its result";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$output,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
}

def Cairn_SigmoidGradKernelOp : Cairn_KernelOp<"sigmoid_grad", 2, 1, 0, 0, "111", [Cairn_ElementwiseKernel]> {
  let summary = "gradient of sigmoid from its result";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$output,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
}

def Cairn_TanhGradKernelOp : Cairn_KernelOp<"tanh_grad", 2, 1, 0, 0, "111", [Cairn_ElementwiseKernel]> {
  let summary = "gradient of tanh from its result";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$output,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
}

def Cairn_SiluGradKernelOp : Cairn_KernelOp<"silu_grad", 2, 1, 0, 0, "111", [Cairn_ElementwiseKernel]> {
  let summary = "gradient of silu from its input";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
}

def Cairn_HardswishGradKernelOp : Cairn_KernelOp<"hardswish_grad", 2, 1, 0, 0, "111", [Cairn_ElementwiseKernel]> {
  let summary = "gradient of hardswish from its input";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
}

def Cairn_ClampGradKernelOp : Cairn_KernelOp<"clamp_grad", 2, 1, 0, 0, "111", [Cairn_ElementwiseKernel]> {
  let summary = "gradient of clamp from its input";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       OptionalAttr<Cairn_F64Attr>:$min,
                       OptionalAttr<Cairn_F64Attr>:$max);
}

def Cairn_LeakyReluGradKernelOp : Cairn_KernelOp<"leaky_relu_grad", 2, 1, 0, 0, "111", [Cairn_ElementwiseKernel]> {
  let summary = "gradient of leaky_relu from its input";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       Cairn_F64Attr:$negative_slope);
}

def Cairn_GeluGradKernelOp : Cairn_KernelOp<"gelu_grad", 2, 1, 0, 0, "111", [Cairn_ElementwiseKernel]> {
  let summary = "gradient of gelu from its input";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       BoolAttr:$tanh);
}

def Cairn_ElementwiseChainKernelOp : Cairn_KernelOp<"elementwise_chain", 1, 1, 0, 0, "+1", [Cairn_ElementwiseKernel]> {
  let summary = "element-wise ops fused into one pass over the elements";
  let description = [{
    What `cairn-fuse-elementwise` makes of a chain of element-wise kernels
    whose intermediate results only the next one reads: one kernel, one loop
    (one launch on CUDA), no buffers for the intermediates. It computes, for
    each element i, a small program on registers: registers 0 .. inputs-1
    hold element i of each input (element 0 of a one-element input), op j
    writes register inputs + j, and the last op's register is the result.
    `ops` names each op (add, sub, mul, div, relu, sigmoid, tanh,
    gelu_exact, gelu_tanh, silu, hardswish, relu_grad, sigmoid_grad,
    tanh_grad, gelu_exact_grad, gelu_tanh_grad, silu_grad, hardswish_grad,
    dropout: the kernels of the same names, one
    element at a time); `args` holds two registers per op, the second -1 for
    an op of one operand (a grad op takes dy, then what its forward saved).
    The k-th dropout of `ops` draws cairn.kernel.dropout's mask for element i
    with rate `dropout_p[k]` and stream `dropout_streams[k]` (plus
    `dropout_replica_strides[k]` times the replica, where that is not 0);
    these three arrays are present, one entry per dropout, when `ops` has a
    dropout, and absent otherwise.

    ```mlir
    cairn.kernel.elementwise_chain ins(%x, %s : memref<64x256xf32>, memref<f32>)
        outs(%y : memref<64x256xf32>)
        {args = array<i64: 0, 1, 2, -1>, n = 16384 : i64, ops = ["mul", "relu"]}
    ```
  }];
  let arguments = (ins Variadic<Cairn_MemRef>:$inputs,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       StrArrayAttr:$ops,
                       DenseI64ArrayAttr:$args,
                       OptionalAttr<DenseF64ArrayAttr>:$dropout_p,
                       OptionalAttr<DenseI64ArrayAttr>:$dropout_streams,
                       OptionalAttr<DenseI64ArrayAttr>:$dropout_replica_strides);
  let hasVerifier = 1;
  let extraKernelDeclaration = [{
    /// The registers op `index` reads: b is -1 for an op of one operand.
    std::pair<int64_t, int64_t> getOpArgs(unsigned index) {
      return {getArgs()[2 * index], getArgs()[2 * index + 1]};
    }
  }];
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

def Cairn_SoftmaxKernelOp : Cairn_KernelOp<"softmax", 1, 1, 0, 0, "11"> {
  let summary = "softmax along the middle of [outer, dim, inner]";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$outer,
                       Cairn_I64Attr:$dim,
                       Cairn_I64Attr:$inner);
}

def Cairn_SoftmaxGradKernelOp : Cairn_KernelOp<"softmax_grad", 2, 1, 0, 0, "111"> {
  let summary = "gradient of softmax from its result";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$output,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$outer,
                       Cairn_I64Attr:$dim,
                       Cairn_I64Attr:$inner);
}

def Cairn_LogSoftmaxKernelOp : Cairn_KernelOp<"log_softmax", 1, 1, 0, 0, "11"> {
  let summary = "log_softmax along the middle of [outer, dim, inner]";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$outer,
                       Cairn_I64Attr:$dim,
                       Cairn_I64Attr:$inner);
}

def Cairn_LogSoftmaxGradKernelOp : Cairn_KernelOp<"log_softmax_grad", 2, 1, 0, 0, "111"> {
  let summary = "gradient of log_softmax from its result";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$output,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$outer,
                       Cairn_I64Attr:$dim,
                       Cairn_I64Attr:$inner);
}

//===----------------------------------------------------------------------===//
// Products
//===----------------------------------------------------------------------===//

def Cairn_MatmulKernelOp : Cairn_KernelOp<"matmul", 2, 1, 1, 0, "111?"> {
  let summary = "a batch of row-major GEMMs; each operand steps by a stride or a table of offsets";
  let arguments = (ins Cairn_MemRef:$lhs,
                       Cairn_MemRef:$rhs,
                       Cairn_MemRef:$result,
                       Optional<Cairn_MemRef>:$workspace,
                       Cairn_I64Attr:$batch,
                       Cairn_I64Attr:$m,
                       Cairn_I64Attr:$n,
                       Cairn_I64Attr:$k,
                       BoolAttr:$transpose_lhs,
                       BoolAttr:$transpose_rhs,
                       Cairn_I64Attr:$lda,
                       Cairn_I64Attr:$ldb,
                       OptionalAttr<Cairn_I64Attr>:$lhs_stride,
                       OptionalAttr<Cairn_I64Attr>:$rhs_stride,
                       OptionalAttr<DenseI64ArrayAttr>:$lhs_offsets,
                       OptionalAttr<DenseI64ArrayAttr>:$rhs_offsets,
                       OptionalAttr<Cairn_I64Attr>:$workspace_bytes);
}

def Cairn_LinearKernelOp : Cairn_KernelOp<"linear", 3, 1, 1, 1, "11?1?"> {
  let summary = "result = input weight^T + bias, rows x in by out x in";
  let description = [{
    `relu` (cairn-fuse-elementwise): the result is relu(input weight^T +
    bias), the relu that alone read the product folded in (on CUDA,
    cuBLASLt's epilogue).
  }];
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$weight,
                       Optional<Cairn_MemRef>:$bias,
                       Cairn_MemRef:$result,
                       Optional<Cairn_MemRef>:$workspace,
                       Cairn_I64Attr:$rows,
                       Cairn_I64Attr:$in,
                       Cairn_I64Attr:$out,
                       OptionalAttr<Cairn_I64Attr>:$workspace_bytes,
                       OptionalAttr<BoolAttr>:$relu);
}

def Cairn_LinearGradInputKernelOp : Cairn_KernelOp<"linear_grad_input", 2, 1, 1, 0, "111?"> {
  let summary = "dx = dy weight";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$weight,
                       Cairn_MemRef:$result,
                       Optional<Cairn_MemRef>:$workspace,
                       Cairn_I64Attr:$rows,
                       Cairn_I64Attr:$in,
                       Cairn_I64Attr:$out,
                       OptionalAttr<Cairn_I64Attr>:$workspace_bytes);
}

def Cairn_LinearGradWeightKernelOp : Cairn_KernelOp<"linear_grad_weight", 2, 1, 1, 0, "111?"> {
  let summary = "dweight = dy^T input";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Optional<Cairn_MemRef>:$workspace,
                       Cairn_I64Attr:$rows,
                       Cairn_I64Attr:$in,
                       Cairn_I64Attr:$out,
                       OptionalAttr<Cairn_I64Attr>:$workspace_bytes);
}

def Cairn_Conv2dKernelOp : Cairn_KernelOp<"conv2d", 3, 1, 1, 1, "11?1?"> {
  let summary = "a 2-d convolution; shape: n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups, ho, wo";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$weight,
                       Optional<Cairn_MemRef>:$bias,
                       Cairn_MemRef:$result,
                       Optional<Cairn_MemRef>:$workspace,
                       DenseI64ArrayAttr:$shape,
                       Cairn_I64Attr:$workspace_elements);
}

def Cairn_Conv2dGradInputKernelOp : Cairn_KernelOp<"conv2d_grad_input", 3, 1, 1, 1, "11?1?"> {
  let summary = "a convolution's input gradient (or a transposed convolution, with its bias)";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$weight,
                       Optional<Cairn_MemRef>:$bias,
                       Cairn_MemRef:$result,
                       Optional<Cairn_MemRef>:$workspace,
                       DenseI64ArrayAttr:$shape,
                       Cairn_I64Attr:$workspace_elements);
}

def Cairn_Conv2dGradWeightKernelOp : Cairn_KernelOp<"conv2d_grad_weight", 2, 1, 1, 0, "111?"> {
  let summary = "a convolution's weight gradient";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Optional<Cairn_MemRef>:$workspace,
                       DenseI64ArrayAttr:$shape,
                       Cairn_I64Attr:$workspace_elements);
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

// `sync_replicas` (cairn-sync-batch-norm): the statistics are every data-
// parallel replica's examples', summed across them as the kernel runs, in
// the f64 workspace (batchNormReplicaSumElements, runtime/kernels/
// Normalization.h) that pass adds; a kernel of one replica has none.
def Cairn_BatchNormTrainingKernelOp : Cairn_KernelOp<"batch_norm_training", 3, 1, 1, 1, "1??1?"> {
  let summary = "batch norm on the batch statistics";
  let arguments = (ins Cairn_MemRef:$input,
                       Optional<Cairn_MemRef>:$weight,
                       Optional<Cairn_MemRef>:$bias,
                       Cairn_MemRef:$result,
                       Optional<Cairn_MemRef>:$workspace,
                       Cairn_I64Attr:$n,
                       Cairn_I64Attr:$c,
                       Cairn_I64Attr:$spatial,
                       Cairn_F64Attr:$eps,
                       UnitAttr:$sync_replicas);
  let hasVerifier = 1;
}

def Cairn_BatchNormInferenceKernelOp : Cairn_KernelOp<"batch_norm_inference", 5, 1, 0, 1, "1????1"> {
  let summary = "batch norm on the running statistics";
  let arguments = (ins Cairn_MemRef:$input,
                       Optional<Cairn_MemRef>:$weight,
                       Optional<Cairn_MemRef>:$bias,
                       Optional<Cairn_MemRef>:$running_mean,
                       Optional<Cairn_MemRef>:$running_var,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       Cairn_I64Attr:$c,
                       Cairn_I64Attr:$spatial,
                       Cairn_F64Attr:$eps);
}

def Cairn_BatchNormGradKernelOp : Cairn_KernelOp<"batch_norm_grad", 3, 3, 1, 1, "11?1???"> {
  let summary = "batch norm's gradients, the batch statistics recomputed from the input";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$input,
                       Optional<Cairn_MemRef>:$weight,
                       Cairn_MemRef:$grad_input,
                       Optional<Cairn_MemRef>:$grad_weight,
                       Optional<Cairn_MemRef>:$grad_bias,
                       Optional<Cairn_MemRef>:$workspace,
                       Cairn_I64Attr:$n,
                       Cairn_I64Attr:$c,
                       Cairn_I64Attr:$spatial,
                       Cairn_F64Attr:$eps,
                       UnitAttr:$sync_replicas);
  let hasVerifier = 1;
}

def Cairn_BatchNormRunningUpdateKernelOp : Cairn_KernelOp<"batch_norm_running_update", 4, 3, 1, 0, "1111111?"> {
  let summary = "the running statistics updated in place from a batch";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$running_mean,
                       Cairn_MemRef:$running_var,
                       Cairn_MemRef:$num_batches_tracked,
                       Cairn_MemRef:$new_running_mean,
                       Cairn_MemRef:$new_running_var,
                       Cairn_MemRef:$new_num_batches_tracked,
                       Optional<Cairn_MemRef>:$workspace,
                       Cairn_I64Attr:$n,
                       Cairn_I64Attr:$c,
                       Cairn_I64Attr:$spatial,
                       Cairn_F64Attr:$momentum,
                       UnitAttr:$sync_replicas);
  let hasVerifier = 1;
}

def Cairn_LayerNormKernelOp : Cairn_KernelOp<"layer_norm", 3, 1, 0, 1, "1??1"> {
  let summary = "layer norm over the last cols elements of each row";
  let arguments = (ins Cairn_MemRef:$input,
                       Optional<Cairn_MemRef>:$weight,
                       Optional<Cairn_MemRef>:$bias,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$rows,
                       Cairn_I64Attr:$cols,
                       Cairn_F64Attr:$eps);
}

def Cairn_LayerNormGradKernelOp : Cairn_KernelOp<"layer_norm_grad", 3, 3, 0, 1, "11?1??"> {
  let summary = "layer norm's gradients";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$input,
                       Optional<Cairn_MemRef>:$weight,
                       Cairn_MemRef:$grad_input,
                       Optional<Cairn_MemRef>:$grad_weight,
                       Optional<Cairn_MemRef>:$grad_bias,
                       Cairn_I64Attr:$rows,
                       Cairn_I64Attr:$cols,
                       Cairn_F64Attr:$eps);
}

def Cairn_EmbeddingKernelOp : Cairn_KernelOp<"embedding", 2, 1, 0, 0, "111"> {
  let summary = "rows of weight gathered by index";
  let arguments = (ins Cairn_MemRef:$indices,
                       Cairn_MemRef:$weight,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$num_indices,
                       Cairn_I64Attr:$dim,
                       Cairn_I64Attr:$num_embeddings);
}

def Cairn_EmbeddingGradKernelOp : Cairn_KernelOp<"embedding_grad", 2, 1, 0, 0, "111"> {
  let summary = "rows of dy summed into the embedding's gradient (padding_idx -1: none)";
  let arguments = (ins Cairn_MemRef:$indices,
                       Cairn_MemRef:$dy,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$num_indices,
                       Cairn_I64Attr:$dim,
                       Cairn_I64Attr:$num_embeddings,
                       Cairn_I64Attr:$padding_idx);
}

def Cairn_DropoutKernelOp : Cairn_KernelOp<"dropout", 1, 1, 0, 0, "11", [Cairn_ElementwiseKernel]> {
  let summary = "training-mode dropout; the mask is Philox of (seed, step, stream, element)";
  let description = [{
    With `replica_stride` (a step of data-parallel replicas), replica r draws
    from stream `stream + r * replica_stride`: the mask one process running
    every replica's examples as micro-batches would draw.
  }];
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n,
                       Cairn_F64Attr:$p,
                       Cairn_I64Attr:$stream,
                       OptionalAttr<Cairn_I64Attr>:$replica_stride);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def Cairn_MaxPool2dKernelOp : Cairn_KernelOp<"max_pool2d", 1, 1, 0, 0, "11"> {
  let summary = "max pooling; shape: n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       DenseI64ArrayAttr:$shape);
}

def Cairn_MaxPool2dGradKernelOp : Cairn_KernelOp<"max_pool2d_grad", 2, 1, 0, 0, "111"> {
  let summary = "max pooling's input gradient";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       DenseI64ArrayAttr:$shape);
}

def Cairn_AvgPool2dKernelOp : Cairn_KernelOp<"avg_pool2d", 1, 1, 0, 0, "11"> {
  let summary = "average pooling";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       DenseI64ArrayAttr:$shape,
                       BoolAttr:$count_include_pad);
}

def Cairn_AvgPool2dGradKernelOp : Cairn_KernelOp<"avg_pool2d_grad", 1, 1, 0, 0, "11"> {
  let summary = "average pooling's input gradient";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$result,
                       DenseI64ArrayAttr:$shape,
                       BoolAttr:$count_include_pad);
}

def Cairn_AdaptiveAvgPool2dKernelOp : Cairn_KernelOp<"adaptive_avg_pool2d", 1, 1, 0, 0, "11"> {
  let summary = "adaptive average pooling; shape: n, c, h, w, ho, wo";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       DenseI64ArrayAttr:$shape);
}

def Cairn_AdaptiveAvgPool2dGradKernelOp : Cairn_KernelOp<"adaptive_avg_pool2d_grad", 1, 1, 0, 0, "11"> {
  let summary = "adaptive average pooling's input gradient";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$result,
                       DenseI64ArrayAttr:$shape);
}

//===----------------------------------------------------------------------===//
// Data movement and reductions
//===----------------------------------------------------------------------===//

def Cairn_PermuteKernelOp : Cairn_KernelOp<"permute", 1, 1, 0, 0, "11"> {
  let summary = "the dimensions of input permuted";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       DenseI64ArrayAttr:$perm);
}

def Cairn_ConcatKernelOp : Cairn_KernelOp<"concat", 1, 1, 0, 0, "+1"> {
  let summary = "inputs joined along dim, input i from starts[i]";
  let arguments = (ins Variadic<Cairn_MemRef>:$inputs,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$dim,
                       DenseI64ArrayAttr:$starts);
  let hasVerifier = 1;
}

def Cairn_SliceKernelOp : Cairn_KernelOp<"slice", 1, 1, 0, 0, "11"> {
  let summary = "a strided slice of input";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$step);
}

def Cairn_SliceGradKernelOp : Cairn_KernelOp<"slice_grad", 1, 1, 0, 0, "11"> {
  let summary = "a slice's input gradient: zeros, dy scattered into them";
  let arguments = (ins Cairn_MemRef:$dy,
                       Cairn_MemRef:$result,
                       DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$step);
}

def Cairn_BroadcastKernelOp : Cairn_KernelOp<"broadcast", 1, 1, 0, 0, "11"> {
  let summary = "input repeated over the result (stride 0)";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       DenseI64ArrayAttr:$in_strides);
}

def Cairn_ReduceSumKernelOp : Cairn_KernelOp<"reduce_sum", 1, 1, 0, 0, "11"> {
  let summary = "alpha times the sum over the reduced dimensions";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$result,
                       DenseBoolArrayAttr:$reduced,
                       Cairn_F64Attr:$alpha);
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

def Cairn_CrossEntropyKernelOp : Cairn_KernelOp<"cross_entropy", 2, 1, 0, 0, "111"> {
  let summary = "mean cross-entropy of logits against class labels";
  let arguments = (ins Cairn_MemRef:$logits,
                       Cairn_MemRef:$labels,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$rows,
                       Cairn_I64Attr:$classes,
                       Cairn_F64Attr:$label_smoothing);
}

def Cairn_CrossEntropyGradKernelOp : Cairn_KernelOp<"cross_entropy_grad", 3, 1, 0, 0, "1111"> {
  let summary = "cross-entropy's logits gradient";
  let arguments = (ins Cairn_MemRef:$dloss,
                       Cairn_MemRef:$logits,
                       Cairn_MemRef:$labels,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$rows,
                       Cairn_I64Attr:$classes,
                       Cairn_F64Attr:$label_smoothing);
}

def Cairn_MseLossKernelOp : Cairn_KernelOp<"mse_loss", 2, 1, 0, 0, "111"> {
  let summary = "mean squared error";
  let arguments = (ins Cairn_MemRef:$input,
                       Cairn_MemRef:$target,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
}

def Cairn_MseLossGradKernelOp : Cairn_KernelOp<"mse_loss_grad", 3, 1, 0, 0, "1111"> {
  let summary = "mean squared error's input gradient";
  let arguments = (ins Cairn_MemRef:$dloss,
                       Cairn_MemRef:$input,
                       Cairn_MemRef:$target,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

def Cairn_ClipCoefficientKernelOp : Cairn_KernelOp<"clip_coefficient", 1, 1, 1, 1, "+1?"> {
  let summary = "clip_grad_norm_'s coefficient of the gradients";
  let description = [{
    The workspace holds one f64 partial per kGradNormChunk elements of each
    gradient (runtime/kernels/Optimizer.h).

    `device_chunks` (cairn-partition-devices): `grads` are this device's
    gradients of a model split across devices, and the norm is every
    device's. Entry i is where gradient i's first partial goes among every
    device's partials, in the one-device kernel's order; the last entry is
    their count, which the workspace holds. The partials are summed over the
    devices (each has a value from one device only, so the sum is exact)
    and combined in that order: the one-device coefficient, on every device.
  }];
  let arguments = (ins Variadic<Cairn_MemRef>:$grads,
                       Cairn_MemRef:$result,
                       Optional<Cairn_MemRef>:$workspace,
                       Cairn_F64Attr:$max_norm,
                       Cairn_F64Attr:$norm_type,
                       OptionalAttr<DenseI64ArrayAttr>:$device_chunks);
  let hasVerifier = 1;
}

def Cairn_LossScaleKernelOp : Cairn_KernelOp<"loss_scale", 0, 1, 0, 0, "1"> {
  let summary = "the step's loss scale (StepContext::lossScale) or its inverse";
  let arguments = (ins Cairn_MemRef:$result, BoolAttr:$inverse);
}

def Cairn_FoundInfKernelOp : Cairn_KernelOp<"found_inf", 1, 1, 0, 0, "+1"> {
  let summary = "1 when a gradient element is infinite or NaN, else 0";
  let description = [{
    `across_devices` (cairn-partition-devices): `grads` are this device's
    gradients of a model split across devices, and the result is 1 on every
    device when any device's gradient is not finite.
  }];
  let arguments = (ins Variadic<Cairn_MemRef>:$grads, Cairn_MemRef:$result,
                       UnitAttr:$across_devices);
}

def Cairn_SkipSelectKernelOp : Cairn_KernelOp<"skip_select", 3, 1, 0, 0, "1111"> {
  let summary = "commits `updated` over `old`, in place, unless the step is skipped";
  let description = [{
    `result` is `old`'s buffer (written in place): the kernel copies `updated`
    into it when `found_inf` is zero and leaves it otherwise.
  }];
  let arguments = (ins Cairn_MemRef:$old,
                       Cairn_MemRef:$updated,
                       Cairn_MemRef:$found_inf,
                       Cairn_MemRef:$result,
                       Cairn_I64Attr:$n);
  let hasVerifier = 1;
}

def Cairn_SgdUpdateKernelOp : Cairn_KernelOp<"sgd_update", 4, 2, 0, 1, "11??1?"> {
  let summary = "torch.optim.SGD's update of one param, in place";
  let description = [{
    With `found_inf` (loss scaling), nothing is written when it is nonzero.
  }];
  let arguments = (ins Cairn_MemRef:$param,
                       Cairn_MemRef:$grad,
                       Optional<Cairn_MemRef>:$momentum_buffer,
                       Optional<Cairn_MemRef>:$found_inf,
                       Cairn_MemRef:$new_param,
                       Optional<Cairn_MemRef>:$new_momentum_buffer,
                       Cairn_I64Attr:$n,
                       Cairn_F64Attr:$lr,
                       Cairn_F64Attr:$momentum,
                       Cairn_F64Attr:$dampening,
                       Cairn_F64Attr:$weight_decay,
                       BoolAttr:$nesterov);
  let hasVerifier = 1;
}

def Cairn_AdamUpdateKernelOp : Cairn_KernelOp<"adam_update", 5, 3, 0, 0, "1111?111"> {
  let summary = "torch.optim.Adam's (or AdamW's) update of one param, in place";
  let description = [{
    With `found_inf` (loss scaling), nothing is written when it is nonzero.
  }];
  let arguments = (ins Cairn_MemRef:$param,
                       Cairn_MemRef:$grad,
                       Cairn_MemRef:$exp_avg,
                       Cairn_MemRef:$exp_avg_sq,
                       Optional<Cairn_MemRef>:$found_inf,
                       Cairn_MemRef:$new_param,
                       Cairn_MemRef:$new_exp_avg,
                       Cairn_MemRef:$new_exp_avg_sq,
                       Cairn_I64Attr:$n,
                       Cairn_F64Attr:$lr,
                       Cairn_F64Attr:$beta1,
                       Cairn_F64Attr:$beta2,
                       Cairn_F64Attr:$eps,
                       Cairn_F64Attr:$weight_decay,
                       // AdamW; absent for Adam.
                       OptionalAttr<BoolAttr>:$decoupled_weight_decay);
  let hasVerifier = 1;
  let extraKernelDeclaration = [{
    bool isAdamW() { return getDecoupledWeightDecay().value_or(false); }
  }];
}

#endif // CAIRN_IR_CAIRNKERNELOPS_TD
