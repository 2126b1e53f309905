//===- CairnProgramOps.h - The planned step's structure ---------*- C++ -*-===//

#ifndef CAIRN_IR_CAIRNPROGRAMOPS_H
#define CAIRN_IR_CAIRNPROGRAMOPS_H

#include "ir/CairnAttrs.h"
#include "ir/CairnDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

#define GET_OP_CLASSES
#include "ir/CairnProgramOps.h.inc"

namespace cairn {
/// The value whose bytes `value` is: itself, or the source under a chain of
/// cairn.view ops.
mlir::Value getViewRoot(mlir::Value value);
/// Bytes of a buffer (or view) of this type.
int64_t getMemRefBytes(mlir::MemRefType type);
/// The kernels of `step`, in order.
llvm::SmallVector<mlir::Operation *> getStepKernels(StepOp step);
/// The `output` buffer of a step with loss scaling that the end of its
/// backward writes (whether the step was skipped).
inline constexpr llvm::StringLiteral kFoundInfBufferName = "found_inf";
/// Where a training step's forward part ends: the index in `kernels` (its
/// kernels in order) of the last one writing an `output` buffer but
/// found_inf (the loss), or -1 when none does.
int getForwardEnd(llvm::ArrayRef<mlir::Operation *> kernels);
/// Whether `kernel` writes a persistent buffer (a parameter, a running
/// statistic, the loss).
bool writesPersistentBuffer(mlir::Operation *kernel);
/// Whether `kernel` writes one of its inputs in place (an update of a
/// running statistic's copy, which a step with loss scaling commits later).
bool updatesInPlace(mlir::Operation *kernel);
/// The kernels of `kernels` recomputation must never copy: those writing a
/// persistent buffer or updating an input in place, and those writing a
/// buffer such an update then overwrites (computed again, the copy would
/// hold the value before the update).
llvm::DenseSet<mlir::Operation *>
getUncopiableKernels(llvm::ArrayRef<mlir::Operation *> kernels);
/// What a recomputed copy's name adds to the original's (`.recomputed`,
/// then `.2`, `.3`, ... for further copies of the same value).
inline constexpr llvm::StringLiteral kRecomputedSuffix = ".recomputed";
} // namespace cairn

#endif // CAIRN_IR_CAIRNPROGRAMOPS_H
