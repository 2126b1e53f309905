//===- CairnKernelOps.h - Kernels of the planned step -----------*- C++ -*-===//

#ifndef CAIRN_IR_CAIRNKERNELOPS_H
#define CAIRN_IR_CAIRNKERNELOPS_H

#include "ir/CairnInterfaces.h"
#include "ir/CairnProgramOps.h"

namespace cairn {
namespace OpTrait {

/// Marks a kernel whose output element i depends on input element i alone
/// (Cairn_ElementwiseKernel in CairnKernelOps.td).
template <typename ConcreteType>
class ElementwiseKernel
    : public mlir::OpTrait::TraitBase<ConcreteType, ElementwiseKernel> {};

} // namespace OpTrait

namespace detail {

/// The printed form every kernel shares (CairnKernelOps.td).
mlir::ParseResult parseKernelOp(mlir::OpAsmParser &parser,
                                mlir::OperationState &result,
                                unsigned numInputs, unsigned numOutputs,
                                bool hasWorkspace, bool segmented);
/// Prints `op` given the operands of each of its ODS groups.
void printKernelOp(mlir::OpAsmPrinter &printer, mlir::Operation *op,
                   llvm::ArrayRef<mlir::OperandRange> groups,
                   unsigned numInputs, unsigned numOutputs, bool hasWorkspace);
template <typename OpT>
void printKernelOp(mlir::OpAsmPrinter &printer, OpT op) {
  llvm::SmallVector<mlir::OperandRange> groups;
  unsigned count =
      OpT::kNumInputs + OpT::kNumOutputs + (OpT::kHasWorkspace ? 1 : 0);
  for (unsigned group = 0; group < count; ++group)
    groups.push_back(op.getODSOperands(group));
  printKernelOp(printer, op.getOperation(), groups, OpT::kNumInputs,
                OpT::kNumOutputs, OpT::kHasWorkspace);
}

} // namespace detail

/// The shape of a kernel kind's operand list: its ODS groups in order.
struct KernelSignature {
  unsigned numInputs = 0;
  unsigned numOutputs = 0;
  bool hasWorkspace = false;
  /// Two or more groups are optional or variadic: the op records each
  /// group's size (`operandSegmentSizes`).
  bool segmented = false;
};
/// The signature of the kernel op named `opName` ("cairn.kernel.linear"),
/// or nullopt for another name.
std::optional<KernelSignature> getKernelSignature(llvm::StringRef opName);

/// The operands of an op of cairn.kernel.elementwise_chain ("add": 2,
/// "relu": 1), or nullopt for an unknown one.
std::optional<unsigned> getChainOpArity(llvm::StringRef kind);

/// The work of one element of an elementwise_chain with these ops, in the
/// units of runtime/kernels/Parallel.h's parallelFor (a load, an add and a
/// store are 1): 1, plus 16 for each op that takes exp, tanh or erf, and 8
/// for a dropout (its Philox words, as the dropout kernel counts them).
int64_t getChainWorkPerElement(mlir::ArrayAttr ops);

/// Whether `op` may write its output over a dying input of the same size.
inline bool isElementwiseKernel(mlir::Operation *op) {
  return op->hasTrait<OpTrait::ElementwiseKernel>();
}

/// Whether `a` and `b` are optimizer updates (sgd_update, adam_update) of
/// one kind, element type and settings: one multi-tensor launch may run
/// both, each reading and writing only its own tensors.
bool haveSameUpdateSettings(mlir::Operation *a, mlir::Operation *b);

/// The kernel ops of `op`'s block after `op`, in order.
llvm::SmallVector<mlir::Operation *> getKernelsAfter(mlir::Operation *op);

} // namespace cairn

#define GET_OP_CLASSES
#include "ir/CairnKernelOps.h.inc"

#endif // CAIRN_IR_CAIRNKERNELOPS_H
