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
#include <set>

using namespace cairn;

namespace {

/// A buffer a kernel touches, as its alias root; `writes` when the kernel
/// writes it (an output, a workspace, a tied input), else it only reads it.
struct Access {
  int root;
  bool writes;
};

/// The distinct roots `kernel` touches, a write winning over a read.
std::vector<Access> getAccesses(const KernelGraph &program, const Kernel &kernel) {
  std::vector<Access> accesses;
  auto add = [&](int id, bool writes) {
    if (id == kNoBuffer)
      return;
    int root = program.getAliasRoot(id);
    for (Access &access : accesses) {
      if (access.root == root) {
        access.writes |= writes;
        return;
      }
    }
    accesses.push_back({root, writes});
  };
  for (int id : kernel.inputs)
    add(id, /*writes=*/false);
  for (int id : kernel.outputs)
    add(id, /*writes=*/true);
  // An in-place kernel overwrites the input an output is tied to, whatever
  // id that output has (even none: the kernel writes through the input).
  for (int tied : kernel.tiedInputs)
    if (tied >= 0 && size_t(tied) < kernel.inputs.size())
      add(kernel.inputs[tied], /*writes=*/true);
  // Private to its kernel; counted as a write all the same, so a workspace
  // a second kernel touched would order the two.
  add(kernel.workspace, /*writes=*/true);
  return accesses;
}

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
  for (size_t k = 0; k < n; ++k) {
    std::vector<int> &preds = deps.predecessors[k];
    for (Access access : getAccesses(program, kernels[k])) {
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
    std::sort(preds.begin(), preds.end());
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    for (int pred : preds)
      deps.successors[pred].push_back(k);
  }
  return deps;
}

std::vector<int> cairn::computeMemoryAwareOrder(const KernelGraph &program,
                                                         StepKind step) {
  const std::vector<Kernel> &kernels = program.getStep(step).kernels;
  int n = kernels.size();
  KernelDependences deps = computeKernelDependences(program, step);
  StepUses uses = getStepUses(program, step);

  size_t numBuffers = program.buffers.size();
  std::vector<int64_t> bytes(numBuffers, 0);
  for (const Buffer &buffer : program.buffers)
    bytes[buffer.id] = alignToArena(buffer.bytes);
  // Kernels still to run that touch each buffer; whether it is defined yet.
  std::vector<int> remaining(numBuffers, 0);
  std::vector<bool> defined(numBuffers, false);
  for (const std::vector<int> &touches : uses.touches)
    for (int id : touches)
      ++remaining[id];

  std::vector<int> waitingOn(n);
  std::set<int> ready;
  for (int k = 0; k < n; ++k) {
    waitingOn[k] = deps.predecessors[k].size();
    if (waitingOn[k] == 0)
      ready.insert(k);
  }

  // What kernel k would do to the live bytes if it ran now: the bytes it
  // defines (live while it runs, its inputs still live too), and the bytes
  // it touches last (free after it). A buffer it both defines and touches
  // last, a workspace, is in both.
  struct Effect {
    int64_t allocated = 0, freed = 0;
  };
  auto getEffect = [&](int k) {
    Effect effect;
    const std::vector<int> &defines = uses.defines[k];
    for (int id : defines)
      if (!defined[id])
        effect.allocated += bytes[id];
    for (int id : uses.touches[k]) {
      bool live = defined[id] || std::find(defines.begin(), defines.end(),
                                           id) != defines.end();
      if (live && remaining[id] == 1)
        effect.freed += bytes[id];
    }
    return effect;
  };

  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    // Of the kernels that free more than they allocate, the one allocating
    // least: its own peak (the live bytes plus what it allocates) is the
    // lowest, and running it first lowers the others'. Ties go to the one
    // freeing more, then to the list's order, which is also the choice
    // when no kernel frees: the first kernel of the list not run yet.
    int pick = *ready.begin();
    Effect best;
    bool frees = false;
    for (int k : ready) {
      Effect effect = getEffect(k);
      if (effect.freed <= effect.allocated)
        continue;
      int64_t net = effect.freed - effect.allocated;
      if (!frees || effect.allocated < best.allocated ||
          (effect.allocated == best.allocated &&
           net > best.freed - best.allocated)) {
        frees = true;
        best = effect;
        pick = k;
      }
    }
    ready.erase(pick);
    order.push_back(pick);
    for (int id : uses.defines[pick])
      defined[id] = true;
    for (int id : uses.touches[pick])
      --remaining[id];
    for (int succ : deps.successors[pick])
      if (--waitingOn[succ] == 0)
        ready.insert(succ);
  }
  // Every edge goes forward in the list, so the DAG has no cycle and every
  // kernel was scheduled.
  return order;
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
  std::vector<Kernel> &kernels = step == StepKind::train_step
                                     ? program.trainStep.kernels
                                     : program.forward.kernels;
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
  int n = program.getStep(step).kernels.size();
  std::vector<int> identity(n);
  for (int k = 0; k < n; ++k)
    identity[k] = k;
  result.peakBefore = computeStepPeakBytes(program, step, identity);
  result.peakAfter = result.peakBefore;
  result.order = identity;
  std::vector<int> order = computeMemoryAwareOrder(program, step);
  int64_t peak = computeStepPeakBytes(program, step, order);
  // Keep it only where it wins: an equal peak is not worth a new order.
  if (peak >= result.peakBefore)
    return result;
  result.peakAfter = peak;
  result.reordered = true;
  for (int p = 0; p < n; ++p)
    result.movedKernels += order[p] != p;
  applyKernelOrder(program, step, order);
  result.order = std::move(order);
  return result;
}
