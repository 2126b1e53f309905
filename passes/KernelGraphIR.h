//===- KernelGraphIR.h - A cairn.program as a KernelGraph -------*- C++ -*-===//
//
// The bridge between the IR and the plain data the middle end's algorithms
// work on (KernelGraph.h), as Glow and XLA keep their planners apart from
// their IR: a pass reads the program as a KernelGraph, runs an algorithm on
// it, and writes the decision back as IR (a kernel order, an `in_place`
// operand, an offset).
//
// Both directions keep one canonical layout of a step: every buffer and view
// is declared right before the first kernel that touches it (its views and
// the buffer it is in place over first), and buffers no kernel touches come
// last. Buffer ids are the order of declaration: the program's persistent
// buffers, then the training step's, then the forward pass's.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_KERNELGRAPHIR_H
#define CAIRN_PASSES_KERNELGRAPHIR_H

#include "passes/KernelGraph.h"

#include "ir/CairnProgramOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

#include <array>
#include <string>
#include <vector>

namespace cairn {

/// "file:line:col" of the model-file position inside `loc` (through names,
/// call sites and fused locations), or "".
std::string formatModelLocation(mlir::Location loc);
/// The model file of `loc`, or "".
std::string getModelFileName(mlir::Location loc);
/// The layer `loc` names ("fc1": its NameLoc), or "".
std::string getLayerName(mlir::Location loc);
/// A kernel's name in profiles (`EXE train --profile`, `cairn
/// --kernel-times`): the buffer or view of its first output, else its op's
/// name.
llvm::StringRef getKernelProfileName(mlir::Operation *kernel);

/// The element type of `type` (a tensor, a memref or a scalar type) as a
/// DType; nullopt for the types kernels do not take.
std::optional<DType> getDType(mlir::Type type);

/// Writes `graph` as a cairn.program at the end of `module`'s body: the
/// kernels of each step in list order, the IR locations the graph carries
/// (the op each kernel comes from as its location's metadata), every
/// decision the graph holds (in-place buffers, offsets, the arena's size).
/// Reports an internal error at the module and returns null when the graph
/// does not fit a kernel op's signature.
ProgramOp writeProgram(const KernelGraph &graph, mlir::ModuleOp module);

/// A program read as a KernelGraph, with the IR each buffer and kernel came
/// from.
struct ProgramGraph {
  KernelGraph graph;
  /// By buffer id: the cairn.buffer's or cairn.view's result.
  std::vector<mlir::Value> values;
  llvm::DenseMap<mlir::Value, int> ids;
  /// By step kind, then kernel index: the kernel op.
  std::array<std::vector<mlir::Operation *>, std::size(kAllSteps)> kernels;

  mlir::Operation *getKernelOp(StepKind step, int index) const {
    return kernels[static_cast<unsigned>(step)][index];
  }
  /// The program read.
  ProgramOp getProgram() const { return program; }

  ProgramOp program;
};

/// Reads `program`, a verified one (liveness computed).
ProgramGraph readProgram(ProgramOp program);
/// Reads the module's program for `pass`: getProgramFor, then readProgram.
mlir::FailureOr<ProgramGraph> readProgramFor(mlir::ModuleOp module,
                                             llvm::StringRef pass);

/// The module's first cairn.program, or null (there is one per device of
/// a partitioned model, cairn-partition-devices).
ProgramOp getProgram(mlir::ModuleOp module);
/// The module's one cairn.program, or an error at the module naming `pass`
/// and null (for the passes before cairn-partition-devices).
ProgramOp getProgramFor(mlir::ModuleOp module, llvm::StringRef pass);
/// Every cairn.program of the module (one per device), or an error at the
/// module naming `pass` and none.
llvm::SmallVector<ProgramOp> getProgramsFor(mlir::ModuleOp module,
                                            llvm::StringRef pass);

/// The gradients micro-batches and replicas sum, in the order the updates
/// among `kernels` (a training step's) read them: each gradient buffer an
/// update reads, or what it is before clip_grad_norm scales it (the left
/// operand of the mul by a clip coefficient that writes it), so that the
/// norm and found_inf are the whole batch's.
llvm::SmallVector<mlir::Value>
getSummedGradients(llvm::ArrayRef<mlir::Operation *> kernels);

/// Removes the plan from `program` (every offset, arena_bytes, plan_method,
/// plan_optimal): what a pass that changes lifetimes must do, so that a
/// stale plan is never taken for the program's.
void dropPlan(ProgramOp program);

/// Runs `kernels` (every kernel op of `step`, in a new order) and declares
/// each buffer and view right before the first kernel that touches it.
/// Drops the update groups (cairn-group-updates): adjacency may change.
void reorderStep(StepOp step, llvm::ArrayRef<mlir::Operation *> kernels);

} // namespace cairn

#endif // CAIRN_PASSES_KERNELGRAPHIR_H
