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

#endif // CAIRN_PASSES_TD
