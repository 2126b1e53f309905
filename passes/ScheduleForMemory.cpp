//===- ScheduleForMemory.cpp - Reorder kernels where the peak drops -------===//

#include "passes/KernelGraphIR.h"
#include "passes/KernelSchedule.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace cairn {
#define GEN_PASS_DEF_SCHEDULEFORMEMORYPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

struct ScheduleForMemoryPass
    : cairn::impl::ScheduleForMemoryPassBase<ScheduleForMemoryPass> {
  void runOnOperation() override {
    SmallVector<ProgramOp> programs =
        getProgramsFor(getOperation(), getArgument());
    if (programs.empty())
      return signalPassFailure();
    for (ProgramOp program : programs)
      scheduleProgram(program);
  }

  void scheduleProgram(ProgramOp program) {
    ProgramGraph graph = readProgram(program);
    Builder b(program.getContext());
    for (auto step : program.getBody().front().getOps<StepOp>()) {
      StepScheduleResult result =
          scheduleStepForMemory(graph.graph, step.getKind());
      if (result.reordered) {
        dropPlan(program);
        SmallVector<Operation *> kernels;
        for (int index : result.order)
          kernels.push_back(graph.getKernelOp(step.getKind(), index));
        reorderStep(step, kernels);
      }
      step.setPeakBeforeAttr(b.getI64IntegerAttr(result.peakBefore));
      step.setPeakAfterAttr(b.getI64IntegerAttr(result.peakAfter));
      step.setMovedKernelsAttr(b.getI64IntegerAttr(result.movedKernels));
    }
  }
};

} // namespace
