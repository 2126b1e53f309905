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
    FailureOr<ProgramGraph> read =
        readProgramFor(getOperation(), getArgument());
    if (failed(read))
      return signalPassFailure();
    ProgramGraph &graph = *read;
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
      return markAllAnalysesPreserved();
    // New decisions change lifetimes: a plan made before is stale.
    dropPlan(graph.getProgram());
    for (auto [op, over] : decisions) {
      if (over)
        op.getInPlaceMutable().assign(over);
      else
        op.getInPlaceMutable().clear();
    }
  }
};

} // namespace
