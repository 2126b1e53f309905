//===- PlanReport.cpp - The memory plan as JSON and as text -------------===//

#include "codegen/PlanReport.h"

#include "codegen/PlanReportHtml.h"
#include "passes/ByteSize.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

#include "llvm/Support/Format.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

using namespace cairn;
using namespace cairn::codegen;

namespace {

/// The buffers the report lists: those with bytes in the plan.
std::vector<const Buffer *> getPlannedBuffers(const KernelGraph &program,
                                              const ArenaPlan &plan) {
  std::vector<const Buffer *> listed;
  for (const Buffer &buffer : program.buffers)
    if (!buffer.isAlias() && buffer.bytes > 0 && plan.start[buffer.id] >= 0)
      listed.push_back(&buffer);
  return listed;
}

const Kernel &getKernel(const KernelGraph &program, const ScheduleEntry &entry) {
  return program.getStep(entry.step).kernels[entry.kernel];
}

std::vector<std::string> getStepNames(const ArenaPlan &plan) {
  std::vector<std::string> steps;
  for (const ScheduleEntry &entry : plan.schedule)
    if (steps.empty() || steps.back() != stringifyStepKind(entry.step))
      steps.push_back(stringifyStepKind(entry.step).str());
  return steps;
}

/// What the training step computes again (kernels glued before their
/// first reader: copies of forward kernels), and at what cost.
struct RecomputeSummary {
  int kernels = 0;
  std::vector<std::string> values; // the copies' buffers, "relu.recomputed"
  int64_t extraFlops = 0;
  // The training step without the copies: what the extra FLOPs add to (a
  // share of the whole would stay under 100% however much is copied).
  int64_t stepFlops = 0;
};

RecomputeSummary summarizeRecompute(const KernelGraph &program) {
  RecomputeSummary summary;
  for (const Kernel &kernel : program.trainStep.kernels) {
    if (!kernel.beforeFirstUse) {
      summary.stepFlops += kernel.flops;
      continue;
    }
    ++summary.kernels;
    summary.extraFlops += kernel.flops;
    for (int id : kernel.outputs)
      if (id != kNoBuffer)
        summary.values.push_back(program.buffers[id].name);
  }
  return summary;
}

} // namespace

namespace {
/// One device's part of the JSON report.
nlohmann::ordered_json formatDeviceJson(const KernelGraph &program,
                                        const ArenaPlan &plan) {
  using Json = nlohmann::ordered_json;
  Json buffers = Json::array();
  for (const Buffer *buffer : getPlannedBuffers(program, plan)) {
    Json entry = {{"name", buffer->name},
                  {"kind", stringifyBufferKind(buffer->kind).str()},
                  {"dtype", runtime::dtypeName(buffer->dtype)},
                  {"shape", buffer->shape},
                  {"bytes", buffer->bytes},
                  {"offset", buffer->offset},
                  {"start", plan.start[buffer->id]},
                  {"end", plan.end[buffer->id]},
                  {"loc", buffer->loc}};
    if (buffer->inPlaceOf != kNoBuffer)
      entry["in_place_of"] = program.buffers[buffer->inPlaceOf].name;
    buffers.push_back(std::move(entry));
  }
  Json schedule = Json::array();
  for (size_t index = 0; index < plan.schedule.size(); ++index) {
    const Kernel &kernel = getKernel(program, plan.schedule[index]);
    schedule.push_back(
        {{"index", index},
         {"op", kernel.opName},
         {"kernel", getKernelKindName(kernel.kind)},
         {"step", stringifyStepKind(plan.schedule[index].step).str()},
         {"layer", kernel.layer},
         {"loc", kernel.loc}});
  }
  Json device = {
      {"device", program.device},
      {"arena_bytes", plan.arenaBytes},
      {"lower_bound_bytes", plan.lowerBoundBytes},
      {"persistent_bytes", plan.persistentBytes},
      {"no_reuse_bytes", plan.noReuseBytes},
      {"planning_seconds", plan.seconds},
      {"method", plan.method},
      {"proved_optimal", plan.provedOptimal},
      {"in_place_buffers", plan.inPlaceBuffers},
      {"peak_index", plan.peakIndex},
      {"schedule_order",
       plan.scheduleReordered ? "memory-aware" : "as-lowered"},
      {"schedule_reorder_tried", plan.scheduleTried},
      {"schedule_lower_bound_before_bytes", plan.scheduleLowerBoundBefore},
      {"schedule_lower_bound_after_bytes", plan.scheduleLowerBoundAfter},
      {"schedule_moved_kernels", plan.scheduleMovedKernels},
      {"buffers", std::move(buffers)},
      {"schedule", std::move(schedule)}};
  // What crosses to and from the other devices, in schedule order.
  Json transfers = Json::array();
  for (size_t index = 0; index < plan.schedule.size(); ++index) {
    const Kernel &kernel = getKernel(program, plan.schedule[index]);
    if (!isTransferKernel(kernel))
      continue;
    bool send = kernel.kind == "cairn.kernel.send";
    const Buffer &value =
        program.buffers[send ? kernel.inputs[0] : kernel.outputs[0]];
    transfers.push_back(
        {{"index", index},
         {"step", stringifyStepKind(plan.schedule[index].step).str()},
         {"kind", send ? "send" : "receive"},
         {"peer", kernel.peer},
         {"tag", kernel.tag},
         {"buffer", value.name},
         {"bytes", program.buffers[program.getAliasRoot(value.id)].bytes}});
  }
  device["transfers"] = std::move(transfers);
  RecomputeSummary recompute = summarizeRecompute(program);
  device["recompute"] = {
      {"kernels", recompute.kernels},
      {"values", recompute.values},
      {"extra_flops", recompute.extraFlops},
      {"step_flops", recompute.stepFlops},
      {"memory_budget_bytes",
       program.memoryBudget > 0 ? Json(program.memoryBudget) : Json(nullptr)}};
  return device;
}
} // namespace

