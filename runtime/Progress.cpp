//===- Progress.cpp - What training shows while it runs -------------------===//
#include "runtime/Progress.h"

#include "absl/strings/str_format.h"

#include <algorithm>
#include <cmath>

namespace cairn::runtime {

std::string formatDuration(double seconds) {
  auto total = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  int64_t hours = total / 3600, minutes = total / 60 % 60, secs = total % 60;
  if (hours > 0)
    return absl::StrFormat("%d:%02d:%02d", hours, minutes, secs);
  return absl::StrFormat("%d:%02d", minutes, secs);
}

Progress::Progress(std::FILE *out, bool terminal, const TrainingPlan &plan)
    : out(out), terminal(terminal), plan(plan), start(Clock::now()), epochStart(start),
      lastDraw(start) {}

double Progress::secondsSince(Clock::time_point then) const {
  return std::chrono::duration<double>(Clock::now() - then).count();
}

void Progress::printLine(int64_t epoch, double loss, const char *lossNote) {
  if (!out)
    return;
  double elapsed = secondsSince(start);
  double rate = elapsed > 0 ? static_cast<double>(done * plan.batch) / elapsed : 0;
  double eta = done > 0 ? elapsed / static_cast<double>(done) *
                              static_cast<double>(plan.totalSteps - done)
                        : 0;
  std::string lr = plan.showLr ? absl::StrFormat("  lr %.9g", lastLr) : "";
  std::string scale = plan.showLossScale ? absl::StrFormat("  scale %.9g  skipped %d",
                                                           lastScale, skippedSteps)
                                         : "";
  absl::FPrintF(out, "%sepoch %d/%d  step %d/%d  loss %.4f%s%s%s  %.0f ex/s  ETA %s%s",
                terminal ? "\r\033[K" : "", epoch + 1, plan.epochs, done, plan.totalSteps,
                loss, lossNote, lr, scale, rate, formatDuration(eta), terminal ? "" : "\n");
  std::fflush(out);
}

void Progress::step(int64_t epoch, double loss, double lr, double scale, bool skipped) {
  ++done;
  lastLr = lr;
  lastScale = scale;
  skippedSteps += skipped;
  epochSkipped += skipped;
  ++epochSteps;
  epochLoss += loss;
  ++windowSteps;
  windowLoss += loss;
  if (terminal) {
    if (secondsSince(lastDraw) >= 0.1 || done == plan.totalSteps) {
      lastDraw = Clock::now();
      printLine(epoch, epochLoss / static_cast<double>(epochSteps), "");
    }
  } else if (windowSteps == plan.logEvery) {
    printLine(epoch, windowLoss / static_cast<double>(windowSteps),
              absl::StrFormat(" (mean of %d steps)", windowSteps).c_str());
    windowSteps = 0;
    windowLoss = 0;
  }
}

void Progress::endEpoch(int64_t epoch) {
  double seconds = secondsSince(epochStart);
  lastEpochLoss = epochSteps > 0 ? epochLoss / static_cast<double>(epochSteps) : 0;
  double rate = seconds > 0 ? static_cast<double>(epochSteps * plan.batch) / seconds : 0;
  std::string skipped =
      plan.showLossScale ? absl::StrFormat("  skipped %d", epochSkipped) : "";
  if (out) {
    absl::FPrintF(out, "%sepoch %d/%d done  loss %.4f%s  %.1f s  %.0f ex/s\n",
                  terminal ? "\r\033[K" : "", epoch + 1, plan.epochs, lastEpochLoss, skipped,
                  seconds, rate);
    std::fflush(out);
  }
  epochStart = Clock::now();
  epochSteps = 0;
  epochLoss = 0;
  epochSkipped = 0;
}

} // namespace cairn::runtime
