//===- HostExecutor.cpp - Steps that run on the host arena ----------------===//
#include "runtime/HostExecutor.h"

#include "runtime/Model.h"
#include "runtime/kernels/KernelError.h"

namespace cairn::runtime {

absl::StatusOr<std::unique_ptr<Executor>>
HostExecutor::open(const ProgramSpec &spec, std::string device,
                   std::optional<std::string> blasCore, std::optional<int> threads,
                   std::shared_ptr<void> state) {
  absl::StatusOr<Arena> arena = Arena::allocate(spec.arenaBytes);
  if (!arena.ok())
    return arena.status();
  return std::unique_ptr<Executor>(new HostExecutor(spec, std::move(*arena), std::move(device),
                                                    std::move(blasCore), threads,
                                                    std::move(state)));
}

absl::Status HostExecutor::run(StepKind step, const StepContext &ctx) {
  try {
    StepContext withState = ctx;
    withState.device = state.get();
    stepFunction(spec, step)(arena.data(), withState);
  } catch (const kernels::KernelError &e) {
    return absl::InternalError(e.what());
  }
  return absl::OkStatus();
}

void HostExecutor::fillReport(RunReport &report) const {
  report.backend = backend();
  report.device = device;
  report.blasCore = blasCore;
  report.threads = threads;
  report.measuredPeakBytes = arena.measuredPeakBytes();
}

} // namespace cairn::runtime
