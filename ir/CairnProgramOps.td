//===- CairnProgramOps.td - The planned step's structure ---*- tablegen -*-===//
//
// The buffer-level form of a model: after `cairn-lower-to-kernels`, a module
// holds one `cairn.program`. Its body declares the persistent buffers (the
// state_dict, the optimizer state, the inputs and the outputs) and two
// `cairn.step`s, the training step and the forward pass, each a list of
// kernels (CairnKernelOps.td) that read and write buffers in destination-
// passing style. Buffers are memrefs with static shapes; where a buffer lives
// in the arena is the plan's decision, written back as its `at` offset.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_IR_CAIRNPROGRAMOPS_TD
#define CAIRN_IR_CAIRNPROGRAMOPS_TD

include "ir/CairnDialect.td"
include "ir/CairnAttrs.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Cairn_ProgramOp<string mnemonic, list<Trait> traits = []>
    : Op<Cairn_Dialect, mnemonic, traits>;

def Cairn_ProgramOp : Cairn_ProgramOp<"program", [
    IsolatedFromAbove, SingleBlock, NoTerminator]> {
  let summary = "a model's training step and forward pass over one arena";
  let description = [{
    Holds the persistent buffers (kinds `input`, `param`, `buffer`,
    `optimizer` and `output`, named by their state_dict key) and one step of
    each kind. `arena_bytes`, set by `cairn-plan-arena`, is the size of the
    arena every buffer's offset lies in; `plan_method` and `plan_optimal`
    say how the planner got there. `optimizer` is the optimizer's settings
    as torch.optim spells them, for people; the kernels hold the numbers.
    With a learning-rate schedule, `lr_schedule` holds its schedulers as
    the module's `cairn.lr_schedule` does (ir/TrainingSettings.h) and `lr`
    the declared lr it scales; the runtime gives the updates each step's
    factor. `eval_loss`, as the module's `cairn.eval_loss`, says how the
    runtime computes the test loss from the forward step's output.
    A model partitioned across devices (cairn-partition-devices) is one
    program per device: `device` is its index, `devices` how many there are;
    each has its own arena, and values that cross go through
    `cairn.kernel.send` and `cairn.kernel.receive`.

    ```mlir
    cairn.program "MLP" attributes {batch = 64 : i64, optimizer = "SGD(lr=0.05)",
                                    source = "mlp.cairn", target = "cpu"} {
      %w = cairn.buffer param "fc.weight" : memref<10x784xf32>
      cairn.step train_step {
        ...
      }
      cairn.step forward {
        ...
      }
    }
    ```
  }];
  let arguments = (ins StrAttr:$model, StrAttr:$source, Cairn_I64Attr:$batch,
                       StrAttr:$optimizer, StrAttr:$target,
                       OptionalAttr<Cairn_I64Attr>:$arena_bytes,
                       OptionalAttr<StrAttr>:$plan_method,
                       UnitAttr:$plan_optimal,
                       OptionalAttr<ArrayAttr>:$lr_schedule,
                       OptionalAttr<Cairn_F64Attr>:$lr,
                       OptionalAttr<DictionaryAttr>:$eval_loss,
                       OptionalAttr<Cairn_I64Attr>:$device,
                       OptionalAttr<Cairn_I64Attr>:$devices);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$model attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The step of `kind`, or null.
    StepOp getStep(::cairn::StepKind kind);
  }];
}

