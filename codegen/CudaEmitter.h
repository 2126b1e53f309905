//===- CudaEmitter.h - Kernel lists as CUDA C++ -----------------*- C++ -*-===//
//
// Prints a KernelGraph as one .cu translation unit for `cairn build --target
// cuda`: `trainStep` and `forward` as host code that launches the CUDA
// runtime's kernels (runtime/cuda/Kernels.h) and library calls
// (runtime/cuda/Library.h: cuBLASLt, cuDNN) on pointers into the device
// arena, the ProgramSpec naming the CUDA backend, and main() -> runMain.
//
// It prints the same kernel list as the CPU emitter, with three fusions
// that change no buffer of the plan: chains of element-wise kernels whose
// intermediates nobody else reads become one kernel, a relu that only
// follows a linear becomes that GEMM's epilogue, and adjacent optimizer
// updates with the same hyper-parameters become one launch.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_CODEGEN_CUDAEMITTER_H
#define CAIRN_CODEGEN_CUDAEMITTER_H

#include "passes/KernelGraphIR.h"

#include "llvm/Support/raw_ostream.h"

namespace cairn::codegen {

/// Prints `program`, lowered for the CUDA target (getCudaTarget()) and
/// planned.
/// `modelSource` is the text of program.sourceFile: each call is preceded by
/// a comment with its location and that line.
void emitCudaProgram(const ProgramGraph &graph, llvm::StringRef modelSource,
                     llvm::raw_ostream &os);

} // namespace cairn::codegen

#endif // CAIRN_CODEGEN_CUDAEMITTER_H
