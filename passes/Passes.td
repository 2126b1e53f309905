//===- Passes.td - Cairn passes -----------------------------*- tablegen -*-===//
//
// Every Cairn pass is declared here; one file per pass, named after it
// (PrintModelSummaryPass, `cairn-print-model-summary`, PrintModelSummary.cpp,
// test/passes/print-model-summary.mlir).
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_TD
#define CAIRN_PASSES_TD

include "mlir/Pass/PassBase.td"

def PrintModelSummaryPass : Pass<"cairn-print-model-summary", "mlir::ModuleOp"> {
  let summary = "Print parameters, shapes per layer and FLOPs of a model";
  let description = [{
    Reads a module produced by the frontend (`@forward` with `cairn.name` and
    `cairn.role` argument attributes) and prints what `cairn check` shows:
    the state_dict (names, shapes, parameters vs buffers), one row per op of
    `@forward` with its layer, output shape, parameter count and FLOPs
    (CostOpInterface), and the totals. The IR is not changed.

    ```
    model MLP, batch 64
    layer   op       output shape   params    FLOPs
    fc1     linear   [64, 256]      200,960   25,706,496
    ```
  }];
  let options = [
    Option<"json", "json", "bool", /*default=*/"false",
           "Print JSON instead of a table">,
  ];
}

def CheckExecutablePass : Pass<"cairn-check-executable", "mlir::ModuleOp"> {
  let summary = "Refuse what no generated executable could run";
  let description = [{
    Checks the frontend's module before autodiff against what the runtime
    runs: a `@loss` and a `cairn.optimizer` (an executable trains), a
    `cairn.batch`, every input of `@forward` and `@loss` starting with the
    batch size (fed one batch of examples at a time), and `@forward`
    returning one floating-point tensor [batch, ...] (a row per example for
    eval and `predict`). Errors point at the input or the function. The IR
    is not changed. `cairn build` runs it first; `cairn check` and `cairn
    plan` take any model.
  }];
}

