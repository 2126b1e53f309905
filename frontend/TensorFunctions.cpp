//===- TensorFunctions.cpp - Builtin functions, operators, indexing -------===//
//
// The functional half of the language: torch.* functions on tensors (and
// their method spellings), arithmetic operators with broadcasting, basic
// indexing, and a few functions on compile-time numbers.
//
//===----------------------------------------------------------------------===//

#include "frontend/ElaboratorImpl.h"
#include "ir/ShapeFunctions.h"

#include <cassert>
#include <cmath>
#include <limits>

using namespace cairn;
using llvm::StringRef;

namespace {
const char *const kTensorFunctions[] = {
    "relu",        "gelu",       "sigmoid", "tanh",       "softmax",
    "log_softmax", "matmul",     "add",     "sub",        "mul",
    "div",         "reshape",    "view",    "flatten",    "transpose",
    "permute",     "mean",       "sum",     "dropout",    "size",
    "silu",        "hardswish",  "relu6",   "leaky_relu", "hardtanh",
    "clamp",       "expand",     "repeat",  "unbind",     "chunk",
    "split",       "interpolate"};
const char *const kOtherFunctions[] = {
    "cat", "concat", "cross_entropy", "mse_loss", "sqrt",  "min",  "max",
    "int", "float",  "abs",           "len",      "zeros", "ones", "full"};

/// upsample_bilinear2d's weights along one dimension of `in` elements
/// upsampled to `out`, as the matrix M [in, out] with y = x M: output j
/// reads inputs i0 and i1 = min(i0 + 1, in - 1) with 1 - l and l, where
/// the source index is area_pixel_compute_source_index's, computed in T
/// (the tensor's opmath type) as PyTorch does. `scale` is the scale_factor
/// when one was given (PyTorch then uses 1 / scale_factor, not in / out).
template <typename T>
std::vector<double> linearInterpolationMatrix(int64_t in, int64_t out, bool alignCorners,
                                              std::optional<double> scale) {
  T ratio;
  if (alignCorners)
    ratio = out > 1 ? T(in - 1) / T(out - 1) : T(0);
  else
    ratio = scale && *scale > 0 ? T(1.0 / *scale) : T(in) / T(out);
  std::vector<double> m(in * out, 0.0);
  for (int64_t j = 0; j < out; ++j) {
    T source = alignCorners ? ratio * T(j) : ratio * (T(j) + T(0.5)) - T(0.5);
    if (!alignCorners && source < T(0))
      source = T(0);
    int64_t i0 = std::min<int64_t>(int64_t(source), in - 1);
    int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    T l1 = std::min(std::max(source - T(i0), T(0)), T(1));
    T l0 = T(1) - l1;
    m[i0 * out + j] += double(l0);
    m[i1 * out + j] += double(l1);
  }
  return m;
}
} // namespace

void cairn::forEachBuiltinFunction(llvm::function_ref<void(StringRef)> fn) {
  for (const char *name : kTensorFunctions)
    fn(name);
  for (const char *name : kOtherFunctions)
    fn(name);
}

bool Elaborator::isTensorMethod(StringRef name) const {
  return llvm::is_contained(kTensorFunctions, name);
}

bool Elaborator::isBuiltinFunction(StringRef name) const {
  return (isTensorMethod(name) && name != "size") ||
         llvm::is_contained(kOtherFunctions, name);
}

Result Elaborator::applyBinary(ast::BinaryOp op, const EValue &lhs,
                               const EValue &rhs, ast::Loc loc, StringRef layerName) {
  const char *symbol = nullptr;
  switch (op) {
  case ast::BinaryOp::Add: symbol = "+"; break;
  case ast::BinaryOp::Sub: symbol = "-"; break;
  case ast::BinaryOp::Mul: symbol = "*"; break;
  case ast::BinaryOp::Div: symbol = "/"; break;
  case ast::BinaryOp::MatMul: {
    std::vector<CallArg> args = {{loc, "", lhs}, {loc, "", rhs}};
    return callBuiltin("matmul", args, loc, layerName.str());
  }
  default:
    error(loc) << "this operator does not apply to tensors (operands: "
               << describe(lhs) << " and " << describe(rhs)
               << "); conditions and loop bounds must be known at compile time";
    return std::nullopt;
  }
  if (!fn) {
    error(loc) << "tensor arithmetic is only allowed inside forward or loss";
    return std::nullopt;
  }
  // A number takes the element type of the tensor on the other side.
  assert(
      (lhs.kind == EValue::Kind::Tensor || rhs.kind == EValue::Kind::Tensor) &&
      "applyBinary needs a tensor operand; callers fold numbers");
  const EValue &tensorSide = lhs.kind == EValue::Kind::Tensor ? lhs : rhs;
  mlir::Type elementType = elementTypeOf(tensorSide.tensor);
  mlir::Location location = opLoc(loc, layerName);
  auto operand = [&](const EValue &v) -> std::optional<mlir::Value> {
    if (v.kind == EValue::Kind::Tensor)
      return v.tensor;
    if (v.isNumber())
      return scalarConstant(v.asDouble(), elementType, location);
    error(loc) << "operator '" << symbol << "' does not apply to " << describe(lhs)
               << " and " << describe(rhs);
    return std::nullopt;
  };
  std::optional<mlir::Value> a = operand(lhs), b = operand(rhs);
  if (!a || !b)
    return std::nullopt;
  if (!llvm::isa<mlir::FloatType>(elementTypeOf(*a)) ||
      elementTypeOf(*a) != elementTypeOf(*b)) {
    error(loc) << "operator '" << symbol
               << "' needs floating-point tensors of one element type but got "
               << describe(EValue::ofTensor(*a)) << " and "
               << describe(EValue::ofTensor(*b));
    return std::nullopt;
  }
  std::string why;
  auto shape = shapes::broadcast(shapeOf(*a), shapeOf(*b), why);
  if (!shape) {
    error(loc) << "operator '" << symbol << "': " << why;
    return std::nullopt;
  }
  auto type = mlir::RankedTensorType::get(*shape, elementType);
  mlir::OpBuilder &builder = *fn->builder;
  mlir::Value result;
  switch (op) {
  case ast::BinaryOp::Add: result = AddOp::create(builder, location, type, *a, *b); break;
  case ast::BinaryOp::Sub: result = SubOp::create(builder, location, type, *a, *b); break;
  case ast::BinaryOp::Mul: result = MulOp::create(builder, location, type, *a, *b); break;
  default: result = DivOp::create(builder, location, type, *a, *b); break;
  }
  return EValue::ofTensor(result);
}

