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

#endif // CAIRN_IR_CAIRNINTERFACES_TD
