//===- ArenaLiveness.cpp - What is live where in a program's schedule -----===//

#include "passes/ArenaLiveness.h"

#include "ir/CairnProgramOps.h"
#include "passes/KernelSchedule.h"

#include "mlir/IR/BuiltinOps.h"

#include <algorithm>

using namespace mlir;
using namespace cairn;

ArenaLiveness::ArenaLiveness(Operation *op) {
  ProgramOp program = dyn_cast<ProgramOp>(op);
  if (auto module = dyn_cast<ModuleOp>(op))
    program = getProgram(module);
  if (!program)
    return;
  graph = readProgram(program);

  // Lifetimes as the plan sees them, on a copy: planning clears offsets.
  KernelGraph copy = graph->graph;
  ArenaPlanOptions options;
  options.reorder = false;
  options.inPlace = false;
  options.place = false;
  plan = planArena(copy, options);

  // What the passes before recorded in the IR.
  plan.arenaBytes = program.getArenaBytes().value_or(0);
  plan.method = program.getPlanMethod().value_or("").str();
  plan.provedOptimal = program.getPlanOptimal();
  int64_t peakBefore = 0, peakAfter = 0;
  for (auto step : program.getBody().front().getOps<StepOp>()) {
    if (!step.getPeakBefore()) {
      // Not scheduled for memory: the order is the lowered one.
      int64_t peak = computeStepPeakBytes(graph->graph, step.getKind());
      peakBefore = std::max(peakBefore, peak);
      peakAfter = std::max(peakAfter, peak);
      continue;
    }
    plan.scheduleTried = true;
    peakBefore = std::max(peakBefore, *step.getPeakBefore());
    peakAfter = std::max(peakAfter, step.getPeakAfter().value_or(0));
    int moved = step.getMovedKernels().value_or(0);
    plan.scheduleMovedKernels += moved;
    plan.scheduleReordered |= moved > 0;
  }
  plan.scheduleLowerBoundBefore = plan.persistentBytes + peakBefore;
  plan.scheduleLowerBoundAfter = plan.persistentBytes + peakAfter;
}

Operation *ArenaLiveness::getKernel(int index) const {
  const ScheduleEntry &entry = plan.schedule[index];
  return graph->getKernelOp(entry.step, entry.kernel);
}

bool ArenaLiveness::isLiveAt(int id, int index) const {
  const Buffer &buffer = graph->graph.buffers[id];
  if (plan.start[id] < 0)
    return false;
  // An in-place output takes over its input's bytes after its first kernel.
  int first = plan.start[id] + (buffer.inPlaceOf != kNoBuffer ? 1 : 0);
  return first <= index && index <= plan.end[id];
}

SmallVector<Value> ArenaLiveness::getLiveAt(int index) const {
  std::vector<int> live;
  for (const Buffer &buffer : graph->graph.buffers)
    if (!buffer.isAlias() && buffer.bytes > 0 && isLiveAt(buffer.id, index))
      live.push_back(buffer.id);
  const auto &buffers = graph->graph.buffers;
  std::stable_sort(live.begin(), live.end(), [&](int a, int b) {
    return buffers[a].bytes > buffers[b].bytes;
  });
  SmallVector<Value> values;
  for (int id : live)
    values.push_back(graph->values[id]);
  return values;
}

std::optional<std::pair<int, int>>
ArenaLiveness::getInterval(Value buffer) const {
  auto it = graph->ids.find(buffer);
  if (it == graph->ids.end() || plan.start[it->second] < 0)
    return std::nullopt;
  return std::make_pair(plan.start[it->second], plan.end[it->second]);
}