Result Elaborator::callBuiltin(const std::string &name, std::vector<CallArg> &args,
                               ast::Loc loc, const std::string &layerName,
                               StringRef caller) {
  std::map<std::string, EValue> a;
  std::string what = caller.empty() ? name + "()" : caller.str();
  std::string why;

  // Functions of compile-time numbers.
  if (name == "sqrt" || name == "abs" || name == "int" || name == "float") {
    ParamDecl params[] = {req("x")};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    const EValue &x = a["x"];
    if (name == "int" && x.kind == EValue::Kind::Int) return x;
    auto v = toFloat(x, loc, "the argument of " + what);
    if (!v) return std::nullopt;
    if (name == "sqrt") {
      if (*v < 0) {
        error(loc) << "sqrt() of a negative number (" << formatNumber(*v) << ")";
        return std::nullopt;
      }
      return EValue::ofFloat(std::sqrt(*v));
    }
    if (name == "abs")
      return x.kind == EValue::Kind::Int && x.i != std::numeric_limits<int64_t>::min()
                 ? EValue::ofInt(x.i < 0 ? -x.i : x.i)
                 : EValue::ofFloat(std::fabs(*v));
    if (name == "float") return EValue::ofFloat(*v);
    if (std::fabs(*v) >= 9.2e18) {
      error(loc) << "int() of " << formatNumber(*v) << " does not fit in 64 bits";
      return std::nullopt;
    }
    return EValue::ofInt(static_cast<int64_t>(*v));
  }
  if (name == "min" || name == "max") {
    if (args.empty()) {
      error(loc) << what << " needs at least one argument";
      return std::nullopt;
    }
    std::vector<EValue> items;
    if (args.size() == 1 && args[0].value.kind == EValue::Kind::Tuple)
      items = args[0].value.elems;
    else
      for (CallArg &arg : args) items.push_back(arg.value);
    if (items.empty()) {
      error(loc) << what << " of an empty tuple";
      return std::nullopt;
    }
    EValue best = items[0];
    for (const EValue &item : items) {
      if (!item.isNumber()) {
        error(loc) << what << " needs numbers but got " << describe(item);
        return std::nullopt;
      }
      bool better = name == "min" ? item.asDouble() < best.asDouble()
                                  : item.asDouble() > best.asDouble();
      if (better) best = item;
    }
    return best;
  }
  if (name == "len") {
    ParamDecl params[] = {req("x")};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    if (a["x"].kind == EValue::Kind::Tuple) return EValue::ofInt(a["x"].elems.size());
    if (a["x"].kind == EValue::Kind::Layer && a["x"].layer->isContainer())
      return EValue::ofInt(a["x"].layer->children.size());
    error(loc) << "len() of " << describe(a["x"]);
    return std::nullopt;
  }

  // Everything below works on tensors, inside forward or loss.
  if (!fn) {
    error(loc) << what << " works on tensors, which only exist inside forward or loss";
    return std::nullopt;
  }
  mlir::OpBuilder &b = *fn->builder;
  mlir::Location location = opLoc(loc, layerName);
  auto fail = [&](const std::string &message) -> Result {
    error(loc) << what << ": " << message;
    return std::nullopt;
  };
  auto tensorArg = [&](const char *key) -> std::optional<mlir::Value> {
    return toTensor(a[key], loc, std::string(key) + " of " + what);
  };
  auto floatTensorArg = [&](const char *key) -> std::optional<mlir::Value> {
    auto t = tensorArg(key);
    if (t && !llvm::isa<mlir::FloatType>(elementTypeOf(*t))) {
      error(loc) << what << ": expected a floating-point tensor but got "
                 << describe(a[key]);
      return std::nullopt;
    }
    return t;
  };
  auto typeLike = [&](mlir::Value v, llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, elementTypeOf(v));
  };
  auto dimArg = [&](const char *key, int64_t rank) -> std::optional<int64_t> {
    auto d = toInt(a[key], loc, std::string(key) + " of " + what);
    if (!d) return std::nullopt;
    auto n = shapes::normalizeDim(*d, rank, why);
    if (!n) fail(why);
    return n;
  };
  // reshape(x, 2, 3) and reshape(x, (2, 3)) both work, as in PyTorch.
  auto restAsInts = [&](size_t from, const char *what2) -> std::optional<llvm::SmallVector<int64_t, 4>> {
    for (size_t i = from; i < args.size(); ++i)
      if (!args[i].name.empty()) {
        error(args[i].loc) << what << " takes no keyword argument '" << args[i].name << "'";
        return std::nullopt;
      }
    if (args.size() == from + 1 && args[from].value.kind == EValue::Kind::Tuple)
      return toIntList(args[from].value, loc, what2);
    llvm::SmallVector<int64_t, 4> out;
    for (size_t i = from; i < args.size(); ++i) {
      auto v = toInt(args[i].value, args[i].loc, what2);
      if (!v) return std::nullopt;
      out.push_back(*v);
    }
    return out;
  };

  if (name == "relu" || name == "sigmoid" || name == "tanh" || name == "silu" ||
      name == "hardswish") {
    ParamDecl params[] = {req("x")};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    auto x = floatTensorArg("x");
    if (!x) return std::nullopt;
    mlir::Value r;
    if (name == "relu") r = ReluOp::create(b, location, x->getType(), *x);
    else if (name == "sigmoid") r = SigmoidOp::create(b, location, x->getType(), *x);
    else if (name == "silu")
      r = SiluOp::create(b, location, x->getType(), *x);
    else if (name == "hardswish")
      r = HardswishOp::create(b, location, x->getType(), *x);
    else r = TanhOp::create(b, location, x->getType(), *x);
    return EValue::ofTensor(r);
  }
  if (name == "relu6" || name == "hardtanh") {
    // F.relu6 is F.hardtanh(x, 0, 6); both are torch.clamp with clamp's
    // gradient.
    std::vector<ParamDecl> params = {req("x")};
    if (name == "hardtanh")
      params.insert(params.end(), {opt("min_val", EValue::ofFloat(-1.0)),
                                   opt("max_val", EValue::ofFloat(1.0))});
    if (!bindArgs(args, params, a, what, loc))
      return std::nullopt;
    auto x = floatTensorArg("x");
    if (!x)
      return std::nullopt;
    double lo = 0, hi = 6;
    if (name == "hardtanh") {
      auto min = toFloat(a["min_val"], loc, "min_val of hardtanh()");
      auto max = min ? toFloat(a["max_val"], loc, "max_val of hardtanh()")
                     : std::nullopt;
      if (!max)
        return std::nullopt;
      if (*max <= *min)
        return fail("expected max_val greater than min_val but got " +
                    formatNumber(*max) + " <= " + formatNumber(*min));
      lo = *min;
      hi = *max;
    }
    return EValue::ofTensor(ClampOp::create(b, location, x->getType(), *x,
                                            b.getF64FloatAttr(lo),
                                            b.getF64FloatAttr(hi)));
  }
  if (name == "clamp") {
    ParamDecl params[] = {req("x"), opt("min", EValue::none()),
                          opt("max", EValue::none())};
    if (!bindArgs(args, params, a, what, loc))
      return std::nullopt;
    auto x = floatTensorArg("x");
    if (!x)
      return std::nullopt;
    mlir::FloatAttr bound[2];
    const char *names[2] = {"min", "max"};
    for (int i = 0; i < 2; ++i) {
      if (a[names[i]].kind == EValue::Kind::None)
        continue;
      auto v = toFloat(a[names[i]], loc, std::string(names[i]) + " of clamp()");
      if (!v)
        return std::nullopt;
      bound[i] = b.getF64FloatAttr(*v);
    }
    if (!bound[0] && !bound[1])
      return fail("expected at least one of min and max");
    return EValue::ofTensor(
        ClampOp::create(b, location, x->getType(), *x, bound[0], bound[1]));
  }
  if (name == "leaky_relu") {
    ParamDecl params[] = {req("x"),
                          opt("negative_slope", EValue::ofFloat(0.01))};
    if (!bindArgs(args, params, a, what, loc))
      return std::nullopt;
    auto x = floatTensorArg("x");
    auto slope =
        toFloat(a["negative_slope"], loc, "negative_slope of leaky_relu()");
    if (!x || !slope)
      return std::nullopt;
    return EValue::ofTensor(LeakyReluOp::create(b, location, x->getType(), *x,
                                                b.getF64FloatAttr(*slope)));
  }
  if (name == "gelu") {
    ParamDecl params[] = {req("x"), opt("approximate", EValue::ofString("none"))};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    auto x = floatTensorArg("x");
    auto approximate = toString(a["approximate"], loc, "approximate of gelu()");
    if (!x || !approximate) return std::nullopt;
    if (*approximate != "none" && *approximate != "tanh")
      return fail("expected approximate=\"none\" or \"tanh\" but got \"" + *approximate + "\"");
    return EValue::ofTensor(GeluOp::create(b, location, x->getType(), *x,
                                           b.getStringAttr(*approximate)));
  }
  if (name == "softmax" || name == "log_softmax") {
    ParamDecl params[] = {req("x"), req("dim")};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    auto x = floatTensorArg("x");
    if (!x) return std::nullopt;
    auto dim = dimArg("dim", shapeOf(*x).size());
    if (!dim) return std::nullopt;
    mlir::Value r = name == "softmax"
        ? SoftmaxOp::create(b, location, x->getType(), *x, b.getI64IntegerAttr(*dim)).getResult()
        : LogSoftmaxOp::create(b, location, x->getType(), *x, b.getI64IntegerAttr(*dim)).getResult();
    return EValue::ofTensor(r);
  }
  if (name == "add" || name == "sub" || name == "mul" || name == "div") {
    ParamDecl params[] = {req("x"), req("other")};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    ast::BinaryOp op = name == "add" ? ast::BinaryOp::Add
                     : name == "sub" ? ast::BinaryOp::Sub
                     : name == "mul" ? ast::BinaryOp::Mul : ast::BinaryOp::Div;
    // Numbers alone are compile-time arithmetic, which these tensor
    // functions do not do (nor does torch.add); applyBinary needs a tensor.
    if (a["x"].kind != EValue::Kind::Tensor &&
        a["other"].kind != EValue::Kind::Tensor)
      return fail("expected a tensor for x or other but got " +
                  describe(a["x"]) + " and " + describe(a["other"]));
    return applyBinary(op, a["x"], a["other"], loc, layerName);
  }
  if (name == "matmul") {
    ParamDecl params[] = {req("x"), req("other")};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    auto x = floatTensorArg("x"), y = floatTensorArg("other");
    if (!x || !y) return std::nullopt;
    if (elementTypeOf(*x) != elementTypeOf(*y))
      return fail("expected tensors of one element type but got " + describe(a["x"]) +
                  " and " + describe(a["other"]));
    // torch.matmul's vector cases: a 1-D operand becomes a matrix, and the
    // added dimension is dropped from the result.
    shapes::Shape xs(shapeOf(*x).begin(), shapeOf(*x).end());
    shapes::Shape ys(shapeOf(*y).begin(), shapeOf(*y).end());
    if (xs.empty() || ys.empty())
      return fail("expected tensors of rank at least 1 but got " + describe(a["x"]) +
                  " and " + describe(a["other"]));
    bool xVector = xs.size() == 1, yVector = ys.size() == 1;
    mlir::Value lhs = *x, rhs = *y;
    if (xVector) {
      xs.insert(xs.begin(), 1);
      lhs = ReshapeOp::create(b, location, typeLike(*x, xs), lhs);
    }
    if (yVector) {
      ys.push_back(1);
      rhs = ReshapeOp::create(b, location, typeLike(*y, ys), rhs);
    }
    auto out = shapes::matmul(xs, ys, why);
    if (!out) return fail(why);
    mlir::Value r = MatmulOp::create(b, location, typeLike(*x, *out), lhs, rhs);
    if (xVector || yVector) {
      shapes::Shape squeezed(out->begin(), out->end());
      if (yVector) squeezed.pop_back();
      if (xVector) squeezed.erase(squeezed.end() - (yVector ? 1 : 2));
      r = ReshapeOp::create(b, location, typeLike(*x, squeezed), r);
    }
    return EValue::ofTensor(r);
  }
  if (name == "zeros" || name == "ones" || name == "full") {
    // torch.zeros(*size), torch.ones(*size), torch.full(size, fill_value):
    // float32 constants, filled by the step that reads them.
    double value = name == "ones" ? 1 : 0;
    std::optional<llvm::SmallVector<int64_t, 4>> size;
    if (name == "full") {
      ParamDecl params[] = {req("size"), req("fill_value")};
      if (!bindArgs(args, params, a, what, loc))
        return std::nullopt;
      auto fill = toFloat(a["fill_value"], loc, "fill_value of full()");
      if (!fill)
        return std::nullopt;
      value = *fill;
      size = a["size"].kind == EValue::Kind::Tuple
                 ? toIntList(a["size"], loc, "size of full()")
                 : std::nullopt;
      if (a["size"].kind != EValue::Kind::Tuple)
        return fail("expected size to be a list like [2, 3] but got " +
                    describe(a["size"]));
    } else {
      size = restAsInts(0, "size");
    }
    if (!size)
      return std::nullopt;
    if (size->empty() && name != "full" && args.empty())
      return fail("expected a size");
    if (!shapes::numElements(*size, why))
      return fail(why);
    auto type = mlir::RankedTensorType::get(*size, f32Type());
    auto attr = mlir::DenseElementsAttr::get(
        type, llvm::ArrayRef<mlir::Attribute>{
                  mlir::FloatAttr::get(f32Type(), value)});
    return EValue::ofTensor(ConstantOp::create(b, location, type, attr));
  }
  // x.expand(*sizes) and x.repeat(*repeats): a tensor, then one number per
  // dimension of the result, at least as many as the tensor has.
  auto tensorAndCounts = [&](const char *noun)
      -> std::optional<std::pair<mlir::Value, llvm::SmallVector<int64_t, 4>>> {
    if (args.empty() || !args[0].name.empty()) {
      fail(std::string("expected a tensor and ") + noun);
      return std::nullopt;
    }
    a["x"] = args[0].value;
    auto x = tensorArg("x");
    auto counts = x ? restAsInts(1, noun) : std::nullopt;
    if (!counts) return std::nullopt;
    llvm::ArrayRef<int64_t> in = shapeOf(*x);
    if (counts->size() < in.size()) {
      fail("expected at least " + std::to_string(in.size()) + " " + noun +
           " for a tensor of shape " + shapes::format(in) + " but got " +
           std::to_string(counts->size()));
      return std::nullopt;
    }
    return std::make_pair(*x, *counts);
  };
  if (name == "expand") {
    // x.expand(*sizes): -1 keeps a dimension, new ones go in front, and a
    // dimension of 1 repeats; a view in PyTorch, a broadcast here.
    auto given = tensorAndCounts("sizes");
    if (!given) return std::nullopt;
    mlir::Value x = given->first;
    const llvm::SmallVector<int64_t, 4> &sizes = given->second;
    llvm::ArrayRef<int64_t> in = shapeOf(x);
    size_t lead = sizes.size() - in.size();
    shapes::Shape out(sizes.begin(), sizes.end());
    for (size_t i = 0; i < out.size(); ++i) {
      if (i < lead) {
        if (out[i] < 1)
          return fail("expected new dimension " + std::to_string(i) +
                      " to be at least 1 but got " + std::to_string(out[i]));
        continue;
      }
      int64_t have = in[i - lead];
      if (out[i] == -1)
        out[i] = have;
      else if (have != 1 && out[i] != have)
        return fail("cannot expand dimension " + std::to_string(i) +
                    " of shape " + shapes::format(in) + " from " +
                    std::to_string(have) + " to " + std::to_string(out[i]) +
                    " (only a dimension of 1 expands)");
    }
    if (!shapes::numElements(out, why))
      return fail(why);
    if (out == shapes::Shape(in.begin(), in.end()))
      return EValue::ofTensor(x);
    return EValue::ofTensor(
        BroadcastOp::create(b, location, typeLike(x, out), x));
  }
  if (name == "repeat") {
    // x.repeat(*repeats): the tensor tiled; shape [r0 * s0, r1 * s1, ...]
    // after padding x's shape with leading 1s. As a reshape to [1, s0, 1,
    // s1, ...], a broadcast to [r0, s0, r1, s1, ...] and a reshape back.
    auto given = tensorAndCounts("repeats");
    if (!given) return std::nullopt;
    mlir::Value x = given->first;
    const llvm::SmallVector<int64_t, 4> &repeats = given->second;
    llvm::ArrayRef<int64_t> in = shapeOf(x);
    shapes::Shape padded(repeats.size() - in.size(), 1);
    padded.append(in.begin(), in.end());
    shapes::Shape split, tiled, out;
    for (size_t i = 0; i < padded.size(); ++i) {
      int64_t r = repeats[i];
      if (r < 1)
        return fail("expected every repeat to be at least 1 but got " +
                    std::to_string(r));
      split.append({1, padded[i]});
      tiled.append({r, padded[i]});
      if (!shapes::numElements(tiled, why))
        return fail(why);
      out.push_back(r * padded[i]);
    }
    if (out == shapes::Shape(in.begin(), in.end()))
      return EValue::ofTensor(x);
    mlir::Value r = ReshapeOp::create(b, location, typeLike(x, split), x);
    r = BroadcastOp::create(b, location, typeLike(x, tiled), r);
    return EValue::ofTensor(
        ReshapeOp::create(b, location, typeLike(x, out), r));
  }
  if (name == "interpolate") {
    // F.interpolate / nn.Upsample, mode "nearest" by a whole factor per
    // spatial dimension: out[.., i, j] = x[.., i / s, j / s], which is the
    // input tiled: a reshape to [N, C, H, 1, W, 1], a broadcast to
    // [N, C, H, s, W, s] and a reshape to [N, C, H s, W s].
    //
    // Mode "bilinear" (4-d tensors): each output is a weighted mean of the
    // 2 x 2 inputs around its source point, which is x times a constant
    // [W, Wo] matrix along the width, then a constant [Ho, H] matrix times
    // that along the height (the products PyTorch sums, in its order; the
    // gradient is the matmuls' own).
    ParamDecl params[] = {req("x"), opt("size", EValue::none()),
                          opt("scale_factor", EValue::none()),
                          opt("mode", EValue::ofString("nearest")),
                          opt("align_corners", EValue::none())};
    if (!bindArgs(args, params, a, what, loc))
      return std::nullopt;
    auto x = floatTensorArg("x");
    auto mode = x ? toString(a["mode"], loc, "mode of " + what) : std::nullopt;
    if (!mode)
      return std::nullopt;
    if (*mode != "nearest" && *mode != "bilinear")
      return fail("mode \"" + *mode +
                  "\" is not supported; \"nearest\" and \"bilinear\" are");
    const bool bilinear = *mode == "bilinear";
    bool alignCorners = false;
    if (a["align_corners"].kind != EValue::Kind::None) {
      if (!bilinear)
        return fail("align_corners can only be set with mode \"bilinear\"");
      auto flag = toBool(a["align_corners"], loc, "align_corners of " + what);
      if (!flag)
        return std::nullopt;
      alignCorners = *flag;
    }
    llvm::ArrayRef<int64_t> in = shapeOf(*x);
    if (in.size() < 3 || in.size() > 5)
      return fail("expected a tensor of 3 to 5 dimensions (batch, channels, "
                  "then 1 to 3 "
                  "spatial) but got shape " +
                  shapes::format(in));
    const size_t spatial = in.size() - 2;
    bool hasSize = a["size"].kind != EValue::Kind::None,
         hasScale = a["scale_factor"].kind != EValue::Kind::None;
    if (hasSize == hasScale)
      return fail("expected either size or scale_factor");
    const std::string key = hasSize ? "size" : "scale_factor";
    const EValue &v = a[key];
    // One value for every spatial dimension, or a list of them.
    std::vector<double> given;
    if (v.kind == EValue::Kind::Tuple) {
      if (v.elems.size() != spatial)
        return fail("expected " + std::to_string(spatial) + " values of " +
                    key + " but got " + std::to_string(v.elems.size()));
      for (const EValue &e : v.elems) {
        auto d = toFloat(e, loc, key + " of " + what);
        if (!d)
          return std::nullopt;
        given.push_back(*d);
      }
    } else {
      auto d = toFloat(v, loc, key + " of " + what);
      if (!d)
        return std::nullopt;
      given.assign(spatial, *d);
    }
    if (bilinear) {
      if (spatial != 2)
        return fail("mode \"bilinear\" expects a 4-d tensor (batch, channels, "
                    "height, width) but got shape " +
                    shapes::format(in));
      shapes::Shape out(in.begin(), in.end());
      for (size_t d = 0; d < 2; ++d) {
        // PyTorch's output size: the given size, or floor(in * scale).
        double size = hasSize ? given[d] : std::floor(double(in[2 + d]) * given[d]);
        if (hasSize && size != std::floor(size))
          return fail("expected whole numbers of size but got " + formatNumber(given[d]));
        if (!(size >= 1) || size > double(int64_t(1) << 24))
          return fail("spatial dimension " + std::to_string(d) + " of " +
                      std::to_string(in[2 + d]) + " would become " + formatNumber(size));
        out[2 + d] = int64_t(size);
      }
      if (!shapes::numElements(out, why))
        return fail(why);
      mlir::Type element = elementTypeOf(*x);
      auto matrix = [&](size_t d) {
        std::optional<double> scale = hasScale ? std::optional<double>(given[d]) : std::nullopt;
        return element.isF64()
                   ? linearInterpolationMatrix<double>(in[2 + d], out[2 + d], alignCorners, scale)
                   : linearInterpolationMatrix<float>(in[2 + d], out[2 + d], alignCorners, scale);
      };
      auto constant = [&](llvm::ArrayRef<int64_t> shape, const std::vector<double> &values) {
        auto type = mlir::RankedTensorType::get(shape, element);
        llvm::SmallVector<mlir::Attribute> elements;
        for (double v : values)
          elements.push_back(mlir::FloatAttr::get(element, v));
        return ConstantOp::create(b, location, type,
                                  mlir::DenseElementsAttr::get(type, elements));
      };
      const int64_t h = in[2], w = in[3], ho = out[2], wo = out[3];
      // Along the width: [N, C, H, W] x [W, Wo].
      shapes::Shape wide = {in[0], in[1], h, wo};
      mlir::Value r = MatmulOp::create(b, location, typeLike(*x, wide), *x,
                                       constant({w, wo}, matrix(1)));
      // Along the height: [Ho, H] x [N, C, H, Wo], M^T as the left side.
      std::vector<double> down = matrix(0), left(ho * h);
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < ho; ++j)
          left[j * h + i] = down[i * ho + j];
      return EValue::ofTensor(
          MatmulOp::create(b, location, typeLike(*x, out), constant({ho, h}, left), r));
    }
    llvm::SmallVector<int64_t, 3> factors;
    for (size_t d = 0; d < spatial; ++d) {
      int64_t have = in[2 + d];
      double factor = hasSize ? given[d] / double(have) : given[d];
      if (!(factor >= 1) || factor != std::floor(factor) ||
          factor > double(int64_t(1) << 20))
        return fail("only whole scale factors of 1 or more are supported, but "
                    "spatial dimension " +
                    std::to_string(d) + " goes from " + std::to_string(have) +
                    " to " +
                    formatNumber(hasSize ? given[d] : given[d] * double(have)));
      factors.push_back(int64_t(factor));
    }
    shapes::Shape split(in.begin(), in.begin() + 2), tiled = split, out = split;
    for (size_t d = 0; d < spatial; ++d) {
      int64_t have = in[2 + d];
      split.append({have, 1});
      tiled.append({have, factors[d]});
      out.push_back(have * factors[d]);
    }
    if (!shapes::numElements(tiled, why))
      return fail(why);
    if (out == shapes::Shape(in.begin(), in.end()))
      return EValue::ofTensor(*x);
    mlir::Value r = ReshapeOp::create(b, location, typeLike(*x, split), *x);
    r = BroadcastOp::create(b, location, typeLike(*x, tiled), r);
    return EValue::ofTensor(
        ReshapeOp::create(b, location, typeLike(*x, out), r));
  }
  if (name == "unbind" || name == "chunk" || name == "split") {
    // A tuple of slices along `dim`, for `q, k, v = qkv.unbind(0)`:
    // unbind takes every index (and drops the dimension); chunk cuts
    // ceil(size / chunks)-long pieces (so possibly fewer than asked, the last
    // shorter), split pieces of a given length or a list of lengths.
    std::vector<ParamDecl> params = {req("x")};
    if (name == "chunk")
      params.push_back(req("chunks"));
    if (name == "split")
      params.push_back(req("split_size_or_sections"));
    params.push_back(opt("dim", EValue::ofInt(0)));
    if (!bindArgs(args, params, a, what, loc))
      return std::nullopt;
    auto x = tensorArg("x");
    if (!x)
      return std::nullopt;
    llvm::ArrayRef<int64_t> in = shapeOf(*x);
    if (in.empty())
      return fail("expected a tensor with dimensions but got a scalar");
    auto dim = dimArg("dim", in.size());
    if (!dim)
      return std::nullopt;
    const int64_t size = in[*dim];
    llvm::SmallVector<int64_t, 8> lengths;
    if (name == "unbind") {
      if (size > 4096)
        return fail("makes " + std::to_string(size) +
                    " pieces; at most 4096 are supported");
      lengths.assign(size, 1);
    } else if (name == "chunk") {
      auto chunks = toInt(a["chunks"], loc, "chunks of chunk()");
      if (!chunks)
        return std::nullopt;
      if (*chunks < 1)
        return fail("expected chunks >= 1 but got " + std::to_string(*chunks));
      int64_t piece = size / *chunks + (size % *chunks != 0);
      for (int64_t at = 0; at < size && lengths.size() <= 4096; at += piece)
        lengths.push_back(std::min(piece, size - at));
    } else if (a["split_size_or_sections"].kind == EValue::Kind::Tuple) {
      auto sections =
          toIntList(a["split_size_or_sections"], loc, "sections of split()");
      if (!sections)
        return std::nullopt;
      int64_t total = 0;
      for (int64_t s : *sections) {
        if (s < 1)
          return fail("expected every section to be at least 1 but got " +
                      std::to_string(s));
        if (s > size)
          return fail("a section of " + std::to_string(s) +
                      " is longer than dimension " + std::to_string(*dim) +
                      " (" + std::to_string(size) + ")");
        total += s;
      }
      if (total != size)
        return fail("sections add up to " + std::to_string(total) +
                    " but dimension " + std::to_string(*dim) + " has " +
                    std::to_string(size));
      lengths.assign(sections->begin(), sections->end());
    } else {
      auto piece =
          toInt(a["split_size_or_sections"], loc, "split_size of split()");
      if (!piece)
        return std::nullopt;
      if (*piece < 1)
        return fail("expected split_size >= 1 but got " +
                    std::to_string(*piece));
      for (int64_t at = 0; at < size && lengths.size() <= 4096; at += *piece)
        lengths.push_back(std::min(*piece, size - at));
    }
    if (lengths.size() > 4096)
      return fail("makes more than 4096 pieces, the most supported");
    std::vector<EValue> pieces;
    llvm::SmallVector<int64_t, 4> start(in.size(), 0),
        limit(in.begin(), in.end()), stride(in.size(), 1);
    int64_t at = 0;
    for (int64_t length : lengths) {
      start[*dim] = at;
      limit[*dim] = at + length;
      at += length;
      shapes::Shape part(in.begin(), in.end());
      part[*dim] = length;
      mlir::Value r = *x;
      if (length != size)
        r = SliceOp::create(
            b, location, typeLike(*x, part), *x, b.getDenseI64ArrayAttr(start),
            b.getDenseI64ArrayAttr(limit), b.getDenseI64ArrayAttr(stride));
      if (name == "unbind") {
        part.erase(part.begin() + *dim);
        r = ReshapeOp::create(b, location, typeLike(*x, part), r);
      }
      pieces.push_back(EValue::ofTensor(r));
    }
    return EValue::ofTuple(std::move(pieces));
  }
  if (name == "reshape" || name == "view") {
    if (args.empty() || !args[0].name.empty())
      return fail("expected a tensor and a shape");
    a["x"] = args[0].value;
    auto x = tensorArg("x");
    auto target = restAsInts(1, "shape");
    if (!x || !target) return std::nullopt;
    auto out = shapes::reshape(shapeOf(*x), *target, why);
    if (!out) return fail(why);
    return EValue::ofTensor(ReshapeOp::create(b, location, typeLike(*x, *out), *x));
  }
  if (name == "flatten") {
    ParamDecl params[] = {req("x"), opt("start_dim", EValue::ofInt(0)),
                          opt("end_dim", EValue::ofInt(-1))};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    auto x = tensorArg("x");
    if (!x) return std::nullopt;
    llvm::ArrayRef<int64_t> in = shapeOf(*x);
    int64_t rank = std::max<int64_t>(in.size(), 1);
    auto start = dimArg("start_dim", rank), end = dimArg("end_dim", rank);
    if (!start || !end) return std::nullopt;
    if (*start > *end) return fail("start_dim comes after end_dim");
    if (in.empty()) return EValue::ofTensor(ReshapeOp::create(b, location, typeLike(*x, {1}), *x));
    shapes::Shape out(in.begin(), in.begin() + *start);
    int64_t merged = 1;
    for (int64_t i = *start; i <= *end; ++i) merged *= in[i]; // bounded by numElements
    out.push_back(merged);
    out.append(in.begin() + *end + 1, in.end());
    if (out == shapes::Shape(in.begin(), in.end())) return EValue::ofTensor(*x);
    return EValue::ofTensor(ReshapeOp::create(b, location, typeLike(*x, out), *x));
  }
  if (name == "transpose" || name == "permute") {
    if (args.empty() || !args[0].name.empty())
      return fail("expected a tensor first");
    a["x"] = args[0].value;
    auto x = tensorArg("x");
    if (!x) return std::nullopt;
    int64_t rank = shapeOf(*x).size();
    llvm::SmallVector<int64_t, 4> perm;
    if (name == "transpose") {
      ParamDecl params[] = {req("x"), req("dim0"), req("dim1")};
      a.clear();
      if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
      auto d0 = dimArg("dim0", rank), d1 = dimArg("dim1", rank);
      if (!d0 || !d1) return std::nullopt;
      for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
      std::swap(perm[*d0], perm[*d1]);
    } else {
      auto dims = restAsInts(1, "dims");
      if (!dims) return std::nullopt;
      for (int64_t d : *dims) {
        auto n = shapes::normalizeDim(d, rank, why);
        if (!n) return fail(why);
        perm.push_back(*n);
      }
    }
    auto out = shapes::permute(shapeOf(*x), perm, why);
    if (!out) return fail(why);
    return EValue::ofTensor(PermuteOp::create(b, location, typeLike(*x, *out), *x,
                                              b.getDenseI64ArrayAttr(perm)));
  }
  if (name == "cat" || name == "concat") {
    ParamDecl params[] = {req("tensors"), opt("dim", EValue::ofInt(0))};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    if (a["tensors"].kind != EValue::Kind::Tuple || a["tensors"].elems.empty())
      return fail("expected a non-empty list of tensors but got " + describe(a["tensors"]));
    llvm::SmallVector<mlir::Value> tensors;
    std::vector<shapes::Shape> shapeList;
    for (const EValue &e : a["tensors"].elems) {
      auto t = toTensor(e, loc, "an item of " + what);
      if (!t) return std::nullopt;
      if (elementTypeOf(*t) != elementTypeOf(tensors.empty() ? *t : tensors.front()))
        return fail("expected tensors of one element type");
      tensors.push_back(*t);
      shapeList.emplace_back(shapeOf(*t).begin(), shapeOf(*t).end());
    }
    auto dim = dimArg("dim", shapeList.front().size());
    if (!dim) return std::nullopt;
    auto out = shapes::concat(shapeList, *dim, why);
    if (!out) return fail(why);
    return EValue::ofTensor(ConcatOp::create(b, location, typeLike(tensors.front(), *out),
                                             tensors, b.getI64IntegerAttr(*dim)));
  }
  if (name == "mean" || name == "sum") {
    ParamDecl params[] = {req("x"), opt("dim", EValue::none()),
                          opt("keepdim", EValue::ofBool(false))};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    auto x = floatTensorArg("x");
    auto keepdim = toBool(a["keepdim"], loc, "keepdim of " + what);
    if (!x || !keepdim) return std::nullopt;
    int64_t rank = shapeOf(*x).size();
    llvm::SmallVector<int64_t, 4> dims;
    if (a["dim"].kind == EValue::Kind::None) {
      for (int64_t i = 0; i < rank; ++i) dims.push_back(i);
    } else {
      auto list = toIntList(a["dim"], loc, "dim of " + what);
      if (!list) return std::nullopt;
      for (int64_t d : *list) {
        auto n = shapes::normalizeDim(d, rank, why);
        if (!n) return fail(why);
        dims.push_back(*n);
      }
      llvm::sort(dims);
      if (std::adjacent_find(dims.begin(), dims.end()) != dims.end())
        return fail("a dimension appears twice in dim");
    }
    auto out = shapes::reduce(shapeOf(*x), dims, *keepdim, why);
    if (!out) return fail(why);
    auto type = typeLike(*x, *out);
    auto dimsAttr = b.getDenseI64ArrayAttr(dims);
    mlir::Value r = name == "mean"
        ? MeanOp::create(b, location, type, *x, dimsAttr, b.getBoolAttr(*keepdim)).getResult()
        : SumOp::create(b, location, type, *x, dimsAttr, b.getBoolAttr(*keepdim)).getResult();
    return EValue::ofTensor(r);
  }
  if (name == "size") {
    ParamDecl params[] = {req("x"), opt("dim", EValue::none())};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    auto x = tensorArg("x");
    if (!x) return std::nullopt;
    llvm::ArrayRef<int64_t> shape = shapeOf(*x);
    if (a["dim"].kind == EValue::Kind::None) {
      std::vector<EValue> dims;
      for (int64_t d : shape) dims.push_back(EValue::ofInt(d));
      return EValue::ofTuple(std::move(dims));
    }
    auto d = dimArg("dim", shape.size());
    if (!d) return std::nullopt;
    return EValue::ofInt(shape[*d]);
  }
  if (name == "dropout") {
    ParamDecl params[] = {req("x"), opt("p", EValue::ofFloat(0.5))};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    auto x = floatTensorArg("x");
    auto p = toFloat(a["p"], loc, "p of dropout()");
    if (!x || !p) return std::nullopt;
    if (*p < 0 || *p >= 1) {
      error(loc) << "expected p of dropout() in [0, 1) but got " << formatNumber(*p);
      return std::nullopt;
    }
    if (!fn->training || *p == 0) return EValue::ofTensor(*x);
    return EValue::ofTensor(DropoutOp::create(
        b, location, x->getType(), *x, b.getF64FloatAttr(*p), b.getBoolAttr(true),
        b.getI64IntegerAttr(fn->nextDropoutStream++)));
  }
  if (name == "cross_entropy") {
    ParamDecl params[] = {req("x"), req("target"),
                          opt("label_smoothing", EValue::ofFloat(0.0)),
                          opt("reduction", EValue::ofString("mean"))};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    auto x = floatTensorArg("x"), y = tensorArg("target");
    auto smoothing = toFloat(a["label_smoothing"], loc, "label_smoothing of " + what);
    auto reduction = toString(a["reduction"], loc, "reduction of " + what);
    if (!x || !y || !smoothing || !reduction) return std::nullopt;
    if (*reduction != "mean")
      return fail("only reduction=\"mean\" is supported but got \"" + *reduction + "\"");
    if (*smoothing < 0 || *smoothing > 1)
      return fail("expected label_smoothing in [0, 1] but got " + formatNumber(*smoothing));
    mlir::Type labelType = elementTypeOf(*y);
    if (!labelType.isInteger(64) && !labelType.isInteger(32))
      return fail("expected integer class labels (i64) as target but got " + describe(a["target"]));
    auto out = shapes::crossEntropy(shapeOf(*x), shapeOf(*y), why);
    if (!out) return fail(why);
    return EValue::ofTensor(CrossEntropyOp::create(b, location, typeLike(*x, *out), *x, *y,
                                                   b.getF64FloatAttr(*smoothing)));
  }
  if (name == "mse_loss") {
    ParamDecl params[] = {req("x"), req("target"), opt("reduction", EValue::ofString("mean"))};
    if (!bindArgs(args, params, a, what, loc)) return std::nullopt;
    auto x = floatTensorArg("x"), y = floatTensorArg("target");
    auto reduction = toString(a["reduction"], loc, "reduction of " + what);
    if (!x || !y || !reduction) return std::nullopt;
    if (*reduction != "mean")
      return fail("only reduction=\"mean\" is supported but got \"" + *reduction + "\"");
    if (x->getType() != y->getType())
      return fail("expected input and target of one shape and type but got " +
                  describe(a["x"]) + " and " + describe(a["target"]));
    return EValue::ofTensor(MseLossOp::create(b, location, typeLike(*x, {}), *x, *y));
  }
  error(loc) << "unknown function '" << name << "'";
  return std::nullopt;
}

