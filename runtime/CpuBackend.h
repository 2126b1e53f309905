//===- CpuBackend.h - The backend of `cairn build` for the CPU ---*- C++ -*-===//
//
// Generated CPU programs name kCpuBackend: the steps run on the host arena
// (HostExecutor.h) and GEMMs go to OpenBLAS, which this backend sets up --
// the re-exec that selects its fast core (BlasSetup.h), and --threads.
// Separate from the runtime's core so that CUDA executables do not link a
// BLAS.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CPUBACKEND_H
#define CAIRN_RUNTIME_CPUBACKEND_H

#include "runtime/Executor.h"

namespace cairn::runtime {

extern const Backend kCpuBackend;

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_CPUBACKEND_H
