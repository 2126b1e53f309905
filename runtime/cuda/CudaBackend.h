//===- CudaBackend.h - The backend of `cairn build --target cuda` -*- C++
//-*-===//
//
// Generated CUDA programs name kCudaBackend in their ProgramSpec. Its
// executor (CudaExecutor.cpp):
//  - finds a GPU (exit 1 with the reason when there is none: no driver makes
//    cudaGetDeviceCount fail with cudaErrorInsufficientDriver, 35);
//  - makes one cudaMalloc of the planned arena size, filled with Arena's
//    pattern so its high-water mark can be read back; nothing else is
//    allocated on the device by Cairn (workspaces are buffers of the plan);
//  - keeps a host mirror of the arena for the runtime, and copies
//    state in after init/load, out before save, a batch in and the
//    loss/output out around each step;
//  - runs the first step of each kind eagerly (every call site chooses its
//    algorithm then), captures the second as a CUDA graph and replays it;
//    the per-step scalars (StepScalars) are copied before each step to
//    device memory just past the arena (the same cudaMalloc);
//  - runs the step eagerly whenever StepContext::observe is set (the
//    gradients are copied to the host mirror after their kernel) or with
//    --no-graph, or when the step has collectives.
// The step functions get their Context through StepContext::device.
// A program of several processes (DeviceCollectives.h) names
// kCudaCollectiveBackend, the same executor on the GPU of its rank among
// its host's ranks, with an NCCL communicator.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CUDA_CUDABACKEND_H
#define CAIRN_RUNTIME_CUDA_CUDABACKEND_H

#include "runtime/Executor.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <memory>
#include <string>

namespace cairn::cuda {

class Context;

extern const runtime::Backend kCudaBackend;

/// What a program of several processes adds to the executor: its NCCL
/// communicator (DeviceCollectives.h's openCollectives and
/// closeCollectives), kept out of the one-GPU executables.
struct CollectiveHooks {
  absl::Status (*open)(Context &cx, runtime::Transport &transport);
  void (*close)(Context &cx);
};

/// kCudaBackend's executor; with `collectives`, on the GPU of the
/// process's rank among its host's ranks (ExecutorOptions::transport), with
/// the communicator open.
absl::StatusOr<std::unique_ptr<runtime::Executor>>
openCudaExecutor(const runtime::ProgramSpec &spec, const runtime::ExecutorOptions &options,
                 const CollectiveHooks *collectives);

/// For --version: the CUDA runtime and the architectures.
std::string describeCudaBuild();

} // namespace cairn::cuda

#endif // CAIRN_RUNTIME_CUDA_CUDABACKEND_H
