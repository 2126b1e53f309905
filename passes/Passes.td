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
      role `output`); the new value of every updated argument, in argument
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

    Every new op has the location of the forward op it differentiates (the
    optimizer's, that of its param's argument). An op without a gradient
    rule is an error at its location.
  }];
  let dependentDialects = ["::cairn::CairnDialect", "::mlir::func::FuncDialect"];
}

#endif // CAIRN_PASSES_TD
