//===- KernelProfile.cpp - Where a CPU training step's time goes ----------===//
#include "runtime/KernelProfile.h"

#include "runtime/Executor.h"
#include "runtime/File.h"
#include "runtime/Program.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace cairn::runtime {

namespace {

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  double upper = values[middle];
  if (values.size() % 2)
    return upper;
  double lower = *std::max_element(values.begin(), values.begin() + middle);
  return (lower + upper) / 2;
}

} // namespace

void KernelProfile::endStep() {
  close(Clock::now());
  open = -1;
  rows.push_back(current);
  std::fill(current.begin(), current.end(), 0.0);
}

double KernelProfile::medianSeconds(size_t index) const {
  std::vector<double> values;
  for (const std::vector<double> &row : rows)
    values.push_back(row[index]);
  return median(std::move(values));
}

double KernelProfile::medianStepSeconds() const {
  std::vector<double> totals;
  for (const std::vector<double> &row : rows) {
    double total = 0;
    for (double seconds : row)
      total += seconds;
    totals.push_back(total);
  }
  return median(std::move(totals));
}

absl::Status writeKernelProfile(const std::string &path,
                                const ProgramSpec &spec,
                                const KernelProfile &profile, int threads) {
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (size_t i = 0; i < spec.trainKernels.size(); ++i) {
    const KernelInfo &kernel = spec.trainKernels[i];
    nlohmann::ordered_json entry = {{"index", i},
                                    {"name", kernel.name},
                                    {"kind", kernel.kind},
                                    {"loc", kernel.loc},
                                    {"seconds", profile.medianSeconds(i)}};
    if (!profile.implementation(i).empty())
      entry["implementation"] = profile.implementation(i);
    kernels.push_back(std::move(entry));
  }
  nlohmann::ordered_json json = {
      {"format", "cairn-kernel-profile"},
      {"version", 1},
      {"model", spec.model},
      {"source", spec.sourceFile},
      {"batch", spec.batch},
      {"backend", spec.backend ? spec.backend->name : "cpu"},
      {"threads", threads},
      {"steps", profile.steps()},
      {"step_seconds", profile.medianStepSeconds()},
      {"kernels", std::move(kernels)},
  };
  std::string text = json.dump(1) + "\n";
  return writeFileAtomically(path, {text});
}

} // namespace cairn::runtime
