//===- LrSchedule.cpp - The learning rate of each optimizer step ----------===//
#include "runtime/LrSchedule.h"

#include <algorithm>
#include <cmath>

namespace cairn::runtime {

namespace {

/// `scheduler`'s lr after `t` scheduler steps (torch's _get_closed_form_lr).
double closedFormLr(double baseLr, const LrScheduler &scheduler, int64_t t) {
  switch (scheduler.kind) {
  case LrSchedulerKind::StepLR:
    return baseLr * std::pow(scheduler.gamma, static_cast<double>(t / scheduler.stepSize));
  case LrSchedulerKind::CosineAnnealingLR:
    return scheduler.etaMin +
           (baseLr - scheduler.etaMin) *
               (1 + std::cos(M_PI * static_cast<double>(t) / static_cast<double>(scheduler.tMax))) /
               2;
  case LrSchedulerKind::LinearLR:
    return baseLr *
           (scheduler.startFactor +
            (scheduler.endFactor - scheduler.startFactor) *
                static_cast<double>(std::min(scheduler.totalIters, t)) /
                static_cast<double>(scheduler.totalIters));
  }
  return baseLr;
}

} // namespace

double scheduledLr(double baseLr, const std::vector<LrScheduler> &schedule, int64_t step) {
  // SequentialLR: each scheduler but the last hands over after its
  // total_iters steps, and the next counts from 0 again.
  for (size_t i = 0; i < schedule.size(); ++i) {
    const LrScheduler &scheduler = schedule[i];
    if (i + 1 == schedule.size() || step < scheduler.totalIters)
      return closedFormLr(baseLr, scheduler, step);
    step -= scheduler.totalIters;
  }
  return baseLr;
}

} // namespace cairn::runtime
