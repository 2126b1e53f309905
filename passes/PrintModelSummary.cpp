//===- PrintModelSummary.cpp - Print what `cairn check` shows -------------===//

#include "passes/ModelSummary.h"
#include "passes/Passes.h"

namespace cairn {
#define GEN_PASS_DEF_PRINTMODELSUMMARYPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace cairn;

namespace {
struct PrintModelSummaryPass
    : impl::PrintModelSummaryPassBase<PrintModelSummaryPass> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<ModelSummary> summary = summarizeModel(getOperation());
    if (!summary)
      return signalPassFailure();
    if (json)
      printSummaryJson(*summary, llvm::outs());
    else
      printSummaryText(*summary, llvm::outs());
    markAllAnalysesPreserved();
  }
};
} // namespace
