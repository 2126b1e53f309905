//===- ArenaPlan.cpp - Schedule, lifetimes, in-place reuse, offsets -------===//

#include "passes/ArenaPlan.h"

#include "passes/KernelSchedule.h"

#include "passes/IntervalPlanner.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <chrono>

using namespace cairn;
using namespace cairn;

int64_t cairn::alignToArena(int64_t bytes) {
  return static_cast<int64_t>(llvm::alignTo(bytes, kArenaAlignment));
}

bool cairn::mayWriteInPlace(const Kernel &kernel) { return kernel.elementwise; }

namespace {

using Clock = std::chrono::steady_clock;

/// Plans both steps of `program`.
class ArenaPlanner {
public:
  ArenaPlanner(KernelGraph &program, const ArenaPlanOptions &options)
      : program(program), options(options) {}

  ArenaPlan run();

private:
  void reorderSteps();
  void buildSchedule();
  void computeLifetimes();
  void writeInPlace();
  void placeBuffers();
  void placeWithoutReuse();
  void computeLiveBytes();

  /// The buffer whose bytes `id` ends up in: the first of its in-place chain.
  int getChainRoot(int id) const {
    while (program.buffers[id].inPlaceOf != kNoBuffer)
      id = program.buffers[id].inPlaceOf;
    return id;
  }

