//===- CairnAttrs.td - Attributes of cairn -----------------*- tablegen -*-===//
//
// Enums and attributes: precisions, argument roles, initializers and
// optimizers.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_IR_CAIRNATTRS_TD
#define CAIRN_IR_CAIRNATTRS_TD

include "ir/CairnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Cairn_Precision : I32EnumAttr<"Precision", "compute precision", [
    I32EnumAttrCase<"f16", 0>,
    I32EnumAttrCase<"bf16", 1>,
    I32EnumAttrCase<"f32", 2>,
  ]> {
  let cppNamespace = "::cairn";
  let genSpecializedAttr = 0;
}

def Cairn_Role : I32EnumAttr<"Role", "role of a function argument or result", [
    I32EnumAttrCase<"input", 0>,
    I32EnumAttrCase<"param", 1>,
    I32EnumAttrCase<"buffer", 2>,
    I32EnumAttrCase<"optimizer_state", 3>,
    I32EnumAttrCase<"gradient", 4>,
    I32EnumAttrCase<"output", 5>,
  ]> {
  let cppNamespace = "::cairn";
  let genSpecializedAttr = 0;
}

def Cairn_InitKind : I32EnumAttr<"InitKind", "parameter initializer", [
    I32EnumAttrCase<"zeros", 0>,
    I32EnumAttrCase<"ones", 1>,
    I32EnumAttrCase<"uniform", 2>,
    I32EnumAttrCase<"normal", 3>,
  ]> {
  let cppNamespace = "::cairn";
  let genSpecializedAttr = 0;
}

/// What a buffer of the planned step holds (`cairn.buffer`, `cairn.view`).
/// The first five live for the whole run, at one place in the arena; the
/// others live from the kernel that writes them first to the last kernel
/// that reads them (or one of their views).
def Cairn_BufferKind : I32EnumAttr<"BufferKind", "what a buffer holds", [
    I32EnumAttrCase<"input", 0>,      // fed by the runtime before a step
    I32EnumAttrCase<"param", 1>,      // state_dict parameter
    I32EnumAttrCase<"buffer", 2>,     // state_dict buffer (running statistics)
    I32EnumAttrCase<"optimizer", 3>,  // momentum buffers, Adam moments
    I32EnumAttrCase<"output", 4>,     // "loss", "output"
    I32EnumAttrCase<"grad", 5>,       // "grad.<param>": dies at its update
    I32EnumAttrCase<"activation", 6>, // a forward value only the forward reads
    I32EnumAttrCase<"saved", 7>,      // a forward value the backward reads
    I32EnumAttrCase<"temp", 8>,       // a backward or optimizer value, a copy
    I32EnumAttrCase<"workspace", 9>,  // one kernel's scratch memory
  ]> {
  let cppNamespace = "::cairn";
}

/// The step functions of a program (`cairn.step`).
def Cairn_StepKind : I32EnumAttr<"StepKind", "a step function", [
    I32EnumAttrCase<"train_step", 0>, // forward, loss, backward, update
    I32EnumAttrCase<"forward", 1>,    // inference
    I32EnumAttrCase<"eval_loss", 2>,  // the loss in eval mode, for test loss
  ]> {
  let cppNamespace = "::cairn";
}

//===----------------------------------------------------------------------===//
// Op attribute constraints
//===----------------------------------------------------------------------===//

/// I64Attr whose getter and builder use int64_t (upstream's use uint64_t).
def Cairn_I64Attr : TypedSignlessIntegerAttrBase<
    I64, "int64_t", "64-bit signless integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

