//===- PlanReport.h - The memory plan as JSON and as text --------*- C++ -*-===//
//
// `cairn build --memory-report FILE` writes the plan in the format FILE's
// extension names (.json, .txt, .html); `cairn plan MODEL` prints the text.
//
// JSON (for tools):
//   {"model", "source", "batch", "steps": ["train_step", "forward"],
//    "devices": [{"device": 0, "arena_bytes", "lower_bound_bytes",
//       "persistent_bytes", "no_reuse_bytes", "planning_seconds",
//       "method", "proved_optimal", "in_place_buffers", "peak_index",
//       "schedule_order" ("memory-aware" or "as-lowered"),
//       "schedule_reorder_tried", "schedule_lower_bound_before_bytes",
//       "schedule_lower_bound_after_bytes", "schedule_moved_kernels",
//       "buffers": [{"name", "kind", "bytes", "offset", "start", "end",
//                    "loc", "in_place_of" (only when in place)}],
//       "schedule": [{"index", "op", "kernel", "step", "layer", "loc"}]}]}
// A buffer occupies [offset, offset + bytes) during schedule indices
// start..end inclusive. Views (reshapes) have no bytes and are not listed.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_CODEGEN_PLANREPORT_H
#define CAIRN_CODEGEN_PLANREPORT_H

#include "passes/ArenaPlan.h"

#include "llvm/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

#include <string>

namespace cairn::codegen {

/// The report's formats, named by a file's extension (.json, .txt, .html or
/// .htm, any case); nullopt for another.
enum class ReportFormat { Json, Text, Html };
std::optional<ReportFormat> getReportFormat(llvm::StringRef path);
/// What is wrong with a `--memory-report` path of no known format.
std::string formatReportPathError(llvm::StringRef path);

/// One device's planned program and its plan. A model split across devices
/// (cairn-partition-devices) has one per device, in device order
/// (KernelGraph::device); a model on one device has one.
struct DevicePlan {
  const KernelGraph *program;
  const ArenaPlan *plan;
};

/// Writes the report to `path` ("-": stdout) in the format its extension
/// names, atomically: a file that cannot be written completely is not left
/// behind. On failure `error` says why.
llvm::LogicalResult writePlanReportFile(llvm::ArrayRef<DevicePlan> devices,
                                        llvm::StringRef path,
                                        std::string &error);

/// The report as a JSON document (pretty-printed, trailing newline).
std::string formatPlanReportJson(llvm::ArrayRef<DevicePlan> devices);

/// The report for people: totals, the peak and what is live there, the
/// largest buffers, planned vs no-reuse vs lower bound; a section per
/// device.
void printPlanReportText(llvm::ArrayRef<DevicePlan> devices,
                         llvm::raw_ostream &os);

/// The reports of a model on one device.
inline llvm::LogicalResult writePlanReportFile(const KernelGraph &program,
                                               const ArenaPlan &plan,
                                               llvm::StringRef path,
                                               std::string &error) {
  return writePlanReportFile(DevicePlan{&program, &plan}, path, error);
}
inline std::string formatPlanReportJson(const KernelGraph &program,
                                        const ArenaPlan &plan) {
  return formatPlanReportJson(DevicePlan{&program, &plan});
}
inline void printPlanReportText(const KernelGraph &program,
                                const ArenaPlan &plan, llvm::raw_ostream &os) {
  printPlanReportText(DevicePlan{&program, &plan}, os);
}

} // namespace cairn::codegen

#endif // CAIRN_CODEGEN_PLANREPORT_H