def Cairn_StepOp : Cairn_ProgramOp<"step", [
    HasParent<"ProgramOp">, SingleBlock, NoTerminator]> {
  let summary = "one step function: its buffers and kernels, in order";
  let description = [{
    The kernels of the training step (`train_step`: forward, loss,
    backward, optimizer update), of inference (`forward`) or of the loss in
    eval mode (`eval_loss`, for the test loss of a loss the runtime cannot
    compute from the forward step's output), run in the order of the block.
    The per-step buffers (kinds `grad`, `activation`, `saved`, `temp`,
    `workspace`) and views are declared in the block before the kernel that
    first writes them. The steps never run at once, so their per-step
    buffers may share bytes.

    `cairn-schedule-for-memory` records what it did: `peak_before` and
    `peak_after` are the most bytes of the step's own buffers live at one
    kernel before and after it ran, `moved_kernels` how many kernels it
    moved (0 when it kept the order).

    ```mlir
    cairn.step train_step {
      %y = cairn.buffer activation "fc1.linear" : memref<64x256xf32>
      cairn.kernel.linear ins(%x, %w, %b : ...) outs(%y : memref<64x256xf32>) {...}
    }
    ```
  }];
  let arguments = (ins Cairn_StepKind:$kind,
                       OptionalAttr<Cairn_I64Attr>:$peak_before,
                       OptionalAttr<Cairn_I64Attr>:$peak_after,
                       OptionalAttr<Cairn_I64Attr>:$moved_kernels);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$kind attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def Cairn_BufferOp : Cairn_ProgramOp<"buffer", [
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "a buffer of the arena";
  let description = [{
    Declares a buffer: persistent ones in the program's body, per-step ones
    in a step. `name` is the state_dict key of persistent buffers and of
    gradients (`grad.fc1.weight`), `<layer>.<op>` for the others, unique in
    the program. A param, buffer or optimizer state has its initializer
    (`init`).

    Two decisions of the plan are written here. `at` is the buffer's offset
    in bytes from the arena's start (a multiple of 256), set by
    `cairn-plan-arena`. `in_place` names a buffer whose bytes this one takes
    over (`cairn-write-in-place`): an input of the kernel that writes this
    buffer first, elementwise, of the same size, which that kernel reads for
    the last time.

    A workspace may have `spare` bytes after its own, free in the plan while
    its kernel runs, which the kernel may use too (`cairn-grow-workspaces`:
    a convolution's library); the plan's accounting counts its own bytes.

    ```mlir
    %w = cairn.buffer param "fc1.weight" at 0 {init = #cairn.init<uniform, 0.0357>} : memref<256x784xf32>
    %r = cairn.buffer saved "relu" at 803072 in_place(%y : memref<64x256xf32>) : memref<64x256xf32>
    %s = cairn.buffer workspace "conv1.workspace" at 1024 spare 65536 : memref<7056xf32>
    ```
  }];
  let arguments = (ins Cairn_BufferKind:$kind, StrAttr:$name,
                       OptionalAttr<Cairn_I64Attr>:$offset,
                       Optional<Cairn_MemRef>:$in_place,
                       OptionalAttr<Cairn_InitAttr>:$init,
                       OptionalAttr<Cairn_I64Attr>:$spare);
  let results = (outs Cairn_MemRef:$result);
  let assemblyFormat = [{
    $kind $name (`at` $offset^)? (`spare` $spare^)?
    (`in_place` `(` $in_place^ `:` type($in_place) `)`)?
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Bytes of the buffer's elements.
    int64_t getBytes();
    /// input, param, buffer, optimizer or output: at one place for the whole run.
    bool isPersistent();
  }];
}

def Cairn_ViewOp : Cairn_ProgramOp<"view", [Pure,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "a buffer seen with another shape";
  let description = [{
    The bytes of `source` (a buffer or another view) read as `result`: a
    reshape, an eval-mode dropout, a broadcast that adds only 1s. Same
    element type, same number of elements, no bytes of its own; kernels
    read views but never write them. The source lives as long as its views.

    ```mlir
    %flat = cairn.view activation "reshape" %image : memref<64x1x28x28xf32> to memref<64x784xf32>
    ```
  }];
  let arguments = (ins Cairn_BufferKind:$kind, StrAttr:$name,
                       Cairn_MemRef:$source);
  let results = (outs Cairn_MemRef:$result);
  let assemblyFormat = [{
    $kind $name $source attr-dict `:` type($source) `to` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The buffer whose bytes the view reads, through views of views.
    BufferOp getRoot();
  }];
}

#endif // CAIRN_IR_CAIRNPROGRAMOPS_TD
