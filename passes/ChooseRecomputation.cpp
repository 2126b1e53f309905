//===- ChooseRecomputation.cpp - What to compute again under a budget -----===//
//
// `cairn plan|build --memory-budget SIZE`: chooses which values of the
// training step's forward part the backward computes again, so that the
// arena fits SIZE, at little extra compute. The decision is a
// `cairn.recompute` mark on each chosen forward kernel; the recompute pass
// (RecomputeCheckpoints.cpp) then copies what the backward reads of it.
//
// The plan is in the loop, not an estimate of it: each evaluation copies
// the module, marks the choice, runs what the pipeline runs after the
// lowering (recompute, fuse, schedule, in-place, plan: the exact planner)
// and reads the arena and the modelled time of every copy made
// (KernelOpInterface::getKernelCost: a roofline of FLOPs and bytes moved;
// with `kernel-times`, the time a profile of the plain build measured for
// the kernel the copy repeats, scaled to the model's units).
// A greedy search looks at the train step's peak (ArenaLiveness), where the
// bytes that set the arena are live, and takes the move that frees the most
// bytes per unit of time: mark a `saved` buffer live there (with the
// `activation` inputs it is computed from), or make a marked kernel whose
// shared copy is live there `cairn.recompute_per_use` (copied for each copy
// computed from it, freed after). A move that makes no progress, or whose
// copies would add more than the step's own modelled time, is set aside;
// when nothing at the peak is left, the search ends. Short of the
// budget, a second search makes every mark per use; square-root
// checkpointing's family competes; the winner is pruned. Then an exchange
// (local) search undoes one of its dearest moves, forbids it, refills with
// the greedy search and prunes again, while that finds a cheaper choice.
// The smallest arena is what the driver reports when nothing fits (exit 2).
//
//===----------------------------------------------------------------------===//

#include "passes/ArenaLiveness.h"
#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include "ir/CairnKernelOps.h"
#include "ir/CairnProgramOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cairn {
#define GEN_PASS_DEF_CHOOSERECOMPUTATIONPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

/// At most this many rounds of the greedy search, each one plan in the loop.
constexpr int kMaxRounds = 1024;

/// The exchange search (local search after the greedy one): at most this
/// many improvements, each trying at most this many of the choice's dearest
/// moves undone.
constexpr int kMaxExchangeRounds = 4;
constexpr int kExchangeMoves = 6;
/// A refill dearer than this many times the choice is not pruned: pruning
/// it rarely wins that much back.
constexpr double kExchangeSlack = 1.5;
/// How many of a refilled choice's dearest marks (and copies per use)
/// pruning tries.
constexpr size_t kExchangePrunes = 12;

