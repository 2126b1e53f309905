//===- Elaborator.cpp - Modules, statements and expressions ---------------===//
//
// Runs the compile-time program of a model file and emits `@forward` and
// `@loss`. Builtin layers live in Layers.cpp, builtin functions in
// TensorFunctions.cpp.
//
//===----------------------------------------------------------------------===//

#include "frontend/ElaboratorImpl.h"
#include "frontend/Parser.h"
#include "ir/CairnDialect.h"
#include "ir/ShapeFunctions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <limits>

using namespace cairn;
using llvm::isa;
using llvm::StringRef;

namespace {
/// Nesting limits: real models stay far below them.
constexpr unsigned kMaxModuleDepth = 64;
constexpr unsigned kMaxCallDepth = 256;

/// Stamps every op created inside annotated regions with the regions' marks.
class AnnotationListener : public mlir::OpBuilder::Listener {
public:
  explicit AnnotationListener(FunctionState &state) : state(state) {}
  void notifyOperationInserted(mlir::Operation *op,
                               mlir::OpBuilder::InsertPoint) override {
    ++state.opCount;
    mlir::MLIRContext *ctx = op->getContext();
    auto i64 = mlir::IntegerType::get(ctx, 64);
    const Annotations &a = state.annotations;
    if (a.checkpoint)
      op->setAttr("cairn.checkpoint", mlir::IntegerAttr::get(i64, *a.checkpoint));
    if (a.device)
      op->setAttr("cairn.device", mlir::IntegerAttr::get(i64, *a.device));
    if (a.precision)
      op->setAttr("cairn.precision", PrecisionAttr::get(ctx, *a.precision));
  }
private:
  FunctionState &state;
};

std::string joinPath(StringRef prefix, StringRef name) {
  return prefix.empty() ? name.str() : (prefix + "." + name).str();
}

std::optional<mlir::Type> parseDType(StringRef name, mlir::MLIRContext *ctx) {
  mlir::Builder b(ctx);
  if (name == "f16") return b.getF16Type();
  if (name == "bf16") return b.getBF16Type();
  if (name == "f32") return b.getF32Type();
  if (name == "f64") return b.getF64Type();
  if (name == "i32") return b.getIntegerType(32);
  if (name == "i64") return b.getIntegerType(64);
  return std::nullopt;
}
} // namespace

std::string cairn::describe(const EValue &v) {
  switch (v.kind) {
  case EValue::Kind::None: return "None";
  case EValue::Kind::Int: return "int " + std::to_string(v.i);
  case EValue::Kind::Float: return "float " + formatNumber(v.f);
  case EValue::Kind::Bool: return v.b ? "bool true" : "bool false";
  case EValue::Kind::String: return "string \"" + v.s + "\"";
  case EValue::Kind::Tuple:
    return "tuple of " + std::to_string(v.elems.size()) +
           (v.elems.size() == 1 ? " item" : " items");
  case EValue::Kind::Tensor: {
    auto type = llvm::cast<mlir::RankedTensorType>(v.tensor.getType());
    std::string elem;
    llvm::raw_string_ostream os(elem);
    os << type.getElementType();
    return "tensor " + shapes::format(type.getShape()) + " " + elem;
  }
  case EValue::Kind::Layer:
    return "layer '" + v.layer->displayName() + "' (" + v.layer->type + ")";
  case EValue::Kind::Builtin: return "function '" + v.s + "'";
  case EValue::Kind::Method: return "method '" + v.s + "'";
  case EValue::Kind::Self: return "self";
  }
  return "value";
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

Elaborator::Elaborator(DiagnosticReporter &diag, const ElaborateOptions &options)
    : context(diag.getContext()), diag(diag), options(options) {
  context->getOrLoadDialect<CairnDialect>();
  context->getOrLoadDialect<mlir::func::FuncDialect>();
}

mlir::OwningOpRef<mlir::ModuleOp>
cairn::elaborateProgram(const ast::Program &program, DiagnosticReporter &diag,
                        const ElaborateOptions &options) {
  return Elaborator(diag, options).run(program);
}

mlir::OwningOpRef<mlir::ModuleOp>
cairn::compileModelSource(StringRef source, DiagnosticReporter &diag,
                          const ElaborateOptions &options) {
  std::unique_ptr<ast::Program> program = parseProgram(source, diag);
  if (diag.hadError())
    return nullptr;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      elaborateProgram(*program, diag, options);
  if (!module || diag.hadError())
    return nullptr;
  if (mlir::failed(mlir::verify(*module)))
    return nullptr;
  return module;
}

bool Elaborator::step(ast::Loc loc) {
  const uint64_t maxSteps = options.maxSteps;
  if (fn && fn->opCount > options.maxOps) {
    if (steps <= maxSteps) {
      steps = maxSteps + 1; // report once
      error(loc) << "model too large: a function has more than " << options.maxOps
                 << " operations";
    }
    return false;
  }
  if (++steps <= maxSteps)
    return true;
  if (steps == maxSteps + 1)
    error(loc) << "model too large to elaborate: more than " << maxSteps
               << " steps (a loop that runs too long?)";
  return false;
}

std::string cairn::formatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
}

mlir::OwningOpRef<mlir::ModuleOp> Elaborator::run(const ast::Program &program) {
  for (const auto &def : program.modules) {
    if (def->isModel) {
      if (model) {
        error(def->nameLoc) << "a file holds one model, but '" << def->name
                            << "' follows '" << model->name << "'";
        return nullptr;
      }
      model = def.get();
      continue;
    }
    if (isLayerConstructor(def->name) || isBuiltinFunction(def->name)) {
      error(def->nameLoc) << "module '" << def->name
                          << "' has the name of a builtin";
      return nullptr;
    }
    if (!moduleDefs.emplace(def->name, def.get()).second) {
      error(def->nameLoc) << "module '" << def->name << "' is defined twice";
      return nullptr;
    }
  }
  if (!model) {
    error(ast::Loc{1, 1}) << "no model in this file; expected 'model Name { ... }'";
    return nullptr;
  }

  mlir::OpBuilder builder(context);
  module = mlir::ModuleOp::create(diag.loc(model->loc));
  mlir::OwningOpRef<mlir::ModuleOp> owned(module);

  // Run the model's body: layers, constants, batch, inputs, optimizer.
  root = std::make_shared<Layer>();
  root->type = model->name;
  root->module = model;
  root->loc = model->loc;
  root->registered = true;
  Scope globalScope{&globals, nullptr, nullptr};
  Scope modelScope{&root->scope, &globalScope, root.get()};
  for (const ast::StmtPtr &stmt : model->body)
    if (!executeMember(*stmt, modelScope, *root, /*topLevel=*/true))
      return nullptr;

  if (!root->forward) {
    error(model->nameLoc) << "model '" << model->name
                          << "' has no forward(...) { ... }";
    return nullptr;
  }
  if (root->loss && !optimizer) {
    error(root->loss->getLoc()) << "model '" << model->name
                                << "' has a loss but no optimizer; add e.g. "
                                   "'optimizer SGD(lr=0.1)'";
    return nullptr;
  }
  if (optimizer && !root->loss) {
    error(optimizerLoc) << "an optimizer needs a loss(...) { ... } to minimise";
    return nullptr;
  }
  assignSlotIndices(*root);

  mlir::Builder b(context);
  module->setAttr("cairn.model", b.getStringAttr(model->name));
  if (batch)
    module->setAttr("cairn.batch", b.getI64IntegerAttr(*batch));
  if (optimizer)
    module->setAttr("cairn.optimizer", optimizer);

  if (!emitFunction(*root->forward, /*training=*/false, "forward"))
    return nullptr;
  if (root->loss && !emitFunction(*root->loss, /*training=*/true, "loss"))
    return nullptr;
  return owned;
}

