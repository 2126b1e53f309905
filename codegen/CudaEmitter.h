//===- CudaEmitter.h - Kernel lists as CUDA C++ -----------------*- C++ -*-===//
//
// Prints a planned program (ProgramGraph) as one .cu translation unit for
// `cairn build --target cuda`: `trainStep` and `forward` as host code that
// launches the CUDA runtime's kernels (runtime/cuda/Kernels.h) and library
// calls (runtime/cuda/Library.h: cuBLASLt, cuDNN) on pointers into the device
// arena, the ProgramSpec naming the CUDA backend, and main() -> runMain; a
// model split across GPUs or replicated runs one process per GPU
// (runPartitionedMain, runReplicatedMain), its steps' traffic NCCL's.
//
// It prints the kernels the passes left, as the CPU emitter does: a fused
// element-wise chain is one launch, a linear with `relu` gets the GEMM's
// relu epilogue, and a run of updates marked `cairn.update_group` is one
// multi-tensor launch.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_CODEGEN_CUDAEMITTER_H
#define CAIRN_CODEGEN_CUDAEMITTER_H

#include "passes/KernelGraphIR.h"

#include "llvm/ADT/ArrayRef.h"

#include "llvm/Support/raw_ostream.h"

namespace cairn::codegen {

/// Prints a program lowered for the CUDA target (getCudaTarget()) and
/// planned: one device's, or a model split across devices (one program
/// each, device d at index d) as one file whose main runs the program of
/// its MPI rank on that rank's GPU, the values that cross devices going
/// through NCCL (runtime/cuda/DeviceCollectives.h). `modelSource` is the
/// text of program.sourceFile: each call is preceded by a comment with its
/// location and that line.
void emitCudaProgram(llvm::ArrayRef<const ProgramGraph *> devices,
                     llvm::StringRef modelSource, llvm::raw_ostream &os);

} // namespace cairn::codegen

#endif // CAIRN_CODEGEN_CUDAEMITTER_H
