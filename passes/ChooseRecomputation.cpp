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
// of modelled time to recompute it (KernelOpInterface::getKernelCost: a
// roofline of FLOPs and bytes moved),
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
#include "passes/Pipeline.h"

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

/// At most this many plans in the loop, per 16 candidates.
constexpr int kMaxRounds = 64;

/// The forward kernels of the training step that may be marked, by the
/// name of the per-step buffer they write: those before the loss that write
/// no persistent buffer.
llvm::StringMap<Operation *> findCandidateKernels(ProgramOp program) {
  llvm::StringMap<Operation *> byOutput;
  for (auto step : program.getBody().front().getOps<StepOp>()) {
    if (step.getKind() != StepKind::train_step)
      continue;
    SmallVector<Operation *> kernels = getStepKernels(step);
    for (int k = 0, end = getForwardEnd(kernels); k <= end; ++k)
      if (!writesPersistentBuffer(kernels[k]))
        for (Value output :
             cast<KernelOpInterface>(kernels[k]).getKernelOutputs())
          if (auto buffer =
                  output ? output.getDefiningOp<BufferOp>() : BufferOp())
            byOutput[buffer.getName()] = kernels[k];
  }
  return byOutput;
}

/// The `saved` buffers of the training step (what the backward reads of
/// the forward) that a candidate kernel writes, in forward order.
SmallVector<std::string>
getSavedInForwardOrder(ProgramOp program,
                       const llvm::StringMap<Operation *> &kernels) {
  SmallVector<std::string> saved;
  for (auto step : program.getBody().front().getOps<StepOp>())
    if (step.getKind() == StepKind::train_step)
      for (auto buffer : step.getBody().front().getOps<BufferOp>())
        if (buffer.getKind() == BufferKind::saved &&
            kernels.count(buffer.getName()))
          saved.push_back(buffer.getName().str());
  return saved;
}

