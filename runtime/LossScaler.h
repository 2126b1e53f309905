//===- LossScaler.h - torch.amp.GradScaler's loss scale, on the host -*- C++ -*-===//
//
// A step built with loss scaling (an f16 model: cairn-autocast marks it)
// seeds its backward with StepContext::lossScale, divides the gradients by
// it, and skips its updates when one of them is infinite or NaN, writing
// "found_inf". Between steps the runtime moves the scale as
// torch.amp.GradScaler does with its defaults: from 2^16, halved after a
// skipped step, doubled after 2000 steps in a row without one.
//
// --loss-scale picks the mode: dynamic (the default of such a step, or
// dynamic:S from the scale S), a fixed scale N, or none (scale 1). A step
// with a non-finite gradient is skipped in every mode: nothing it would have
// written (parameters, optimizer state, running statistics,
// num_batches_tracked) changes, and it does not count as an optimizer step.
// The scale, the growth tracker and the skipped steps go into checkpoints.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_LOSSSCALER_H
#define CAIRN_RUNTIME_LOSSSCALER_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>

namespace cairn::runtime {

enum class LossScaleMode { Dynamic, Fixed, None };

/// What --loss-scale asks for.
struct LossScaleSetting {
  LossScaleMode mode = LossScaleMode::Dynamic;
  float initialScale = 65536; // GradScaler's init_scale; the scale of Fixed
};

/// Parses --loss-scale: dynamic, dynamic:S, none, or a scale N (finite, > 0).
absl::StatusOr<LossScaleSetting> parseLossScale(const std::string &value);

/// The scaler's state between steps (and in a checkpoint).
struct LossScaleState {
  float scale = 65536;
  int64_t growthTracker = 0; // steps in a row without a skip since the last change
  int64_t skippedSteps = 0;  // of the whole training, resumed runs included
};

class LossScaler {
public:
  /// GradScaler's defaults.
  static constexpr float kGrowthFactor = 2, kBackoffFactor = 0.5;
  static constexpr int64_t kGrowthInterval = 2000;

  explicit LossScaler(LossScaleSetting setting);

  /// Continues from a checkpoint's state (dynamic mode only: a fixed scale
  /// or none keeps its scale, and counts on from the skipped steps).
  void resume(const LossScaleState &saved);

  /// The scale of the next step.
  float scale() const { return current.scale; }
  const LossScaleState &state() const { return current; }
  LossScaleMode mode() const { return setting.mode; }

  /// After a step: `foundInf` when it was skipped. As GradScaler.update:
  /// dynamic halves the scale on a skip, and doubles it (when the double is
  /// finite) after kGrowthInterval steps in a row without one.
  void update(bool foundInf);

private:
  LossScaleSetting setting;
  LossScaleState current;
};

/// "dynamic", "dynamic:1024", "fixed 128", "none" for logs and metrics.
std::string describeLossScale(const LossScaleSetting &setting);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_LOSSSCALER_H
