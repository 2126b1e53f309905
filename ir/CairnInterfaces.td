//===- CairnInterfaces.td - Op interfaces of cairn ---------*- tablegen -*-===//

#ifndef CAIRN_IR_CAIRNINTERFACES_TD
#define CAIRN_IR_CAIRNINTERFACES_TD

include "mlir/IR/OpBase.td"

def CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::cairn";
  let description = [{
    The cost of one execution of an op, for recomputation and partitioning
    decisions. FLOPs count a multiply-add as 2 and an elementwise op as 1 per
    output element; data movement (reshape, permute, slice, concat) and
    constants cost 0. Counts saturate at INT64_MAX instead of overflowing.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"Returns the floating-point operations of one execution.",
      /*retTy=*/"int64_t",
      /*methodName=*/"getFlops">,
  ];
}


def KernelOpInterface : OpInterface<"KernelOpInterface"> {
  let cppNamespace = "::cairn";
  let description = [{
    A kernel of the planned step (CairnKernelOps.td): the buffers it reads,
    those it writes and its scratch memory, whatever its kind. This is what
    scheduling, liveness and the plan need of a kernel; the emitters read
    the typed op.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/[{The buffers (or views) the kernel reads, in ODS order; a null
                 Value for an absent optional one.}],
      /*retTy=*/"::llvm::SmallVector<::mlir::Value>",
      /*methodName=*/"getKernelInputs", (ins), /*methodBody=*/[{}],
      /*defaultImplementation=*/[{
        return ::cairn::detail::getKernelOperands($_op, 0,
                                                  ConcreteOp::kNumInputs);
      }]>,
    InterfaceMethod<
      /*desc=*/[{The buffers the kernel writes, in ODS order; a null Value for
                 an absent optional one.}],
      /*retTy=*/"::llvm::SmallVector<::mlir::Value>",
      /*methodName=*/"getKernelOutputs", (ins), /*methodBody=*/[{}],
      /*defaultImplementation=*/[{
        return ::cairn::detail::getKernelOperands(
            $_op, ConcreteOp::kNumInputs, ConcreteOp::kNumOutputs);
      }]>,
    StaticInterfaceMethod<
      /*desc=*/[{Each ODS operand group in order: '1' one buffer, '?' an
                 optional one, '+' one or more.}],
      /*retTy=*/"::llvm::StringRef",
      /*methodName=*/"getKernelGroupKinds", (ins), /*methodBody=*/[{}],
      /*defaultImplementation=*/[{ return ConcreteOp::kGroups; }]>,
    InterfaceMethod<
      /*desc=*/[{Floating-point operations of one run (CairnKernelCosts.cpp):
                 what recomputing the kernel costs.}],
      /*retTy=*/"int64_t",
      /*methodName=*/"getKernelFlops", (ins), /*methodBody=*/[{}],
      /*defaultImplementation=*/[{
        return ::cairn::detail::getKernelFlops($_op.getOperation());
      }]>,
    InterfaceMethod<
      /*desc=*/[{The modelled time of one run in FLOP-equivalents
                 (CairnKernelCosts.cpp): max(FLOPs, the bytes it reads and
                 writes times the machine balance), what recomputation ranks
                 by.}],
      /*retTy=*/"int64_t",
      /*methodName=*/"getKernelCost", (ins), /*methodBody=*/[{}],
      /*defaultImplementation=*/[{
        return ::cairn::detail::getKernelCost($_op.getOperation());
      }]>,
    InterfaceMethod<
      /*desc=*/"The kernel's scratch buffer, or null.",
      /*retTy=*/"::mlir::Value",
      /*methodName=*/"getKernelWorkspace", (ins), /*methodBody=*/[{}],
      /*defaultImplementation=*/[{
        if constexpr (ConcreteOp::kHasWorkspace)
          return $_op.getODSOperands(ConcreteOp::kNumInputs +
                                     ConcreteOp::kNumOutputs)
              .empty() ? ::mlir::Value()
                       : $_op.getODSOperands(ConcreteOp::kNumInputs +
                                             ConcreteOp::kNumOutputs)
                             .front();
        return {};
      }]>,
  ];
  let extraClassDeclaration = [{
    /// The kind's name: "linear" for cairn.kernel.linear.
    ::llvm::StringRef getKernelName() {
      return (*this)->getName().getStringRef().drop_front(
          ::llvm::StringRef("cairn.kernel.").size());
    }
  }];
  let verify = [{ return ::cairn::detail::verifyKernelOp($_op); }];
}

#endif // CAIRN_IR_CAIRNINTERFACES_TD
