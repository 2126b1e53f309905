//===- TrainingSettings.cpp - The lr schedule and gradient clipping -------===//
#include "ir/TrainingSettings.h"

#include "ir/CairnAttrs.h"

#include "mlir/IR/Builders.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using cairn::runtime::LrScheduler;
using cairn::runtime::LrSchedulerKind;

namespace cairn {

namespace {

/// The shortest decimal form that reads back as `value` ("0.0001", "1e-06",
/// "inf").
std::string formatShortest(double value) {
  char buffer[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value)
      break;
  }
  return buffer;
}

} // namespace

std::string describeOptimizer(Attribute optimizer) {
  if (auto sgd = dyn_cast_or_null<SGDAttr>(optimizer))
    return "SGD(lr=" + formatShortest(sgd.getLr()) +
           ", momentum=" + formatShortest(sgd.getMomentum()) +
           ", dampening=" + formatShortest(sgd.getDampening()) +
           ", weight_decay=" + formatShortest(sgd.getWeightDecay()) +
           ", nesterov=" + (sgd.getNesterov() ? "True" : "False") + ")";
  if (auto adam = dyn_cast_or_null<AdamAttr>(optimizer))
    return std::string(adam.getDecoupledWeightDecay() ? "AdamW" : "Adam") +
           "(lr=" + formatShortest(adam.getLr()) + ", betas=(" +
           formatShortest(adam.getBeta1()) + ", " +
           formatShortest(adam.getBeta2()) +
           "), eps=" + formatShortest(adam.getEps()) +
           ", weight_decay=" + formatShortest(adam.getWeightDecay()) + ")";
  return "";
}

llvm::StringRef getLrSchedulerName(LrSchedulerKind kind) {
  switch (kind) {
  case LrSchedulerKind::StepLR:
    return "StepLR";
  case LrSchedulerKind::CosineAnnealingLR:
    return "CosineAnnealingLR";
  case LrSchedulerKind::LinearLR:
    return "LinearLR";
  }
  return "";
}

namespace {

std::string checkScheduler(const LrScheduler &s) {
  switch (s.kind) {
  case LrSchedulerKind::StepLR:
    if (s.stepSize < 1)
      return llvm::formatv("StepLR: step_size must be at least 1, not {0}",
                           s.stepSize);
    if (!(s.gamma > 0) || !std::isfinite(s.gamma))
      return llvm::formatv("StepLR: gamma must be positive, not {0}", s.gamma);
    return "";
  case LrSchedulerKind::CosineAnnealingLR:
    if (s.tMax < 1)
      return llvm::formatv(
          "CosineAnnealingLR: T_max must be at least 1, not {0}", s.tMax);
    if (!(s.etaMin >= 0) || !std::isfinite(s.etaMin))
      return llvm::formatv(
          "CosineAnnealingLR: eta_min must be at least 0, not {0}", s.etaMin);
    return "";
  case LrSchedulerKind::LinearLR:
    // torch's own checks.
    if (!(s.startFactor > 0 && s.startFactor <= 1))
      return llvm::formatv("LinearLR: start_factor must be greater than 0 "
                           "and at most 1, not {0}",
                           s.startFactor);
    if (!(s.endFactor >= 0 && s.endFactor <= 1))
      return llvm::formatv(
          "LinearLR: end_factor must be between 0 and 1, not {0}", s.endFactor);
    if (s.totalIters < 1)
      return llvm::formatv("LinearLR: total_iters must be at least 1, not {0}",
                           s.totalIters);
    return "";
  }
  return "unknown scheduler";
}

} // namespace

std::string describeLrScheduler(const LrScheduler &s) {
  switch (s.kind) {
  case LrSchedulerKind::StepLR:
    return llvm::formatv("StepLR(step_size={0}, gamma={1})", s.stepSize,
                         formatShortest(s.gamma));
  case LrSchedulerKind::CosineAnnealingLR:
    return llvm::formatv("CosineAnnealingLR(T_max={0}, eta_min={1})", s.tMax,
                         formatShortest(s.etaMin));
  case LrSchedulerKind::LinearLR:
    return llvm::formatv(
        "LinearLR(start_factor={0}, end_factor={1}, total_iters={2})",
        formatShortest(s.startFactor), formatShortest(s.endFactor),
        s.totalIters);
  }
  return "";
}

