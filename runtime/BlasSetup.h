//===- BlasSetup.h - Make OpenBLAS pick its AVX-512 kernels ------*- C++ -*-===//
//
// OpenBLAS 0.3.21 (Debian 12) chooses its kernels when it is loaded, from
// OPENBLAS_CORETYPE or its own CPU detection, which does not know some
// AVX-512 CPUs (Sapphire Rapids among them) and falls back to Haswell
// kernels, about 3.3x slower for sgemm. Setting the variable after loading
// changes nothing, so the executable sets it and restarts itself.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_BLASSETUP_H
#define CAIRN_RUNTIME_BLASSETUP_H

namespace cairn::runtime {

/// The decision, apart from the process state it reads: restart when
/// CAIRN_NO_BLAS_REEXEC is unset (or empty or "0"), OPENBLAS_CORETYPE is
/// unset, the CPU has AVX-512F and the loaded core is not an AVX-512 one
/// (SkylakeX, Cooperlake, SapphireRapids; any case).
bool shouldRestartForBlas(const char *noReexec, const char *coreType, bool hasAvx512f,
                          const char *blasCore);

/// When shouldRestartForBlas says so for this process, sets
/// OPENBLAS_CORETYPE=SkylakeX and execs /proc/self/exe with `argv` (argc
/// entries); returns only when no restart was needed or exec failed (then
/// with a warning on stderr).
void restartForFastBlas(int argc, char **argv);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_BLASSETUP_H
