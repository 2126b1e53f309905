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

std::string describeBuild() {
  return absl::StrFormat("BLAS core %s", kernels::blasCoreName());
}

absl::StatusOr<std::unique_ptr<Executor>> open(const ProgramSpec &spec,
                                               const ExecutorOptions &options) {
  if (options.threads > 0)
    kernels::setBlasThreads(options.threads);
  // CAIRN_CPU_CONV=im2col: every convolution runs Cairn's im2col + GEMM
  // instead of oneDNN where it fits (to compare the two).
  const char *conv = std::getenv("CAIRN_CPU_CONV");
  const bool im2col = conv && std::string(conv) == "im2col";
  if (conv && *conv && !im2col && std::string(conv) != "onednn")
    return absl::InvalidArgumentError(absl::StrFormat(
        "CAIRN_CPU_CONV=%s: expected 'onednn' (the default) or 'im2col'", conv));
  // CAIRN_CPU_GEMM=openblas: float GEMMs on OpenBLAS instead of oneDNN's
  // sgemm (to compare the two).
  const char *gemm = std::getenv("CAIRN_CPU_GEMM");
  const bool openblas = gemm && std::string(gemm) == "openblas";
  if (gemm && *gemm && !openblas && std::string(gemm) != "onednn")
    return absl::InvalidArgumentError(absl::StrFormat(
        "CAIRN_CPU_GEMM=%s: expected 'onednn' (the default) or 'openblas'", gemm));
  kernels::setGemmLibrary(openblas ? kernels::GemmLibrary::OpenBlas
                                   : kernels::GemmLibrary::OneDnn);
  return HostExecutor::open(spec,
                            absl::StrFormat("CPU, GEMM %s, OpenBLAS core %s, %d threads%s",
                                            kernels::getGemmLibraryName(kernels::getGemmLibrary()),
                                            kernels::blasCoreName(), kernels::blasThreads(),
                                            im2col ? ", convolutions im2col" : ""),
                            std::string(kernels::blasCoreName()), kernels::blasThreads(),
                            std::make_shared<kernels::ConvLibrary>(!im2col));
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
