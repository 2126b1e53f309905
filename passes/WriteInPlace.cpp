//===- WriteInPlace.cpp - Element-wise results over dying inputs ----------===//

#include "passes/ArenaPlan.h"
#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

namespace cairn {
#define GEN_PASS_DEF_WRITEINPLACEPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

struct WriteInPlacePass : cairn::impl::WriteInPlacePassBase<WriteInPlacePass> {
  void runOnOperation() override {
    SmallVector<ProgramOp> programs =
        getProgramsFor(getOperation(), getArgument());
    if (programs.empty())
      return signalPassFailure();
    bool changed = false;
    for (ProgramOp program : programs)
      changed |= writeInPlace(program);
    if (!changed)
      markAllAnalysesPreserved();
  }

  /// Writes the in-place decisions of `program`; true when one changed.
  bool writeInPlace(ProgramOp program) {
    ProgramGraph graph = readProgram(program);
    // The decisions alone: lifetimes and in-place, no offsets.
    ArenaPlanOptions options;
    options.reorder = false;
    options.place = false;
    planArena(graph.graph, options);
    // Each buffer op and what it is now to be written over (or null).
    SmallVector<std::pair<BufferOp, Value>> decisions;
    bool changed = false;
    for (const Buffer &buffer : graph.graph.buffers) {
      auto op = graph.values[buffer.id].getDefiningOp<BufferOp>();
      if (!op)
        continue;
      Value over = buffer.inPlaceOf == kNoBuffer
                       ? Value()
                       : graph.values[buffer.inPlaceOf];
      changed |= over != op.getInPlace();
      decisions.push_back({op, over});
    }
    if (!changed)
      return false;
    // New decisions change lifetimes: a plan made before is stale.
    dropPlan(graph.getProgram());
    for (auto [op, over] : decisions) {
      if (over)
        op.getInPlaceMutable().assign(over);
      else
        op.getInPlaceMutable().clear();
    }
    return true;
  }
};

} // namespace
