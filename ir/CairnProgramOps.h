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
/// Where a training step's forward part ends: the index in `kernels` (its
/// kernels in order) of the last one writing an `output` buffer (the loss),
/// or -1 when none does.
int getForwardEnd(llvm::ArrayRef<mlir::Operation *> kernels);
/// Whether `kernel` writes a persistent buffer (a parameter, a running
/// statistic, the loss).
bool writesPersistentBuffer(mlir::Operation *kernel);
/// What a recomputed copy's name adds to the original's (`.recomputed`,
/// then `.2`, `.3`, ... for further copies of the same value).
inline constexpr llvm::StringLiteral kRecomputedSuffix = ".recomputed";
} // namespace cairn

#endif // CAIRN_IR_CAIRNPROGRAMOPS_H
