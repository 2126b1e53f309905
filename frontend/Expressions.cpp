//===- Expressions.cpp - Names, values, operators and calls ---------------===//
//
// Expression evaluation at compile time: name lookup, compile-time arithmetic,
// calls (dispatched to modules, layers and builtins), attribute access and
// indexing, and the conversions every builtin uses to check its arguments.
//
//===----------------------------------------------------------------------===//

#include "frontend/ElaboratorImpl.h"
#include "ir/ShapeFunctions.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>
#include <limits>

using namespace cairn;
using llvm::StringRef;

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

std::string cairn::formatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%g", value);
  return buffer;
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

  // A method only (size): a suggestion of its own name would not help.
  if (isTensorMethod(name)) {
    error(loc) << "'" << name
               << "' is a tensor method; call it on a tensor, e.g. x." << name
               << "(...)";
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

std::optional<bool> Elaborator::evaluateCondition(const ast::IfStmt &s,
                                                  const Scope &scope) {
  Result cond = evaluate(*s.cond, scope);
  if (!cond)
    return std::nullopt;
  if (cond->kind == EValue::Kind::Tensor) {
    error(s.cond->getLoc()) << "a condition must be known at compile time, "
                               "but this one is a tensor";
    return std::nullopt;
  }
  return toBool(*cond, s.cond->getLoc(), "condition");
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
      return applyBinary(b.op, *lhs, *rhs, b.getLoc(), currentLayerPath);
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
      return applyBinary(ast::BinaryOp::Mul, EValue::ofFloat(-1.0), *v, expr.getLoc(),
                         currentLayerPath);
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
  return call(*callee, args, expr.getLoc());
}

Result Elaborator::call(const EValue &callee, std::vector<CallArg> &args,
                        ast::Loc loc) {
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
  case EValue::Kind::Self: {
    Result output = callFunction(*root, *root->forward, args, loc);
    // self(image) with the model's input `image` where forward takes `image`:
    // the value the forward step computes (in training mode here).
    bool sameInputs = output && output->kind == EValue::Kind::Tensor &&
                      args.size() == root->forward->params.size();
    for (size_t i = 0; sameInputs && i < args.size(); ++i)
      sameInputs = args[i].value.kind == EValue::Kind::Tensor && args[i].name.empty() &&
                   inputNameOf(args[i].value.tensor) == root->forward->params[i].name;
    if (sameInputs)
      fn->modelOutputs.push_back(output->tensor);
    return output;
  }
  default:
    error(loc) << describe(callee) << " is not callable";
    return std::nullopt;
  }
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
                       << " but " << args.size()
                       << (args.size() == 1 ? " was" : " were") << " given";
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

