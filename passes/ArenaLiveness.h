//===- ArenaLiveness.h - What is live where in a program's schedule -*- C++ -*-===//
//
// The liveness of a cairn.program as an analysis any pass can ask for
// (`getAnalysis<ArenaLiveness>()`): the schedule (the training step's kernels,
// then the forward pass's), every buffer's interval of schedule indices, the
// bytes live at each index, the peak, and what is live there. A recompute
// pass asks what is live at the peak and how long each candidate lives; a
// partitioner what a device's kernels need at once.
//
// Bytes count as the plan counts them: each buffer rounded up to 256 bytes,
// an in-place chain as one region, persistent buffers at every index. The
// peak is the plan's lower bound: no plan of this schedule is smaller.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_ARENALIVENESS_H
#define CAIRN_PASSES_ARENALIVENESS_H

#include "passes/ArenaPlan.h"
#include "passes/KernelGraphIR.h"

#include "mlir/Pass/AnalysisManager.h"

#include <optional>
#include <utility>

namespace cairn {

class ArenaLiveness {
public:
  /// Reads the cairn.program of `op` (a module) or `op` itself (a
  /// cairn.program). isValid() is false when there is none.
  explicit ArenaLiveness(mlir::Operation *op);

  bool isValid() const { return graph.has_value(); }

  /// The program as plain data (offsets as the IR has them) and its
  /// lifetimes: ArenaPlan's schedule, start/end and live bytes, and the
  /// totals a report prints.
  const ProgramGraph &getProgramGraph() const { return *graph; }
  const ArenaPlan &getPlan() const { return plan; }

  /// What the passes that decided the plan took (PlanTimer), for reports.
  void setPlanningSeconds(double seconds) { plan.seconds = seconds; }

  int getScheduleSize() const { return plan.schedule.size(); }
  /// The kernel op at schedule index `index`.
  mlir::Operation *getKernel(int index) const;
  /// Bytes live at schedule index `index`.
  int64_t getLiveBytes(int index) const { return plan.liveBytes[index]; }
  /// The first index where the most bytes are live, and those bytes.
  int getPeakIndex() const { return plan.peakIndex; }
  int64_t getPeakBytes() const { return plan.lowerBoundBytes; }
  /// The buffers (cairn.buffer results) whose bytes are live at `index`,
  /// largest first.
  llvm::SmallVector<mlir::Value> getLiveAt(int index) const;
  /// First and last schedule index `buffer`'s bytes are live (inclusive),
  /// or nullopt for a view or a buffer outside the schedule.
  std::optional<std::pair<int, int>> getInterval(mlir::Value buffer) const;

  bool isInvalidated(const mlir::AnalysisManager::PreservedAnalyses &pa) {
    return !pa.isPreserved<ArenaLiveness>();
  }

private:
  bool isLiveAt(int id, int index) const;

  std::optional<ProgramGraph> graph;
  ArenaPlan plan;
};

} // namespace cairn

#endif // CAIRN_PASSES_ARENALIVENESS_H
