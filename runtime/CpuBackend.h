//===- CpuBackend.h - The backend of `cairn build` for the CPU ---*- C++ -*-===//
//
// Generated CPU programs name kCpuBackend: the steps run on the host arena
// (HostExecutor.h) and GEMMs go to OpenBLAS, which this backend sets up --
// the re-exec that selects its fast core (BlasSetup.h), and --threads;
// convolutions go to oneDNN where it fits the plan (kernels/ConvLibrary.h),
// whose primitives the executor keeps (StepContext::device).
// Separate from the runtime's core so that CUDA executables do not link a
// BLAS.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CPUBACKEND_H
#define CAIRN_RUNTIME_CPUBACKEND_H

#include "runtime/Executor.h"
#include "runtime/Program.h"

namespace cairn::kernels {
class ConvLibrary;
} // namespace cairn::kernels

namespace cairn::runtime {

extern const Backend kCpuBackend;

/// The convolutions' call sites of the executor running `ctx`'s step
/// (oneDNN's primitives, kernels/ConvLibrary.h), which the generated calls
/// name.
kernels::ConvLibrary &convLibrary(const StepContext &ctx);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_CPUBACKEND_H
