//===- CpuEmitter.h - Kernel lists as C++ for the CPU -----------*- C++ -*-===//
//
// Prints a KernelGraph as one C++17 translation unit: `trainStep` and `forward`
// as calls into cairn::kernels (runtime/kernels/*.h) and plain loops on
// typed pointers into the arena, the ProgramSpec that describes every named
// tensor to the runtime, and a main() that hands both to runMain
// (runtime/Program.h).
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_CODEGEN_CPUEMITTER_H
#define CAIRN_CODEGEN_CPUEMITTER_H

#include "passes/KernelGraph.h"

#include "llvm/Support/raw_ostream.h"

namespace cairn::codegen {

/// Prints `program`. `modelSource` is the text of program.sourceFile: each
/// kernel is preceded by a comment with its location and that line.
void emitCpuProgram(const KernelGraph &program, llvm::StringRef modelSource,
                    llvm::raw_ostream &os);

} // namespace cairn::codegen

#endif // CAIRN_CODEGEN_CPUEMITTER_H
