//===- ChooseRecomputation.cpp - What to compute again under a budget -----===//
//
// `cairn plan|build --memory-budget SIZE`: chooses which values of the
// training step's forward part the backward computes again, so that the
// arena fits SIZE, at little extra compute. The decision is a
// `cairn.recompute` mark on each chosen forward kernel; the recompute pass
// (RecomputeCheckpoints.cpp) then copies what the backward reads of it.
//
// The plan is in the loop, not an estimate of it: each round copies the
// module, marks the choice so far, runs what the pipeline runs after the
// lowering (recompute, fuse, schedule, in-place, plan: the exact planner)
// and reads the arena. Under the budget, it stops. Otherwise it looks at
// the train step's peak (ArenaLiveness), where the bytes that set the arena
// are live: every `saved` buffer live there that a kernel without persistent
// outputs wrote is a candidate, ranked by the bytes it frees per operation
// of recomputing it (the kernel's FLOPs, KernelOpInterface::getKernelFlops),
// and the best are marked until they cover the excess. A round that adds
// nothing (no candidate at the peak) ends the search: the budget is out of
// reach, and the smallest arena seen is kept, which the driver reports
// (exit 2). The choice with the smallest arena under the budget is the one
// with the fewest rounds, so the least recomputed that fits.
//
//===----------------------------------------------------------------------===//

#include "passes/ArenaLiveness.h"
#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

#include "ir/CairnKernelOps.h"
#include "ir/CairnProgramOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>