def AutocastPass : Pass<"cairn-autocast", "mlir::ModuleOp"> {
  let summary = "Choose each op's element type: half where safe, float32 where not";
  let description = [{
    Runs before `cairn-autodiff` on `@forward`, `@loss` and `@eval_loss`, as
    PyTorch's autocast: matmul, linear, conv2d and conv2d_grad_input take
    their float operands in the half type (`precision`, or the module's
    `cairn.precision`; an op's `cairn.precision` region f16 or bf16 wins);
    batch norm on its input's type with float32 parameters and statistics
    (computing in float32, its half input saved in half); layer norm,
    softmax, log-softmax, the losses, sums and means, and every op in a
    `precision f32` region, in float32; every other op in
    the widest float type of its operands, a scalar constant taking the
    other operand's type. A value is cast (`cairn.cast`) at most once to
    each type, right before its first reader. Arguments (inputs, the float32
    master parameters, buffers) and results keep their types; autodiff's
    rule for the cast brings parameters' gradients back to float32. With
    float32 for the model, only regions' half types apply. A trained model
    with an f16 value in `@loss` gets `cairn.loss_scaling` on the module:
    f16's range needs a loss scaler, bf16's does not. With `loss-scaling`
    every trained model gets it (a bf16 step that should skip a step whose
    gradients overflow; the scaler holds every gradient until its check,
    in half where it is computed in half: cairn-check-scaled-gradients).

    ```mlir
    %0 = cairn.cast %w : tensor<10x784xf32> -> tensor<10x784xf16>
    %1 = cairn.linear %x16, %0, %b16 : (...) -> tensor<64x10xf16>
    %2 = cairn.cast %1 : tensor<64x10xf16> -> tensor<64x10xf32>
    %3 = cairn.cross_entropy %2, %labels : (...) -> tensor<f32>
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"\"",
           "f16, bf16 or f32 (default: the module's cairn.precision)">,
    Option<"lossScaling", "loss-scaling", "bool", /*default=*/"false",
           "Scale the loss of a trained model whatever its types (f16's "
           "always is)">,
  ];
}

def ComputeHalfInFloat32Pass
    : Pass<"cairn-compute-half-in-float32", "mlir::ModuleOp"> {
  let summary = "Half storage, float32 arithmetic: for the CPU's kernels";
  let description = [{
    After autodiff, for a target whose kernels compute in float32 only (the
    CPU): every op but `cairn.cast` and `cairn.reshape` that reads or writes
    an f16 or bf16 tensor reads float32 copies of its half operands (a
    `cairn.cast` right before it, so that no float32 copy outlives its
    reader) and writes a float32 result, which a cast
    stores in the op's half type; readers take that rounded half value, as
    PyTorch's next op would. A half constant is made again in float32 and
    cast. The values the step keeps stay half.

    ```mlir
    %r = cairn.relu %h : tensor<64x256xf16>
    // becomes
    %f = cairn.cast %h : tensor<64x256xf16> -> tensor<64x256xf32>
    %0 = cairn.relu %f : tensor<64x256xf32>
    %r = cairn.cast %0 : tensor<64x256xf32> -> tensor<64x256xf16>
    ```

    With `half-products` (a target whose GEMMs take half operands and
    accumulate in float32: CUDA's tensor cores), a `cairn.matmul`,
    `cairn.linear`, `cairn.linear_grad_input`, `cairn.linear_grad_weight`,
    `cairn.conv2d` or `cairn.conv2d_grad_input` all of whose tensors have
    one half type is left as it is: its result, accumulated in float32 and
    rounded once, is what the float32 product of the widened operands and a
    cast give, without the float32 copies.

    With `half-storage-kernels=one-type` (CUDA), dropout, the element-wise
    arithmetic, the activations and their gradients, max pooling and its
    gradient where windows do not overlap, on one half type, and batch norm,
    its gradient and running update on half data beside float32 parameters
    (`isOneHalfTypeStorageOp`), are left as they are. With
    `half-storage-kernels=all` (the CPU), an op of `isHalfStorageOp`
    (passes/Lowering.h: a `cairn.linear`, `cairn.linear_grad_input` or
    `cairn.linear_grad_weight` on one half type, whose kernel widens panels
    of its operands into float32 scratch; a `cairn.max_pool2d` on one half type, a
    `cairn.max_pool2d_grad` likewise whose windows do not overlap, dropout,
    the activations and their gradients on one half type, batch norm and its
    gradient and running update on half data with float32 parameters) is
    left as it is too: its kernel reads the half tensors widened and writes
    them rounded, computing in float32 between, which is the copies'
    arithmetic.
  }];
  let options = [
    Option<"halfProducts", "half-products", "bool", /*default=*/"false",
           "leave GEMMs on one half type in half (the target multiplies half "
           "operands)">,
    Option<"halfStorageKernels", "half-storage-kernels", "std::string",
           /*default=*/"\"none\"",
           "leave the ops whose kernels widen and round half tensors "
           "themselves in half: none, one-type (isOneHalfTypeStorageOp) or "
           "all (isHalfStorageOp)">,
  ];
}

def PlaceDevicesPass : Pass<"cairn-place-devices", "mlir::ModuleOp"> {
  let summary = "Give every op of a model with `on device` regions its device";
  let description = [{
    Runs before `cairn-autocast` and `cairn-autodiff` (which copies each
    forward op's `cairn.device` onto its backward). In a module where some op
    has a `cairn.device` (an `on device K { }` region), every op of
    `@forward`, `@loss` and `@eval_loss` gets one: an op outside every
    region runs on the device of the last op before it in program order
    that has one (device 0 before the first), so code after a pipeline
    stage stays on that stage; a constant runs where its first user does.
    The devices used must be 0 to N-1
    without a gap: a device with nothing on it is an error at the first op
    of the next one. A module without `on device` is not changed, unless
    `devices` is 2 or more: then `@loss`'s ops, in program order, are cut
    into that many stages whose slowest (its ops' modelled time, forward
    and backward, and its transfers) is fastest (StageSplit.h), never
    between two ops that read the same parameter or buffer; `@forward`'s and
    `@eval_loss`'s ops take the device of the `@loss` op at their location.
    With a `device-memory`, the pipeline (passes/Pipeline.h) plans the
    split in the loop: from the fastest split, the device most over the
    memory gives ops at one of its cuts to the neighbour with more room, and
    the split is planned again, until every device's arena fits (at most 32
    plans; without a fit, the closest split, which the driver reports).
    With `devices` 1, every `cairn.device` is removed (the one-device
    reference a split is checked against); with 2 or more, a model with
    `on device` regions is an error.
  }];
  let options = [
    Option<"devices", "devices", "int64_t", /*default=*/"0",
           "Place a model without `on device` on this many devices (0: "
           "its regions decide; 1: everything on one device)">,
    Option<"deviceMemory", "device-memory", "int64_t", /*default=*/"0",
           "Each device's memory in bytes (0: none): the split is chosen "
           "with the plan in the loop (from the C++ pipeline only)">,
  ];
}

def AutodiffPass : Pass<"cairn-autodiff", "mlir::ModuleOp"> {
  let summary = "Build @train_step: forward, loss, backward and optimizer update";
  let description = [{
    Differentiates `@loss` (the training-mode forward up to the scalar loss)
    in reverse mode and adds the optimizer update of the module's
    `cairn.optimizer` (`#cairn.sgd` or `#cairn.adam`, PyTorch 1.13's
    semantics), as a new `func.func @train_step` after `@loss`. `@forward`
    and `@loss` are not changed.

    The contract with the code generator:
    - Arguments: `@loss`'s params and buffers in `@loss`'s order (same
      attributes and locations); then the optimizer state of each param that
      has a gradient (SGD with momentum != 0: `<param>.momentum_buffer`;
      Adam: `<param>.exp_avg`, `<param>.exp_avg_sq`; role `optimizer_state`,
      init zeros, the param's type); then `@loss`'s inputs in order.
    - Results, each with `cairn.name` and `cairn.role`: the loss (`loss`,
      role `output`); with loss scaling, `found_inf` (role `output`); the new value of every updated argument, in argument
      order, with `cairn.updates = <argument index>` and the argument's name
      and role (written back over the argument); the gradient of each param
      that has one (`grad.<param>`, role `gradient`). A param with no path to
      the loss gets no update, no state and no gradient (its grad stays None
      in PyTorch).
    - Body: the forward ops cloned, with one `batch_norm_running_update` per
      training-mode batch_norm call that has running statistics (chained
      when a layer is called twice); the backward from d(loss) = 1, one rule
      per op (gradients of values used twice summed with `cairn.add`); then
      one `sgd_update` / `adam_update` per param with a gradient. The step
      number those need comes from the runtime, not from the IR.
    - With `cairn.loss_scaling` on the module (cairn-autocast's, for f16),
      torch.amp.GradScaler's step: the seed is `cairn.loss_scale`, every
      gradient is multiplied by `cairn.loss_scale {inverse}` before anything
      reads it, `cairn.found_inf` of them goes to every update (nonzero: the
      step is skipped) and to a `cairn.skip_select` of each running
      statistic, which the forward computed, over its old value.

    Every new op has the location of the forward op it differentiates (the
    optimizer's, that of its param's argument). An op without a gradient
    rule is an error at its location.
  }];
  let dependentDialects = ["::cairn::CairnDialect", "::mlir::func::FuncDialect"];
}

def CheckScaledGradientsPass
    : Pass<"cairn-check-scaled-gradients", "mlir::ModuleOp"> {
  let summary = "Loss scaling: check the scaled gradients, unscale each at its update";
  let description = [{
    After `cairn-autodiff` in a step with loss scaling, as
    torch.amp.GradScaler's unscale_ does: `cairn.found_inf` reads each
    gradient as the backward computed it, scaled, in the half type it was
    computed in where that is how it reached float32 (a weight gradient's
    `cairn.cast` from f16 or bf16), and its widening and its product with
    `cairn.loss_scale {inverse}` move to right before their first reader,
    the gradient's update. The step then holds half gradients, not float32
    ones, from the backward to the check, and one float32 gradient at a
    time after it.

    ```mlir
    %g = cairn.cast %h : tensor<512x512xf16> -> tensor<512x512xf32>
    %u = cairn.mul %g, %inv : tensor<512x512xf32>, tensor<f32> -> tensor<512x512xf32>
    %f = cairn.found_inf %u, ... : (tensor<512x512xf32>, ...) -> tensor<f32>
    ... = cairn.sgd_update %w, %u ... found_inf %f
    // becomes
    %f = cairn.found_inf %h, ... : (tensor<512x512xf16>, ...) -> tensor<f32>
    %g = cairn.cast %h : tensor<512x512xf16> -> tensor<512x512xf32>
    %u = cairn.mul %g, %inv : tensor<512x512xf32>, tensor<f32> -> tensor<512x512xf32>
    ... = cairn.sgd_update %w, %u ... found_inf %f
    ```

    The check's verdict is GradScaler's: a half value is finite exactly
    when its float32 widening is, and both check before unscaling. A
    float32 gradient is checked scaled too (its bytes are held either
    way). Not for a step whose gradients are summed before the check
    (micro-batches, replicas: the sums are float32's). The pipeline runs it
    for the CPU (LoweringTarget::checkScaledGradients), without those and
    with reuse (a --no-reuse build is the reference it is checked against);
    not yet for CUDA, whose adjacent updates are one launch. Given a
    planner (the pipeline's), it keeps the rewrite only where the plan of
    the step, made with and without it, is smaller: a gradient completed
    last in the backward is held for a moment either way, and its half and
    float32 copies side by side before its update can outweigh what the
    others save (mlp's fc1; test/tools/loss-scaling.test). Alone (cairn-opt)
    it always rewrites.
  }];
  let dependentDialects = ["::cairn::CairnDialect"];
}

def SaveInHalfPass : Pass<"cairn-save-in-half", "mlir::ModuleOp"> {
  let summary = "A half step holds the float32 values its softmax and layer norm backward read in f16";
  let description = [{
    After `cairn-autodiff`, in `@train_step`: softmax's output (what
    `cairn.softmax_grad` reads) and layer norm's input (what
    `cairn.layer_norm_grad` reads), float32 by autocast's rule, are held from
    the forward to the backward in f16 where the softmax or layer norm is in
    an f16 part of the model (`precision`, or the module's
    `cairn.precision`; an op's `cairn.precision` region wins), and
    softmax's output in a bf16 part too (in [0, 1], f16 cannot overflow and
    rounds finer than bf16): a `cairn.cast` to f16 after the value's last
    forward reader (autocast's f16 copy, where it has one), and its widening
    right before its first backward reader, which all the backward readers
    share. The forward still computes in float32 and the backward reads the
    value rounded to f16, as Megatron-LM's fused softmax and fp16 residual
    stream keep them. bf16 keeps layer norm's input float32: f16 could
    overflow it, and bf16's rounding would add to the gradients' distance
    from PyTorch's autocast (check_bf16_agreement.py). Values of
    a checkpoint region, inputs and step results are left as they are.

    ```mlir
    %y = cairn.softmax %s {dim = 3 : i64} : tensor<64x4x28x28xf32>
    %d = cairn.dropout %y ... : tensor<64x4x28x28xf32>
    %h = cairn.cast %y : tensor<64x4x28x28xf32> -> tensor<64x4x28x28xf16>
    ...
    %w = cairn.cast %h : tensor<64x4x28x28xf16> -> tensor<64x4x28x28xf32>
    %dx = cairn.softmax_grad %dy, %w {dim = 3 : i64} : tensor<64x4x28x28xf32>
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"\"",
           "f16, bf16 or f32 (default: the module's cairn.precision)">,
  ];
  let dependentDialects = ["::cairn::CairnDialect"];
}

//===----------------------------------------------------------------------===//
// The planned step: lowering, schedule, in place, plan, verification
//===----------------------------------------------------------------------===//

def LowerToKernelsPass : Pass<"cairn-lower-to-kernels", "mlir::ModuleOp"> {
  let summary = "Lower @train_step and @forward to a cairn.program of kernels";
  let description = [{
    Turns the tensor-level training step and forward pass (after
    `cairn-autodiff`) into the buffer-level form (ir/CairnProgramOps.td,
    ir/CairnKernelOps.td): every tensor becomes a buffer, every op a kernel
    that writes its result's buffer, and the two functions are replaced by one
    `cairn.program` holding both steps. Takes a module with `@train_step` and
    `@forward`; leaves one `cairn.program`, no functions.

    - Arguments are persistent buffers, shared by name between the steps
      (`input`, `param`, `buffer`, `optimizer`); `loss` and `output` are
      persistent `output` buffers; gradients are per-step `grad` buffers.
    - A result with `cairn.updates = i` is written into argument i's buffer:
      by the kernel computing it when nothing later reads the old value, by a
      copy at the end otherwise; optimizer updates and running statistics
      overwrite their state operands the same way.
    - Reshapes, eval-mode dropout and broadcasts that add only 1s are views.
    - Each per-step buffer gets its kind: `activation` (read by the forward
      part only), `saved` (read by the backward part too), `temp`,
      `workspace` (a kernel's scratch: im2col on the CPU, cuBLASLt's split-K
      on CUDA, by the target's rule).
    - The op a kernel comes from is its location's metadata
      (`loc(fused<"cairn.linear">[...])`), so generated code and reports name
      it.

    ```mlir
    // before
    func.func @forward(%x: tensor<64x784xf32> {cairn.name = "image", ...}, ...)
      %y = cairn.linear %x, %w, %b : ...
    // after
    cairn.program "MLP" attributes {...} {
      %image = cairn.buffer input "image" : memref<64x784xf32>
      cairn.step forward {
        %fc.linear = cairn.buffer activation "fc.linear" : memref<64x10xf32>
        cairn.kernel.linear ins(%image, %fc.weight, %fc.bias : ...) outs(%fc.linear : ...) {...}
      }
    }
    ```

    An op the target cannot run (half precision, a constant that is not
    dense) is an error at its location.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "The target the kernels are for: cpu or cuda">,
  ];
  let dependentDialects = ["::cairn::CairnDialect"];
}

def ChooseHalfWeightCopiesPass : Pass<"cairn-choose-half-weight-copies", "mlir::ModuleOp"> {
  let summary = "Keep each weight's half copy for the backward, or cast it again, by the plan";
  let description = [{
    In a half-precision training step, the casts of float32 parameters to
    half copies that the backward reads (`saved` buffers) are marked
    `cairn.recompute` (cairn-recompute-checkpoints casts each again from its
    master weight right before the backward's first reader) when the rest of
    the pipeline, run on a copy of the module, plans a smaller arena so; else
    the copies are kept. Weight-dominated models (an MLP) recast, models
    whose activations dominate keep. Casts marked already are left as they
    are; a step without such casts is not touched.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "The target whose stages the plans in the loop run (cpu or cuda)">,
    Option<"fuse", "fuse", "bool", /*default=*/"true",
           "Evaluate with fusion, as the pipeline runs">,
    Option<"reorder", "reorder", "bool", /*default=*/"true",
           "Evaluate with the memory-aware schedule">,
    Option<"planSeconds", "plan-seconds", "double", /*default=*/"1.0",
           "The exact plan search's budget per evaluation">,
    Option<"replicas", "replicas", "int64_t", /*default=*/"1",
           "Evaluate as one of this many replicas (its gradient buckets)">,
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"25 << 20",
           "The replicas' gradient buckets">,
  ];
}

def ChooseRecomputationPass : Pass<"cairn-choose-recomputation", "mlir::ModuleOp"> {
  let summary = "Choose what the backward computes again so that the arena fits a budget";
  let description = [{
    Under `budget` bytes (`cairn plan|build --memory-budget SIZE`), marks
    forward kernels of the training step `cairn.recompute`: their outputs
    are not kept for the backward, which computes them again
    (cairn-recompute-checkpoints); some also `cairn.recompute_per_use`:
    copied again for each copy computed from them, not shared. The exact
    plan is in the loop: each evaluation copies the module, runs recompute,
    fuse, schedule, in-place and the plan on the copy and reads its arena
    and the modelled time of the copies (KernelOpInterface::getKernelCost, a
    roofline of FLOPs and bytes moved). A greedy search takes moves at the
    train step's peak (mark a `saved` buffer live there; make a marked
    kernel whose copy is live there per use), the most bytes per unit of
    time first, keeping those that make progress and add at most the step's
    own modelled time (recomputation never more than doubles it); with
    `kernel-times`, a kernel the profile names costs its measured time
    instead (scaled to the model's units over the kernels both price); short of
    the budget, a
    second greedy search copies every mark per use. Square-root
    checkpointing's family competes, and the least extra time under the
    budget wins, else the smallest arena, which the driver reports (exit 2).
    Then each of its marks is dropped, the costliest first, where the arena
    stays under the budget (or, when nothing fits, does not grow), and each
    per-use mark is tried shared where that costs less. Last, an exchange
    search undoes one of the winner's dearest moves at a time, forbids it,
    lets the greedy search refill the bytes and prunes again, keeping a
    result that fits for less. A budget of 0 does nothing.
  }];
  let options = [
    Option<"budget", "budget", "int64_t", /*default=*/"0",
           "The arena's budget in bytes (0: none)">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "The target whose stages the plans in the loop run (cpu or cuda)">,
    Option<"fuse", "fuse", "bool", /*default=*/"true",
           "Evaluate with fusion, as the pipeline runs">,
    Option<"reuse", "reuse", "bool", /*default=*/"true",
           "Evaluate with buffer reuse">,
    Option<"reorder", "reorder", "bool", /*default=*/"true",
           "Evaluate with the memory-aware schedule">,
    Option<"planSeconds", "plan-seconds", "double", /*default=*/"1.0",
           "The exact plan search's budget per round">,
    Option<"kernelTimes", "kernel-times", "std::string", /*default=*/"",
           "A kernel profile (`EXE train --profile F`, same model and "
           "batch) whose measured times price the kernels in place of the "
           "roofline model">,
    Option<"replicas", "replicas", "int64_t", /*default=*/"1",
           "Evaluate as one of this many replicas (its gradient buckets)">,
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"25 << 20",
           "The replicas' gradient buckets">,
    Option<"lowerCost", "lower-cost", "bool", /*default=*/"true",
           "Once a greedy choice fits, search for cheaper ones (square-root "
           "checkpointing's family, pruning, the exchange search); --fit's "
           "probes, which ask only whether a batch fits, skip them">,
  ];
}

def RecomputeCheckpointsPass : Pass<"cairn-recompute-checkpoints", "mlir::ModuleOp"> {
  let summary = "Recompute the values of checkpoint { } regions in the backward part";
  let description = [{
    A value a kernel of a `checkpoint { }` region (`cairn.checkpoint = id`)
    writes in the training step's forward part is not kept for the backward
    part: each backward kernel that reads it reads a copy computed again
    right before it. The region kernels it depends on are cloned with fresh
    buffers (`<name>.recomputed`, kind `temp`) and marked
    `cairn.before_first_use`, so the schedule keeps each copy right before
    its first reader; later readers share the copy. A kernel marked
    `cairn.recompute_per_use` is copied again (`<name>.recomputed.2`, ...)
    for each copy computed from it, rather than sharing the copy its own
    backward readers read. The region's inputs
    (values from outside it, another region's included) are read as they
    are, and so are its outputs (values a forward kernel outside the
    region reads), as torch.utils.checkpoint keeps what its function
    returns. Kernels that write persistent buffers (the batch-norm running
    statistics, the loss) are never cloned: statistics are updated once. A
    copied dropout keeps its `stream`, so it draws the same mask. The
    originals, now read by the forward part alone, become `activation`.
    Runs after the lowering, before fusion; `cairn build --no-recompute`
    skips it.

    ```mlir
    // before: %r = relu(...) in region 0, kept for relu_grad
    %r = cairn.buffer saved "relu" : memref<8x64xf32>
    cairn.kernel.relu ins(%x : ...) outs(%r : ...) {cairn.checkpoint = 0 : i64, n = 512 : i64}
    ...
    cairn.kernel.relu_grad ins(%dy, %r : ...) outs(%dx : ...)
    // after
    %r = cairn.buffer activation "relu" : memref<8x64xf32>
    ...
    %r.recomputed = cairn.buffer temp "relu.recomputed" : memref<8x64xf32>
    cairn.kernel.relu ins(%x : ...) outs(%r.recomputed : ...) {cairn.before_first_use, n = 512 : i64}
    cairn.kernel.relu_grad ins(%dy, %r.recomputed : ...) outs(%dx : ...)
    ```
  }];
}

def SplitMicroBatchesPass : Pass<"cairn-split-micro-batches", "mlir::ModuleOp"> {
  let summary = "Run each step once per micro-batch: gradient accumulation, or a GPipe pipeline";
  let description = [{
    Right after the lowering, on a program lowered at the micro-batch size
    b: the inputs and the forward output take the whole batch M b, and each
    step's kernels run once per micro-batch on its rows (a slice), with
    fresh per-step buffers (`<name>.mb<m>`). The training step's gradients
    are summed over the micro-batches in order into the gradients the
    updates read, each micro-batch's backward seeded with 1/M; the loss is
    the mean of the micro-batches' losses; batch norm uses each
    micro-batch's statistics and updates its running statistics once per
    micro-batch; a dropout's stream is shifted per micro-batch. On one
    device each micro-batch's forward and backward run in turn (gradient
    accumulation); with ops on devices > 0, a pipeline: `pipeline=gpipe`,
    every forward first and then every backward, or `pipeline=1f1b`, each
    stage s of N min(N - s - 1, M) forwards ahead and then one forward and
    one backward in turn (at most N - s micro-batches in flight). The
    forward step's outputs are
    joined by a concat. With f16 loss scaling, found_inf and the
    skip_selects run once, on the summed gradients. Gradient clipping and
    an `eval_loss` step are refused.
  }];
  let options = [
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "How many micro-batches a batch runs as (1: as one)">,
    Option<"pipeline", "pipeline", "std::string", /*default=*/"\"1f1b\"",
           "The schedule across devices: gpipe or 1f1b">,
  ];
}

def PartitionDevicesPass : Pass<"cairn-partition-devices", "mlir::ModuleOp"> {
  let summary = "Split a program whose kernels are on several devices into one program per device";
  let description = [{
    Runs after the lowering and recomputation, before fusion and the plan.
    A program whose kernels carry `cairn.device` (cairn-place-devices, then
    the lowering) on devices 0 to N-1, N >= 2, becomes N programs, each with
    `device` and `devices`, its own kernels in the step's order and only the
    buffers they touch, so that each is scheduled, planned and verified as
    a single device's. A kernel without a device takes the device of the
    persistent state it touches (an optimizer update runs where its
    parameter is), else of the kernel computing its first input, else of
    the first kernel reading its output, else 0. A parameter, buffer or
    optimizer state lives on one device: a kernel on another that touches
    it is an error (tied weights across devices). Inputs are on every
    device that reads them (each process loads its batches); any other
    value a kernel on another device reads crosses in a
    `cairn.kernel.send` on its device and a `cairn.kernel.receive` on the
    reader's, both at the place of the reader's first use, numbered by a
    `tag` in that order on every device. Gradient clipping and f16 loss
    scaling, which reduce over every gradient, are refused. A program on
    one device is not changed.

    ```mlir
    cairn.program "MLP" attributes {device = 0 : i64, devices = 2 : i64, ...} {
      cairn.step train_step {
        %h = cairn.buffer saved "relu" : memref<64x256xf32>
        cairn.kernel.linear ins(...) outs(%h : memref<64x256xf32>) {...}
        cairn.kernel.send ins(%h : memref<64x256xf32>) {peer = 1 : i64, tag = 0 : i64}
        ...
    ```
  }];
  let dependentDialects = ["::cairn::CairnDialect"];
}

def FuseElementwisePass : Pass<"cairn-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Fuse element-wise chains into one kernel, before the plan";
  let description = [{
    A chain of element-wise kernels (add, sub, mul, div, the activations and
    their gradients, on operands of the result's size or of one element),
    each reading the result of the one before, which nothing else reads and
    the runtime does not read by name, becomes one
    `cairn.kernel.elementwise_chain`: one loop on the CPU, one launch on
    CUDA, and no buffer for the intermediates, so they take no arena bytes.
    The members need not be next to each other: the chain runs where its
    last member was, so kernels between may produce a later member's input
    but none may write what an earlier member reads. Glued kernels
    (`cairn.before_first_use`) fuse only with glued ones. One-element
    operands are read as scalars. A relu that alone reads a linear's result folds
    into the linear (`relu = true`). Runs before the schedule and the plan.

    ```mlir
    // before
    %t = cairn.buffer activation "add" : memref<64x256xf32>
    cairn.kernel.add ins(%x, %y : ...) outs(%t : ...) {...}
    %r = cairn.buffer activation "relu" : memref<64x256xf32>
    cairn.kernel.relu ins(%t : ...) outs(%r : ...) {n = 16384 : i64}
    // after
    %r = cairn.buffer activation "relu" : memref<64x256xf32>
    cairn.kernel.elementwise_chain ins(%x, %y : ...) outs(%r : ...)
        {args = array<i64: 0, 1, 2, -1>, n = 16384 : i64, ops = ["add", "relu"]}
    ```

    Every element is computed by the same operations in the same order as
    the kernels it replaces (the CPU code is compiled without contracting
    a * b + c), so results do not change.

    With `dropout`, a dropout joins chains too (gelu then dropout, dropout
    then a residual add, dropout's backward then gelu's): the chain draws
    element i's mask as the dropout kernel does, so the masks and results
    do not change either.
  }];
  let options = [
    Option<"maxInputs", "max-inputs", "unsigned",
           /*default=*/"::cairn::kMaxChainInputs",
           "Distinct buffers one chain reads (CUDA's kMaxChainInputs)">,
    Option<"maxOps", "max-ops", "unsigned",
           /*default=*/"::cairn::kMaxChainOps",
           "Ops in one chain (CUDA's kMaxChainOps)">,
    Option<"dropout", "dropout", "bool", /*default=*/"false",
           "Dropouts join chains: the target's chain kernel draws their masks "
           "(the CPU's; LoweringTarget::chainDropout)">,
  ];
}

def ScheduleForMemoryPass : Pass<"cairn-schedule-for-memory", "mlir::ModuleOp"> {
  let summary = "Reorder each step's kernels where that lowers its peak";
  let description = [{
    Builds the dependence DAG of each step's kernels from the buffers they
    touch (read after write, write after read, write after write; a view as
    its root) and runs a list scheduler that runs first a ready kernel that
    frees more bytes than it allocates (passes/KernelSchedule.h): an optimizer
    update moves to right after its gradient is complete, so the gradient
    dies there. The new order is kept only when the step's peak of live
    bytes (before in-place) is strictly lower. Every kernel reads the same
    values in any order the DAG allows: results are bit-identical.

    Records `peak_before`, `peak_after` and `moved_kernels` on each step.
    A kernel marked `cairn.before_first_use` stays glued right before the
    first kernel that reads what it writes (a recomputed value is produced
    just before its use, never hoisted back).

    ```mlir
    cairn.step train_step attributes {moved_kernels = 6 : i64, peak_after = 2101248 : i64, peak_before = 2112768 : i64} {
    ```
  }];
}

def AllReduceGradientsPass : Pass<"cairn-all-reduce-gradients", "mlir::ModuleOp"> {
  let summary = "Make the training step one of R data-parallel replicas: gradients summed in buckets";
  let description = [{
    After the memory-aware schedule, on a program lowered at batch / R: the
    backward's seed becomes 1/(M R) (M micro-batches), and the gradients the
    updates read are grouped, in the order the backward completes them, into
    float32 buckets of about `bucket-bytes`, summed in place, each with a
    workspace buffer in the plan (`all_reduce.bucket<i>`: the other replicas'
    copies of this one's chunk, runtime/SumChunks.h). Right after the kernel
    that completes a bucket's last gradient, an all_reduce_start starts
    summing its gradients over the replicas; the kernels that read a complete
    gradient (updates, found_inf, clipping), and those that must follow
    them, move after the backward, each bucket's all_reduce_wait right
    before the first of them that needs it. The program gets
    `cairn.replicas = R`. A program split across devices is refused; so are
    half-precision gradients.

    ```mlir
    cairn.kernel.all_reduce_start ins(%grad.fc2.weight, %grad.fc2.bias : ...) outs(%all_reduce.bucket0 : memref<1285xf32>) {index = 0 : i64}
    ...
    cairn.kernel.all_reduce_wait ins(%all_reduce.bucket0, %grad.fc2.weight, %grad.fc2.bias : ...) outs(%grad.fc2.weight, %grad.fc2.bias : ...) {index = 0 : i64}
    cairn.kernel.sgd_update ins(%fc2.weight, %grad.fc2.weight : ...) ...
    ```
  }];
  let options = [
    Option<"replicas", "replicas", "int64_t", /*default=*/"1",
           "How many replicas train the model together (1: none)">,
    Option<"bucketBytes", "bucket-bytes", "int64_t",
           /*default=*/"25 << 20",
           "A bucket closes once its gradients take this many bytes">,
  ];
}

def SyncBatchNormPass : Pass<"cairn-sync-batch-norm", "mlir::ModuleOp"> {
  let summary = "Batch norm of data-parallel replicas on the whole batch's statistics";
  let description = [{
    After cairn-all-reduce-gradients, on a replica's program (`cairn build
    --replicas R --sync-batchnorm`): marks the training step's batch norm
    kernels (batch_norm_training, batch_norm_grad,
    batch_norm_running_update) `sync_replicas`, so that their statistics
    are those of every replica's examples, summed across the replicas as
    the kernel runs, as PyTorch's SyncBatchNorm's are, in a workspace of a
    few doubles per channel that it adds to the step (so the plan holds
    them). The parameter gradients stay each replica's share. A program
    that is not a replica's is refused.

    ```mlir
    %ws = cairn.buffer workspace "bn.batch_norm.replica_sums" : memref<17xf64>
    cairn.kernel.batch_norm_training ins(%x, %bn.weight, %bn.bias : ...) outs(%y : ...) workspace(%ws : memref<17xf64>) {c = 8 : i64, eps = 1.000000e-05 : f64, n = 2 : i64, spatial = 16 : i64, sync_replicas}
    ```
  }];
}

def GroupUpdatesPass : Pass<"cairn-group-updates", "mlir::ModuleOp"> {
  let summary = "Mark runs of adjacent updates that one launch runs (CUDA)";
  let description = [{
    Each run of two or more adjacent optimizer updates (sgd_update,
    adam_update) of one kind, element type and settings gets
    `cairn.update_group = N` on its first kernel: the CUDA emitter prints the
    run as one multi-tensor launch. Kernels are not moved; a pass that
    reorders a step drops the marks. The CPU runs each update alone.

    ```mlir
    cairn.kernel.sgd_update ins(%fc1.weight, %grad.fc1.weight, %m0 : ...) outs(%fc1.weight, %m0 : ...) {cairn.update_group = 2 : i64, ...}
    cairn.kernel.sgd_update ins(%fc1.bias, %grad.fc1.bias, %m1 : ...) outs(%fc1.bias, %m1 : ...) {...}
    ```
  }];
}

def WriteInPlacePass : Pass<"cairn-write-in-place", "mlir::ModuleOp"> {
  let summary = "Write element-wise results over dying inputs";
  let description = [{
    An element-wise kernel (add, sub, mul, div, the activations and their
    gradients, dropout) whose output has the element type and size of an
    input that dies at that kernel writes over that input: the output's
    `cairn.buffer` gets `in_place(%input)`, and the two share their bytes.
    Only the last buffer of such a chain may be written over again. Persistent
    buffers and views are never written over.

    ```mlir
    %relu = cairn.buffer saved "relu" in_place(%fc1.linear : memref<64x256xf32>) : memref<64x256xf32>
    ```
  }];
}

def PlanArenaPass : Pass<"cairn-plan-arena", "mlir::ModuleOp"> {
  let summary = "Give every buffer its offset in one arena";
  let description = [{
    The schedule is the training step's kernels, then the forward pass's
    (they never run at once, so their per-step buffers share bytes). A
    per-step buffer lives from the kernel that writes it first to the last
    kernel that reads it or one of its views, a chain of in-place buffers as
    one; persistent buffers live throughout. The planner
    (passes/IntervalPlanner.h) packs these intervals, 256-byte aligned: greedy
    by size, then an exact search under `time-limit` seconds when greedy is
    above the lower bound. Writes each buffer's `at` offset, and on the
    program `arena_bytes`, `plan_method` and `plan_optimal`.

    With `reuse=false` every buffer gets bytes of its own (the reference
    layout plans are checked against).

    ```mlir
    cairn.program "MLP" attributes {arena_bytes = 2701056 : i64, plan_method = "greedy-by-size", plan_optimal, ...} {
      %fc1.weight = cairn.buffer param "fc1.weight" at 0 ...
    ```
  }];
  let options = [
    Option<"reuse", "reuse", "bool", /*default=*/"true",
           "Reuse the bytes of dead buffers (false: every buffer its own)">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"1.0",
           "Seconds the exact search may take (0: greedy only)">,
  ];
}

def GrowWorkspacesPass : Pass<"cairn-grow-workspaces", "mlir::ModuleOp"> {
  let summary = "Give a convolution's library the free bytes above its workspace";
  let description = [{
    After the plan: a float32 convolution's workspace, sized by the im2col
    rule, lives during its kernel alone. Where the target's convolution
    library can use more (`LoweringTarget::convLibraryWorkspaceBytes`: oneDNN
    on the CPU, whose blocked copies of the batch then fit in larger chunks)
    and no buffer live at that kernel lies right above it, the workspace
    takes those bytes as `spare` ones, up to the first that a live buffer
    holds, the arena's end, or what the library can use. The arena, every
    offset and the plan's accounting (the buffer's own bytes) stay as
    planned; cairn-verify-arena checks the spare bytes with the workspace's.

    ```mlir
    %ws = cairn.buffer workspace "conv2.workspace" at 51380224 spare 19328512 : memref<56448xf32>
    ```
    Nothing on a target without such a library (CUDA: cuDNN's budget stays
    the im2col rule) or without reuse (every buffer has bytes of its own).
  }];
}

def VerifyArenaPass : Pass<"cairn-verify-arena", "mlir::ModuleOp"> {
  let summary = "Check the arena plan independently of the planner";
  let description = [{
    Recomputes every buffer's lifetime from the kernels that touch it with
    code of its own (passes/ArenaVerifier.h) and checks that every buffer lies
    inside the arena, 256-byte aligned, a view at its root's offset, and that
    no two buffers live at once share a byte, except an in-place output of an
    element-wise kernel over the input it reads last. A plan that fails is a
    Cairn bug: the pass fails with an internal error naming the buffers.
  }];
}

def ExtractStepPass : Pass<"cairn-extract-step", "mlir::ModuleOp"> {
  let summary = "Keep one step and the persistent buffers it touches";
  let description = [{
    Erases the other step and every persistent buffer no kernel of `step`
    touches: the program of inference alone (`step=forward`: no optimizer
    state, no labels) or of training alone, whose plan is that step's own
    footprint (`cairn plan --step`). Such a program is for reports; it is
    never emitted.
  }];
  let options = [
    Option<"step", "step", "std::string", /*default=*/"\"forward\"",
           "The step to keep: train_step, forward or eval_loss">,
  ];
}

def PrintArenaLivenessPass : Pass<"cairn-print-arena-liveness", "mlir::ModuleOp"> {
  let summary = "Print the schedule's liveness: the peak and what is live there";
  let description = [{
    Prints what the ArenaLiveness analysis (passes/ArenaLiveness.h) tells any
    pass that asks: the bytes live at each kernel of the schedule, the peak,
    its kernel, and the buffers live there with their sizes, largest first.
    The IR is not changed.

    ```
    peak: 2701056 bytes at schedule index 7 (train_step kernel 7: cairn.kernel.linear_grad_weight)
      live: fc1.weight 802816 param, ...
    ```
  }];
}

#endif // CAIRN_PASSES_TD
