//===- HostExecutor.h - Steps that run on the host arena ---------*- C++ -*-===//
//
// The executor of CPU programs: the arena is the host arena, so pushState,
// pullState and the copies around a step are nothing. The CPU backend
// (CpuBackend.h) opens it with the BLAS's description; runMain falls back
// to a bare one for a spec that names no backend.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_HOSTEXECUTOR_H
#define CAIRN_RUNTIME_HOSTEXECUTOR_H

#include "runtime/Arena.h"
#include "runtime/Executor.h"

#include <memory>
#include <optional>
#include <string>

namespace cairn::runtime {

class HostExecutor : public Executor {
public:
  /// `device` describes what runs the steps; blasCore and threads go to
  /// the report when the steps use a BLAS. The steps see `state` as
  /// StepContext::device (the CPU backend's call sites of its libraries).
  static absl::StatusOr<std::unique_ptr<Executor>>
  open(const ProgramSpec &spec, std::string device, std::optional<std::string> blasCore,
       std::optional<int> threads, std::shared_ptr<void> state = nullptr);

  const char *backend() const override { return "cpu"; }
  unsigned char *hostArena() override { return arena.data(); }
  absl::Status pushState() override { return absl::OkStatus(); }
  absl::Status pullState() override { return absl::OkStatus(); }
  absl::Status run(StepKind step, const StepContext &ctx) override;
  void fillReport(RunReport &report) const override;

private:
  HostExecutor(const ProgramSpec &spec, Arena arena, std::string device,
               std::optional<std::string> blasCore, std::optional<int> threads,
               std::shared_ptr<void> state)
      : spec(spec), arena(std::move(arena)), device(std::move(device)),
        blasCore(std::move(blasCore)), threads(threads), state(std::move(state)) {}

  const ProgramSpec &spec;
  Arena arena;
  std::string device;
  std::optional<std::string> blasCore;
  std::optional<int> threads;
  std::shared_ptr<void> state;
};

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_HOSTEXECUTOR_H