//===----------------------------------------------------------------------===//
// Modules and layers
//===----------------------------------------------------------------------===//

Result Elaborator::instantiateModule(const ast::ModuleDef &def,
                                     std::vector<CallArg> &args, ast::Loc loc) {
  if (fn) {
    error(loc) << "module '" << def.name
               << "' must be created in a module body, not inside a function";
    return std::nullopt;
  }
  if (instantiationStack.size() >= kMaxModuleDepth) {
    auto d = error(loc);
    d << "modules nested more than " << kMaxModuleDepth << " deep: ";
    for (size_t i = 0; i < 4 && i < instantiationStack.size(); ++i)
      d << instantiationStack[i] << " -> ";
    d << "... (does '" << def.name << "' create itself?)";
    return std::nullopt;
  }

  // On the stack before defaults are evaluated: a default can create modules too.
  instantiationStack.push_back(def.name);
  llvm::scope_exit popStack([&] { instantiationStack.pop_back(); });

  auto layer = std::make_shared<Layer>();
  layer->type = def.name;
  layer->module = &def;
  layer->loc = loc;

  // Bind constructor arguments; defaults may use earlier parameters.
  Scope globalScope{&globals, nullptr, nullptr};
  Scope paramScope{&layer->scope, &globalScope, layer.get()};
  std::vector<bool> bound(def.params.size(), false);
  size_t positional = 0;
  for (CallArg &arg : args) {
    size_t index;
    if (arg.name.empty()) {
      index = positional++;
      if (index >= def.params.size()) {
        size_t given = llvm::count_if(args, [](const CallArg &a) { return a.name.empty(); });
        error(arg.loc) << "module '" << def.name << "' takes "
                       << def.params.size() << " argument"
                       << (def.params.size() == 1 ? "" : "s") << " but " << given
                       << (given == 1 ? " was" : " were") << " given";
        return std::nullopt;
      }
    } else {
      auto it = llvm::find_if(def.params, [&](const ast::Param &p) {
        return p.name == arg.name;
      });
      if (it == def.params.end()) {
        error(arg.loc) << "module '" << def.name << "' has no parameter '"
                       << arg.name << "'";
        return std::nullopt;
      }
      index = it - def.params.begin();
    }
    if (bound[index]) {
      error(arg.loc) << "parameter '" << def.params[index].name
                     << "' of module '" << def.name << "' given twice";
      return std::nullopt;
    }
    bound[index] = true;
    layer->scope[def.params[index].name] = arg.value;
  }
  for (size_t i = 0; i < def.params.size(); ++i) {
    const ast::Param &p = def.params[i];
    if (!bound[i]) {
      if (!p.defaultValue) {
        error(loc) << "module '" << def.name << "' needs argument '" << p.name
                   << "'";
        return std::nullopt;
      }
      Result v = evaluate(*p.defaultValue, paramScope);
      if (!v)
        return std::nullopt;
      layer->scope[p.name] = *v;
    }
    EValue &v = layer->scope[p.name];
    std::string what = "parameter '" + p.name + "' of module '" + def.name + "'";
    if (p.type == "int") {
      auto i = toInt(v, loc, what);
      if (!i) return std::nullopt;
      v = EValue::ofInt(*i);
    } else if (p.type == "float") {
      auto f = toFloat(v, loc, what);
      if (!f) return std::nullopt;
      v = EValue::ofFloat(*f);
    } else if (p.type == "bool") {
      if (!toBool(v, loc, what)) return std::nullopt;
    } else if (p.type == "str") {
      if (!toString(v, loc, what)) return std::nullopt;
    }
  }

  Scope bodyScope{&layer->scope, &globalScope, layer.get()};
  for (const ast::StmtPtr &stmt : def.body)
    if (!executeMember(*stmt, bodyScope, *layer, /*topLevel=*/true))
      return std::nullopt;
  return EValue::ofLayer(layer);
}

bool Elaborator::registerLayer(Layer &owner, const std::string &name,
                               const EValue &index, LayerPtr layer, ast::Loc loc) {
  if (layer->registered) {
    error(loc) << "layer '" << layer->displayName()
               << "' is already part of the model; create a new layer instead";
    return false;
  }
  if (index.kind == EValue::Kind::None) {
    auto it = owner.scope.find(name);
    if (it != owner.scope.end() && it->second.kind == EValue::Kind::Layer) {
      error(loc) << "'" << name << "' is already a layer of this module";
      return false;
    }
    layer->registered = true;
    layer->path = name; // provisional: the full path is set once the tree is built
    owner.children.emplace_back(name, layer);
    owner.scope[name] = EValue::ofLayer(layer);
    return true;
  }

  auto it = owner.scope.find(name);
  LayerPtr list;
  if (it == owner.scope.end()) {
    list = std::make_shared<Layer>();
    list->type = "list";
    list->loc = loc;
    list->registered = true;
    list->path = name;
    owner.children.emplace_back(name, list);
    owner.scope[name] = EValue::ofLayer(list);
  } else if (it->second.kind == EValue::Kind::Layer &&
             it->second.layer->type == "list") {
    list = it->second.layer;
  } else {
    error(loc) << "'" << name << "' is " << describe(it->second)
               << ", not a list of layers";
    return false;
  }
  auto i = toInt(index, loc, "layer list index");
  if (!i)
    return false;
  if (*i != static_cast<int64_t>(list->children.size())) {
    error(loc) << "expected " << name << "[" << list->children.size()
               << "] next (list items are added in order) but got " << name
               << "[" << *i << "]";
    return false;
  }
  layer->registered = true;
  list->children.emplace_back(std::to_string(*i), layer);
  return true;
}

