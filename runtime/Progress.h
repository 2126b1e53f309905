//===- Progress.h - What training shows while it runs ------------*- C++ -*-===//
//
// On a terminal, one line redrawn in place (at most ten times a second):
//   epoch 1/3  step 120/2811  loss 0.5234  10234 ex/s  ETA 1:02
// where loss is the running mean of the epoch. Elsewhere (a log file, a
// pipe) a plain line every `logEvery` steps, its loss the mean of those
// steps. Both print a summary line at the end of each epoch. With an lr
// schedule, each line also shows the lr of the step it ends on; with a loss
// scaler (LossScaler.h), the scale of the next step and the steps skipped so
// far (and the epoch's summary those of the epoch).
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_PROGRESS_H
#define CAIRN_RUNTIME_PROGRESS_H

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace cairn::runtime {

struct TrainingPlan {
  int64_t epochs = 1;
  int64_t totalSteps = 0;
  int64_t batch = 1;
  int64_t logEvery = 100;
  bool showLr = false; // the model schedules its lr
  bool showLossScale = false; // the step scales its loss
};

/// "0:42", "12:05", "3:02:11" (seconds rounded to the nearest).
std::string formatDuration(double seconds);

class Progress {
public:
  /// A null `out` prints nothing (the ranks but the first of a
  /// partitioned model, which keep the same account).
  Progress(std::FILE *out, bool terminal, const TrainingPlan &plan);

  /// After each step of epoch `epoch` (0-based), which ran with learning
  /// rate `lr`; with a loss scaler, `scale` is the next step's scale and
  /// `skipped` whether this one was skipped.
  void step(int64_t epoch, double loss, double lr, double scale = 1, bool skipped = false);
  /// After the last step of epoch `epoch`, whole or cut short by --steps.
  void endEpoch(int64_t epoch);

  /// Mean loss of the steps of the last epoch that ended.
  double lastEpochMeanLoss() const { return lastEpochLoss; }

private:
  using Clock = std::chrono::steady_clock;
  double secondsSince(Clock::time_point then) const;
  void printLine(int64_t epoch, double loss, const char *lossNote);

  std::FILE *out;
  bool terminal;
  TrainingPlan plan;
  Clock::time_point start, epochStart, lastDraw;
  int64_t done = 0;
  int64_t epochSteps = 0;
  double epochLoss = 0;
  int64_t windowSteps = 0;
  double windowLoss = 0;
  double lastEpochLoss = 0;
  double lastLr = 0;
  double lastScale = 1;
  int64_t skippedSteps = 0, epochSkipped = 0;
};

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_PROGRESS_H
