//===- KernelSchedule.cpp - Reordering kernels for memory -----------------===//
//
// The scheduler is a greedy list scheduler over the dependence DAG. Among
// the kernels whose predecessors have all run, it takes one that frees more
// bytes (of buffers it touches last) than it allocates (buffers it
// defines), when there is one; else the one first in the step's list. The
// second rule alone reproduces the list (the first kernel not run yet is
// always ready), so kernels only move where freeing bytes earlier pays: an
// optimizer update right after its gradient is complete, a gradient kernel
// whose saved input dies there before its sibling allocates.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelSchedule.h"

#include "passes/ArenaPlan.h"

#include <algorithm>
#include <numeric>
#include <set>

using namespace cairn;

namespace {

/// Whether `buffer` is one `step`'s planner gives bytes to for a lifetime
/// inside the step (not persistent, not a view, not empty).
bool isStepBuffer(const Buffer &buffer, StepKind step) {
  return !isPersistent(buffer.kind) && !buffer.isAlias() && buffer.bytes > 0 &&
         buffer.step == step;
}

/// The lifetimes computeLiveness gives the step's own buffers, as one list
/// per kernel: the roots it touches (for the last use) and the buffers it
/// defines (written directly, not through a view: computeLiveness's rule).
struct StepUses {
  std::vector<std::vector<int>> touches;
  std::vector<std::vector<int>> defines;
};

StepUses getStepUses(const KernelGraph &program, StepKind step) {
  const std::vector<Kernel> &kernels = program.getStep(step).kernels;
  StepUses uses;
  uses.touches.resize(kernels.size());
  uses.defines.resize(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) {
    const Kernel &kernel = kernels[k];
    auto touch = [&](int id, bool defines) {
      if (id == kNoBuffer)
        return;
      int root = program.getAliasRoot(id);
      if (!isStepBuffer(program.buffers[root], step))
        return;
      std::vector<int> &touches = uses.touches[k];
      if (std::find(touches.begin(), touches.end(), root) == touches.end())
        touches.push_back(root);
      std::vector<int> &defined = uses.defines[k];
      if (defines && id == root &&
          std::find(defined.begin(), defined.end(), root) == defined.end())
        defined.push_back(root);
    };
    for (int id : kernel.outputs)
      touch(id, /*defines=*/true);
    for (int id : kernel.inputs)
      touch(id, /*defines=*/false);
    touch(kernel.workspace, /*defines=*/true);
  }
  return uses;
}

} // namespace

KernelDependences
cairn::computeKernelDependences(const KernelGraph &program, StepKind step) {
  const std::vector<Kernel> &kernels = program.getStep(step).kernels;
  size_t n = kernels.size();
  KernelDependences deps;
  deps.predecessors.resize(n);
  deps.successors.resize(n);
  // Per root: the last kernel that wrote it, and the kernels that read it
  // since (all of them must run before the next write).
  std::vector<int> lastWriter(program.buffers.size(), -1);
  std::vector<std::vector<int>> readers(program.buffers.size());
  int lastTransfer = -1;
  for (size_t k = 0; k < n; ++k) {
    std::vector<int> &preds = deps.predecessors[k];
    for (Access access : getKernelAccesses(program, kernels[k])) {
      if (lastWriter[access.root] >= 0)
        preds.push_back(lastWriter[access.root]);
      if (!access.writes) {
        readers[access.root].push_back(k);
        continue;
      }
      preds.insert(preds.end(), readers[access.root].begin(),
                   readers[access.root].end());
      readers[access.root].clear();
      lastWriter[access.root] = k;
    }
    // Transfers run in the order of their tags on every device, and the
    // reductions across devices in their place among them, or two devices
    // could each wait for the other (cairn-partition-devices).
    if (isDeviceCommunication(kernels[k])) {
      if (lastTransfer >= 0)
        preds.push_back(lastTransfer);
      lastTransfer = k;
    }
    std::sort(preds.begin(), preds.end());
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    for (int pred : preds)
      deps.successors[pred].push_back(k);
  }
  return deps;
}

std::vector<int> cairn::getScheduleAnchors(const KernelGraph &program,
                                           StepKind step) {
  const std::vector<Kernel> &kernels = program.getStep(step).kernels;
  int n = kernels.size();
  std::vector<int> anchor(n);
  for (int k = 0; k < n; ++k)
    anchor[k] = k;
  // The first later kernel that reads a root a glued kernel writes; the
  // anchor of a kernel glued to a glued kernel is that kernel's anchor
  // (resolved from the back, where anchors are final).
  for (int k = n - 1; k >= 0; --k) {
    if (!kernels[k].beforeFirstUse)
      continue;
    std::vector<int> written;
    for (Access access : getKernelAccesses(program, kernels[k]))
      if (access.writes)
        written.push_back(access.root);
    for (int j = k + 1; j < n && anchor[k] == k; ++j)
      for (int id : kernels[j].inputs)
        if (id != kNoBuffer &&
            std::find(written.begin(), written.end(),
                      program.getAliasRoot(id)) != written.end()) {
          anchor[k] = anchor[j];
          break;
        }
  }
  return anchor;
}