/// The forward kernels of the training step that may be marked, by the
/// name of the per-step buffer they write: those before the loss that
/// recomputation may copy (getUncopiableKernels).
llvm::StringMap<Operation *> findCandidateKernels(ProgramOp program) {
  llvm::StringMap<Operation *> byOutput;
  for (auto step : program.getBody().front().getOps<StepOp>()) {
    if (step.getKind() != StepKind::train_step)
      continue;
    SmallVector<Operation *> kernels = getStepKernels(step);
    llvm::DenseSet<Operation *> uncopiable = getUncopiableKernels(kernels);
    for (int k = 0, end = getForwardEnd(kernels); k <= end; ++k)
      if (!uncopiable.contains(kernels[k]))
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

/// A choice: the kernels marked (by output name), and which of them are
/// copied per use (cairn.recompute_per_use; a subset).
struct Choice {
  llvm::StringSet<> marked;
  llvm::StringSet<> perUse;
};

/// A move the greedy search can make at the peak: mark the kernel that
/// writes `name` (a saved value live there), or, for a marked kernel whose
/// copy is live there, copy it per use.
struct Move {
  std::string name;
  int64_t bytes;
  bool perUse;
};

struct ChooseRecomputationPass
    : cairn::impl::ChooseRecomputationPassBase<ChooseRecomputationPass> {
  using ChooseRecomputationPassBase::ChooseRecomputationPassBase;

  /// What the rest of the pipeline makes of a choice: the arena, the train
  /// step's most live bytes, and the modelled time of the kernels the
  /// backward runs again (every copy counted, as fused).
  struct Evaluation {
    int64_t arena = 0;
    int64_t peakBytes = 0;
    int64_t extraCost = 0;
    int64_t stepCost = 0; // the train step's kernels but the copies
    int peakKernels = 0;  // kernels at which that many bytes are live
  };

  /// Evaluates `choice` on a copy of the module; the candidates live at its
  /// train step's peak (name, bytes) go to `atPeak`. Fails when a pass does.
  FailureOr<Evaluation> evaluate(const Choice &choice,
                                 SmallVectorImpl<Move> &atPeak) {
    // The rest of the pipeline, as it will run, up to the plan (the CPU's
    // stages: CUDA's update grouping moves no byte); the half weight copies
    // were chosen before, marked already.
    PipelineOptions rest;
    rest.target = target;
    rest.fuse = fuse;
    rest.reuse = reuse;
    rest.reorder = reorder;
    rest.planSeconds = innerSeconds;
    rest.replicas = replicas;
    rest.bucketBytes = bucketBytes;
    OwningOpRef<ModuleOp> copy =
        planMarkedCopy(getOperation(), getArgument(), rest, [&](ProgramOp p) {
          mark(choice, findCandidateKernels(p));
        });
    if (!copy)
      return failure();
    // Split across devices, the budget binds each device: the largest
    // arena is the one to lower, and the cost is every device's.
    ProgramOp program = getLargestProgram(*copy);
    std::optional<uint64_t> arena = program.getArenaBytes();
    if (!arena)
      return failure();
    Evaluation result;
    result.arena = int64_t(*arena);
    // The train step's peak: the program's schedule runs it first.
    ArenaLiveness liveness(program);
    int trainKernels = 0;
    for (ProgramOp device : copy->getOps<ProgramOp>())
      for (auto step : device.getBody().front().getOps<StepOp>())
        if (step.getKind() == StepKind::train_step) {
          SmallVector<Operation *> stepKernels = getStepKernels(step);
          if (device == program)
            trainKernels = stepKernels.size();
          for (Operation *kernel : stepKernels) {
            int64_t cost = costOf(kernel);
            int64_t &sum =
                kernel->hasAttr(CairnDialect::kBeforeFirstUseAttrName)
                    ? result.extraCost
                    : result.stepCost;
            sum = saturatingAdd(sum, cost);
          }
        }
    int peak = 0;
    for (int i = 1; i < trainKernels && i < liveness.getScheduleSize(); ++i)
      if (liveness.getLiveBytes(i) > liveness.getLiveBytes(peak))
        peak = i;
    result.peakBytes = liveness.getLiveBytes(peak);
    for (int i = 0; i < trainKernels && i < liveness.getScheduleSize(); ++i)
      if (liveness.getLiveBytes(i) == result.peakBytes)
        ++result.peakKernels;
    llvm::StringMap<Operation *> candidates = findCandidateKernels(program);
    for (Value value : liveness.getLiveAt(peak)) {
      auto buffer = value.getDefiningOp<BufferOp>();
      if (!buffer)
        continue;
      if (buffer.getKind() == BufferKind::saved &&
          candidates.count(buffer.getName()) &&
          !choice.marked.contains(buffer.getName()))
        atPeak.push_back({buffer.getName().str(), buffer.getBytes(), false});
      // A copy shared by the backward readers of a marked kernel, live at
      // the peak: maybe made early, as the input of another copy.
      StringRef original = buffer.getName();
      if (buffer.getKind() == BufferKind::temp &&
          original.consume_back(kRecomputedSuffix) &&
          choice.marked.contains(original) && !choice.perUse.contains(original))
        atPeak.push_back({original.str(), buffer.getBytes(), true});
    }
    return result;
  }
  FailureOr<Evaluation> evaluate(const Choice &choice) {
    SmallVector<Move> unused;
    return evaluate(choice, unused);
  }

  /// Whether `a` beats `b`: under the budget at less extra time, or, when
  /// neither fits, smaller.
  bool better(const Evaluation &a, const Evaluation &b) const {
    if (a.extraCost > maxExtraCost(a) || b.extraCost > maxExtraCost(b))
      return a.extraCost <= maxExtraCost(a);
    bool aFits = a.arena <= budget, bFits = b.arena <= budget;
    if (aFits != bFits)
      return aFits;
    return aFits ? a.extraCost < b.extraCost : a.arena < b.arena;
  }

  void runOnOperation() override {
    if (budget <= 0)
      return;
    ProgramOp program = getProgramFor(getOperation(), getArgument());
    if (!program)
      return signalPassFailure();
    kernels = findCandidateKernels(program);
    if (!kernelTimes.empty() && failed(loadKernelTimes(program)))
      return signalPassFailure();
    // Inner rounds give the exact search a tenth of its time; the final
    // plan has all of it.
    innerSeconds = planSeconds / 10;

    // The greedy searches and square-root checkpointing's family: the best
    // choice wins, then loses what it does not need. With measured times
    // the search ranks its moves by them and, apart, by the model: a greedy
    // path is no optimum, and ranked by measurement it may stall short of
    // the budget, or end at dearer copies, where the model's path does not.
    SmallVector<bool, 2> rankings = {/*byModel=*/measuredSeconds.empty()};
    if (!measuredSeconds.empty())
      rankings.push_back(/*byModel=*/true);
    Choice best;
    FailureOr<Evaluation> bestEval =
        greedy(/*allPerUse=*/false, rankings.front(), best);
    if (failed(bestEval))
      return fail();
    for (auto [index, byModel] : llvm::enumerate(rankings))
      for (bool allPerUse : {false, true}) {
        if (index == 0 && !allPerUse)
          continue; // the search above
        // Every mark per use only where the shared copies fall short.
        if (allPerUse && bestEval->arena <= budget)
          continue;
        Choice choice;
        FailureOr<Evaluation> eval = greedy(allPerUse, byModel, choice);
        if (failed(eval))
          return fail();
        if (better(*eval, *bestEval)) {
          best = std::move(choice);
          bestEval = eval;
        }
      }
    // Only whether it fits is asked (--fit's probes): a greedy choice that
    // fits is the answer.
    const bool answered = !lowerCost && bestEval->arena <= budget;
    if (!answered) {
      if (failed(squareRootFamily(best, *bestEval)))
        return fail();
      if (failed(prune(best, *bestEval)))
        return fail();
      if (lowerCost && failed(exchange(rankings.front(), best, *bestEval)))
        return fail();
    }

    program->setAttr(
        CairnDialect::kMemoryBudgetAttrName,
        IntegerAttr::get(IntegerType::get(&getContext(), 64), budget));
    mark(best, kernels);
  }

private:
  /// Writes `choice` on the candidate kernels (by output name).
  void mark(const Choice &choice,
            const llvm::StringMap<Operation *> &candidates) {
    for (const auto &name : choice.marked)
      if (Operation *kernel = candidates.lookup(name.getKey())) {
        kernel->setAttr(CairnDialect::kRecomputeAttrName,
                        UnitAttr::get(&getContext()));
        if (choice.perUse.contains(name.getKey()))
          kernel->setAttr(CairnDialect::kRecomputePerUseAttrName,
                          UnitAttr::get(&getContext()));
      }
  }

  /// The most modelled time the copies may add: the step's own again.
  /// Beyond it lies little memory at a ruinous price (copies per use of
  /// copies per use: deep_mlp's 64 ReLU layers recomputed from the input for
  /// each layer).
  static int64_t maxExtraCost(const Evaluation &e) { return e.stepCost; }

  void fail() {
    getProgramFor(getOperation(), getArgument()).emitError()
        << "cairn-choose-recomputation: the pipeline failed on a candidate "
           "choice";
    signalPassFailure();
  }

  /// The candidate kernel's time.
  int64_t costOf(StringRef name) const { return costOf(kernels.lookup(name)); }

  /// A kernel's time: measured (`kernel-times`) for the kernel it is or
  /// repeats where the profile names it, else modelled.
  int64_t costOf(Operation *kernel) const {
    if (!measuredSeconds.empty()) {
      StringRef name = getKernelProfileName(kernel);
      name = name.substr(0, name.find(kRecomputedSuffix));
      auto found = measuredSeconds.find(name);
      if (found != measuredSeconds.end())
        return int64_t(std::llround(found->second * costPerSecond));
    }
    return cast<KernelOpInterface>(kernel).getKernelCost();
  }

  /// Reads `kernelTimes` (runtime/KernelProfile.h's format): a profile of
  /// this model at this batch. Its seconds become the model's units at the
  /// rate of the train step's kernels both price: what the profile does not
  /// name (a kernel fused there, not here) keeps its modelled time.
  LogicalResult loadKernelTimes(ProgramOp program) {
    auto error = [&]() {
      return program.emitError() << "--kernel-times " << kernelTimes << ": ";
    };
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
        llvm::MemoryBuffer::getFile(kernelTimes);
    if (!file)
      return error() << file.getError().message();
    llvm::Expected<llvm::json::Value> json =
        llvm::json::parse((*file)->getBuffer());
    if (!json)
      return error() << "not JSON: " << llvm::toString(json.takeError());
    const llvm::json::Object *root = json->getAsObject();
    if (!root || root->getString("format") != "cairn-kernel-profile" ||
        root->getInteger("version") != 1)
      return error() << "not a kernel profile (version 1) as `EXE train "
                        "--profile FILE` writes";
    std::optional<StringRef> model = root->getString("model");
    std::optional<int64_t> batch = root->getInteger("batch");
    if (model != program.getModel() || batch != program.getBatch())
      return error() << "profiles model " << model.value_or("?") << " at batch "
                     << batch.value_or(0) << "; this is model "
                     << program.getModel() << " at batch " << program.getBatch()
                     << " (profile an executable built at this batch)";
    const llvm::json::Array *list = root->getArray("kernels");
    if (!list)
      return error() << "no \"kernels\" list";
    for (const llvm::json::Value &entry : *list) {
      const llvm::json::Object *kernel = entry.getAsObject();
      std::optional<StringRef> name =
          kernel ? kernel->getString("name") : std::nullopt;
      std::optional<double> seconds =
          kernel ? kernel->getNumber("seconds") : std::nullopt;
      if (!name || !seconds || !std::isfinite(*seconds) || *seconds < 0)
        return error() << "a kernel without a name or with no time";
      measuredSeconds[*name] = *seconds;
    }
    double modelled = 0, measured = 0;
    for (auto step : program.getBody().front().getOps<StepOp>())
      if (step.getKind() == StepKind::train_step)
        for (Operation *kernel : getStepKernels(step)) {
          auto found = measuredSeconds.find(getKernelProfileName(kernel));
          if (found == measuredSeconds.end())
            continue;
          modelled += cast<KernelOpInterface>(kernel).getKernelCost();
          measured += found->second;
        }
    if (!(measured > 0))
      return error() << "names no kernel of this training step that took "
                        "measurable time";
    costPerSecond = modelled / measured;
    return success();
  }

  /// The candidate kernel writing `name` and, transitively, those writing
  /// the inputs `follow` accepts: what is computed again with it.
  SmallVector<std::string>
  upstream(StringRef name, llvm::function_ref<bool(BufferOp)> follow) const {
    SmallVector<std::string> found;
    llvm::StringSet<> seen;
    SmallVector<std::string> work{name.str()};
    while (!work.empty()) {
      std::string next = work.pop_back_val();
      Operation *kernel = kernels.lookup(next);
      if (!kernel || !seen.insert(next).second)
        continue;
      found.push_back(next);
      for (Value input : cast<KernelOpInterface>(kernel).getKernelInputs())
        if (auto buffer = input ? getViewRoot(input).getDefiningOp<BufferOp>()
                                : BufferOp();
            buffer && follow(buffer))
          work.push_back(buffer.getName().str());
    }
    return found;
  }

  /// `name` and the kernels of what it is computed from that only the
  /// forward reads (`activation`, dead after the forward otherwise): they
  /// are recomputed with it, else they would live on for it.
  SmallVector<std::string> chainOf(StringRef name) const {
    return upstream(name, [](BufferOp buffer) {
      return buffer.getKind() == BufferKind::activation;
    });
  }

  /// `name` (marked) and the marked kernels it is computed from,
  /// transitively: what its copy is computed again from.
  SmallVector<std::string> markedUpstream(StringRef name,
                                          const Choice &choice) const {
    return upstream(name, [&](BufferOp buffer) {
      return choice.marked.contains(buffer.getName());
    });
  }

  /// A move's name in the sets of moves tried or forbidden.
  static std::string key(const Move &m) {
    return m.perUse ? m.name + " per use" : m.name;
  }

  /// Greedy, with the plan in the loop: of the moves at the peak, the one
  /// that frees the most bytes per unit of time (measured where known,
  /// unless `rankByModel`; a mark: its chain's; per use: what the copy is
  /// computed from, computed once more) is tried; it stays when the plan makes
  /// progress (below), else it is set aside. A round that tries nothing new
  /// ends the search.
  FailureOr<Evaluation> greedy(bool allPerUse, bool rankByModel, Choice &chosen,
                               const llvm::StringSet<> &forbidden = {}) {
    llvm::StringSet<> tried; // "name" or "name per use"
    SmallVector<Move> atPeak;
    FailureOr<Evaluation> current = evaluate(chosen, atPeak);
    // What a move marks (its chain) or copies per use (what the copy is
    // computed from).
    auto membersOf = [&](const Move &m) {
      return m.perUse ? markedUpstream(m.name, chosen) : chainOf(m.name);
    };
    for (int round = 0;
         succeeded(current) && current->arena > budget && round < kMaxRounds;
         ++round) {
      llvm::erase_if(atPeak, [&](const Move &m) {
        if (tried.contains(key(m)) || forbidden.contains(key(m)))
          return true;
        // Nor may a mark bring a forbidden one back in its chain.
        return !forbidden.empty() && !m.perUse &&
               llvm::any_of(chainOf(m.name),
                            [&](StringRef k) { return forbidden.contains(k); });
      });
      if (atPeak.empty())
        break;
      // The most bytes per operation first; ties by name, so the choice
      // does not depend on the order of a hash table.
      const Move *best = nullptr;
      double bestRatio = 0;
      auto rankingCostOf = [&](StringRef member) {
        return rankByModel ? cast<KernelOpInterface>(kernels.lookup(member))
                                 .getKernelCost()
                           : costOf(member);
      };
      for (const Move &m : atPeak) {
        int64_t cost = 1;
        for (const std::string &member : membersOf(m))
          cost = saturatingAdd(cost, rankingCostOf(member));
        double ratio = double(m.bytes) / double(cost);
        if (!best || ratio > bestRatio ||
            (ratio == bestRatio && key(m) < key(*best))) {
          best = &m;
          bestRatio = ratio;
        }
      }
      tried.insert(key(*best));
      Choice trial = chosen;
      for (const std::string &member : membersOf(*best)) {
        if (!best->perUse)
          trial.marked.insert(member);
        if (best->perUse || allPerUse)
          trial.perUse.insert(member);
      }
      SmallVector<Move> trialPeak;
      FailureOr<Evaluation> next = evaluate(trial, trialPeak);
      if (failed(next))
        return failure();
      // Progress, within the cap on extra time: a smaller arena, or at the
      // same arena fewer bytes live at the peak, or as many at fewer kernels
      // (a peak of two layers alike falls one at a time).
      if (next->extraCost <= maxExtraCost(*next) &&
          (next->arena < current->arena ||
           (next->arena == current->arena &&
            (next->peakBytes < current->peakBytes ||
             (next->peakBytes == current->peakBytes &&
              next->peakKernels < current->peakKernels))))) {
        chosen = std::move(trial);
        current = next;
        atPeak = std::move(trialPeak);
        tried.clear(); // a new plan: what did not help may help now
      }
    }
    return current;
  }

  /// Square-root checkpointing's family (Chen et al.): of the values the
  /// backward reads, in forward order, keep every k-th and compute the rest
  /// again, for k = 2, 3, ... while the arena drops. A member better than
  /// `best` replaces it, so at equal memory the choice is never worse than
  /// square-root checkpointing.
  LogicalResult squareRootFamily(Choice &best, Evaluation &bestEval) {
    SmallVector<std::string> saved = getSavedInForwardOrder(
        getProgramFor(getOperation(), getArgument()), kernels);
    int64_t previous = -1;
    for (size_t k = 2; k <= saved.size() + 1; ++k) {
      Choice segments;
      for (size_t i = 0; i < saved.size(); ++i)
        if (i % k != k - 1)
          for (const std::string &member : chainOf(saved[i]))
            segments.marked.insert(member);
      FailureOr<Evaluation> family = evaluate(segments);
      if (failed(family))
        return failure();
      if (better(*family, bestEval)) {
        best = segments;
        bestEval = *family;
      }
      if (previous >= 0 && family->arena > previous && family->arena > budget)
        break; // past the family's minimum
      previous = family->arena;
    }
    return success();
  }

  /// The names in `set`, the costliest kernel first (ties by name).
  SmallVector<std::string> costliestFirst(const llvm::StringSet<> &set) const {
    SmallVector<std::string> names;
    for (const auto &name : set)
      names.push_back(name.getKey().str());
    llvm::sort(names, [&](const std::string &a, const std::string &b) {
      int64_t ca = costOf(a), cb = costOf(b);
      return ca != cb ? ca > cb : a < b;
    });
    return names;
  }

  /// Pruning: a mark the winner does not need (the arena stays under the
  /// budget, or does not grow when nothing fits) is dropped, the costliest
  /// first: an early choice can recompute a value too soon for a later one.
  /// Then each per-use mark is tried shared, which computes it once: kept
  /// where that costs less and the arena still does. Only the `tries`
  /// dearest of each are tried.
  LogicalResult prune(Choice &best, Evaluation &bestEval,
                      size_t tries = std::numeric_limits<size_t>::max()) {
    auto keeps = [&](const Evaluation &e) {
      return bestEval.arena <= budget ? e.arena <= budget
                                      : e.arena <= bestEval.arena;
    };
    SmallVector<std::string> marked = costliestFirst(best.marked);
    marked.truncate(std::min(tries, marked.size()));
    for (const std::string &name : marked) {
      Choice trial = best;
      trial.marked.erase(name);
      trial.perUse.erase(name);
      FailureOr<Evaluation> pruned = evaluate(trial);
      if (failed(pruned))
        return failure();
      if (keeps(*pruned)) {
        best = std::move(trial);
        bestEval = *pruned;
      }
    }
    SmallVector<std::string> perUse = costliestFirst(best.perUse);
    perUse.truncate(std::min(tries, perUse.size()));
    for (const std::string &name : perUse) {
      Choice trial = best;
      trial.perUse.erase(name);
      FailureOr<Evaluation> shared = evaluate(trial);
      if (failed(shared))
        return failure();
      if (keeps(*shared) && shared->extraCost < bestEval.extraCost) {
        best = std::move(trial);
        bestEval = *shared;
      }
    }
    return success();
  }

  /// Exchange, a local search from a choice under the budget: one of its
  /// dearest moves (a mark, or a copy per use, the costliest kernel first)
  /// is undone and forbidden, and the greedy search refills the bytes from
  /// the rest, then prunes. The result replaces the choice where it fits at
  /// less extra time, and the search starts again from it. The greedy path
  /// takes the best ratio at each peak, and an early move can make a later
  /// one dear: ResNet-18's first block, copied for the second block's
  /// backward, is copied again for its own unless something else is kept.
  LogicalResult exchange(bool rankByModel, Choice &best, Evaluation &bestEval) {
    if (bestEval.arena > budget)
      return success();
    for (int round = 0; round < kMaxExchangeRounds; ++round) {
      // Each mark, or its copies per use; the dearest first (per-use copies
      // cost their kernel twice or more), ties copies per use first, then
      // by name.
      SmallVector<Move> undo;
      for (const auto &name : best.marked)
        undo.push_back(
            {name.getKey().str(), 0, best.perUse.contains(name.getKey())});
      auto dearness = [&](const Move &m) {
        return costOf(m.name) * (m.perUse ? 2 : 1);
      };
      llvm::sort(undo, [&](const Move &a, const Move &b) {
        int64_t da = dearness(a), db = dearness(b);
        if (da != db)
          return da > db;
        return a.perUse != b.perUse ? a.perUse : a.name < b.name;
      });
      if (undo.size() > size_t(kExchangeMoves))
        undo.resize(kExchangeMoves);
      bool improved = false;
      for (const Move &move : undo) {
        Choice trial = best;
        if (!move.perUse)
          trial.marked.erase(move.name);
        trial.perUse.erase(move.name);
        llvm::StringSet<> forbidden;
        forbidden.insert(key(move));
        FailureOr<Evaluation> eval =
            greedy(/*allPerUse=*/false, rankByModel, trial, forbidden);
        if (failed(eval))
          return failure();
        if (eval->arena > budget)
          continue;
        // The refill may have made earlier marks needless: the dearest marks
        // are pruned, unless the refill is far dearer than the choice
        // (pruning takes a plan a mark).
        if (double(eval->extraCost) >
            kExchangeSlack * double(bestEval.extraCost))
          continue;
        Evaluation trialEval = *eval;
        if (failed(prune(trial, trialEval, kExchangePrunes)))
          return failure();
        if (trialEval.arena <= budget &&
            trialEval.extraCost < bestEval.extraCost) {
          best = std::move(trial);
          bestEval = trialEval;
          improved = true;
          break;
        }
      }
      if (!improved)
        break;
    }
    return success();
  }

  llvm::StringMap<Operation *> kernels;
  double innerSeconds = 0;
  /// `kernel-times`: seconds by kernel name, and the model's units per second.
  llvm::StringMap<double> measuredSeconds;
  double costPerSecond = 0;
};

} // namespace
