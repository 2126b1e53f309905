//===- CpuBackend.cpp - The backend of `cairn build` for the CPU ----------===//
#include "runtime/CpuBackend.h"

#include "runtime/BlasSetup.h"
#include "runtime/HostExecutor.h"
#include "runtime/KernelProfile.h"
#include "runtime/kernels/ConvLibrary.h"
#include "runtime/kernels/Gemm.h"
#include "runtime/kernels/KernelError.h"

#include "absl/strings/str_format.h"

#include <cstdlib>
#include <memory>
#include <string>

namespace cairn::runtime {

namespace {

void noteInProfile(void *profile, const std::string &description) {
  static_cast<KernelProfile *>(profile)->note(description);
}

/// A CPU switch in the environment: true for `alternative`, false for
/// `standard` or when unset (or empty), an error for anything else.
absl::StatusOr<bool> readSwitch(const char *name, const char *standard,
                                const char *alternative) {
  const char *value = std::getenv(name);
  if (!value || !*value || std::string(value) == standard)
    return false;
  if (std::string(value) == alternative)
    return true;
  return absl::InvalidArgumentError(
      absl::StrFormat("%s=%s: expected '%s' (the default) or '%s'", name,
                      value, standard, alternative));
}

std::string describeBuild() {
  return absl::StrFormat("BLAS core %s", kernels::blasCoreName());
}

absl::StatusOr<std::unique_ptr<Executor>> open(const ProgramSpec &spec,
                                               const ExecutorOptions &options) {
  if (options.threads > 0)
    kernels::setBlasThreads(options.threads);
  // CAIRN_CPU_CONV=im2col: every convolution runs Cairn's im2col + GEMM
  // instead of oneDNN where it fits; CAIRN_CPU_GEMM=openblas: float GEMMs on
  // OpenBLAS instead of oneDNN's sgemm (to compare the two).
  absl::StatusOr<bool> im2col = readSwitch("CAIRN_CPU_CONV", "onednn", "im2col");
  if (!im2col.ok())
    return im2col.status();
  absl::StatusOr<bool> openblas = readSwitch("CAIRN_CPU_GEMM", "onednn", "openblas");
  if (!openblas.ok())
    return openblas.status();
  const kernels::GemmLibrary gemm =
      *openblas ? kernels::GemmLibrary::OpenBlas : kernels::GemmLibrary::OneDnn;
  kernels::setGemmLibrary(gemm);
  return HostExecutor::open(spec,
                            absl::StrFormat("CPU, GEMM %s, OpenBLAS core %s, %d threads%s",
                                            kernels::getGemmLibraryName(gemm),
                                            kernels::blasCoreName(), kernels::blasThreads(),
                                            *im2col ? ", convolutions im2col" : ""),
                            std::string(kernels::blasCoreName()), kernels::blasThreads(),
                            std::make_shared<kernels::ConvLibrary>(!*im2col));
}

} // namespace

kernels::ConvLibrary &convLibrary(const StepContext &ctx) {
  if (!ctx.device)
    throw kernels::KernelError("a CPU step ran without its executor's state");
  auto &library = *static_cast<kernels::ConvLibrary *>(ctx.device);
  // --profile: each convolution notes what ran it.
  library.setListener(ctx.profile ? &noteInProfile : nullptr, ctx.profile);
  return library;
}

const Backend kCpuBackend = {"cpu", restartForFastBlas, describeBuild, open};

} // namespace cairn::runtime