namespace {

/// The list scheduler behind computeMemoryAwareOrder and
/// computeConstrainedListOrder: it schedules groups (a kernel and the
/// kernels glued to it, getScheduleAnchors), each run whole, members in list
/// order. `memoryAware` picks by the bytes a group frees and allocates, else
/// the group first in the list.
class ListScheduler {
public:
  ListScheduler(const KernelGraph &program, StepKind step, bool memoryAware)
      : program(program), step(step), memoryAware(memoryAware),
        n(program.getStep(step).kernels.size()),
        deps(computeKernelDependences(program, step)),
        uses(getStepUses(program, step)),
        anchor(getScheduleAnchors(program, step)) {}

  std::vector<int> run();

private:
  struct Effect {
    int64_t allocated = 0, freed = 0;
  };
  /// What running group `g` now would do to the live bytes: the bytes its
  /// members define, and those they touch last.
  Effect getEffect(int g) const;
  /// Builds the groups of the kernels not run yet, and the ready ones.
  void buildGroups();

  const KernelGraph &program;
  StepKind step;
  bool memoryAware;
  int n;
  KernelDependences deps;
  StepUses uses;
  std::vector<int> anchor;

  std::vector<int64_t> bytes;
  std::vector<int> remaining;
  std::vector<bool> defined;
  std::vector<bool> done;
  /// By anchor: the members still to run, in list order.
  std::vector<std::vector<int>> members;
  /// By anchor: predecessor groups not run yet.
  std::vector<int> waitingOn;
  std::vector<std::vector<int>> successors;
  std::set<int> ready;
};

ListScheduler::Effect ListScheduler::getEffect(int g) const {
  Effect effect;
  std::vector<int> newlyDefined, touched;
  for (int k : members[g]) {
    for (int id : uses.defines[k])
      if (!defined[id] && std::find(newlyDefined.begin(), newlyDefined.end(),
                                    id) == newlyDefined.end()) {
        newlyDefined.push_back(id);
        effect.allocated += bytes[id];
      }
    llvm::append_range(touched, uses.touches[k]);
  }
  std::sort(touched.begin(), touched.end());
  for (size_t i = 0; i < touched.size();) {
    int id = touched[i];
    size_t count = 0;
    while (i < touched.size() && touched[i] == id)
      ++i, ++count;
    bool live = defined[id] || std::find(newlyDefined.begin(),
                                         newlyDefined.end(),
                                         id) != newlyDefined.end();
    if (live && size_t(remaining[id]) == count)
      effect.freed += bytes[id];
  }
  return effect;
}

void ListScheduler::buildGroups() {
  members.assign(n, {});
  waitingOn.assign(n, 0);
  successors.assign(n, {});
  ready.clear();
  for (int k = 0; k < n; ++k)
    if (!done[k])
      members[anchor[k]].push_back(k);
  std::vector<std::set<int>> preds(n);
  for (int k = 0; k < n; ++k) {
    if (done[k])
      continue;
    for (int pred : deps.predecessors[k])
      if (!done[pred] && anchor[pred] != anchor[k])
        preds[anchor[k]].insert(anchor[pred]);
  }
  for (int g = 0; g < n; ++g) {
    if (members[g].empty())
      continue;
    waitingOn[g] = preds[g].size();
    for (int pred : preds[g])
      successors[pred].push_back(g);
    if (waitingOn[g] == 0)
      ready.insert(g);
  }
}

std::vector<int> ListScheduler::run() {
  size_t numBuffers = program.buffers.size();
  bytes.assign(numBuffers, 0);
  for (const Buffer &buffer : program.buffers)
    bytes[buffer.id] = alignToArena(buffer.bytes);
  // Kernels still to run that touch each buffer; whether it is defined yet.
  remaining.assign(numBuffers, 0);
  defined.assign(numBuffers, false);
  for (const std::vector<int> &touches : uses.touches)
    for (int id : touches)
      ++remaining[id];
  done.assign(n, false);
  buildGroups();

  std::vector<int> order;
  order.reserve(n);
  while (order.size() < size_t(n)) {
    if (ready.empty()) {
      // Gluing closed a cycle (a kernel between a glued kernel and its
      // anchor must run after the one and before the other): the rest is
      // scheduled without glue.
      for (int k = 0; k < n; ++k)
        anchor[k] = k;
      buildGroups();
    }
    // Of the groups that free more than they allocate, the one allocating
    // least: its own peak (the live bytes plus what it allocates) is the
    // lowest, and running it first lowers the others'. Ties go to the one
    // freeing more, then to the list's order, which is also the choice
    // when none frees: the group whose anchor comes first in the list.
    int pick = *ready.begin();
    if (memoryAware) {
      Effect best;
      bool frees = false;
      for (int g : ready) {
        Effect effect = getEffect(g);
        if (effect.freed <= effect.allocated)
          continue;
        int64_t net = effect.freed - effect.allocated;
        if (!frees || effect.allocated < best.allocated ||
            (effect.allocated == best.allocated &&
             net > best.freed - best.allocated)) {
          frees = true;
          best = effect;
          pick = g;
        }
      }
    }
    ready.erase(pick);
    for (int k : members[pick]) {
      order.push_back(k);
      done[k] = true;
      for (int id : uses.defines[k])
        defined[id] = true;
      for (int id : uses.touches[k])
        --remaining[id];
    }
    members[pick].clear();
    for (int succ : successors[pick])
      if (--waitingOn[succ] == 0)
        ready.insert(succ);
  }
  // Every edge goes forward in the list, so the DAG of single kernels has no
  // cycle and every kernel was scheduled.
  return order;
}

} // namespace

