//===- Value.h - Values the elaborator computes with ------------*- C++ -*-===//
//
// A model file mixes two worlds: compile-time values (sizes, flags, layers,
// tuples) that the elaborator evaluates, and tensors that become SSA values
// of the emitted IR. `EValue` holds either; `Layer` is one instantiated layer
// or module with its PyTorch name.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_FRONTEND_VALUE_H
#define CAIRN_FRONTEND_VALUE_H

#include "frontend/AST.h"
#include "ir/CairnAttrs.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cairn {

struct Layer;
using LayerPtr = std::shared_ptr<Layer>;

/// A value during elaboration.
struct EValue {
  enum class Kind {
    None,
    Int,
    Float,
    Bool,
    String,
    Tuple,   // (a, b) and [a, b]
    Tensor,  // an SSA value of the function being emitted
    Layer,   // a layer or module instance, or a list of them
    Builtin, // a builtin function or layer constructor, by name
    Method,  // `x.reshape`: a builtin bound to its receiver tensor
    Self,    // `self` inside a model's loss: the model's forward
  };

  Kind kind = Kind::None;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;             // String; Builtin and Method name
  std::vector<EValue> elems; // Tuple
  mlir::Value tensor;        // Tensor; Method receiver
  LayerPtr layer;            // Layer

  static EValue none() { return {}; }
  static EValue ofInt(int64_t v) {
    EValue r;
    r.kind = Kind::Int;
    r.i = v;
    return r;
  }
  static EValue ofFloat(double v) {
    EValue r;
    r.kind = Kind::Float;
    r.f = v;
    return r;
  }
  static EValue ofBool(bool v) {
    EValue r;
    r.kind = Kind::Bool;
    r.b = v;
    return r;
  }
  static EValue ofString(std::string v) {
    EValue r;
    r.kind = Kind::String;
    r.s = std::move(v);
    return r;
  }
  static EValue ofTuple(std::vector<EValue> v) {
    EValue r;
    r.kind = Kind::Tuple;
    r.elems = std::move(v);
    return r;
  }
  static EValue ofTensor(mlir::Value v) {
    EValue r;
    r.kind = Kind::Tensor;
    r.tensor = v;
    return r;
  }
  static EValue ofLayer(LayerPtr l) {
    EValue r;
    r.kind = Kind::Layer;
    r.layer = std::move(l);
    return r;
  }
  static EValue ofBuiltin(std::string name) {
    EValue r;
    r.kind = Kind::Builtin;
    r.s = std::move(name);
    return r;
  }

  bool isNumber() const { return kind == Kind::Int || kind == Kind::Float; }
  double asDouble() const { return kind == Kind::Int ? double(i) : f; }
};

/// What a value is, for messages: "int", "tensor [64, 784] f32", "layer 'fc1' (Linear)".
std::string describe(const EValue &value);

/// One parameter or buffer a layer owns.
struct TensorSlot {
  std::string name;             // local name: "weight", "running_mean"; "" for Parameter
  llvm::SmallVector<int64_t, 4> shape;
  bool isInteger = false;       // num_batches_tracked is i64
  Role role = Role::param;
  InitKind init = InitKind::zeros;
  double scale = 0;             // uniform bound or normal std
  int64_t zeroRow = -1;         // a row zeroed after the draw (padding_idx)
  int64_t index = -1;           // position in the model's state_dict
  ast::Loc loc;                 // where its layer is constructed (set with index)
};

/// An instantiated layer (Linear, Conv2d, ...), container (Sequential, a list
/// built with `layers[i] = ...`) or user module, named like PyTorch's modules.
struct Layer {
  std::string type;                       // "Linear", "Sequential", "list", or a module name
  const ast::ModuleDef *module = nullptr; // user modules
  ast::Loc loc;                           // where it was constructed
  std::string path;                       // "layer1.0.conv1"; set when registered
  bool registered = false;

  std::map<std::string, EValue> config;   // builtin layers: bound constructor arguments
  std::vector<TensorSlot> slots;          // own parameters then own buffers
  std::vector<std::pair<std::string, LayerPtr>> children; // in registration order

  // User modules: names bound by the body (constants and layers) and the
  // functions it defines.
  std::map<std::string, EValue> scope;
  const ast::FunctionStmt *forward = nullptr;
  const ast::FunctionStmt *loss = nullptr;

  bool isContainer() const { return type == "Sequential" || type == "list"; }
  std::string displayName() const { return path.empty() ? type : path; }
};

} // namespace cairn

#endif // CAIRN_FRONTEND_VALUE_H
