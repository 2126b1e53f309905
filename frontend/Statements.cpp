//===- Statements.cpp - Module bodies and function bodies -----------------===//
//
// A module body runs once per instance and registers layers and constants; a
// function body (forward, loss) runs with tensors and emits ops.
//
//===----------------------------------------------------------------------===//

#include "frontend/ElaboratorImpl.h"
#include "ir/ShapeFunctions.h"
#include "ir/TrainingSettings.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace cairn;
using llvm::StringRef;

namespace {
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
    if (!assign.moreTargets.empty()) {
      // `a, b = 3, 4`: numbers and such; layers are registered one name at
      // a time.
      std::vector<EValue> values;
      if (!unpack(assign, *value, values))
        return false;
      std::vector<std::pair<std::string, ast::Loc>> names = {
          {assign.target, assign.getLoc()}};
      names.insert(names.end(), assign.moreTargets.begin(),
                   assign.moreTargets.end());
      for (size_t i = 0; i < names.size(); ++i) {
        auto it = owner.scope.find(names[i].first);
        if (values[i].kind == EValue::Kind::Layer ||
            (it != owner.scope.end() &&
             it->second.kind == EValue::Kind::Layer)) {
          error(names[i].second)
              << "layers cannot be assigned by unpacking; assign '"
              << names[i].first << "' on its own line";
          return false;
        }
        owner.scope[names[i].first] = values[i];
      }
      return true;
    }
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
    std::optional<bool> taken = evaluateCondition(s, scope);
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
    if (s.setting == ast::TrainingSetting::Scheduler)
      return executeScheduler(s, scope);
    if (s.setting == ast::TrainingSetting::ClipGradNorm)
      return executeClipGradNorm(s, scope);
    if (optimizer) {
      error(s.getLoc()) << "the optimizer is declared twice";
      return false;
    }
    const auto *callExpr = llvm::dyn_cast<ast::CallExpr>(s.call.get());
    const auto *callee =
        callExpr ? llvm::dyn_cast<ast::NameExpr>(callExpr->callee.get()) : nullptr;
    if (!callee || (callee->name != "SGD" && callee->name != "Adam" &&
                    callee->name != "AdamW")) {
      error(s.call->getLoc())
          << "expected an optimizer: SGD(...), Adam(...) or AdamW(...)";
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
      // AdamW is Adam with the decay decoupled, and 0.01 of it by default.
      const bool adamW = callee->name == "AdamW";
      ParamDecl params[] = {
          opt("lr", EValue::ofFloat(1e-3)),
          opt("betas",
              EValue::ofTuple({EValue::ofFloat(0.9), EValue::ofFloat(0.999)})),
          opt("eps", EValue::ofFloat(1e-8)),
          opt("weight_decay", EValue::ofFloat(adamW ? 1e-2 : 0))};
      if (!bindArgs(args, params, bound, callee->name, loc))
        return false;
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
                                       *eps, *wd, adamW);
    }
    return optimizer != nullptr;
  }
  case ast::Stmt::Kind::Annotated: {
    const auto &s = llvm::cast<ast::AnnotatedStmt>(stmt);
    if (s.modelLevel)
      return executeModelPrecision(s);
    error(stmt.getLoc()) << "this statement is only allowed inside forward or loss";
    return false;
  }
  case ast::Stmt::Kind::Return:
    error(stmt.getLoc()) << "this statement is only allowed inside forward or loss";
    return false;
  }
  return false;
}

/// `precision bf16` in a model body: what cairn-autocast builds it with
/// (`cairn build --precision` wins).
bool Elaborator::executeModelPrecision(const ast::AnnotatedStmt &s) {
  if (modelPrecision) {
    error(s.getLoc()) << "the model's precision is declared twice";
    return false;
  }
  std::optional<Precision> p = symbolizePrecision(s.precision);
  if (!p) {
    error(s.argLoc) << "unknown precision '" << s.precision << "'; expected f16, bf16 or f32";
    return false;
  }
  modelPrecision = *p;
  return true;
}

/// The bound arguments of a training statement's call.
bool Elaborator::bindSettingArgs(const ast::OptimizerStmt &s, Scope &scope,
                                 llvm::ArrayRef<ParamDecl> params, llvm::StringRef callee,
                                 std::map<std::string, EValue> &bound) {
  const auto &callExpr = llvm::cast<ast::CallExpr>(*s.call);
  std::vector<CallArg> args;
  for (const ast::Argument &a : callExpr.args) {
    Result v = evaluate(*a.value, scope);
    if (!v) return false;
    args.push_back({a.loc, a.name, *v});
  }
  return bindArgs(args, params, bound, callee.str(), s.call->getLoc());
}