std::vector<int> cairn::computeMemoryAwareOrder(const KernelGraph &program,
                                                StepKind step) {
  return ListScheduler(program, step, /*memoryAware=*/true).run();
}

std::vector<int> cairn::computeConstrainedListOrder(const KernelGraph &program,
                                                    StepKind step) {
  return ListScheduler(program, step, /*memoryAware=*/false).run();
}

int64_t cairn::computeStepPeakBytes(const KernelGraph &program, StepKind step) {
  std::vector<int> order(program.getStep(step).kernels.size());
  std::iota(order.begin(), order.end(), 0);
  return computeStepPeakBytes(program, step, order);
}

int64_t cairn::computeStepPeakBytes(const KernelGraph &program, StepKind step,
                                             llvm::ArrayRef<int> order) {
  StepUses uses = getStepUses(program, step);
  size_t numBuffers = program.buffers.size();
  std::vector<int> first(numBuffers, -1), last(numBuffers, -1);
  for (int p = 0, e = order.size(); p < e; ++p) {
    for (int id : uses.defines[order[p]])
      if (first[id] < 0)
        first[id] = p;
    for (int id : uses.touches[order[p]])
      last[id] = p;
  }
  // planArena's lifetimes: from the definition to the last touch, and a
  // buffer the step never defines gets no bytes.
  std::vector<int64_t> delta(order.size() + 1, 0);
  for (const Buffer &buffer : program.buffers) {
    if (first[buffer.id] < 0)
      continue;
    int64_t size = alignToArena(buffer.bytes);
    delta[first[buffer.id]] += size;
    delta[std::max(last[buffer.id], first[buffer.id]) + 1] -= size;
  }
  int64_t live = 0, peak = 0;
  for (size_t p = 0; p < order.size(); ++p) {
    live += delta[p];
    peak = std::max(peak, live);
  }
  return peak;
}

void cairn::applyKernelOrder(KernelGraph &program, StepKind step,
                                      llvm::ArrayRef<int> order) {
  std::vector<Kernel> &kernels = program.getStep(step).kernels;
  std::vector<Kernel> reordered;
  reordered.reserve(kernels.size());
  for (int k : order)
    reordered.push_back(std::move(kernels[k]));
  kernels = std::move(reordered);
  computeLiveness(program);
}

StepScheduleResult cairn::scheduleStepForMemory(KernelGraph &program,
                                                         StepKind step) {
  StepScheduleResult result;
  result.step = step;
  const std::vector<Kernel> &kernels = program.getStep(step).kernels;
  int n = kernels.size();
  result.peakBefore = computeStepPeakBytes(program, step);
  // The order to beat: the list's, with glued kernels moved to their
  // anchors (the list itself when no kernel is glued).
  std::vector<int> baseline(n);
  std::iota(baseline.begin(), baseline.end(), 0);
  int64_t baselinePeak = result.peakBefore;
  if (llvm::any_of(kernels, [](const Kernel &k) { return k.beforeFirstUse; })) {
    baseline = computeConstrainedListOrder(program, step);
    baselinePeak = computeStepPeakBytes(program, step, baseline);
  }
  std::vector<int> order = computeMemoryAwareOrder(program, step);
  int64_t peak = computeStepPeakBytes(program, step, order);
  // Keep it only where it wins: an equal peak is not worth a new order.
  if (peak >= baselinePeak) {
    order = std::move(baseline);
    peak = baselinePeak;
  }
  result.peakAfter = peak;
  for (int p = 0; p < n; ++p)
    result.movedKernels += order[p] != p;
  result.reordered = result.movedKernels > 0;
  if (result.reordered)
    applyKernelOrder(program, step, order);
  result.order = std::move(order);
  return result;
}
