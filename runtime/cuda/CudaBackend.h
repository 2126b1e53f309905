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
//    --no-graph.
// The step functions get their Context through StepContext::device.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CUDA_CUDABACKEND_H
#define CAIRN_RUNTIME_CUDA_CUDABACKEND_H

#include "runtime/Executor.h"

namespace cairn::cuda {

extern const runtime::Backend kCudaBackend;

} // namespace cairn::cuda

#endif // CAIRN_RUNTIME_CUDA_CUDABACKEND_H
