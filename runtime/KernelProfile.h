//===- KernelProfile.h - Where a CPU training step's time goes ---*- C++ -*-===//
//
// `EXE train --profile FILE`: the CPU step calls enter(k) before its kernel
// k (the generated code does, when StepContext::profile is set), so the
// time from one enter to the next is kernel k's, poison and observe hooks
// included. Each profiled step adds one row of per-kernel seconds; the file
// holds each kernel's median over the rows, which the compiler's
// `--kernel-times FILE` reads as the time of computing that kernel again.
//
// Format (JSON): {"format": "cairn-kernel-profile", "version": 1, "model",
// "source", "batch", "backend", "threads", "steps" (rows), "step_seconds"
// (median of the rows' sums), "kernels": [{"index", "name" (the buffer it
// writes, the name the plan uses), "kind" (the kernel op), "loc",
// "seconds", and where the kernel said how it ran, "implementation": a
// convolution's "oneDNN jit:avx512_core, 32 images a call" or "im2col
// (why)"}]}, kernels in step order.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELPROFILE_H
#define CAIRN_RUNTIME_KERNELPROFILE_H

#include "absl/status/status.h"

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace cairn::runtime {

struct ProgramSpec;

/// A kernel of the training step, as the profile names it.
struct KernelInfo {
  std::string name; // the buffer it writes ("layers.0.gelu"); its op's name when it writes none
  std::string kind; // "cairn.kernel.linear"
  std::string loc;  // "model.cairn:12:3"
};

class KernelProfile {
public:
  explicit KernelProfile(size_t kernels) : current(kernels, 0.0), notes(kernels) {}

  /// Kernel `index` starts now; the one before it (if any) ends.
  void enter(int index) {
    Clock::time_point now = Clock::now();
    close(now);
    open = index;
    last = now;
  }
  /// The kernel running now says how it runs (the first word stays).
  void note(const std::string &implementation) {
    if (open >= 0 && static_cast<size_t>(open) < notes.size() && notes[open].empty())
      notes[open] = implementation;
  }
  /// What kernel `index` said of how it runs; empty where it said nothing.
  const std::string &implementation(size_t index) const { return notes[index]; }
  /// The step ended: closes its last kernel and keeps the step's row.
  void endStep();

  size_t steps() const { return rows.size(); }
  /// Kernel `index`'s median seconds over the rows (0 without rows).
  double medianSeconds(size_t index) const;
  /// The median over the rows of the step's total.
  double medianStepSeconds() const;

private:
  using Clock = std::chrono::steady_clock;
  void close(Clock::time_point now) {
    if (open >= 0 && static_cast<size_t>(open) < current.size())
      current[open] += std::chrono::duration<double>(now - last).count();
  }

  std::vector<double> current;
  std::vector<std::string> notes;
  std::vector<std::vector<double>> rows;
  int open = -1;
  Clock::time_point last;
};

/// Writes `profile` of `spec`'s training step to `path` (atomically).
absl::Status writeKernelProfile(const std::string &path,
                                const ProgramSpec &spec,
                                const KernelProfile &profile, int threads);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_KERNELPROFILE_H