/// F64Attr whose getter and builder use double (upstream's use APFloat).
def Cairn_F64Attr : FloatAttrBase<F64, "64-bit float attribute"> {
  let returnType = "double";
  let convertFromStorage = "$_self.getValueAsDouble()";
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

/// A double, printed in its shortest form that parses back to the same value
/// (`0.999`, `1.0e-08`).
def Cairn_DoubleParameter : AttrParameter<"double", "a 64-bit float"> {
  let parser = "::cairn::detail::parseDoubleParameter($_parser)";
  let printer = "::cairn::detail::printDoubleParameter($_printer, $_self)";
}

/// A bool, printed as `true` or `false`.
def Cairn_BoolParameter : AttrParameter<"bool", "a boolean"> {
  let parser = "::cairn::detail::parseBoolParameter($_parser)";
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
}

/// A bool that is false unless written, and printed only when true.
def Cairn_FalseByDefaultParameter
    : DefaultValuedParameter<"bool", "false", "a boolean, false by default"> {
  let parser = "::cairn::detail::parseBoolParameter($_parser)";
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Cairn_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Cairn_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Cairn_PrecisionAttr : EnumAttr<Cairn_Dialect, Cairn_Precision, "precision"> {
  let summary = "compute precision of an op: `#cairn.precision<bf16>`";
  let assemblyFormat = "`<` $value `>`";
}

def Cairn_RoleAttr : EnumAttr<Cairn_Dialect, Cairn_Role, "role"> {
  let summary = "role of a function argument or result: `#cairn.role<param>`";
  let assemblyFormat = "`<` $value `>`";
}

def Cairn_InitAttr : Cairn_Attr<"Init", "init"> {
  let summary = "initializer of a parameter: `#cairn.init<uniform, 0.0357>`";
  let description = [{
    `zeros` and `ones` ignore the scale; `uniform` draws from
    U(-scale, scale) and `normal` from N(0, scale^2). `zero_row = r` then
    zeroes row r (along the first dimension), as nn.Embedding does for its
    padding_idx; -1 (the default, not printed): none.

    ```mlir
    func.func @f(%w: tensor<10x784xf32> {cairn.init = #cairn.init<uniform, 0.0357>},
                 %e: tensor<10x12xf32> {cairn.init = #cairn.init<normal, 1.0, zero_row = 0>})
    ```
  }];
  let parameters = (ins EnumParameter<Cairn_InitKind>:$kind,
                        Cairn_DoubleParameter:$scale,
                        DefaultValuedParameter<"int64_t", "-1">:$zero_row);
  let assemblyFormat = "`<` $kind `,` $scale (`,` `zero_row` `=` $zero_row^)? `>`";
  let genVerifyDecl = 1;
  // Hand-written in CairnAttrs.cpp: LLVM cannot hash a double.
  let genStorageClass = 0;
}

def Cairn_SGDAttr : Cairn_Attr<"SGD", "sgd"> {
  let summary = "torch.optim.SGD settings";
  let description = [{
    ```mlir
    module attributes {cairn.optimizer = #cairn.sgd<lr = 0.1,
        momentum = 0.9, dampening = 0.0,
        weight_decay = 0.0005, nesterov = false>} {}
    ```
    Requires lr > 0, momentum >= 0, dampening >= 0, weight_decay >= 0; as in
    torch, nesterov needs momentum > 0 and dampening = 0.
  }];
  let parameters = (ins Cairn_DoubleParameter:$lr,
                        Cairn_DoubleParameter:$momentum,
                        Cairn_DoubleParameter:$dampening,
                        Cairn_DoubleParameter:$weight_decay,
                        Cairn_BoolParameter:$nesterov);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  // Hand-written in CairnAttrs.cpp: LLVM cannot hash a double.
  let genStorageClass = 0;
}

def Cairn_AdamAttr : Cairn_Attr<"Adam", "adam"> {
  let summary = "torch.optim.Adam and torch.optim.AdamW settings";
  let description = [{
    ```mlir
    module attributes {cairn.optimizer = #cairn.adam<lr = 0.001,
        beta1 = 0.9, beta2 = 0.999, eps = 1.0e-08,
        weight_decay = 0.0>} {}
    ```
    Requires lr > 0, 0 <= beta1, beta2 < 1, eps > 0, weight_decay >= 0.
    `decoupled_weight_decay = true` (printed only then) is AdamW: the decay
    scales the parameter instead of joining the gradient.
  }];
  let parameters = (ins Cairn_DoubleParameter:$lr,
                        Cairn_DoubleParameter:$beta1,
                        Cairn_DoubleParameter:$beta2,
                        Cairn_DoubleParameter:$eps,
                        Cairn_DoubleParameter:$weight_decay,
                        Cairn_FalseByDefaultParameter:$decoupled_weight_decay);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  // Hand-written in CairnAttrs.cpp: LLVM cannot hash a double.
  let genStorageClass = 0;
}

#endif // CAIRN_IR_CAIRNATTRS_TD