namespace cairn {
#define GEN_PASS_DEF_CHOOSERECOMPUTATIONPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

/// At most this many rounds of the plan in the loop.
constexpr int kMaxRounds = 64;

/// The forward kernels of the training step that may be marked, by the
/// name of the per-step buffer they write: those before the loss that write
/// no persistent buffer.
llvm::StringMap<Operation *> findCandidateKernels(ProgramOp program) {
  llvm::StringMap<Operation *> byOutput;
  for (auto step : program.getBody().front().getOps<StepOp>()) {
    if (step.getKind() != StepKind::train_step)
      continue;
    SmallVector<Operation *> forward;
    for (Operation &op : step.getBody().front()) {
      auto kernel = dyn_cast<KernelOpInterface>(op);
      if (!kernel)
        continue;
      forward.push_back(&op);
      bool writesLoss = false;
      for (Value output : kernel.getKernelOutputs())
        if (auto buffer = output ? output.getDefiningOp<BufferOp>() : BufferOp())
          writesLoss |= buffer.getKind() == BufferKind::output;
      if (writesLoss)
        break;
    }
    for (Operation *op : forward) {
      auto kernel = cast<KernelOpInterface>(op);
      bool persistent = false;
      SmallVector<BufferOp> outputs;
      for (Value output : kernel.getKernelOutputs())
        if (auto buffer = output ? output.getDefiningOp<BufferOp>() : BufferOp()) {
          persistent |= buffer.isPersistent();
          outputs.push_back(buffer);
        }
      if (!persistent)
        for (BufferOp buffer : outputs)
          byOutput[buffer.getName()] = op;
    }
  }
  return byOutput;
}

struct ChooseRecomputationPass
    : cairn::impl::ChooseRecomputationPassBase<ChooseRecomputationPass> {
  using ChooseRecomputationPassBase::ChooseRecomputationPassBase;

  /// The arena of `module` with the kernels writing `chosen` marked, after
  /// the rest of the pipeline; the candidates live at its train step's peak
  /// (name, bytes), largest first. Fails when a pass does.
  FailureOr<int64_t> evaluate(const llvm::StringSet<> &chosen,
                              SmallVectorImpl<std::pair<std::string, int64_t>> &atPeak) {
    OwningOpRef<ModuleOp> copy(cast<ModuleOp>(getOperation()->clone()));
    ProgramOp program = getProgramFor(*copy, getArgument());
    if (!program)
      return failure();
    llvm::StringMap<Operation *> kernels = findCandidateKernels(program);
    for (const auto &name : chosen)
      if (Operation *kernel = kernels.lookup(name.getKey()))
        kernel->setAttr(CairnDialect::kRecomputeAttrName,
                        UnitAttr::get(&getContext()));
    PassManager pm(&getContext(), ModuleOp::getOperationName());
    pm.addPass(createRecomputeCheckpointsPass());
    if (fuse)
      pm.addPass(createFuseElementwisePass());
    if (reuse && reorder)
      pm.addPass(createScheduleForMemoryPass());
    if (reuse)
      pm.addPass(createWriteInPlacePass());
    pm.addPass(createPlanArenaPass({reuse, planSeconds}));
    if (failed(pm.run(*copy)))
      return failure();
    program = getProgramFor(*copy, getArgument());
    std::optional<uint64_t> arena = program.getArenaBytes();
    if (!arena)
      return failure();
    // The train step's peak: the program's schedule runs it first.
    ArenaLiveness liveness(program);
    int trainKernels = 0;
    for (auto step : program.getBody().front().getOps<StepOp>())
      if (step.getKind() == StepKind::train_step)
        for (Operation &op : step.getBody().front())
          trainKernels += isa<KernelOpInterface>(op);
    int peak = 0;
    for (int i = 1; i < trainKernels && i < liveness.getScheduleSize(); ++i)
      if (liveness.getLiveBytes(i) > liveness.getLiveBytes(peak))
        peak = i;
    llvm::StringMap<Operation *> candidates = findCandidateKernels(program);
    for (Value value : liveness.getLiveAt(peak))
      if (auto buffer = value.getDefiningOp<BufferOp>();
          buffer && buffer.getKind() == BufferKind::saved &&
          candidates.count(buffer.getName()) && !chosen.contains(buffer.getName()))
        atPeak.emplace_back(buffer.getName().str(), buffer.getBytes());
    return int64_t(*arena);
  }

  void runOnOperation() override {
    if (budget <= 0)
      return;
    ProgramOp program = getProgramFor(getOperation(), getArgument());
    if (!program)
      return signalPassFailure();
    llvm::StringMap<Operation *> kernels = findCandidateKernels(program);
    auto flopsOf = [&](StringRef name) {
      Operation *kernel = kernels.lookup(name);
      return kernel ? std::max<int64_t>(
                          1, cast<KernelOpInterface>(kernel).getKernelFlops())
                    : int64_t(1);
    };

    llvm::StringSet<> chosen, best;
    int64_t bestArena = -1;
    for (int round = 0; round < kMaxRounds; ++round) {
      SmallVector<std::pair<std::string, int64_t>> atPeak;
      FailureOr<int64_t> arena = evaluate(chosen, atPeak);
      if (failed(arena)) {
        program.emitError() << "cairn-choose-recomputation: the pipeline "
                               "failed on a candidate choice";
        return signalPassFailure();
      }
      if (bestArena < 0 || *arena < bestArena) {
        bestArena = *arena;
        best = chosen;
      }
      if (*arena <= budget || atPeak.empty())
        break;
      // The most bytes per operation first; ties by name, so the choice
      // does not depend on the order of a hash table.
      llvm::sort(atPeak, [&](const auto &a, const auto &b) {
        double ra = double(a.second) / double(flopsOf(a.first));
        double rb = double(b.second) / double(flopsOf(b.first));
        return ra != rb ? ra > rb : a.first < b.first;
      });
      int64_t excess = *arena - budget, covered = 0;
      for (const auto &[name, bytes] : atPeak) {
        chosen.insert(name);
        covered += bytes;
        if (covered >= excess)
          break;
      }
    }
    for (const auto &name : best)
      if (Operation *kernel = kernels.lookup(name.getKey()))
        kernel->setAttr(CairnDialect::kRecomputeAttrName,
                        UnitAttr::get(&getContext()));
  }
};

} // namespace
