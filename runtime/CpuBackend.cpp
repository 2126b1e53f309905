//===- CpuBackend.cpp - The backend of `cairn build` for the CPU ----------===//
#include "runtime/CpuBackend.h"

#include "runtime/BlasSetup.h"
#include "runtime/HostExecutor.h"
#include "runtime/kernels/Gemm.h"

#include "absl/strings/str_format.h"

namespace cairn::runtime {

namespace {

std::string describeBuild() {
  return absl::StrFormat("BLAS core %s", kernels::blasCoreName());
}

absl::StatusOr<std::unique_ptr<Executor>> open(const ProgramSpec &spec,
                                               const ExecutorOptions &options) {
  if (options.threads > 0)
    kernels::setBlasThreads(options.threads);
  return HostExecutor::open(spec,
                            absl::StrFormat("CPU, OpenBLAS core %s, %d threads",
                                            kernels::blasCoreName(), kernels::blasThreads()),
                            std::string(kernels::blasCoreName()), kernels::blasThreads());
}

} // namespace

const Backend kCpuBackend = {"cpu", restartForFastBlas, describeBuild, open};

} // namespace cairn::runtime
