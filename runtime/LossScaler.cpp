//===- LossScaler.cpp - torch.amp.GradScaler's loss scale, on the host ----===//
#include "runtime/LossScaler.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

#include <cmath>
#include <limits>

namespace cairn::runtime {

namespace {

/// A scale: a finite float32 > 0.
bool parseScale(absl::string_view text, float &scale) {
  double value;
  if (!absl::SimpleAtod(text, &value) || !std::isfinite(value) || value <= 0 ||
      value > std::numeric_limits<float>::max() ||
      static_cast<float>(value) == 0)
    return false;
  scale = static_cast<float>(value);
  return true;
}

} // namespace

absl::StatusOr<LossScaleSetting> parseLossScale(const std::string &value) {
  LossScaleSetting setting;
  absl::string_view text = value;
  if (text == "dynamic")
    return setting;
  if (text == "none") {
    setting.mode = LossScaleMode::None;
    setting.initialScale = 1;
    return setting;
  }
  bool dynamic = absl::ConsumePrefix(&text, "dynamic:");
  if (!parseScale(text, setting.initialScale))
    return absl::InvalidArgumentError(absl::StrFormat(
        "--loss-scale expects dynamic, dynamic:S, none or a scale N (S and N positive "
        "finite float32 numbers), got '%s'",
        value));
  setting.mode = dynamic ? LossScaleMode::Dynamic : LossScaleMode::Fixed;
  return setting;
}

LossScaler::LossScaler(LossScaleSetting setting) : setting(setting) {
  current.scale = setting.initialScale;
}

void LossScaler::resume(const LossScaleState &saved) {
  current.skippedSteps = saved.skippedSteps;
  if (setting.mode != LossScaleMode::Dynamic)
    return;
  current.scale = saved.scale;
  current.growthTracker = saved.growthTracker;
}

void LossScaler::update(bool foundInf) {
  if (foundInf)
    ++current.skippedSteps;
  if (setting.mode != LossScaleMode::Dynamic)
    return;
  if (foundInf) {
    current.scale *= kBackoffFactor;
    current.growthTracker = 0;
    return;
  }
  if (++current.growthTracker < kGrowthInterval)
    return;
  float grown = current.scale * kGrowthFactor;
  if (std::isfinite(grown))
    current.scale = grown;
  current.growthTracker = 0;
}

std::string describeLossScale(const LossScaleSetting &setting) {
  switch (setting.mode) {
  case LossScaleMode::Dynamic:
    return absl::StrFormat("dynamic:%g", setting.initialScale);
  case LossScaleMode::Fixed:
    return absl::StrFormat("fixed %g", setting.initialScale);
  case LossScaleMode::None:
    return "none";
  }
  return "none";
}

} // namespace cairn::runtime
