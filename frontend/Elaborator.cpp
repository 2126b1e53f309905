//===- Elaborator.cpp - Models, modules and functions ---------------------===//
//
// Runs the compile-time program of a model file and emits `@forward` and
// `@loss`: the entry points, module instantiation and naming, and function
// emission. Statements are in Statements.cpp, expressions in Expressions.cpp,
// builtin layers in Layers.cpp, builtin functions in TensorFunctions.cpp.
//
//===----------------------------------------------------------------------===//

#include "frontend/ElaboratorImpl.h"
#include "frontend/Parser.h"
#include "ir/CairnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"

using namespace cairn;
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

} // namespace


//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

Elaborator::Elaborator(DiagnosticReporter &diag, const ElaborateOptions &options)
    : context(diag.getContext()), diag(diag), options(options) {
  context->getOrLoadDialect<CairnDialect>();
  context->getOrLoadDialect<mlir::func::FuncDialect>();
}

mlir::OwningOpRef<mlir::ModuleOp>
cairn::elaborateModelFile(const ast::ModelFile &program, DiagnosticReporter &diag,
                        const ElaborateOptions &options) {
  return Elaborator(diag, options).run(program);
}

mlir::OwningOpRef<mlir::ModuleOp>
cairn::compileModelSource(StringRef source, DiagnosticReporter &diag,
                          const ElaborateOptions &options) {
  std::unique_ptr<ast::ModelFile> program = parseModelFile(source, diag);
  if (diag.hadError())
    return nullptr;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      elaborateModelFile(*program, diag, options);
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

mlir::OwningOpRef<mlir::ModuleOp> Elaborator::run(const ast::ModelFile &program) {
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
  if (!schedule.empty() && !optimizer) {
    error(scheduleLoc) << "a scheduler needs an optimizer whose lr it schedules";
    return nullptr;
  }
  if (clipGradNorm && !optimizer) {
    error(clipGradNormLoc) << "clip_grad_norm needs an optimizer to clip the gradients for";
    return nullptr;
  }
  assignSlotIndices(*root);

  mlir::Builder b(context);
  module->setAttr("cairn.model", b.getStringAttr(model->name));
  if (batch)
    module->setAttr("cairn.batch", b.getI64IntegerAttr(*batch));
  if (optimizer)
    module->setAttr(CairnDialect::kOptimizerAttrName, optimizer);
  if (!schedule.empty())
    module->setAttr(CairnDialect::kLrScheduleAttrName, getLrScheduleAttr(context, schedule));
  if (clipGradNorm)
    module->setAttr(CairnDialect::kClipGradNormAttrName,
                    getClipGradNormAttr(context, *clipGradNorm));
  if (modelPrecision)
    module->setAttr(CairnDialect::kPrecisionAttrName,
                    PrecisionAttr::get(context, *modelPrecision));

  if (!emitFunction(*root->forward, /*training=*/false, "forward"))
    return nullptr;
  if (root->loss && !emitFunction(*root->loss, /*training=*/true, "loss"))
    return nullptr;
  // A loss the runtime cannot compute from the forward step's output gets
  // its own eval-mode function, for the executable's test loss.
  if (root->loss && !module->hasAttr(CairnDialect::kEvalLossAttrName) &&
      !emitFunction(*root->loss, /*training=*/false, "eval_loss"))
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
                    InitAttr::get(context, slots[i]->init, slots[i]->scale,
                                  slots[i]->zeroRow));
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
  const bool isLoss = name == "loss" || name == "eval_loss";
  if (isLoss) {
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
  if (isLoss) {
    auto type = llvm::cast<mlir::RankedTensorType>(results.front().getType());
    if (results.size() != 1 || type.getRank() != 0 ||
        !llvm::isa<mlir::FloatType>(type.getElementType())) {
      error(lastReturnLoc) << "'loss' must return one floating-point scalar but returns "
                          << describe(returned->front())
                          << (results.size() > 1 ? " and more" : "");
      return nullptr;
    }
  }
  if (name == "loss")
    recordEvalLoss(results.front(), state.modelOutputs);
  builder.setListener(nullptr);
  mlir::func::ReturnOp::create(builder, diag.loc(def.getLoc()), results);
  llvm::SmallVector<mlir::Type> resultTypes;
  for (mlir::Value v : results)
    resultTypes.push_back(v.getType());
  func.setFunctionType(builder.getFunctionType(argTypes, resultTypes));
  return func;
}

std::string cairn::inputNameOf(mlir::Value value) {
  auto arg = llvm::dyn_cast<mlir::BlockArgument>(value);
  auto func = arg ? llvm::dyn_cast<mlir::func::FuncOp>(arg.getOwner()->getParentOp())
                  : mlir::func::FuncOp();
  if (!func)
    return "";
  auto role = func.getArgAttrOfType<RoleAttr>(arg.getArgNumber(), "cairn.role");
  auto name = func.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(), "cairn.name");
  return role && role.getValue() == Role::input && name ? name.str() : "";
}

void Elaborator::recordEvalLoss(mlir::Value loss, llvm::ArrayRef<mlir::Value> outputs) {
  runtime::LossForm form;
  mlir::Operation *op = loss.getDefiningOp();
  if (auto ce = llvm::dyn_cast_or_null<CrossEntropyOp>(op)) {
    if (!llvm::is_contained(outputs, ce.getLogits()))
      return;
    form.kind = runtime::LossKind::CrossEntropy;
    form.target = inputNameOf(ce.getLabels());
    form.labelSmoothing = ce.getLabelSmoothing();
  } else if (auto mse = llvm::dyn_cast_or_null<MseLossOp>(op)) {
    form.kind = runtime::LossKind::MseLoss;
    if (llvm::is_contained(outputs, mse.getInput()))
      form.target = inputNameOf(mse.getTarget());
    else if (llvm::is_contained(outputs, mse.getTarget()))
      form.target = inputNameOf(mse.getInput());
  }
  if (form.kind == runtime::LossKind::Unknown || form.target.empty())
    return;
  module->setAttr(CairnDialect::kEvalLossAttrName, getEvalLossAttr(context, form));
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
                 << args.size() << (args.size() == 1 ? " was" : " were")
                 << " given";
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
