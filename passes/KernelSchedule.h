//===- KernelSchedule.h - Reordering kernels for memory --------*- C++ -*-===//
//
// The lowering emits a step's kernels in the order of its ops: the forward
// part, the backward part, then every optimizer update. Kernels that do not
// depend on each other may run in another order, and some orders keep fewer
// bytes live at once: an update that runs as soon as its gradient is
// complete (and the old parameter value has been read for the last time)
// frees that gradient long before the end of the step.
//
// Three pieces, each usable on its own:
//   - the dependence DAG of a step's kernels, from the buffers they touch
//     (views mapped to their roots): read after write, write after read and
//     write after write, persistent buffers included;
//   - a list scheduler, a pure function from a step to a permutation of its
//     kernels: a ready kernel that frees more bytes than it allocates runs
//     first (of several, the one allocating least), otherwise the first in
//     the list (the lowered order);
//   - the step's peak of live per-step bytes under an order (ArenaPlan's
//     lifetimes, before in-place), which decides whether the new order is
//     kept: only when its peak is strictly lower.
//
// In any order the DAG allows, each kernel reads the same values and writes
// the same bytes, so results stay bit-identical.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_KERNELSCHEDULE_H
#define CAIRN_PASSES_KERNELSCHEDULE_H

#include "passes/KernelGraph.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace cairn {

/// The dependence DAG of one step's kernels, by their index in the step's
/// list. Every edge goes from a lower index to a higher one.
struct KernelDependences {
  /// predecessors[k]: the kernels that must run before kernel k, sorted.
  std::vector<std::vector<int>> predecessors;
  /// successors[k]: the kernels that must run after kernel k, sorted.
  std::vector<std::vector<int>> successors;
};

/// Kernel j depends on an earlier kernel i when both touch the bytes of one
/// buffer (a view counts as its root) and one of them writes it: i writes
/// what j reads, i reads what j overwrites (an in-place update after every
/// reader of the old value), or both write it. Outputs and workspaces are
/// writes; an output tied to an input (Kernel::tiedInputs) writes that
/// input's buffer too.
KernelDependences computeKernelDependences(const KernelGraph &program, StepKind step);

/// A topological order of `step`'s dependence DAG, chosen to lower the peak
/// of live bytes: order[p] is the index (in the step's list) of the kernel
/// that runs p-th. Deterministic; the list's own order when no kernel can
/// free memory earlier.
std::vector<int> computeMemoryAwareOrder(const KernelGraph &program, StepKind step);

/// By kernel index of `step`: the kernel each one runs right before, through
/// chains of glued kernels, or itself. A kernel marked beforeFirstUse (a
/// recomputation) is glued to the first later kernel that reads what it
/// writes; the scheduler runs it right before that kernel, never earlier.
std::vector<int> getScheduleAnchors(const KernelGraph &program, StepKind step);

/// The step's list order with each glued kernel moved right before its
/// anchor; the list's own order when no kernel is glued.
std::vector<int> computeConstrainedListOrder(const KernelGraph &program,
                                             StepKind step);

/// The most bytes of `step`'s own buffers (each rounded up to the arena
/// alignment) live at one kernel when its kernels run in `order`: a buffer
/// lives from the kernel that defines it to the last kernel that touches it
/// or one of its views, as planArena counts it before in-place. Persistent
/// buffers are not counted (they are the same for every order).
int64_t computeStepPeakBytes(const KernelGraph &program, StepKind step,
                             llvm::ArrayRef<int> order);
/// computeStepPeakBytes with the kernels in their list's order.
int64_t computeStepPeakBytes(const KernelGraph &program, StepKind step);

/// Runs `step`'s kernels in `order` (see computeMemoryAwareOrder) and
/// recomputes liveness. Buffer kinds are kept: they say which part of the
/// step reads a buffer, which no order changes.
void applyKernelOrder(KernelGraph &program, StepKind step, llvm::ArrayRef<int> order);

/// What scheduling one step did.
struct StepScheduleResult {
  StepKind step = StepKind::train_step;
  /// computeStepPeakBytes of the step's order before and of the order kept.
  int64_t peakBefore = 0;
  int64_t peakAfter = 0;
  /// Whether the memory-aware order was kept (its peak is strictly lower).
  bool reordered = false;
  /// Kernels not at their position before.
  int movedKernels = 0;
  /// The order kept: order[p] is the index (in the list before) of the
  /// kernel that runs p-th; the identity when not reordered.
  std::vector<int> order;
};

/// Computes the memory-aware order of `step` and applies it when its peak
/// is strictly lower than the constrained list order's
/// (computeConstrainedListOrder), else applies that order (which is the
/// list's own when no kernel is glued: the program is left as it is).
StepScheduleResult scheduleStepForMemory(KernelGraph &program, StepKind step);

} // namespace cairn

#endif // CAIRN_PASSES_KERNELSCHEDULE_H