std::string
cairn::codegen::formatPlanReportJson(llvm::ArrayRef<DevicePlan> devices) {
  using Json = nlohmann::ordered_json;
  const KernelGraph &program = *devices.front().program;
  Json deviceList = Json::array();
  for (const DevicePlan &device : devices)
    deviceList.push_back(formatDeviceJson(*device.program, *device.plan));
  Json report = {{"model", program.model},
                 {"source", program.sourceFile},
                 {"batch", program.batch},
                 {"steps", getStepNames(*devices.front().plan)},
                 {"devices", std::move(deviceList)}};
  // `replace`: a model name with bad UTF-8 must not throw.
  return report.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

namespace {
/// One device's text report.
void printDeviceText(const KernelGraph &program, const ArenaPlan &plan,
                     llvm::raw_ostream &os) {
  std::vector<const Buffer *> listed = getPlannedBuffers(program, plan);
  auto ratio = [](int64_t a, int64_t b) {
    return b > 0 ? static_cast<double>(a) / b : 1.0;
  };
  auto isLiveAt = [&](const Buffer &b, int index) {
    int first = plan.start[b.id] + (b.inPlaceOf != kNoBuffer ? 1 : 0);
    return first <= index && index <= plan.end[b.id];
  };
  std::vector<std::string> steps = getStepNames(plan);
  std::string stepList;
  for (const std::string &step : steps)
    stepList += (stepList.empty() ? "" : " + ") + step;

  // The CPU program's plan is the one the report has always described.
  os << "Memory plan of model " << program.model << " (" << program.sourceFile
     << "), batch " << program.batch
     << (program.target == "CPU" ? "" : ", " + program.target + " program")
     << ": " << stepList << ", " << plan.schedule.size() << " kernels, "
     << listed.size() << " buffers, one arena (device " << program.device
     << ")\n\n";
  os << llvm::format("  %-13s %12s\n", "arena",
                     formatByteSize(plan.arenaBytes).c_str());
  os << llvm::format("  %-13s %12s   arena / lower bound = %.3f%s\n",
                     "lower bound", formatByteSize(plan.lowerBoundBytes).c_str(),
                     ratio(plan.arenaBytes, plan.lowerBoundBytes),
                     plan.provedOptimal ? " (optimal)" : "");
  os << llvm::format("  %-13s %12s   %.2fx the arena (every buffer its own "
                     "bytes)\n",
                     "no reuse", formatByteSize(plan.noReuseBytes).c_str(),
                     ratio(plan.noReuseBytes, plan.arenaBytes));
  os << llvm::format("  %-13s %12s   live for the whole run\n", "persistent",
                     formatByteSize(plan.persistentBytes).c_str());
  os << "  planner: " << plan.method << ", "
     << llvm::format("%.3f", plan.seconds) << " s; " << plan.inPlaceBuffers
     << " buffers written in place over a dying input\n";
  if (program.devices > 1)
    for (StepKind step : kAllSteps) {
      int count[2] = {0, 0};
      int64_t bytes[2] = {0, 0};
      for (const Kernel &kernel : program.getStep(step).kernels) {
        if (!isTransferKernel(kernel))
          continue;
        bool send = kernel.kind == "cairn.kernel.send";
        int id = send ? kernel.inputs[0] : kernel.outputs[0];
        ++count[send];
        bytes[send] += program.buffers[program.getAliasRoot(id)].bytes;
      }
      if (count[0] + count[1] > 0)
        os << "  transfers (" << stringifyStepKind(step) << "): sends "
           << count[1] << " values (" << formatByteSize(bytes[1])
           << "), receives " << count[0] << " (" << formatByteSize(bytes[0])
           << ")\n";
    }
  // The lower bounds before in-place: what the order alone changes.
  if (plan.scheduleReordered)
    os << "  schedule: memory-aware, lower bound "
       << formatByteSize(plan.scheduleLowerBoundBefore) << " -> "
       << formatByteSize(plan.scheduleLowerBoundAfter)
       << llvm::format(" (%+.1f%%)",
                       100.0 * (ratio(plan.scheduleLowerBoundAfter,
                                      plan.scheduleLowerBoundBefore) -
                                1.0))
       << ", " << plan.scheduleMovedKernels << " kernels moved\n\n";
  else if (plan.scheduleTried)
    os << "  schedule: as lowered (reordering did not lower the peak)\n\n";
  else
    os << "  schedule: as lowered (reordering off)\n\n";
  RecomputeSummary recompute = summarizeRecompute(program);
  if (recompute.kernels > 0 || program.memoryBudget > 0) {
    os << "  recompute: " << recompute.kernels
       << " kernels computed again in the backward, "
       << llvm::format("+%.3f GFLOP (+%.1f%% on the training step's %.3f)",
                       recompute.extraFlops / 1e9,
                       100.0 * ratio(recompute.extraFlops, recompute.stepFlops),
                       recompute.stepFlops / 1e9);
    if (program.memoryBudget > 0)
      os << "; memory budget " << formatByteSize(program.memoryBudget);
    os << "\n";
    std::string list;
    for (const std::string &value : recompute.values)
      list += (list.empty() ? "" : ", ") + value;
    if (!list.empty())
      os << "    " << list << "\n";
    os << "\n";
  }

  // Totals by kind and by element type, and what each holds at the peak.
  struct Total {
    int count = 0;
    int64_t bytes = 0, atPeak = 0;
  };
  auto printTotals = [&](const char *heading,
                         llvm::function_ref<std::string(const Buffer &)> key) {
    std::map<std::string, Total> totals;
    for (const Buffer *b : listed) {
      Total &total = totals[key(*b)];
      ++total.count;
      total.bytes += b->bytes;
      if (isLiveAt(*b, plan.peakIndex))
        total.atPeak += b->bytes;
    }
    os << llvm::format("  %-12s %8s %14s %14s\n", heading, "buffers", "bytes",
                       "at the peak");
    for (const auto &[name, total] : totals)
      os << llvm::format("  %-12s %8d %14s %14s\n", name.c_str(), total.count,
                         formatByteSize(total.bytes).c_str(),
                         formatByteSize(total.atPeak).c_str());
  };
  printTotals("by kind", [](const Buffer &b) {
    return stringifyBufferKind(b.kind).str();
  });
  printTotals("by type",
              [](const Buffer &b) { return runtime::dtypeName(b.dtype); });
  os << "\n";

  // The peak and what is live there.
  if (!plan.schedule.empty()) {
    const ScheduleEntry &entry = plan.schedule[plan.peakIndex];
    const Kernel &kernel = getKernel(program, entry);
    os << "Peak: " << formatByteSize(plan.lowerBoundBytes)
       << " live at schedule index " << plan.peakIndex << " ("
       << stringifyStepKind(entry.step) << " kernel " << entry.kernel << "): "
       << getKernelKindName(kernel.kind);
    if (!kernel.layer.empty())
      os << " in " << kernel.layer;
    os << " (" << kernel.opName << ") at " << kernel.loc << "\n";
    std::vector<const Buffer *> live;
    for (const Buffer *b : listed)
      if (isLiveAt(*b, plan.peakIndex) && !isPersistent(b->kind))
        live.push_back(b);
    std::stable_sort(live.begin(), live.end(), [](auto *a, auto *b) {
      return a->bytes > b->bytes;
    });
    os << "  live there besides the persistent buffers: " << live.size()
       << " buffers\n";
    size_t shown = std::min<size_t>(live.size(), 15);
    for (size_t i = 0; i < shown; ++i)
      os << llvm::format(
          "    %-36s %-10s %-5s %12s  %s\n", live[i]->name.c_str(),
          stringifyBufferKind(live[i]->kind).str().c_str(),
          runtime::dtypeName(live[i]->dtype),
          formatByteSize(live[i]->bytes).c_str(), live[i]->loc.c_str());
    if (live.size() > shown)
      os << "    ... and " << live.size() - shown << " more\n";
    os << "\n";
  }

  // The largest buffers.
  std::vector<const Buffer *> largest = listed;
  std::stable_sort(largest.begin(), largest.end(),
                   [](auto *a, auto *b) { return a->bytes > b->bytes; });
  size_t shown = std::min<size_t>(largest.size(), 10);
  os << "Largest buffers:\n";
  os << llvm::format("    %-36s %-10s %-5s %12s %12s  %-11s %s\n", "name",
                     "kind", "type", "bytes", "offset", "live", "defined at");
  for (size_t i = 0; i < shown; ++i) {
    const Buffer &b = *largest[i];
    std::string life = isPersistent(b.kind)
                           ? std::string("always")
                           : std::to_string(plan.start[b.id]) + ".." +
                                 std::to_string(plan.end[b.id]);
    os << llvm::format(
        "    %-36s %-10s %-5s %12s %12lld  %-11s %s\n", b.name.c_str(),
        stringifyBufferKind(b.kind).str().c_str(), runtime::dtypeName(b.dtype),
        formatByteSize(b.bytes).c_str(), static_cast<long long>(b.offset),
        life.c_str(), b.loc.c_str());
  }
}
} // namespace

void cairn::codegen::printPlanReportText(llvm::ArrayRef<DevicePlan> devices,
                                         llvm::raw_ostream &os) {
  for (const DevicePlan &device : devices) {
    if (devices.size() > 1)
      os << (device.program->device ? "\n" : "") << "== device "
         << device.program->device << " of " << devices.size() << " ==\n";
    printDeviceText(*device.program, *device.plan, os);
  }
}

std::optional<ReportFormat>
cairn::codegen::getReportFormat(llvm::StringRef path) {
  if (path.ends_with_insensitive(".json"))
    return ReportFormat::Json;
  if (path.ends_with_insensitive(".txt"))
    return ReportFormat::Text;
  if (path.ends_with_insensitive(".html") || path.ends_with_insensitive(".htm"))
    return ReportFormat::Html;
  return std::nullopt;
}

std::string cairn::codegen::formatReportPathError(llvm::StringRef path) {
  return ("--memory-report '" + path +
          "': expected a file ending in .json, .txt or .html")
      .str();
}

llvm::LogicalResult
cairn::codegen::writePlanReportFile(llvm::ArrayRef<DevicePlan> devices,
                                    llvm::StringRef path, std::string &error) {
  std::optional<ReportFormat> format = getReportFormat(path);
  if (!format) {
    error = formatReportPathError(path);
    return llvm::failure();
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(path, &error);
  if (!output)
    return llvm::failure();
  switch (*format) {
  case ReportFormat::Json:
    output->os() << formatPlanReportJson(devices);
    break;
  case ReportFormat::Text:
    printPlanReportText(devices, output->os());
    break;
  case ReportFormat::Html:
    writePlanReportHtml(formatPlanReportJson(devices), output->os());
    break;
  }
  output->os().flush();
  if (output->os().has_error()) {
    error = ("cannot write '" + path + "': " + output->os().error().message())
                .str();
    output->os().clear_error();
    return llvm::failure();
  }
  output->keep();
  return llvm::success();
}