std::string checkLrSchedule(ArrayRef<LrScheduler> schedule) {
  if (schedule.size() > 2)
    return "at most two schedulers: a LinearLR warm-up, then another";
  if (schedule.size() == 2 && schedule[0].kind != LrSchedulerKind::LinearLR)
    return llvm::formatv("a second scheduler follows only a LinearLR warm-up "
                         "(SequentialLR with milestone total_iters), not {0}",
                         getLrSchedulerName(schedule[0].kind));
  for (const LrScheduler &s : schedule)
    if (std::string why = checkScheduler(s); !why.empty())
      return why;
  return "";
}

ArrayAttr getLrScheduleAttr(MLIRContext *context,
                            ArrayRef<LrScheduler> schedule) {
  Builder b(context);
  SmallVector<Attribute> entries;
  for (const LrScheduler &s : schedule) {
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("name", b.getStringAttr(getLrSchedulerName(s.kind)))};
    switch (s.kind) {
    case LrSchedulerKind::StepLR:
      fields.push_back(
          b.getNamedAttr("step_size", b.getI64IntegerAttr(s.stepSize)));
      fields.push_back(b.getNamedAttr("gamma", b.getF64FloatAttr(s.gamma)));
      break;
    case LrSchedulerKind::CosineAnnealingLR:
      fields.push_back(b.getNamedAttr("T_max", b.getI64IntegerAttr(s.tMax)));
      fields.push_back(b.getNamedAttr("eta_min", b.getF64FloatAttr(s.etaMin)));
      break;
    case LrSchedulerKind::LinearLR:
      fields.push_back(
          b.getNamedAttr("start_factor", b.getF64FloatAttr(s.startFactor)));
      fields.push_back(
          b.getNamedAttr("end_factor", b.getF64FloatAttr(s.endFactor)));
      fields.push_back(
          b.getNamedAttr("total_iters", b.getI64IntegerAttr(s.totalIters)));
      break;
    }
    entries.push_back(b.getDictionaryAttr(fields));
  }
  return b.getArrayAttr(entries);
}

FailureOr<std::vector<LrScheduler>>
readLrSchedule(Attribute attr, function_ref<InFlightDiagnostic()> emitError) {
  auto array = dyn_cast<ArrayAttr>(attr);
  if (!array) {
    emitError() << "expected the lr schedule to be an array of schedulers";
    return failure();
  }
  std::vector<LrScheduler> schedule;
  for (Attribute entry : array) {
    auto dict = dyn_cast<DictionaryAttr>(entry);
    auto name = dict ? dict.getAs<StringAttr>("name") : StringAttr();
    if (!name) {
      emitError() << "expected a scheduler like {name = \"StepLR\", ...} but "
                     "got "
                  << entry;
      return failure();
    }
    LrScheduler s;
    // Each field the kind has, and no other.
    SmallVector<StringRef> expected = {"name"};
    bool ok = true;
    auto integer = [&](StringRef key, int64_t &out) {
      expected.push_back(key);
      auto value = dict.getAs<IntegerAttr>(key);
      if (!value) {
        emitError() << name.getValue() << ": expected integer '" << key << "'";
        ok = false;
        return;
      }
      out = value.getInt();
    };
    auto real = [&](StringRef key, double &out) {
      expected.push_back(key);
      auto value = dict.getAs<FloatAttr>(key);
      if (!value) {
        emitError() << name.getValue() << ": expected f64 '" << key << "'";
        ok = false;
        return;
      }
      out = value.getValueAsDouble();
    };
    if (name.getValue() == "StepLR") {
      s.kind = LrSchedulerKind::StepLR;
      integer("step_size", s.stepSize);
      real("gamma", s.gamma);
    } else if (name.getValue() == "CosineAnnealingLR") {
      s.kind = LrSchedulerKind::CosineAnnealingLR;
      integer("T_max", s.tMax);
      real("eta_min", s.etaMin);
    } else if (name.getValue() == "LinearLR") {
      s.kind = LrSchedulerKind::LinearLR;
      real("start_factor", s.startFactor);
      real("end_factor", s.endFactor);
      integer("total_iters", s.totalIters);
    } else {
      emitError() << "unknown scheduler '" << name.getValue()
                  << "'; expected StepLR, CosineAnnealingLR or LinearLR";
      return failure();
    }
    if (!ok)
      return failure();
    for (NamedAttribute field : dict)
      if (!llvm::is_contained(expected, field.getName().getValue())) {
        emitError() << name.getValue() << ": unexpected field '"
                    << field.getName().getValue() << "'";
        return failure();
      }
    schedule.push_back(s);
  }
  if (std::string why = checkLrSchedule(schedule); !why.empty()) {
    emitError() << why;
    return failure();
  }
  return schedule;
}