  KernelGraph &program;
  const ArenaPlanOptions &options;
  ArenaPlan plan;
  /// The schedule index of each step's first kernel, by StepKind.
  int stepBase[std::size(kAllSteps)] = {};
  /// By buffer id: its bytes are planned (in scope, not a view, not empty).
  std::vector<bool> planned;
  /// The largest step peak (computeStepPeakBytes) of the planned steps
  /// before and after reordering.
  int64_t stepPeakBefore = 0, stepPeakAfter = 0;
};

ArenaPlan ArenaPlanner::run() {
  Clock::time_point begin = Clock::now();
  bool decideInPlace = options.reuse && options.inPlace;
  for (Buffer &buffer : program.buffers) {
    if (decideInPlace || !options.reuse)
      buffer.inPlaceOf = kNoBuffer;
    buffer.offset = -1;
  }
  reorderSteps();
  buildSchedule();
  computeLifetimes();
  // Persistent bytes are live at every index, whatever the order.
  plan.scheduleLowerBoundBefore = plan.persistentBytes + stepPeakBefore;
  plan.scheduleLowerBoundAfter = plan.persistentBytes + stepPeakAfter;
  if (decideInPlace)
    writeInPlace();
  plan.inPlaceBuffers = 0;
  for (const Buffer &buffer : program.buffers)
    if (planned[buffer.id] && buffer.inPlaceOf != kNoBuffer)
      ++plan.inPlaceBuffers;
  if (!options.place) {
    computeLiveBytes();
    plan.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    return std::move(plan);
  }
  if (options.reuse)
    placeBuffers();
  else
    placeWithoutReuse();
  // Buffers without bytes in the plan (empty, or never touched) point at
  // the arena's start; views take their root's offset.
  for (Buffer &buffer : program.buffers)
    if (!buffer.isAlias() && buffer.offset < 0)
      buffer.offset = 0;
  for (Buffer &buffer : program.buffers)
    if (buffer.isAlias())
      buffer.offset = program.buffers[program.getAliasRoot(buffer.id)].offset;
  computeLiveBytes();
  plan.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  return std::move(plan);
}

void ArenaPlanner::reorderSteps() {
  // The reference layout (--no-reuse) keeps the lowered order too.
  plan.scheduleTried = options.reuse && options.reorder;
  for (StepKind step : kAllSteps) {
    StepScheduleResult result;
    if (plan.scheduleTried) {
      result = scheduleStepForMemory(program, step);
    } else {
      result.peakBefore = result.peakAfter =
          computeStepPeakBytes(program, step);
    }
    stepPeakBefore = std::max(stepPeakBefore, result.peakBefore);
    stepPeakAfter = std::max(stepPeakAfter, result.peakAfter);
    plan.scheduleReordered |= result.reordered;
    plan.scheduleMovedKernels += result.movedKernels;
  }
}

void ArenaPlanner::buildSchedule() {
  for (StepKind step : kAllSteps) {
    stepBase[static_cast<unsigned>(step)] = plan.schedule.size();
    for (int k = 0, e = program.getStep(step).kernels.size(); k < e; ++k)
      plan.schedule.push_back({step, k});
  }
}

void ArenaPlanner::computeLifetimes() {
  size_t n = program.buffers.size();
  plan.start.assign(n, -1);
  plan.end.assign(n, -1);
  planned.assign(n, false);
  int last = static_cast<int>(plan.schedule.size()) - 1;
  for (const Buffer &buffer : program.buffers) {
    if (buffer.isAlias() || buffer.bytes == 0)
      continue;
    if (isPersistent(buffer.kind)) {
      plan.start[buffer.id] = 0;
      plan.end[buffer.id] = std::max(last, 0);
    } else {
      if (!buffer.step || buffer.definedBy < 0)
        continue;
      int base = stepBase[static_cast<unsigned>(*buffer.step)];
      plan.start[buffer.id] = base + buffer.definedBy;
      plan.end[buffer.id] = base + std::max(buffer.lastUse, buffer.definedBy);
    }
    planned[buffer.id] = true;
    int64_t bytes = alignToArena(buffer.bytes);
    plan.noReuseBytes += bytes;
    if (isPersistent(buffer.kind))
      plan.persistentBytes += bytes;
  }
}

void ArenaPlanner::writeInPlace() {
  // Only the last buffer of a chain may be written over: earlier ones have
  // handed their bytes on already.
  std::vector<bool> handedOn(program.buffers.size(), false);
  for (StepKind step : kAllSteps) {
    const std::vector<Kernel> &kernels = program.getStep(step).kernels;
    int base = stepBase[static_cast<unsigned>(step)];
    for (int index = 0, e = kernels.size(); index < e; ++index) {
      const Kernel &k = kernels[index];
      if (!mayWriteInPlace(k) || k.outputs.size() != 1 ||
          k.outputs[0] == kNoBuffer || k.workspace != kNoBuffer)
        continue;
      Buffer &out = program.buffers[k.outputs[0]];
      if (out.isAlias() || !planned[out.id] || isPersistent(out.kind) ||
          out.definedBy != index)
        continue;
      for (int id : k.inputs) {
        if (id == kNoBuffer || id == out.id)
          continue;
        const Buffer &in = program.buffers[id];
        // The input's bytes, views included, must die at this kernel, and
        // hold the output exactly: element i of both at the same address.
        if (in.isAlias() || !planned[id] || isPersistent(in.kind) ||
            plan.end[id] != base + index || in.dtype != out.dtype ||
            in.getNumElements() != out.getNumElements() ||
            in.bytes != out.bytes)
          continue;
        if (handedOn[id])
          continue;
        handedOn[id] = true;
        out.inPlaceOf = id;
        break;
      }
    }
  }
}

void ArenaPlanner::placeBuffers() {
  // One planner interval per in-place chain, from its first buffer's
  // definition to its last buffer's last use.
  size_t n = program.buffers.size();
  std::vector<int> chainRoot(n, kNoBuffer);
  std::vector<int> intervalOf(n, -1);
  std::vector<BufferInterval> intervals;
  for (const Buffer &buffer : program.buffers) {
    if (!planned[buffer.id] || buffer.inPlaceOf != kNoBuffer)
      continue;
    intervalOf[buffer.id] = intervals.size();
    BufferInterval interval;
    interval.id = buffer.id;
    interval.lower = plan.start[buffer.id];
    interval.upper = plan.end[buffer.id] + 1;
    interval.size = alignToArena(buffer.bytes);
    interval.alignment = kArenaAlignment;
    intervals.push_back(interval);
  }
  for (const Buffer &buffer : program.buffers) {
    if (!planned[buffer.id] || buffer.inPlaceOf == kNoBuffer)
      continue;
    BufferInterval &interval = intervals[intervalOf[getChainRoot(buffer.id)]];
    interval.lower = std::min<int64_t>(interval.lower, plan.start[buffer.id]);
    interval.upper = std::max<int64_t>(interval.upper, plan.end[buffer.id] + 1);
    interval.size = std::max(interval.size, alignToArena(buffer.bytes));
  }

  PlannerOptions plannerOptions;
  plannerOptions.timeLimitSeconds = options.timeLimitSeconds;
  // The same model and flags give the same plan on any machine, loaded or
  // not: cairn plan's arena is the one cairn build reaches.
  plannerOptions.reproducible = true;
  IntervalPlan memoryPlan = planIntervals(intervals, plannerOptions);
  for (const Buffer &buffer : program.buffers)
    if (planned[buffer.id])
      program.buffers[buffer.id].offset =
          memoryPlan.offsets[intervalOf[getChainRoot(buffer.id)]];
  program.arenaBytes = memoryPlan.arenaSize;
  plan.arenaBytes = memoryPlan.arenaSize;
  plan.method = getPlanMethodName(memoryPlan.method);
  plan.provedOptimal = memoryPlan.provedOptimal;
}

void ArenaPlanner::placeWithoutReuse() {
  // Persistent buffers first, then each step's own, in id order: the
  // layout a reader of the no-reuse report expects.
  int64_t end = 0;
  auto place = [&](Buffer &buffer) {
    buffer.offset = end;
    end += alignToArena(buffer.bytes);
  };
  for (Buffer &buffer : program.buffers)
    if (planned[buffer.id] && isPersistent(buffer.kind))
      place(buffer);
  for (Buffer &buffer : program.buffers)
    if (planned[buffer.id] && !isPersistent(buffer.kind))
      place(buffer);
  // Every other buffer (unused, or of a step not planned) still needs a
  // valid place for the emitter; none exist when both steps are planned.
  program.arenaBytes = end;
  plan.arenaBytes = end;
  plan.method = "no-reuse";
}

void ArenaPlanner::computeLiveBytes() {
  size_t steps = std::max<size_t>(plan.schedule.size(), 1);
  std::vector<int64_t> delta(steps + 1, 0);
  for (const Buffer &buffer : program.buffers) {
    if (!planned[buffer.id])
      continue;
    int first = plan.start[buffer.id], last = plan.end[buffer.id];
    // An in-place output takes over its input's bytes at its first kernel,
    // where the input still counts them.
    if (buffer.inPlaceOf != kNoBuffer)
      ++first;
    if (first > last)
      continue;
    int64_t bytes = alignToArena(buffer.bytes);
    delta[first] += bytes;
    delta[last + 1] -= bytes;
  }
  plan.liveBytes.assign(steps, 0);
  int64_t live = 0;
  for (size_t t = 0; t < steps; ++t) {
    live += delta[t];
    plan.liveBytes[t] = live;
    if (live > plan.lowerBoundBytes) {
      plan.lowerBoundBytes = live;
      plan.peakIndex = static_cast<int>(t);
    }
  }
}

} // namespace

ArenaPlan cairn::planArena(KernelGraph &program,
                                    const ArenaPlanOptions &options) {
  return ArenaPlanner(program, options).run();
}
