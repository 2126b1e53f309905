//===- ExtractStep.cpp - One step and the persistent buffers it touches ---===//

#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

#include "ir/CairnKernelOps.h"

namespace cairn {
#define GEN_PASS_DEF_EXTRACTSTEPPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

struct ExtractStepPass : cairn::impl::ExtractStepPassBase<ExtractStepPass> {
  using ExtractStepPassBase::ExtractStepPassBase;

  void runOnOperation() override {
    ProgramOp program = getProgramFor(getOperation(), getArgument());
    if (!program)
      return signalPassFailure();
    std::optional<StepKind> keep = symbolizeStepKind(step);
    if (!keep) {
      program.emitError() << "cairn-extract-step: unknown step '" << step
                          << "'; expected train_step, forward or eval_loss";
      return signalPassFailure();
    }
    for (auto other :
         llvm::make_early_inc_range(program.getBody().front().getOps<StepOp>()))
      if (other.getKind() != *keep)
        other.erase();
    for (auto buffer : llvm::make_early_inc_range(
             program.getBody().front().getOps<BufferOp>()))
      if (buffer.getResult().use_empty())
        buffer.erase();
  }
};

} // namespace