/// scheduler StepLR(...) | CosineAnnealingLR(...) | LinearLR(...)
bool Elaborator::executeScheduler(const ast::OptimizerStmt &s, Scope &scope) {
  const auto &callExpr = llvm::cast<ast::CallExpr>(*s.call);
  const auto *callee = llvm::dyn_cast<ast::NameExpr>(callExpr.callee.get());
  ast::Loc loc = s.call->getLoc();
  runtime::LrScheduler scheduler;
  std::map<std::string, EValue> bound;
  if (callee && callee->name == "StepLR") {
    scheduler.kind = runtime::LrSchedulerKind::StepLR;
    ParamDecl params[] = {req("step_size"), opt("gamma", EValue::ofFloat(0.1))};
    if (!bindSettingArgs(s, scope, params, "StepLR", bound)) return false;
    auto stepSize = toInt(bound["step_size"], loc, "step_size");
    auto gamma = toFloat(bound["gamma"], loc, "gamma");
    if (!stepSize || !gamma) return false;
    scheduler.stepSize = *stepSize;
    scheduler.gamma = *gamma;
  } else if (callee && callee->name == "CosineAnnealingLR") {
    scheduler.kind = runtime::LrSchedulerKind::CosineAnnealingLR;
    ParamDecl params[] = {req("T_max"), opt("eta_min", EValue::ofFloat(0))};
    if (!bindSettingArgs(s, scope, params, "CosineAnnealingLR", bound)) return false;
    auto tMax = toInt(bound["T_max"], loc, "T_max");
    auto etaMin = toFloat(bound["eta_min"], loc, "eta_min");
    if (!tMax || !etaMin) return false;
    scheduler.tMax = *tMax;
    scheduler.etaMin = *etaMin;
  } else if (callee && callee->name == "LinearLR") {
    scheduler.kind = runtime::LrSchedulerKind::LinearLR;
    ParamDecl params[] = {opt("start_factor", EValue::ofFloat(1.0 / 3)),
                          opt("end_factor", EValue::ofFloat(1.0)),
                          opt("total_iters", EValue::ofInt(5))};
    if (!bindSettingArgs(s, scope, params, "LinearLR", bound)) return false;
    auto start = toFloat(bound["start_factor"], loc, "start_factor");
    auto end = toFloat(bound["end_factor"], loc, "end_factor");
    auto total = toInt(bound["total_iters"], loc, "total_iters");
    if (!start || !end || !total) return false;
    scheduler.startFactor = *start;
    scheduler.endFactor = *end;
    scheduler.totalIters = *total;
  } else {
    error(loc) << "expected a scheduler: StepLR(...), CosineAnnealingLR(...) or LinearLR(...)";
    return false;
  }
  schedule.push_back(scheduler);
  if (std::string why = checkLrSchedule(schedule); !why.empty()) {
    error(loc) << why;
    return false;
  }
  if (schedule.size() == 1)
    scheduleLoc = s.getLoc();
  return true;
}

/// clip_grad_norm(max_norm, norm_type=2.0): norm_type a number or "inf".
bool Elaborator::executeClipGradNorm(const ast::OptimizerStmt &s, Scope &scope) {
  if (clipGradNorm) {
    error(s.getLoc()) << "clip_grad_norm is declared twice";
    return false;
  }
  ast::Loc loc = s.call->getLoc();
  std::map<std::string, EValue> bound;
  ParamDecl params[] = {req("max_norm"), opt("norm_type", EValue::ofFloat(2.0))};
  if (!bindSettingArgs(s, scope, params, "clip_grad_norm", bound)) return false;
  auto maxNorm = toFloat(bound["max_norm"], loc, "max_norm");
  if (!maxNorm) return false;
  const EValue &norm = bound["norm_type"];
  std::optional<double> normType;
  if (norm.kind == EValue::Kind::String) {
    if (norm.s != "inf") {
      error(loc) << "expected norm_type to be a number or \"inf\" but got \"" << norm.s
                 << "\"";
      return false;
    }
    normType = std::numeric_limits<double>::infinity();
  } else {
    normType = toFloat(norm, loc, "norm_type");
    if (!normType) return false;
  }
  ClipGradNorm clip{*maxNorm, *normType};
  if (std::string why = checkClipGradNorm(clip); !why.empty()) {
    error(loc) << why;
    return false;
  }
  clipGradNorm = clip;
  clipGradNormLoc = s.getLoc();
  return true;
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

bool Elaborator::unpack(const ast::AssignStmt &assign, const EValue &value,
                        std::vector<EValue> &values) {
  const size_t names = assign.moreTargets.size() + 1;
  if (value.kind != EValue::Kind::Tuple) {
    error(assign.getLoc())
        << "cannot unpack " << describe(value) << " into " << names
        << " names: expected a tuple, such as unbind(), chunk() or "
           "split() return";
    return false;
  }
  if (value.elems.size() != names) {
    error(assign.getLoc()) << "cannot unpack " << value.elems.size()
                           << " values into " << names << " names";
    return false;
  }
  values = value.elems;
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
    if (!assign.moreTargets.empty()) {
      std::vector<EValue> values;
      if (!unpack(assign, *value, values))
        return false;
      (*scope.vars)[assign.target] = values[0];
      for (size_t i = 0; i < assign.moreTargets.size(); ++i)
        (*scope.vars)[assign.moreTargets[i].first] = values[i + 1];
      return true;
    }
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
    std::optional<bool> taken = evaluateCondition(s, scope);
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
