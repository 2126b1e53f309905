//===- LrSchedule.h - The learning rate of each optimizer step --*- C++ -*-===//
//
// torch.optim.lr_scheduler's StepLR, CosineAnnealingLR and LinearLR, stepped
// once per optimizer step (scheduler.step() right after optimizer.step()),
// in their closed forms. A schedule of two is PyTorch's SequentialLR whose
// milestone is the first one's total_iters: the usual linear warm-up, then
// the second scheduler counting its own steps from 0.
//
// The generated steps multiply their optimizer's lr by
// StepContext::lrFactor, which the runtime sets from here before each step;
// the compiler fills ProgramSpec::lrSchedule with these structs, so this
// header is plain C++ (no absl).
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_LRSCHEDULE_H
#define CAIRN_RUNTIME_LRSCHEDULE_H

#include <cstdint>
#include <vector>

namespace cairn::runtime {

enum class LrSchedulerKind { StepLR, CosineAnnealingLR, LinearLR };

/// One scheduler with torch's arguments (those of the other kinds unused).
struct LrScheduler {
  LrSchedulerKind kind = LrSchedulerKind::StepLR;
  int64_t stepSize = 1;   // StepLR: step_size
  double gamma = 0.1;     // StepLR
  int64_t tMax = 1;       // CosineAnnealingLR: T_max
  double etaMin = 0;      // CosineAnnealingLR: eta_min (an lr, not a factor)
  double startFactor = 1.0 / 3; // LinearLR
  double endFactor = 1.0;       // LinearLR
  int64_t totalIters = 5;       // LinearLR
};

/// The lr of the optimizer step numbered `step` (0 for the first) under
/// `schedule` (empty: `baseLr` throughout).
double scheduledLr(double baseLr, const std::vector<LrScheduler> &schedule, int64_t step);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_LRSCHEDULE_H
