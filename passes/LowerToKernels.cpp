//===- LowerToKernels.cpp - @train_step and @forward to a cairn.program ---===//

#include "passes/KernelGraphIR.h"
#include "passes/Lowering.h"
#include "passes/Passes.h"

#include "ir/CairnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace cairn {
#define GEN_PASS_DEF_LOWERTOKERNELSPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

struct LowerToKernelsPass
    : cairn::impl::LowerToKernelsPassBase<LowerToKernelsPass> {
  using LowerToKernelsPassBase::LowerToKernelsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<LoweringTarget> lowering = getLoweringTarget(target);
    if (!lowering) {
      module.emitError() << "cairn-lower-to-kernels: unknown target '"
                         << target << "'; expected cpu or cuda";
      return signalPassFailure();
    }
    std::optional<KernelGraph> graph = lowerToKernels(module, *lowering);
    if (!graph || !writeProgram(*graph, module))
      return signalPassFailure();
    // The program is the model now.
    for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      func.erase();
  }
};

} // namespace