Result Elaborator::indexTensor(const EValue &base, const std::vector<ast::IndexItem> &items,
                               ast::Loc loc, const Scope &scope) {
  if (!fn) {
    error(loc) << "tensors can only be indexed inside forward or loss";
    return std::nullopt;
  }
  mlir::Value x = base.tensor;
  llvm::ArrayRef<int64_t> shape = shapeOf(x);
  if (items.size() > shape.size()) {
    error(loc) << "too many indices (" << items.size() << ") for "
               << describe(base);
    return std::nullopt;
  }
  llvm::SmallVector<int64_t, 4> start, limit, stride;
  shapes::Shape kept; // result shape after dropping integer-indexed dims
  auto evalOptional = [&](const ast::ExprPtr &e, std::optional<int64_t> &out,
                          const char *what) -> bool {
    if (!e) return true;
    Result v = evaluate(*e, scope);
    if (!v) return false;
    if (v->kind == EValue::Kind::None) return true;
    auto i = toInt(*v, e->getLoc(), what);
    if (!i) return false;
    out = *i;
    return true;
  };
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t size = shape[d];
    if (d >= items.size()) {
      start.push_back(0), limit.push_back(size), stride.push_back(1);
      kept.push_back(size);
      continue;
    }
    const ast::IndexItem &item = items[d];
    if (!item.isSlice) {
      std::optional<int64_t> index;
      if (!evalOptional(item.index, index, "index")) return std::nullopt;
      if (!index) {
        error(item.loc) << "expected an integer index";
        return std::nullopt;
      }
      int64_t k = *index < 0 ? *index + size : *index;
      if (k < 0 || k >= size) {
        error(item.loc) << "index " << *index << " is out of range for dimension "
                        << d << " of size " << size;
        return std::nullopt;
      }
      start.push_back(k), limit.push_back(k + 1), stride.push_back(1);
      continue;
    }
    std::optional<int64_t> first, last, step;
    if (!evalOptional(item.start, first, "slice start") ||
        !evalOptional(item.stop, last, "slice stop") ||
        !evalOptional(item.step, step, "slice step"))
      return std::nullopt;
    int64_t s = step.value_or(1);
    if (s < 1) {
      error(item.loc) << "expected a slice step of at least 1 but got " << s;
      return std::nullopt;
    }
    // Python's clamping of slice bounds.
    auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
      if (!v) return fallback;
      int64_t k = *v < 0 ? std::max<int64_t>(*v + size, 0) : *v;
      return std::min(k, size);
    };
    int64_t lo = clamp(first, 0), hi = std::max(clamp(last, size), clamp(first, 0));
    if (hi == lo) {
      error(item.loc) << "slice selects nothing from dimension " << d << " of size "
                      << size << " (empty tensors are not supported)";
      return std::nullopt;
    }
    start.push_back(lo), limit.push_back(hi), stride.push_back(s);
    kept.push_back((hi - lo - 1) / s + 1); // ceil((hi - lo) / s) without overflow
  }
  std::string why;
  auto sliced = shapes::slice(shape, start, limit, stride, why);
  if (!sliced) {
    error(loc) << why;
    return std::nullopt;
  }
  mlir::OpBuilder &b = *fn->builder;
  mlir::Location location = opLoc(loc, currentLayerPath);
  mlir::Type elementType = elementTypeOf(x);
  mlir::Value r = x;
  if (shapes::Shape(sliced->begin(), sliced->end()) != shapes::Shape(shape.begin(), shape.end()))
    r = SliceOp::create(b, location, mlir::RankedTensorType::get(*sliced, elementType), x,
                        b.getDenseI64ArrayAttr(start), b.getDenseI64ArrayAttr(limit),
                        b.getDenseI64ArrayAttr(stride));
  if (kept.size() != sliced->size())
    r = ReshapeOp::create(b, location, mlir::RankedTensorType::get(kept, elementType), r);
  return EValue::ofTensor(r);
}
