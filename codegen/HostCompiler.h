//===- HostCompiler.h - Generated C++ or CUDA C++ to an executable -*- C++
//-*-===//
//
// Compiles the CPU emitter's output with the host C++ compiler, or the CUDA
// emitter's with nvcc, and links it with the runtime (paths from
// BuildConfig.h, generated at configure time).
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_CODEGEN_HOSTCOMPILER_H
#define CAIRN_CODEGEN_HOSTCOMPILER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <string>

namespace cairn::codegen {

struct HostCompileOptions {
  /// The C++ compiler (for CUDA: nvcc's host compiler, -ccbin): a path, or
  /// a name looked up on PATH. Empty: the compiler CMake built Cairn with.
  std::string compiler;
  /// nvcc, likewise. Empty: the one CMake found (CMAKE_CUDA_COMPILER).
  std::string cudaCompiler;
  /// Keep the temporary directory (the .cpp or .cu and the compiler's log).
  bool keepTemps = false;
  /// The source's main runs several processes over openMpiTransport (a
  /// model partitioned across devices, or data-parallel replicas): link the
  /// MPI transport (CairnMpi) and MPI's C library too, and for CUDA the
  /// executor's NCCL side (CairnCudaCollectives) and libnccl.
  bool linkMpi = false;
};

/// Writes `source` to a temporary directory, compiles and links it into
/// `outputPath`, which appears (by rename) only when everything succeeded.
/// Errors go to stderr; a compiler failure keeps the .cpp and says where.
llvm::LogicalResult compileExecutable(llvm::StringRef source,
                                      llvm::StringRef outputPath,
                                      const HostCompileOptions &options);

/// Whether this Cairn was built with the CUDA runtime (CMake option
/// CAIRN_ENABLE_CUDA), which CUDA executables link.
bool isCudaBackendBuilt();

/// As compileExecutable, for the CUDA emitter's `source`: nvcc compiles it
/// (for sm_80 and sm_90, with sm_90's PTX for newer GPUs) and links the CUDA
/// runtime, cudart statically and cuBLASLt and cuDNN as shared libraries.
/// Fails with an error when !isCudaBackendBuilt().
llvm::LogicalResult compileCudaExecutable(llvm::StringRef source,
                                          llvm::StringRef outputPath,
                                          const HostCompileOptions &options);

} // namespace cairn::codegen

#endif // CAIRN_CODEGEN_HOSTCOMPILER_H
