//===- CpuEmitter.h - Kernel lists as C++ for the CPU -----------*- C++ -*-===//
//
// Prints a planned program as one C++17 translation unit: `trainStep` and `forward`
// as calls into cairn::kernels (runtime/kernels/*.h) and plain loops on
// typed pointers into the arena, the ProgramSpec that describes every named
// tensor to the runtime, and a main() that hands both to runMain
// (runtime/Program.h).
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_CODEGEN_CPUEMITTER_H
#define CAIRN_CODEGEN_CPUEMITTER_H

#include "passes/KernelGraphIR.h"

#include "llvm/Support/raw_ostream.h"

namespace cairn::codegen {

/// Prints the planned program `graph` (read from the IR by readProgram,
/// KernelGraphIR.h: its buffers, and the typed kernel ops whose attributes
/// the calls take). `modelSource` is the text of the model file: each kernel
/// is preceded by a comment with its location and that line.
void emitCpuProgram(const ProgramGraph &graph, llvm::StringRef modelSource,
                    llvm::raw_ostream &os);
/// A model split across devices (cairn-partition-devices): each device's
/// steps and spec in one translation unit, in device order, and a main that
/// runs the spec of its MPI rank.
void emitCpuProgram(llvm::ArrayRef<const ProgramGraph *> devices,
                    llvm::StringRef modelSource, llvm::raw_ostream &os);

} // namespace cairn::codegen

#endif // CAIRN_CODEGEN_CPUEMITTER_H
