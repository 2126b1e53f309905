//===- PlanArena.cpp - Every buffer's offset in one arena -----------------===//

#include "passes/ArenaPlan.h"
#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

#include <cmath>

namespace cairn {
#define GEN_PASS_DEF_PLANARENAPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

struct PlanArenaPass : cairn::impl::PlanArenaPassBase<PlanArenaPass> {
  using PlanArenaPassBase::PlanArenaPassBase;

  void runOnOperation() override {
    SmallVector<ProgramOp> programs =
        getProgramsFor(getOperation(), getArgument());
    if (programs.empty())
      return signalPassFailure();
    if (!(timeLimit >= 0) || !std::isfinite(timeLimit)) {
      programs.front().emitError()
          << "cairn-plan-arena: time-limit must be a number of seconds >= 0 "
             "but got "
          << timeLimit;
      return signalPassFailure();
    }
    // Each device's program has its own arena.
    for (ProgramOp program : programs)
      planProgram(program);
  }

  void planProgram(ProgramOp program) {
    ProgramGraph graph = readProgram(program);
    // The order and the in-place decisions are the IR's.
    ArenaPlanOptions options;
    options.reuse = reuse;
    options.reorder = false;
    options.inPlace = false;
    options.timeLimitSeconds = timeLimit;
    ArenaPlan plan = planArena(graph.graph, options);

    Builder b(program.getContext());
    for (const Buffer &buffer : graph.graph.buffers) {
      auto op = graph.values[buffer.id].getDefiningOp<BufferOp>();
      if (!op)
        continue;
      op.setOffsetAttr(b.getI64IntegerAttr(buffer.offset));
      // Without reuse nothing is in place.
      if (buffer.inPlaceOf == kNoBuffer)
        op.getInPlaceMutable().clear();
    }
    program.setArenaBytesAttr(b.getI64IntegerAttr(plan.arenaBytes));
    program.setPlanMethodAttr(b.getStringAttr(plan.method));
    program.setPlanOptimal(plan.provedOptimal);
  }
};

} // namespace
