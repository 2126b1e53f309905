//===- ModelSummary.h - What `cairn check` reports about a model -*- C++ -*-===//
//
// Read from the IR the frontend emits, so the summary describes exactly what
// later passes will compile: the state_dict, per-op shapes and FLOPs.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_MODELSUMMARY_H
#define CAIRN_PASSES_MODELSUMMARY_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace cairn {

struct ModelSummary {
  struct Tensor {
    std::string name;
    std::vector<int64_t> shape;
    std::string dtype; // "f32", "i64", ...
    std::string role;  // "input", "param" or "buffer"
  };
  struct Row {
    std::string layer; // the layer path, or "" for a functional op of the model
    std::string op;    // "linear"
    std::vector<int64_t> shape;
    int64_t params = 0;
    int64_t flops = 0;
    std::string loc;   // "file:line:col"
  };

  std::string model;
  int64_t batch = 0;
  std::vector<Tensor> inputs;
  std::vector<Tensor> stateDict; // parameters and buffers, state_dict order
  std::vector<Row> rows;         // ops of @forward, constants left out
  int64_t parameters = 0;        // elements of trainable parameters
  int64_t buffers = 0;           // elements of buffers
  int64_t forwardFlops = 0;
  std::string optimizer;         // the attribute as printed
  /// The lr schedule's schedulers as torch spells them, in order; and
  /// clip_grad_norm's call (empty without).
  std::vector<std::string> lrSchedule;
  std::string clipGradNorm;
  bool hasLoss = false;
};

/// Summarises a module with `@forward` (and maybe `@loss`); nullopt and an
/// error on the module when it has no `@forward`.
std::optional<ModelSummary> summarizeModel(mlir::ModuleOp module);

void printSummaryText(const ModelSummary &summary, llvm::raw_ostream &os);
void printSummaryJson(const ModelSummary &summary, llvm::raw_ostream &os);

} // namespace cairn

#endif // CAIRN_PASSES_MODELSUMMARY_H
