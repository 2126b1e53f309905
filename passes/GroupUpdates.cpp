//===- GroupUpdates.cpp - Adjacent updates as one launch ------------------===//
//
// The CUDA runtime updates many tensors in one launch when the updates share
// their settings (cairn::cuda::sgdUpdate and adamUpdate take a list). This
// pass marks each run of two or more adjacent such updates on its first:
// `cairn.update_group = N`. Kernels are not moved to make more of them
// adjacent: the memory-aware schedule put each update right after its
// gradient is complete, so that the gradient dies there (with --no-reorder
// they are all at the end of the step and become one launch). Each update
// reads and writes only its own tensors, so one launch writes what the
// kernels would. A new order drops the marks (reorderStep).
//
//===----------------------------------------------------------------------===//

#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

#include "ir/CairnKernelOps.h"

#include "mlir/IR/Builders.h"

namespace cairn {
#define GEN_PASS_DEF_GROUPUPDATESPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

struct GroupUpdatesPass : cairn::impl::GroupUpdatesPassBase<GroupUpdatesPass> {
  void runOnOperation() override {
    SmallVector<ProgramOp> programs =
        getProgramsFor(getOperation(), getArgument());
    if (programs.empty())
      return signalPassFailure();
    for (ProgramOp program : programs)
      groupUpdates(program);
  }

  void groupUpdates(ProgramOp program) {
    Builder b(program.getContext());
    for (auto step : program.getBody().front().getOps<StepOp>()) {
      SmallVector<Operation *> kernels;
      for (Operation &op : step.getBody().front())
        if (isa<KernelOpInterface>(op))
          kernels.push_back(&op);
      for (size_t first = 0; first < kernels.size();) {
        size_t end = first + 1;
        while (end < kernels.size() &&
               haveSameUpdateSettings(kernels[first], kernels[end]))
          ++end;
        if (end - first > 1)
          kernels[first]->setAttr(CairnDialect::kUpdateGroupAttrName,
                                  b.getI64IntegerAttr(end - first));
        else
          kernels[first]->removeAttr(CairnDialect::kUpdateGroupAttrName);
        for (size_t m = first + 1; m < end; ++m)
          kernels[m]->removeAttr(CairnDialect::kUpdateGroupAttrName);
        first = end;
      }
    }
  }
};

} // namespace
