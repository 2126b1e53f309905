//===- PrintArenaLiveness.cpp - The ArenaLiveness analysis, printed -------===//

#include "passes/ArenaLiveness.h"
#include "passes/Passes.h"

#include "ir/CairnKernelOps.h"

namespace cairn {
#define GEN_PASS_DEF_PRINTARENALIVENESSPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

struct PrintArenaLivenessPass
    : cairn::impl::PrintArenaLivenessPassBase<PrintArenaLivenessPass> {
  void runOnOperation() override {
    if (!getProgramFor(getOperation(), getArgument()))
      return signalPassFailure();
    const ArenaLiveness &liveness = getAnalysis<ArenaLiveness>();
    if (!liveness.isValid())
      return signalPassFailure();
    llvm::raw_ostream &os = llvm::outs();
    const ProgramGraph &graph = liveness.getProgramGraph();
    auto describe = [&](int index) {
      const ScheduleEntry &entry = liveness.getPlan().schedule[index];
      os << stringifyStepKind(entry.step) << " kernel " << entry.kernel << ": "
         << liveness.getKernel(index)->getName();
    };
    for (int index = 0, e = liveness.getScheduleSize(); index < e; ++index) {
      os << index << " ";
      describe(index);
      os << ": " << liveness.getLiveBytes(index) << " bytes live\n";
    }
    if (liveness.getScheduleSize() == 0) {
      os << "no kernels\n";
      return markAllAnalysesPreserved();
    }
    int peak = liveness.getPeakIndex();
    os << "peak: " << liveness.getPeakBytes() << " bytes at schedule index "
       << peak << " (";
    describe(peak);
    os << ")\n";
    for (Value value : liveness.getLiveAt(peak)) {
      const Buffer &buffer = graph.graph.buffers[graph.ids.lookup(value)];
      std::pair<int, int> interval = *liveness.getInterval(value);
      os << "  live: " << buffer.name << " " << buffer.bytes << " bytes "
         << stringifyBufferKind(buffer.kind) << " [" << interval.first << ", "
         << interval.second << "]\n";
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
