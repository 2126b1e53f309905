//===- BlasSetup.cpp - Make OpenBLAS pick its AVX-512 kernels -------------===//
#include "runtime/BlasSetup.h"

#include "runtime/kernels/Gemm.h"

#include "absl/strings/match.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <vector>

namespace cairn::runtime {

bool shouldRestartForBlas(const char *noReexec, const char *coreType, bool hasAvx512f,
                          const char *blasCore) {
  if (noReexec && *noReexec && std::strcmp(noReexec, "0") != 0)
    return false;
  if (coreType || !hasAvx512f)
    return false;
  for (const char *fast : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    if (blasCore && absl::EqualsIgnoreCase(blasCore, fast))
      return false;
  return true;
}

void restartForFastBlas(int argc, char **argv) {
  __builtin_cpu_init();
  if (!shouldRestartForBlas(std::getenv("CAIRN_NO_BLAS_REEXEC"),
                            std::getenv("OPENBLAS_CORETYPE"),
                            __builtin_cpu_supports("avx512f"), kernels::blasCoreName()))
    return;
  std::vector<char *> args(argv, argv + argc);
  args.push_back(nullptr);
  // The restarted process sees the variable set, so it cannot loop.
  ::setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  std::fflush(nullptr); // exec discards whatever stdio still buffers
  ::execv("/proc/self/exe", args.data());
  int err = errno;
  ::unsetenv("OPENBLAS_CORETYPE");
  std::fprintf(stderr,
               "warning: cannot restart with OPENBLAS_CORETYPE=SkylakeX (%s); BLAS runs with "
               "its %s kernels, which may be slow on this CPU\n",
               std::strerror(err), kernels::blasCoreName());
}

} // namespace cairn::runtime
