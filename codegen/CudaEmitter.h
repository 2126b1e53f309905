//===- CudaEmitter.h - Kernel lists as CUDA C++ -----------------*- C++ -*-===//
//
// Prints a Program as one .cu translation unit for `cairn build --target
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

#include "codegen/KernelList.h"
#include "codegen/Lowering.h"

#include "llvm/Support/raw_ostream.h"

namespace cairn::codegen {

/// The most bytes of cuBLASLt workspace one GEMM gets in a CUDA plan.
constexpr int64_t kCudaGemmWorkspaceBytes = int64_t(4) << 20;

/// What the CUDA backend takes: named "CUDA" in messages, f32 and f64 (no
/// half precision yet), and a planned cuBLASLt workspace for the GEMMs
/// split-K can help (LowerOps.cpp, gemmWorkspaceBytes).
LoweringTarget getCudaLoweringTarget();

/// Prints `program`, lowered for getCudaLoweringTarget() and planned.
/// `modelSource` is the text of program.sourceFile: each call is preceded by
/// a comment with its location and that line.
void emitCudaProgram(const Program &program, llvm::StringRef modelSource,
                     llvm::raw_ostream &os);

} // namespace cairn::codegen

#endif // CAIRN_CODEGEN_CUDAEMITTER_H
