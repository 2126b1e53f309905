//===- ArenaPlan.h - The static memory plan of a program --------*- C++ -*-===//
//
// Turns a KernelGraph's kernel lists into a schedule and buffer lifetimes, and
// its buffers into offsets in one arena: the heart of Cairn.
//
// The schedule is the training step's kernels, then the forward step's, each
// step in the order of its kernel list: the lowering's, or the memory-aware
// order (KernelSchedule.h) planArena puts a step in first when that
// lowers the step's peak. A per-step buffer lives from the kernel that
// defines it to the last kernel that reads it (or one of its views);
// persistent buffers (inputs, params, state_dict buffers, optimizer state,
// outputs) live for the whole schedule. Workspaces live for their one
// kernel. The two steps never run at once, so their per-step buffers share
// bytes freely.
//
// Planning is three moves, after the reordering:
//   1. In place: an elementwise kernel writes its output over an input whose
//      lifetime ends at that kernel (same dtype and element count).
//   2. Offsets: the planner (passes/IntervalPlanner.h) packs the lifetimes,
//      every offset a multiple of 256 bytes.
//   3. Verification: verifyArena (ArenaVerifier.h) checks the result from
//      the kernel lists alone.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_ARENAPLAN_H
#define CAIRN_PASSES_ARENAPLAN_H

#include "passes/KernelGraph.h"

#include <string>
#include <vector>

namespace cairn {

struct ArenaPlanOptions {
  /// False: every buffer gets bytes of its own (`--no-reuse`), no in-place,
  /// no reordering.
  bool reuse = true;
  /// Run each planned step in its memory-aware order (KernelSchedule.h)
  /// where that lowers its peak: the kernel lists change, and liveness is
  /// recomputed (`--no-reorder` turns it off).
  bool reorder = true;
  /// Decide which elementwise kernels write over a dying input
  /// (Buffer::inPlaceOf). False keeps the graph's own decisions: none in a
  /// graph fresh from the lowering, cairn-write-in-place's in one read from
  /// the IR.
  bool inPlace = true;
  /// Give the buffers their offsets. False stops after the lifetimes and
  /// the in-place decisions (cairn-write-in-place).
  bool place = true;
  /// The planner's exact-search budget, seconds of search work
  /// (PlannerOptions::reproducible; 0: greedy only).
  double timeLimitSeconds = 1.0;
};

/// One kernel of the schedule.
struct ScheduleEntry {
  StepKind step = StepKind::train_step;
  int kernel = 0;
};

/// What the plan is, for reports: the schedule, every buffer's lifetime in
/// it, and the totals.
struct ArenaPlan {
  std::vector<ScheduleEntry> schedule;
  /// By buffer id: first and last schedule index the buffer's bytes are
  /// live, inclusive; -1 for views and buffers outside the planned steps.
  std::vector<int> start;
  std::vector<int> end;
  int64_t arenaBytes = 0;
  /// No plan of this schedule (with these in-place decisions) is smaller:
  /// the largest total of bytes live at one schedule index.
  int64_t lowerBoundBytes = 0;
  /// Bytes of persistent buffers (each rounded up to 256).
  int64_t persistentBytes = 0;
  /// Every buffer its own bytes, nothing in place (rounded up to 256 each).
  int64_t noReuseBytes = 0;
  /// The schedule index where the live bytes reach the lower bound.
  int peakIndex = 0;
  /// Buffers written in place over a dying input.
  int inPlaceBuffers = 0;
  /// "greedy-by-size", "exact-search" or "no-reuse".
  std::string method;
  bool provedOptimal = false;
  /// Reordering and planning.
  double seconds = 0;
  /// The memory-aware schedule: whether it was tried (ArenaPlanOptions::
  /// reorder and reuse), and kept for at least one step.
  bool scheduleTried = false;
  bool scheduleReordered = false;
  /// The lower bound before in-place (the most bytes live at one schedule
  /// index when nothing is written in place) of the kernel lists as they
  /// came and as planned; equal when no step was reordered.
  int64_t scheduleLowerBoundBefore = 0;
  int64_t scheduleLowerBoundAfter = 0;
  /// Kernels not at their position in the lists as they came.
  int scheduleMovedKernels = 0;

  /// Bytes live at each schedule index.
  std::vector<int64_t> liveBytes;
};

/// Sets the offsets (and Buffer::inPlaceOf) of `program`'s buffers and its
/// arenaBytes, after putting the planned steps' kernels in their
/// memory-aware order where that wins (ArenaPlanOptions::reorder). Requires
/// computeLiveness to have run.
ArenaPlan planArena(KernelGraph &program, const ArenaPlanOptions &options = {});

/// Bytes rounded up to the arena alignment.
int64_t alignToArena(int64_t bytes);

/// The element-wise kernels that may write their output over an input: each
/// reads element i of every same-shape operand before it writes element i.
bool mayWriteInPlace(const Kernel &kernel);

} // namespace cairn

#endif // CAIRN_PASSES_ARENAPLAN_H