struct ChooseRecomputationPass
    : cairn::impl::ChooseRecomputationPassBase<ChooseRecomputationPass> {
  using ChooseRecomputationPassBase::ChooseRecomputationPassBase;

  /// The arena of `module` with the kernels writing `chosen` marked, after
  /// the rest of the pipeline; the candidates live at its train step's peak
  /// (name, bytes), largest first. Fails when a pass does.
  struct Evaluation {
    int64_t arena = 0;
    int64_t peakBytes = 0; // the train step's most live bytes
  };
  FailureOr<Evaluation>
  evaluate(const llvm::StringSet<> &chosen, double seconds,
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
    // The rest of the pipeline, as it will run, up to the plan (the CPU's
    // stages: CUDA's update grouping moves no byte).
    PipelineOptions rest;
    rest.fuse = fuse;
    rest.reuse = reuse;
    rest.reorder = reorder;
    rest.planSeconds = seconds;
    rest.stopAfter = PipelineStage::Plan;
    PassManager pm(&getContext(), ModuleOp::getOperationName());
    addStagesAfterLowering(pm, rest);
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
        trainKernels = getStepKernels(step).size();
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
    return Evaluation{int64_t(*arena), liveness.getLiveBytes(peak)};
  }

  void runOnOperation() override {
    if (budget <= 0)
      return;
    ProgramOp program = getProgramFor(getOperation(), getArgument());
    if (!program)
      return signalPassFailure();
    llvm::StringMap<Operation *> kernels = findCandidateKernels(program);
    // A value is computed again from what is kept: the inputs of its kernel
    // that only the forward reads (`activation`, dead after the forward
    // otherwise) are recomputed with it, else they would live on for it.
    auto chainOf = [&](StringRef name) {
      SmallVector<std::string> chain;
      llvm::StringSet<> seen;
      SmallVector<std::string> work{name.str()};
      while (!work.empty()) {
        std::string next = work.pop_back_val();
        Operation *kernel = kernels.lookup(next);
        if (!kernel || !seen.insert(next).second)
          continue;
        chain.push_back(next);
        for (Value input : cast<KernelOpInterface>(kernel).getKernelInputs())
          if (auto buffer = input ? getViewRoot(input).getDefiningOp<BufferOp>()
                                  : BufferOp())
            if (buffer.getKind() == BufferKind::activation)
              work.push_back(buffer.getName().str());
      }
      return chain;
    };
    // What recomputing a candidate costs: its chain's modelled time.
    auto costOf = [&](StringRef name) {
      int64_t cost = 1;
      for (const std::string &member : chainOf(name))
        cost = saturatingAdd(
            cost,
            cast<KernelOpInterface>(kernels.lookup(member)).getKernelCost());
      return cost;
    };

    // Greedy, with the plan in the loop: the candidate at the peak that
    // frees the most bytes per unit of modelled time is tried; it stays when
    // the arena (or, at equal arena, the peak's live bytes) drops, else it is
    // set aside. A round that tries nothing new ends the search. Inner rounds
    // give the exact search a tenth of its time; the final plan has all of it.
    const double innerSeconds = planSeconds / 10;
    llvm::StringSet<> chosen, tried;
    SmallVector<std::pair<std::string, int64_t>> atPeak;
    FailureOr<Evaluation> current = evaluate(chosen, innerSeconds, atPeak);
    for (int round = 0; succeeded(current) && current->arena > budget &&
                        round < kMaxRounds * 16;
         ++round) {
      llvm::erase_if(atPeak,
                     [&](const auto &c) { return tried.contains(c.first); });
      if (atPeak.empty())
        break;
      // The most bytes per operation first; ties by name, so the choice
      // does not depend on the order of a hash table.
      auto best = std::min_element(
          atPeak.begin(), atPeak.end(), [&](const auto &a, const auto &b) {
            double ra = double(a.second) / double(costOf(a.first));
            double rb = double(b.second) / double(costOf(b.first));
            return ra != rb ? ra > rb : a.first < b.first;
          });
      std::string name = best->first;
      tried.insert(name);
      llvm::StringSet<> trial = chosen;
      for (const std::string &member : chainOf(name))
        trial.insert(member);
      SmallVector<std::pair<std::string, int64_t>> trialPeak;
      FailureOr<Evaluation> next = evaluate(trial, innerSeconds, trialPeak);
      if (failed(next)) {
        current = next;
        break;
      }
      if (next->arena < current->arena ||
          (next->arena == current->arena &&
           next->peakBytes < current->peakBytes)) {
        chosen = std::move(trial);
        current = next;
        atPeak = std::move(trialPeak);
        tried.clear(); // a new plan: what did not help may help now
      }
    }
    if (failed(current)) {
      program.emitError() << "cairn-choose-recomputation: the pipeline "
                             "failed on a candidate choice";
      return signalPassFailure();
    }

    // Square-root checkpointing's family (Chen et al.): of the values the
    // backward reads, in forward order, keep every k-th and compute the
    // rest again, for k = 2, 3, ... while the arena drops. The greedy
    // choice competes with every member: among the choices under the
    // budget the one with the least extra modelled time wins, else the smallest
    // arena. So at equal memory the choice is never worse than square-root
    // checkpointing.
    auto extraCost = [&](const llvm::StringSet<> &set) {
      int64_t cost = 0;
      for (const auto &name : set)
        if (Operation *kernel = kernels.lookup(name.getKey()))
          cost = saturatingAdd(cost,
                               cast<KernelOpInterface>(kernel).getKernelCost());
      return cost;
    };
    llvm::StringSet<> best = chosen;
    int64_t bestArena = current->arena, bestCost = extraCost(chosen);
    auto consider = [&](const llvm::StringSet<> &set, int64_t arena) {
      int64_t flops = extraCost(set);
      bool fits = arena <= budget, bestFits = bestArena <= budget;
      if ((fits && (!bestFits || flops < bestCost)) ||
          (!fits && !bestFits && arena < bestArena)) {
        best = set;
        bestArena = arena;
        bestCost = flops;
      }
    };
    SmallVector<std::string> saved = getSavedInForwardOrder(program, kernels);
    int64_t previous = -1;
    for (size_t k = 2; k <= saved.size() + 1; ++k) {
      llvm::StringSet<> segments;
      for (size_t i = 0; i < saved.size(); ++i)
        if (i % k != k - 1)
          for (const std::string &member : chainOf(saved[i]))
            segments.insert(member);
      SmallVector<std::pair<std::string, int64_t>> unused;
      FailureOr<Evaluation> family = evaluate(segments, innerSeconds, unused);
      if (failed(family))
        break;
      consider(segments, family->arena);
      if (previous >= 0 && family->arena > previous && family->arena > budget)
        break; // past the family's minimum
      previous = family->arena;
    }
    // Pruning: a mark the winner does not need (the arena stays under the
    // budget, or does not grow when nothing fits) is dropped, the costliest
    // first: an early choice can recompute a value too soon for a later one
    // (ResNet-18's stem output, read again by the first residual block).
    SmallVector<std::string> marked;
    for (const auto &name : best)
      marked.push_back(name.getKey().str());
    llvm::sort(marked, [&](const std::string &a, const std::string &b) {
      int64_t ca = cast<KernelOpInterface>(kernels.lookup(a)).getKernelCost();
      int64_t cb = cast<KernelOpInterface>(kernels.lookup(b)).getKernelCost();
      return ca != cb ? ca > cb : a < b;
    });
    for (const std::string &name : marked) {
      llvm::StringSet<> trial = best;
      trial.erase(name);
      SmallVector<std::pair<std::string, int64_t>> unused;
      FailureOr<Evaluation> pruned = evaluate(trial, innerSeconds, unused);
      if (failed(pruned))
        break;
      bool keeps = bestArena <= budget ? pruned->arena <= budget
                                       : pruned->arena <= bestArena;
      if (keeps) {
        best = std::move(trial);
        bestArena = pruned->arena;
      }
    }
    program->setAttr(
        CairnDialect::kMemoryBudgetAttrName,
        IntegerAttr::get(IntegerType::get(&getContext(), 64), budget));
    for (const auto &name : best)
      if (Operation *kernel = kernels.lookup(name.getKey()))
        kernel->setAttr(CairnDialect::kRecomputeAttrName,
                        UnitAttr::get(&getContext()));
  }
};

} // namespace
