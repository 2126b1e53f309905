//===- HostDevice.h - Functions compiled for the CPU and the GPU -*- C++ -*-===//
//
// CAIRN_HOST_DEVICE marks the inline functions that the CPU kernels and the
// CUDA kernels share (ScalarOps.h, Philox.h, FastMath.h): __host__ __device__
// under nvcc, nothing for the host compiler.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_HOSTDEVICE_H
#define CAIRN_RUNTIME_KERNELS_HOSTDEVICE_H

#ifdef __CUDACC__
#define CAIRN_HOST_DEVICE __host__ __device__
#else
#define CAIRN_HOST_DEVICE
#endif

#endif // CAIRN_RUNTIME_KERNELS_HOSTDEVICE_H