std::string checkClipGradNorm(const ClipGradNorm &clip) {
  if (!(clip.maxNorm > 0) || !std::isfinite(clip.maxNorm))
    return llvm::formatv("clip_grad_norm: max_norm must be positive, not {0}",
                         clip.maxNorm);
  if (!(clip.normType > 0))
    return llvm::formatv("clip_grad_norm: norm_type must be positive or "
                         "'inf', not {0}",
                         clip.normType);
  return "";
}

DictionaryAttr getClipGradNormAttr(MLIRContext *context,
                                   const ClipGradNorm &clip) {
  Builder b(context);
  NamedAttribute fields[] = {
      b.getNamedAttr("max_norm", b.getF64FloatAttr(clip.maxNorm)),
      b.getNamedAttr("norm_type", b.getF64FloatAttr(clip.normType))};
  return b.getDictionaryAttr(fields);
}

FailureOr<ClipGradNorm>
readClipGradNorm(Attribute attr, function_ref<InFlightDiagnostic()> emitError) {
  auto dict = dyn_cast<DictionaryAttr>(attr);
  auto maxNorm = dict ? dict.getAs<FloatAttr>("max_norm") : FloatAttr();
  auto normType = dict ? dict.getAs<FloatAttr>("norm_type") : FloatAttr();
  if (!maxNorm || !normType || dict.size() != 2) {
    emitError() << "expected clip_grad_norm settings {max_norm = F : f64, "
                   "norm_type = F : f64} but got "
                << attr;
    return failure();
  }
  ClipGradNorm clip{maxNorm.getValueAsDouble(), normType.getValueAsDouble()};
  if (std::string why = checkClipGradNorm(clip); !why.empty()) {
    emitError() << why;
    return failure();
  }
  return clip;
}

DictionaryAttr getEvalLossAttr(MLIRContext *context,
                               const runtime::LossForm &loss) {
  Builder b(context);
  NamedAttribute fields[] = {
      b.getNamedAttr(
          "kind", b.getStringAttr(loss.kind == runtime::LossKind::CrossEntropy
                                      ? "cross_entropy"
                                      : "mse_loss")),
      b.getNamedAttr("label_smoothing", b.getF64FloatAttr(loss.labelSmoothing)),
      b.getNamedAttr("target", b.getStringAttr(loss.target))};
  return b.getDictionaryAttr(fields);
}

FailureOr<runtime::LossForm>
readEvalLoss(Attribute attr, function_ref<InFlightDiagnostic()> emitError) {
  auto dict = dyn_cast<DictionaryAttr>(attr);
  auto kind = dict ? dict.getAs<StringAttr>("kind") : StringAttr();
  auto target = dict ? dict.getAs<StringAttr>("target") : StringAttr();
  auto smoothing =
      dict ? dict.getAs<FloatAttr>("label_smoothing") : FloatAttr();
  if (!kind || !target || !smoothing || dict.size() != 3 ||
      (kind.getValue() != "cross_entropy" && kind.getValue() != "mse_loss") ||
      target.getValue().empty()) {
    emitError() << "expected the eval loss {kind = \"cross_entropy\" or "
                   "\"mse_loss\", label_smoothing = F : f64, target = "
                   "\"input\"} but got "
                << attr;
    return failure();
  }
  runtime::LossForm loss;
  loss.kind = kind.getValue() == "cross_entropy"
                  ? runtime::LossKind::CrossEntropy
                  : runtime::LossKind::MseLoss;
  loss.target = target.str();
  loss.labelSmoothing = smoothing.getValueAsDouble();
  return loss;
}

std::string describeClipGradNorm(const ClipGradNorm &clip) {
  return llvm::formatv("clip_grad_norm(max_norm={0}, norm_type={1})",
                       formatShortest(clip.maxNorm),
                       formatShortest(clip.normType));
}

} // namespace cairn