void Elaborator::assignSlotIndices(Layer &layer) {
  // PyTorch's state_dict order: a module's own parameters and buffers, then
  // its children in registration order. `Parameter` children are own
  // parameters of the module that holds them.
  auto addSlot = [&](TensorSlot &slot, const std::string &name, ast::Loc loc) {
    slot.index = slots.size();
    slot.loc = loc;
    slots.push_back(&slot);
    slotNames.push_back(name);
  };
  std::vector<TensorSlot *> buffers;
  for (TensorSlot &slot : layer.slots) {
    if (slot.role == Role::buffer)
      buffers.push_back(&slot);
    else
      addSlot(slot, joinPath(layer.path, slot.name), layer.loc);
  }
  for (auto &[name, child] : layer.children) {
    if (child->type != "Parameter")
      continue;
    child->path = joinPath(layer.path, name);
    addSlot(child->slots.front(), child->path, child->loc);
  }
  for (TensorSlot *slot : buffers)
    addSlot(*slot, joinPath(layer.path, slot->name), layer.loc);
  for (auto &[name, child] : layer.children) {
    if (child->type == "Parameter")
      continue;
    child->path = joinPath(layer.path, name);
    assignSlotIndices(*child);
  }
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

bool Elaborator::executeMember(const ast::Stmt &stmt, Scope &scope, Layer &owner,
                               bool topLevel) {
  if (!step(stmt.getLoc()))
    return false;
  switch (stmt.getKind()) {
  case ast::Stmt::Kind::Assign: {
    const auto &assign = llvm::cast<ast::AssignStmt>(stmt);
    Result value = evaluate(*assign.value, scope);
    if (!value)
      return false;
    EValue index;
    if (assign.index) {
      Result i = evaluate(*assign.index, scope);
      if (!i)
        return false;
      index = *i;
      if (value->kind != EValue::Kind::Layer) {
        error(assign.getLoc()) << "only layers can be assigned to '"
                               << assign.target << "[...]' but got "
                               << describe(*value);
        return false;
      }
    }
    if (value->kind == EValue::Kind::Layer && value->layer->type != "list")
      return registerLayer(owner, assign.target, index, value->layer,
                           assign.getLoc());
    auto it = owner.scope.find(assign.target);
    if (it != owner.scope.end() && it->second.kind == EValue::Kind::Layer) {
      error(assign.getLoc()) << "'" << assign.target
                             << "' is already a layer of this module";
      return false;
    }
    if (value->kind == EValue::Kind::Layer) {
      error(assign.getLoc()) << "a list of layers cannot be assigned to another name";
      return false;
    }
    owner.scope[assign.target] = *value;
    return true;
  }
  case ast::Stmt::Kind::ExprStmt: {
    const auto &e = llvm::cast<ast::ExprStmt>(stmt);
    return evaluate(*e.expr, scope).has_value();
  }
  case ast::Stmt::Kind::If: {
    const auto &s = llvm::cast<ast::IfStmt>(stmt);
    Result cond = evaluate(*s.cond, scope);
    if (!cond)
      return false;
    auto taken = toBool(*cond, s.cond->getLoc(), "condition");
    if (!taken)
      return false;
    for (const ast::StmtPtr &inner : *taken ? s.thenBody : s.elseBody)
      if (!executeMember(*inner, scope, owner, false))
        return false;
    return true;
  }
  case ast::Stmt::Kind::For: {
    const auto &s = llvm::cast<ast::ForStmt>(stmt);
    auto range = evaluateRange(s, scope);
    if (!range)
      return false;
    for (int64_t i = range->first; i < range->second; ++i) {
      if (!step(s.getLoc()))
        return false;
      owner.scope[s.var] = EValue::ofInt(i);
      for (const ast::StmtPtr &inner : s.body)
        if (!executeMember(*inner, scope, owner, false))
          return false;
    }
    return true;
  }
  case ast::Stmt::Kind::Function: {
    const auto &f = llvm::cast<ast::FunctionStmt>(stmt);
    if (!topLevel) {
      error(f.getLoc()) << "'" << f.name
                        << "' must be defined directly in the module body";
      return false;
    }
    const ast::FunctionStmt *&slot = f.name == "loss" ? owner.loss : owner.forward;
    if (slot) {
      error(f.getLoc()) << "'" << f.name << "' is defined twice";
      return false;
    }
    if (f.name == "loss" && &owner != root.get()) {
      error(f.getLoc()) << "'loss' is only allowed in a model";
      return false;
    }
    slot = &f;
    return true;
  }
  case ast::Stmt::Kind::Batch: {
    const auto &s = llvm::cast<ast::BatchStmt>(stmt);
    if (batch) {
      error(s.getLoc()) << "the batch dimension is declared twice";
      return false;
    }
    Result v = evaluate(*s.value, scope);
    if (!v) return false;
    auto n = toInt(*v, s.value->getLoc(), "batch size");
    if (!n) return false;
    if (*n < 1) {
      error(s.value->getLoc()) << "expected a batch size of at least 1 but got " << *n;
      return false;
    }
    batch = options.batch.value_or(*n);
    owner.scope[s.name] = EValue::ofInt(*batch);
    return true;
  }
  case ast::Stmt::Kind::Input: {
    const auto &s = llvm::cast<ast::InputStmt>(stmt);
    std::optional<mlir::Type> elementType = parseDType(s.dtype, context);
    if (!elementType) {
      error(s.dtypeLoc) << "unknown dtype '" << s.dtype
                        << "'; expected f16, bf16, f32, f64, i32 or i64";
      return false;
    }
    for (const Input &in : inputs)
      if (in.name == s.name) {
        error(s.getLoc()) << "input '" << s.name << "' is declared twice";
        return false;
      }
    llvm::SmallVector<int64_t, 4> dims;
    for (const ast::ExprPtr &d : s.dims) {
      Result v = evaluate(*d, scope);
      if (!v) return false;
      auto n = toInt(*v, d->getLoc(), "dimension");
      if (!n) return false;
      if (*n < 1) {
        error(d->getLoc()) << "expected a dimension of at least 1 but got " << *n;
        return false;
      }
      dims.push_back(*n);
    }
    std::string why;
    if (!shapes::numElements(dims, why)) {
      error(s.getLoc()) << "input '" << s.name << "': " << why;
      return false;
    }
    inputs.push_back({s.name, s.getLoc(),
                      mlir::RankedTensorType::get(dims, *elementType)});
    return true;
  }
  case ast::Stmt::Kind::Optimizer: {
    const auto &s = llvm::cast<ast::OptimizerStmt>(stmt);
    if (optimizer) {
      error(s.getLoc()) << "the optimizer is declared twice";
      return false;
    }
    const auto *callExpr = llvm::dyn_cast<ast::CallExpr>(s.call.get());
    const auto *callee =
        callExpr ? llvm::dyn_cast<ast::NameExpr>(callExpr->callee.get()) : nullptr;
    if (!callee || (callee->name != "SGD" && callee->name != "Adam")) {
      error(s.call->getLoc()) << "expected an optimizer: SGD(...) or Adam(...)";
      return false;
    }
    std::vector<CallArg> args;
    for (const ast::Argument &a : callExpr->args) {
      Result v = evaluate(*a.value, scope);
      if (!v) return false;
      args.push_back({a.loc, a.name, *v});
    }
    std::map<std::string, EValue> bound;
    ast::Loc loc = s.call->getLoc();
    auto emitError = [&] { return error(loc); };
    optimizerLoc = s.getLoc();
    if (callee->name == "SGD") {
      ParamDecl params[] = {req("lr"), opt("momentum", EValue::ofFloat(0)),
                            opt("dampening", EValue::ofFloat(0)),
                            opt("weight_decay", EValue::ofFloat(0)),
                            opt("nesterov", EValue::ofBool(false))};
      if (!bindArgs(args, params, bound, "SGD", loc)) return false;
      auto lr = toFloat(bound["lr"], loc, "lr");
      auto momentum = toFloat(bound["momentum"], loc, "momentum");
      auto dampening = toFloat(bound["dampening"], loc, "dampening");
      auto wd = toFloat(bound["weight_decay"], loc, "weight_decay");
      auto nesterov = toBool(bound["nesterov"], loc, "nesterov");
      if (!lr || !momentum || !dampening || !wd || !nesterov) return false;
      optimizer = SGDAttr::getChecked(emitError, context, *lr, *momentum,
                                      *dampening, *wd, *nesterov);
    } else {
      ParamDecl params[] = {
          opt("lr", EValue::ofFloat(1e-3)),
          opt("betas", EValue::ofTuple({EValue::ofFloat(0.9), EValue::ofFloat(0.999)})),
          opt("eps", EValue::ofFloat(1e-8)), opt("weight_decay", EValue::ofFloat(0))};
      if (!bindArgs(args, params, bound, "Adam", loc)) return false;
      auto lr = toFloat(bound["lr"], loc, "lr");
      auto eps = toFloat(bound["eps"], loc, "eps");
      auto wd = toFloat(bound["weight_decay"], loc, "weight_decay");
      const EValue &betas = bound["betas"];
      if (betas.kind != EValue::Kind::Tuple || betas.elems.size() != 2) {
        error(loc) << "expected betas to be a pair like (0.9, 0.999) but got "
                   << describe(betas);
        return false;
      }
      auto beta1 = toFloat(betas.elems[0], loc, "betas[0]");
      auto beta2 = toFloat(betas.elems[1], loc, "betas[1]");
      if (!lr || !eps || !wd || !beta1 || !beta2) return false;
      optimizer = AdamAttr::getChecked(emitError, context, *lr, *beta1, *beta2,
                                       *eps, *wd);
    }
    return optimizer != nullptr;
  }
  case ast::Stmt::Kind::Return:
  case ast::Stmt::Kind::Annotated:
    error(stmt.getLoc()) << "this statement is only allowed inside forward or loss";
    return false;
  }
  return false;
}

bool Elaborator::execute(const ast::Block &block, Scope &scope,
                         std::optional<std::vector<EValue>> &returned) {
  for (const ast::StmtPtr &stmt : block) {
    if (!executeStmt(*stmt, scope, returned))
      return false;
    if (returned)
      return true;
  }
  return true;
}

bool Elaborator::executeStmt(const ast::Stmt &stmt, Scope &scope,
                             std::optional<std::vector<EValue>> &returned) {
  if (!step(stmt.getLoc()))
    return false;
  switch (stmt.getKind()) {
  case ast::Stmt::Kind::Assign: {
    const auto &assign = llvm::cast<ast::AssignStmt>(stmt);
    if (assign.index) {
      error(assign.getLoc()) << "indexed assignment is only allowed in a module "
                                "body, to build a list of layers";
      return false;
    }
    Result value = evaluate(*assign.value, scope);
    if (!value)
      return false;
    (*scope.vars)[assign.target] = *value;
    return true;
  }
  case ast::Stmt::Kind::ExprStmt: {
    const auto &e = llvm::cast<ast::ExprStmt>(stmt);
    return evaluate(*e.expr, scope).has_value();
  }
  case ast::Stmt::Kind::Return: {
    const auto &r = llvm::cast<ast::ReturnStmt>(stmt);
    std::vector<EValue> values;
    for (const ast::ExprPtr &e : r.values) {
      Result v = evaluate(*e, scope);
      if (!v)
        return false;
      values.push_back(*v);
    }
    returned = std::move(values);
    lastReturnLoc = r.getLoc();
    return true;
  }
  case ast::Stmt::Kind::If: {
    const auto &s = llvm::cast<ast::IfStmt>(stmt);
    Result cond = evaluate(*s.cond, scope);
    if (!cond)
      return false;
    if (cond->kind == EValue::Kind::Tensor) {
      error(s.cond->getLoc()) << "a condition must be known at compile time, "
                                 "but this one is a tensor";
      return false;
    }
    auto taken = toBool(*cond, s.cond->getLoc(), "condition");
    if (!taken)
      return false;
    return execute(*taken ? s.thenBody : s.elseBody, scope, returned);
  }
  case ast::Stmt::Kind::For: {
    const auto &s = llvm::cast<ast::ForStmt>(stmt);
    auto range = evaluateRange(s, scope);
    if (!range)
      return false;
    for (int64_t i = range->first; i < range->second; ++i) {
      if (!step(s.getLoc()))
        return false;
      (*scope.vars)[s.var] = EValue::ofInt(i);
      if (!execute(s.body, scope, returned))
        return false;
      if (returned)
        return true;
    }
    return true;
  }
  case ast::Stmt::Kind::Annotated: {
    const auto &s = llvm::cast<ast::AnnotatedStmt>(stmt);
    Annotations saved = fn->annotations;
    switch (s.annotation) {
    case ast::Annotation::Checkpoint:
      // A nested checkpoint belongs to the region around it.
      if (!fn->annotations.checkpoint)
        fn->annotations.checkpoint = nextCheckpointId++;
      break;
    case ast::Annotation::Device: {
      Result v = evaluate(*s.device, scope);
      if (!v) return false;
      auto d = toInt(*v, s.argLoc, "device");
      if (!d) return false;
      if (*d < 0 || *d > 1023) {
        error(s.argLoc) << "expected a device number in [0, 1023] but got " << *d;
        return false;
      }
      fn->annotations.device = *d;
      break;
    }
    case ast::Annotation::Precision: {
      std::optional<Precision> p = symbolizePrecision(s.precision);
      if (!p) {
        error(s.argLoc) << "unknown precision '" << s.precision
                        << "'; expected f16, bf16 or f32";
        return false;
      }
      fn->annotations.precision = *p;
      break;
    }
    }
    bool ok = execute(s.body, scope, returned);
    fn->annotations = saved;
    return ok;
  }
  case ast::Stmt::Kind::Function:
  case ast::Stmt::Kind::Batch:
  case ast::Stmt::Kind::Input:
  case ast::Stmt::Kind::Optimizer:
    error(stmt.getLoc()) << "this statement is not allowed inside a function";
    return false;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

mlir::func::FuncOp Elaborator::emitFunction(const ast::FunctionStmt &def,
                                            bool training, StringRef name) {
  mlir::OpBuilder builder(context);
  llvm::SmallVector<mlir::Type> argTypes;
  std::vector<const Input *> argInputs;
  for (const ast::Param &p : def.params) {
    auto it = llvm::find_if(inputs, [&](const Input &in) { return in.name == p.name; });
    if (it == inputs.end()) {
      auto d = error(p.loc);
      d << "'" << p.name << "' is not an input of model '" << model->name << "'";
      if (!inputs.empty()) {
        d << "; inputs are ";
        llvm::interleave(inputs, d, [&](const Input &in) { d << in.name; }, ", ");
      }
      return nullptr;
    }
    argTypes.push_back(it->type);
    argInputs.push_back(&*it);
  }
  size_t firstSlot = argTypes.size();
  for (const TensorSlot *slot : slots)
    argTypes.push_back(mlir::RankedTensorType::get(
        slot->shape, slot->isInteger ? builder.getIntegerType(64) : f32Type()));

  auto func = mlir::func::FuncOp::create(
      diag.loc(def.getLoc()), name, builder.getFunctionType(argTypes, {}));
  module.push_back(func);
  mlir::Block *entry = func.addEntryBlock();
  for (size_t i = 0; i < argInputs.size(); ++i) {
    entry->getArgument(i).setLoc(diag.loc(argInputs[i]->loc));
    func.setArgAttr(i, "cairn.name", builder.getStringAttr(argInputs[i]->name));
    func.setArgAttr(i, "cairn.role", RoleAttr::get(context, Role::input));
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    unsigned arg = firstSlot + i;
    entry->getArgument(arg).setLoc(diag.loc(slots[i]->loc));
    func.setArgAttr(arg, "cairn.name", builder.getStringAttr(slotNames[i]));
    func.setArgAttr(arg, "cairn.role", RoleAttr::get(context, slots[i]->role));
    func.setArgAttr(arg, "cairn.init",
                    InitAttr::get(context, slots[i]->init, slots[i]->scale));
  }

  builder.setInsertionPointToStart(entry);
  FunctionState state{&builder, training, {}, {}, 0, 0};
  for (size_t i = 0; i < slots.size(); ++i)
    state.slotValues.push_back(entry->getArgument(firstSlot + i));
  AnnotationListener listener(state);
  builder.setListener(&listener);

  std::map<std::string, EValue> locals;
  for (size_t i = 0; i < argInputs.size(); ++i)
    locals[def.params[i].name] = EValue::ofTensor(entry->getArgument(i));
  if (name == "loss") {
    EValue self;
    self.kind = EValue::Kind::Self;
    locals["self"] = self;
  }
  Scope globalScope{&globals, nullptr, nullptr};
  Scope modelScope{&root->scope, &globalScope, root.get()};
  Scope scope{&locals, &modelScope, root.get()};

  fn = &state;
  currentLayerPath.clear();
  std::optional<std::vector<EValue>> returned;
  bool ok = execute(def.body, scope, returned);
  fn = nullptr;
  if (!ok)
    return nullptr;
  if (!returned || returned->empty()) {
    error(def.getLoc()) << "'" << name << "' must return a value";
    return nullptr;
  }
  llvm::SmallVector<mlir::Value> results;
  for (const EValue &v : *returned) {
    if (v.kind != EValue::Kind::Tensor) {
      error(lastReturnLoc) << "'" << name << "' must return tensors but returns "
                           << describe(v);
      return nullptr;
    }
    results.push_back(v.tensor);
  }
  if (name == "loss") {
    auto type = llvm::cast<mlir::RankedTensorType>(results.front().getType());
    if (results.size() != 1 || type.getRank() != 0 ||
        !llvm::isa<mlir::FloatType>(type.getElementType())) {
      error(lastReturnLoc) << "'loss' must return one floating-point scalar but returns "
                          << describe(returned->front())
                          << (results.size() > 1 ? " and more" : "");
      return nullptr;
    }
  }
  builder.setListener(nullptr);
  mlir::func::ReturnOp::create(builder, diag.loc(def.getLoc()), results);
  llvm::SmallVector<mlir::Type> resultTypes;
  for (mlir::Value v : results)
    resultTypes.push_back(v.getType());
  func.setFunctionType(builder.getFunctionType(argTypes, resultTypes));
  return func;
}

Result Elaborator::callFunction(Layer &owner, const ast::FunctionStmt &def,
                                std::vector<CallArg> &args, ast::Loc loc) {
  if (!step(loc))
    return std::nullopt;
  if (fn->callDepth >= kMaxCallDepth) {
    error(loc) << "calls nested more than " << kMaxCallDepth << " deep";
    return std::nullopt;
  }
  std::map<std::string, EValue> locals;
  std::vector<bool> bound(def.params.size(), false);
  size_t positional = 0;
  for (CallArg &arg : args) {
    size_t index;
    if (arg.name.empty()) {
      index = positional++;
    } else {
      auto it = llvm::find_if(def.params, [&](const ast::Param &p) { return p.name == arg.name; });
      index = it == def.params.end() ? def.params.size() : it - def.params.begin();
      if (index == def.params.size()) {
        error(arg.loc) << "'" << owner.displayName() << "' has no forward argument '"
                       << arg.name << "'";
        return std::nullopt;
      }
    }
    if (index >= def.params.size()) {
      error(loc) << "'" << owner.displayName() << "' (" << owner.type
                 << ") takes " << def.params.size() << " argument"
                 << (def.params.size() == 1 ? "" : "s") << " but "
                 << args.size() << " were given";
      return std::nullopt;
    }
    if (bound[index]) {
      error(arg.loc) << "argument '" << def.params[index].name << "' given twice";
      return std::nullopt;
    }
    bound[index] = true;
    locals[def.params[index].name] = arg.value;
  }
  for (size_t i = 0; i < def.params.size(); ++i)
    if (!bound[i]) {
      error(loc) << "'" << owner.displayName() << "' (" << owner.type
                 << ") needs argument '" << def.params[i].name << "'";
      return std::nullopt;
    }

  Scope globalScope{&globals, nullptr, nullptr};
  Scope ownerScope{&owner.scope, &globalScope, &owner};
  Scope scope{&locals, &ownerScope, &owner};
  std::string savedPath = currentLayerPath;
  currentLayerPath = owner.path;
  ++fn->callDepth;
  std::optional<std::vector<EValue>> returned;
  bool ok = execute(def.body, scope, returned);
  --fn->callDepth;
  currentLayerPath = savedPath;
  if (!ok)
    return std::nullopt;
  if (!returned || returned->empty()) {
    error(def.getLoc()) << "forward of '" << owner.type << "' must return a value";
    return std::nullopt;
  }
  if (returned->size() == 1)
    return returned->front();
  return EValue::ofTuple(std::move(*returned));
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Result Elaborator::lookup(const std::string &name, ast::Loc loc,
                          const Scope &scope) {
  for (const Scope *s = &scope; s; s = s->parent) {
    auto it = s->vars->find(name);
    if (it == s->vars->end())
      continue;
    return readParameter(it->second, loc);
  }
  if (moduleDefs.count(name) || isLayerConstructor(name) || isBuiltinFunction(name))
    return EValue::ofBuiltin(name);
  if (name == "self") {
    error(loc) << "'self' is only available in a model's loss, to call its forward";
    return std::nullopt;
  }

  // Suggest the closest known name.
  std::string best;
  unsigned bestDistance = 3;
  auto consider = [&](StringRef candidate) {
    unsigned d = StringRef(name).edit_distance(candidate, true, bestDistance);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate.str();
    }
  };
  for (const Scope *s = &scope; s; s = s->parent)
    for (const auto &entry : *s->vars)
      consider(entry.first);
  for (const auto &entry : moduleDefs)
    consider(entry.first);
  forEachBuiltinName(consider);
  auto d = error(loc);
  d << "unknown name '" << name << "'";
  if (!best.empty())
    d << "; did you mean '" << best << "'?";
  return std::nullopt;
}

Result Elaborator::readParameter(const EValue &v, ast::Loc loc) {
  if (v.kind != EValue::Kind::Layer || v.layer->type != "Parameter" || !fn)
    return v;
  const TensorSlot &slot = v.layer->slots.front();
  if (slot.index < 0) {
    error(loc) << "this Parameter is not part of the model; assign it to a "
                  "name in a module body before using it";
    return std::nullopt;
  }
  return EValue::ofTensor(fn->slotValues[slot.index]);
}

std::optional<std::pair<int64_t, int64_t>>
Elaborator::evaluateRange(const ast::ForStmt &s, const Scope &scope) {
  int64_t start = 0;
  if (s.start) {
    Result v = evaluate(*s.start, scope);
    if (!v)
      return std::nullopt;
    auto i = toInt(*v, s.start->getLoc(), "range start");
    if (!i)
      return std::nullopt;
    start = *i;
  }
  Result v = evaluate(*s.stop, scope);
  if (!v)
    return std::nullopt;
  auto stop = toInt(*v, s.stop->getLoc(), "range stop");
  if (!stop)
    return std::nullopt;
  return std::make_pair(start, *stop);
}

Result Elaborator::evaluate(const ast::Expr &expr, const Scope &scope) {
  if (!step(expr.getLoc()))
    return std::nullopt;
  switch (expr.getKind()) {
  case ast::Expr::Kind::Int:
    return EValue::ofInt(llvm::cast<ast::IntExpr>(expr).value);
  case ast::Expr::Kind::Float:
    return EValue::ofFloat(llvm::cast<ast::FloatExpr>(expr).value);
  case ast::Expr::Kind::Bool:
    return EValue::ofBool(llvm::cast<ast::BoolExpr>(expr).value);
  case ast::Expr::Kind::String:
    return EValue::ofString(llvm::cast<ast::StringExpr>(expr).value);
  case ast::Expr::Kind::None:
    return EValue::none();
  case ast::Expr::Kind::Name:
    return lookup(llvm::cast<ast::NameExpr>(expr).name, expr.getLoc(), scope);
  case ast::Expr::Kind::Tuple: {
    std::vector<EValue> elems;
    for (const ast::ExprPtr &e : llvm::cast<ast::TupleExpr>(expr).elements) {
      Result v = evaluate(*e, scope);
      if (!v)
        return std::nullopt;
      elems.push_back(*v);
    }
    return EValue::ofTuple(std::move(elems));
  }
  case ast::Expr::Kind::Unary:
    return evaluateUnary(llvm::cast<ast::UnaryExpr>(expr), scope);
  case ast::Expr::Kind::Binary: {
    const auto &b = llvm::cast<ast::BinaryExpr>(expr);
    Result lhs = evaluate(*b.lhs, scope);
    if (!lhs)
      return std::nullopt;
    if (b.op == ast::BinaryOp::And || b.op == ast::BinaryOp::Or) {
      auto l = toBool(*lhs, b.lhs->getLoc(), "operand of 'and'/'or'");
      if (!l)
        return std::nullopt;
      if (*l == (b.op == ast::BinaryOp::Or))
        return EValue::ofBool(*l);
      Result rhs = evaluate(*b.rhs, scope);
      if (!rhs)
        return std::nullopt;
      auto r = toBool(*rhs, b.rhs->getLoc(), "operand of 'and'/'or'");
      if (!r)
        return std::nullopt;
      return EValue::ofBool(*r);
    }
    Result rhs = evaluate(*b.rhs, scope);
    if (!rhs)
      return std::nullopt;
    if (lhs->kind == EValue::Kind::Tensor || rhs->kind == EValue::Kind::Tensor)
      return applyBinary(b.op, *lhs, *rhs, b.getLoc());
    return compileTimeBinary(b.op, *lhs, *rhs, b.getLoc());
  }
  case ast::Expr::Kind::Call:
    return evaluateCall(llvm::cast<ast::CallExpr>(expr), scope);
  case ast::Expr::Kind::Index:
    return evaluateIndex(llvm::cast<ast::IndexExpr>(expr), scope);
  case ast::Expr::Kind::Member:
    return evaluateMember(llvm::cast<ast::MemberExpr>(expr), scope);
  }
  return std::nullopt;
}

Result Elaborator::evaluateUnary(const ast::UnaryExpr &expr, const Scope &scope) {
  Result v = evaluate(*expr.operand, scope);
  if (!v)
    return std::nullopt;
  switch (expr.op) {
  case ast::UnaryOp::Not: {
    auto b = toBool(*v, expr.operand->getLoc(), "operand of 'not'");
    if (!b)
      return std::nullopt;
    return EValue::ofBool(!*b);
  }
  case ast::UnaryOp::Plus:
    if (v->isNumber() || v->kind == EValue::Kind::Tensor)
      return v;
    break;
  case ast::UnaryOp::Neg:
    if (v->kind == EValue::Kind::Int) {
      if (v->i == std::numeric_limits<int64_t>::min()) {
        error(expr.getLoc()) << "integer overflow in '-'";
        return std::nullopt;
      }
      return EValue::ofInt(-v->i);
    }
    if (v->kind == EValue::Kind::Float)
      return EValue::ofFloat(-v->f);
    if (v->kind == EValue::Kind::Tensor)
      return applyBinary(ast::BinaryOp::Mul, EValue::ofFloat(-1.0), *v, expr.getLoc());
    break;
  }
  error(expr.getLoc()) << "unary operator does not apply to " << describe(*v);
  return std::nullopt;
}

Result Elaborator::compileTimeBinary(ast::BinaryOp op, const EValue &lhs,
                                     const EValue &rhs, ast::Loc loc) {
  using Op = ast::BinaryOp;
  auto bad = [&]() -> Result {
    error(loc) << "operator does not apply to " << describe(lhs) << " and "
               << describe(rhs);
    return std::nullopt;
  };
  // Equality works on everything comparable.
  if (op == Op::Eq || op == Op::Ne) {
    bool equal;
    if (lhs.isNumber() && rhs.isNumber())
      equal = lhs.kind == EValue::Kind::Int && rhs.kind == EValue::Kind::Int
                  ? lhs.i == rhs.i
                  : lhs.asDouble() == rhs.asDouble();
    else if (lhs.kind == EValue::Kind::Bool && rhs.kind == EValue::Kind::Bool)
      equal = lhs.b == rhs.b;
    else if (lhs.kind == EValue::Kind::String && rhs.kind == EValue::Kind::String)
      equal = lhs.s == rhs.s;
    else if (lhs.kind == EValue::Kind::None || rhs.kind == EValue::Kind::None)
      equal = lhs.kind == rhs.kind;
    else
      return bad();
    return EValue::ofBool(equal == (op == Op::Eq));
  }
  if (op == Op::Add && lhs.kind == EValue::Kind::Tuple && rhs.kind == EValue::Kind::Tuple) {
    std::vector<EValue> elems = lhs.elems;
    elems.insert(elems.end(), rhs.elems.begin(), rhs.elems.end());
    return EValue::ofTuple(std::move(elems));
  }
  if (op == Op::Add && lhs.kind == EValue::Kind::String && rhs.kind == EValue::Kind::String)
    return EValue::ofString(lhs.s + rhs.s);
  if (!lhs.isNumber() || !rhs.isNumber())
    return bad();

  if (lhs.kind == EValue::Kind::Int && rhs.kind == EValue::Kind::Int) {
    int64_t a = lhs.i, b = rhs.i, r = 0;
    bool overflow = false;
    switch (op) {
    case Op::Add: overflow = __builtin_add_overflow(a, b, &r); break;
    case Op::Sub: overflow = __builtin_sub_overflow(a, b, &r); break;
    case Op::Mul: overflow = __builtin_mul_overflow(a, b, &r); break;
    case Op::FloorDiv:
    case Op::Mod:
      if (b == 0) {
        error(loc) << "division by zero";
        return std::nullopt;
      }
      if (a == std::numeric_limits<int64_t>::min() && b == -1) {
        overflow = true;
        break;
      }
      // Python's floor semantics.
      r = op == Op::FloorDiv ? a / b : a % b;
      if (op == Op::FloorDiv && (a % b != 0) && ((a < 0) != (b < 0)))
        --r;
      if (op == Op::Mod && r != 0 && ((r < 0) != (b < 0)))
        r += b;
      break;
    case Op::Pow: {
      if (b < 0)
        return EValue::ofFloat(std::pow(double(a), double(b)));
      r = 1;
      for (int64_t i = 0; i < b && !overflow; ++i) {
        overflow = __builtin_mul_overflow(r, a, &r);
        if (r == 0 || r == 1) break; // stays put; avoids long loops
      }
      if (a == -1) r = (b % 2) ? -1 : 1;
      break;
    }
    case Op::Lt: return EValue::ofBool(a < b);
    case Op::Le: return EValue::ofBool(a <= b);
    case Op::Gt: return EValue::ofBool(a > b);
    case Op::Ge: return EValue::ofBool(a >= b);
    case Op::Div:
      if (b == 0) {
        error(loc) << "division by zero";
        return std::nullopt;
      }
      return EValue::ofFloat(double(a) / double(b));
    default:
      return bad();
    }
    if (overflow) {
      error(loc) << "integer overflow in compile-time arithmetic";
      return std::nullopt;
    }
    return EValue::ofInt(r);
  }

  double a = lhs.asDouble(), b = rhs.asDouble();
  switch (op) {
  case Op::Add: return EValue::ofFloat(a + b);
  case Op::Sub: return EValue::ofFloat(a - b);
  case Op::Mul: return EValue::ofFloat(a * b);
  case Op::Div:
    if (b == 0) {
      error(loc) << "division by zero";
      return std::nullopt;
    }
    return EValue::ofFloat(a / b);
  case Op::FloorDiv:
  case Op::Mod:
    if (b == 0) {
      error(loc) << "division by zero";
      return std::nullopt;
    }
    return EValue::ofFloat(op == Op::FloorDiv ? std::floor(a / b)
                                              : a - b * std::floor(a / b));
  case Op::Pow: return EValue::ofFloat(std::pow(a, b));
  case Op::Lt: return EValue::ofBool(a < b);
  case Op::Le: return EValue::ofBool(a <= b);
  case Op::Gt: return EValue::ofBool(a > b);
  case Op::Ge: return EValue::ofBool(a >= b);
  default: return bad();
  }
}

Result Elaborator::evaluateCall(const ast::CallExpr &expr, const Scope &scope) {
  Result callee = evaluate(*expr.callee, scope);
  if (!callee)
    return std::nullopt;
  std::vector<CallArg> args;
  for (const ast::Argument &a : expr.args) {
    Result v = evaluate(*a.value, scope);
    if (!v)
      return std::nullopt;
    args.push_back({a.loc, a.name, *v});
  }
  return call(*callee, args, expr.getLoc(), scope);
}

Result Elaborator::call(const EValue &callee, std::vector<CallArg> &args,
                        ast::Loc loc, const Scope &scope) {
  switch (callee.kind) {
  case EValue::Kind::Builtin: {
    auto def = moduleDefs.find(callee.s);
    if (def != moduleDefs.end())
      return instantiateModule(*def->second, args, loc);
    if (isLayerConstructor(callee.s))
      return constructLayer(callee.s, args, loc);
    return callBuiltin(callee.s, args, loc, currentLayerPath);
  }
  case EValue::Kind::Method: {
    args.insert(args.begin(), CallArg{loc, "", EValue::ofTensor(callee.tensor)});
    return callBuiltin(callee.s, args, loc, currentLayerPath);
  }
  case EValue::Kind::Layer:
    if (!fn) {
      error(loc) << "layer '" << callee.layer->displayName()
                 << "' can only be called inside forward or loss";
      return std::nullopt;
    }
    return callLayer(*callee.layer, args, loc);
  case EValue::Kind::Self:
    return callFunction(*root, *root->forward, args, loc);
  default:
    error(loc) << describe(callee) << " is not callable";
    return std::nullopt;
  }
  (void)scope;
}

Result Elaborator::evaluateMember(const ast::MemberExpr &expr, const Scope &scope) {
  Result base = evaluate(*expr.base, scope);
  if (!base)
    return std::nullopt;
  if (base->kind == EValue::Kind::Tensor) {
    if (expr.member == "shape") {
      std::vector<EValue> dims;
      for (int64_t d : shapeOf(base->tensor))
        dims.push_back(EValue::ofInt(d));
      return EValue::ofTuple(std::move(dims));
    }
    if (isTensorMethod(expr.member)) {
      EValue m;
      m.kind = EValue::Kind::Method;
      m.s = expr.member;
      m.tensor = base->tensor;
      return m;
    }
    error(expr.getLoc()) << "tensors have no attribute '" << expr.member << "'";
    return std::nullopt;
  }
  if (base->kind == EValue::Kind::Layer) {
    Layer &layer = *base->layer;
    for (const TensorSlot &slot : layer.slots)
      if (slot.name == expr.member) {
        if (!fn) {
          error(expr.getLoc()) << "'" << layer.displayName() << "." << expr.member
                               << "' can only be read inside forward or loss";
          return std::nullopt;
        }
        if (slot.index < 0) {
          error(expr.getLoc()) << "layer '" << layer.type << "' is not part of the "
                                  "model; assign it to a name in a module body "
                                  "before using it";
          return std::nullopt;
        }
        return EValue::ofTensor(fn->slotValues[slot.index]);
      }
    auto it = layer.scope.find(expr.member);
    if (it != layer.scope.end())
      return readParameter(it->second, expr.getLoc());
    for (auto &[name, child] : layer.children)
      if (name == expr.member)
        return readParameter(EValue::ofLayer(child), expr.getLoc());
    auto c = layer.config.find(expr.member);
    if (c != layer.config.end())
      return c->second;
  }
  error(expr.getLoc()) << describe(*base) << " has no attribute '" << expr.member << "'";
  return std::nullopt;
}

Result Elaborator::evaluateIndex(const ast::IndexExpr &expr, const Scope &scope) {
  Result base = evaluate(*expr.base, scope);
  if (!base)
    return std::nullopt;
  if (base->kind == EValue::Kind::Tensor)
    return indexTensor(*base, expr.items, expr.getLoc(), scope);

  if (expr.items.size() != 1 || expr.items[0].isSlice) {
    error(expr.getLoc()) << "expected one index into " << describe(*base);
    return std::nullopt;
  }
  Result index = evaluate(*expr.items[0].index, scope);
  if (!index)
    return std::nullopt;
  auto i = toInt(*index, expr.items[0].loc, "index");
  if (!i)
    return std::nullopt;
  int64_t size;
  if (base->kind == EValue::Kind::Tuple)
    size = base->elems.size();
  else if (base->kind == EValue::Kind::Layer && base->layer->isContainer())
    size = base->layer->children.size();
  else {
    error(expr.getLoc()) << describe(*base) << " cannot be indexed";
    return std::nullopt;
  }
  int64_t k = *i < 0 ? *i + size : *i;
  if (k < 0 || k >= size) {
    error(expr.items[0].loc) << "index " << *i << " is out of range for "
                             << (base->kind == EValue::Kind::Tuple
                                     ? std::string("a tuple")
                                     : describe(*base))
                             << " of " << size << " item" << (size == 1 ? "" : "s");
    return std::nullopt;
  }
  if (base->kind == EValue::Kind::Tuple)
    return base->elems[k];
  return readParameter(EValue::ofLayer(base->layer->children[k].second),
                       expr.items[0].loc);
}

//===----------------------------------------------------------------------===//
// Conversions and helpers
//===----------------------------------------------------------------------===//

bool Elaborator::bindArgs(std::vector<CallArg> &args, llvm::ArrayRef<ParamDecl> params,
                          std::map<std::string, EValue> &out,
                          const std::string &what, ast::Loc loc) {
  size_t positional = 0;
  for (CallArg &arg : args) {
    const ParamDecl *param = nullptr;
    if (arg.name.empty()) {
      if (positional >= params.size()) {
        error(arg.loc) << what << " takes at most " << params.size()
                       << " argument" << (params.size() == 1 ? "" : "s")
                       << " but " << args.size() << " were given";
        return false;
      }
      param = &params[positional++];
    } else {
      for (const ParamDecl &p : params)
        if (arg.name == p.name)
          param = &p;
      if (!param) {
        auto d = error(arg.loc);
        d << what << " has no argument '" << arg.name << "'";
        if (!params.empty()) {
          d << "; it takes ";
          llvm::interleave(params, d, [&](const ParamDecl &p) { d << p.name; }, ", ");
        }
        return false;
      }
    }
    if (!out.emplace(param->name, arg.value).second) {
      error(arg.loc) << what << " got argument '" << param->name << "' twice";
      return false;
    }
  }
  for (const ParamDecl &p : params) {
    if (out.count(p.name))
      continue;
    if (p.required) {
      error(loc) << what << " needs argument '" << p.name << "'";
      return false;
    }
    out[p.name] = p.defaultValue;
  }
  return true;
}

std::optional<int64_t> Elaborator::toInt(const EValue &v, ast::Loc loc,
                                         const std::string &what) {
  if (v.kind == EValue::Kind::Int)
    return v.i;
  error(loc) << "expected " << what << " to be an integer but got " << describe(v);
  return std::nullopt;
}

std::optional<double> Elaborator::toFloat(const EValue &v, ast::Loc loc,
                                          const std::string &what) {
  if (v.isNumber()) {
    double d = v.asDouble();
    if (std::isfinite(d))
      return d;
  }
  error(loc) << "expected " << what << " to be a finite number but got " << describe(v);
  return std::nullopt;
}

std::optional<bool> Elaborator::toBool(const EValue &v, ast::Loc loc,
                                       const std::string &what) {
  if (v.kind == EValue::Kind::Bool)
    return v.b;
  error(loc) << "expected " << what << " to be true or false but got " << describe(v);
  return std::nullopt;
}

std::optional<std::string> Elaborator::toString(const EValue &v, ast::Loc loc,
                                                const std::string &what) {
  if (v.kind == EValue::Kind::String)
    return v.s;
  error(loc) << "expected " << what << " to be a string but got " << describe(v);
  return std::nullopt;
}

std::optional<llvm::SmallVector<int64_t, 4>>
Elaborator::toInts(const EValue &v, size_t n, ast::Loc loc, const std::string &what) {
  if (v.kind == EValue::Kind::Int)
    return llvm::SmallVector<int64_t, 4>(n, v.i);
  if (v.kind == EValue::Kind::Tuple && v.elems.size() == n) {
    llvm::SmallVector<int64_t, 4> out;
    for (const EValue &e : v.elems) {
      if (e.kind != EValue::Kind::Int)
        break;
      out.push_back(e.i);
    }
    if (out.size() == n)
      return out;
  }
  error(loc) << "expected " << what << " to be an integer or a tuple of " << n
             << " integers but got " << describe(v);
  return std::nullopt;
}

std::optional<llvm::SmallVector<int64_t, 4>>
Elaborator::toIntList(const EValue &v, ast::Loc loc, const std::string &what) {
  if (v.kind == EValue::Kind::Int)
    return llvm::SmallVector<int64_t, 4>{v.i};
  if (v.kind == EValue::Kind::Tuple) {
    llvm::SmallVector<int64_t, 4> out;
    for (const EValue &e : v.elems) {
      auto i = toInt(e, loc, what + " item");
      if (!i)
        return std::nullopt;
      out.push_back(*i);
    }
    return out;
  }
  error(loc) << "expected " << what << " to be a tuple of integers but got "
             << describe(v);
  return std::nullopt;
}

std::optional<mlir::Value> Elaborator::toTensor(const EValue &v, ast::Loc loc,
                                                const std::string &what) {
  if (v.kind == EValue::Kind::Tensor)
    return v.tensor;
  error(loc) << "expected " << what << " to be a tensor but got " << describe(v);
  return std::nullopt;
}

mlir::Location Elaborator::opLoc(ast::Loc loc, StringRef layerName) const {
  mlir::Location fileLoc = diag.loc(loc);
  if (layerName.empty())
    return fileLoc;
  return mlir::NameLoc::get(mlir::StringAttr::get(context, layerName), fileLoc);
}

mlir::Type Elaborator::f32Type() const { return mlir::Float32Type::get(context); }

llvm::ArrayRef<int64_t> Elaborator::shapeOf(mlir::Value v) const {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getShape();
}

mlir::Type Elaborator::elementTypeOf(mlir::Value v) const {
  return llvm::cast<mlir::RankedTensorType>(v.getType()).getElementType();
}

mlir::Value Elaborator::scalarConstant(double value, mlir::Type elementType,
                                       mlir::Location loc) {
  auto type = mlir::RankedTensorType::get({}, elementType);
  auto attr = mlir::DenseElementsAttr::get(
      type, llvm::ArrayRef<mlir::Attribute>{mlir::FloatAttr::get(elementType, value)});
  return ConstantOp::create(*fn->builder, loc, type, attr);
}
