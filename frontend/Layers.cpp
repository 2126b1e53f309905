//===- Layers.cpp - PyTorch's layers: construction and calls --------------===//
//
// Each builtin layer takes torch.nn's constructor arguments and defaults,
// owns the parameters and buffers PyTorch would (same names, shapes and
// initialisation rule), and emits its op when called inside a function.
//
//===----------------------------------------------------------------------===//

#include "frontend/ElaboratorImpl.h"
#include "ir/ShapeFunctions.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace cairn;
using llvm::StringRef;

namespace {
const char *const kLayerNames[] = {
    "Linear",    "Conv2d",   "BatchNorm1d",       "BatchNorm2d", "LayerNorm",
    "Embedding", "Dropout",  "MaxPool2d",         "AvgPool2d",   "AdaptiveAvgPool2d",
    "Sequential", "ReLU",    "GELU",              "Sigmoid",     "Tanh",
    "Flatten",   "Softmax",  "LogSoftmax",        "Identity",    "Parameter",
    "SiLU",      "Hardswish", "LeakyReLU",        "Hardtanh",    "ReLU6",
    "Upsample",  "ConvTranspose2d", "GroupNorm"};

TensorSlot makeSlot(const char *name, llvm::ArrayRef<int64_t> shape, Role role,
                    InitKind init, double scale = 0) {
  TensorSlot slot;
  slot.name = name;
  slot.shape.assign(shape.begin(), shape.end());
  slot.role = role;
  slot.init = init;
  slot.scale = scale;
  return slot;
}
} // namespace

bool Elaborator::isLayerConstructor(StringRef name) const {
  return llvm::is_contained(kLayerNames, name);
}

Result Elaborator::constructLayer(const std::string &type,
                                  std::vector<CallArg> &args, ast::Loc loc) {
  if (fn) {
    error(loc) << "layer '" << type
               << "' must be created in a module body, not inside a function";
    return std::nullopt;
  }
  auto layer = std::make_shared<Layer>();
  layer->type = type;
  layer->loc = loc;
  std::map<std::string, EValue> &c = layer->config;
  const std::string what = type;
  auto positive = [&](const char *name) -> std::optional<int64_t> {
    auto v = toInt(c[name], loc, std::string(name) + " of " + type);
    if (!v)
      return std::nullopt;
    if (*v < 1) {
      error(loc) << "expected " << name << " of " << type
                 << " to be at least 1 but got " << *v;
      return std::nullopt;
    }
    return v;
  };
  auto checkShape = [&](llvm::ArrayRef<int64_t> shape) {
    std::string why;
    if (shapes::numElements(shape, why))
      return true;
    error(loc) << type << ": " << why;
    return false;
  };
  auto probability = [&](const char *name) -> bool {
    auto p = toFloat(c[name], loc, std::string(name) + " of " + type);
    if (!p)
      return false;
    if (*p < 0 || *p >= 1) {
      error(loc) << "expected " << name << " of " << type
                 << " in [0, 1) but got " << formatNumber(*p);
      return false;
    }
    c[name] = EValue::ofFloat(*p);
    return true;
  };

  if (type == "Sequential") {
    for (CallArg &arg : args) {
      if (!arg.name.empty()) {
        error(arg.loc) << "Sequential takes layers, not keyword arguments";
        return std::nullopt;
      }
      if (arg.value.kind != EValue::Kind::Layer || arg.value.layer->type == "list" ||
          arg.value.layer->type == "Parameter") {
        error(arg.loc) << "expected a layer in Sequential but got " << describe(arg.value);
        return std::nullopt;
      }
      if (arg.value.layer->registered) {
        error(arg.loc) << "layer '" << arg.value.layer->displayName()
                       << "' is already part of the model; create a new layer instead";
        return std::nullopt;
      }
      arg.value.layer->registered = true;
      layer->children.emplace_back(std::to_string(layer->children.size()),
                                   arg.value.layer);
    }
    return EValue::ofLayer(layer);
  }

  if (type == "Linear") {
    ParamDecl params[] = {req("in_features"), req("out_features"),
                          opt("bias", EValue::ofBool(true))};
    if (!bindArgs(args, params, c, what, loc)) return std::nullopt;
    auto in = positive("in_features"), out = positive("out_features");
    auto bias = toBool(c["bias"], loc, "bias of Linear");
    if (!in || !out || !bias || !checkShape({*out, *in})) return std::nullopt;
    double bound = 1.0 / std::sqrt(double(*in));
    layer->slots.push_back(makeSlot("weight", {*out, *in}, Role::param, InitKind::uniform, bound));
    if (*bias)
      layer->slots.push_back(makeSlot("bias", {*out}, Role::param, InitKind::uniform, bound));
    return EValue::ofLayer(layer);
  }

  if (type == "Conv2d") {
    ParamDecl params[] = {req("in_channels"), req("out_channels"), req("kernel_size"),
                          opt("stride", EValue::ofInt(1)), opt("padding", EValue::ofInt(0)),
                          opt("dilation", EValue::ofInt(1)), opt("groups", EValue::ofInt(1)),
                          opt("bias", EValue::ofBool(true))};
    if (!bindArgs(args, params, c, what, loc)) return std::nullopt;
    auto in = positive("in_channels"), out = positive("out_channels");
    auto groups = positive("groups");
    auto kernel = toInts(c["kernel_size"], 2, loc, "kernel_size of Conv2d");
    auto stride = toInts(c["stride"], 2, loc, "stride of Conv2d");
    auto dilation = toInts(c["dilation"], 2, loc, "dilation of Conv2d");
    auto bias = toBool(c["bias"], loc, "bias of Conv2d");
    if (!in || !out || !groups || !kernel || !stride || !dilation || !bias)
      return std::nullopt;
    for (int64_t v : *kernel)
      if (v < 1) {
        error(loc) << "expected kernel_size of Conv2d to be at least 1 but got " << v;
        return std::nullopt;
      }
    for (int64_t v : *stride)
      if (v < 1) {
        error(loc) << "expected stride of Conv2d to be at least 1 but got " << v;
        return std::nullopt;
      }
    for (int64_t v : *dilation)
      if (v < 1) {
        error(loc) << "expected dilation of Conv2d to be at least 1 but got " << v;
        return std::nullopt;
      }
    llvm::SmallVector<int64_t, 4> padding;
    if (c["padding"].kind == EValue::Kind::String) {
      const std::string &mode = c["padding"].s;
      if (mode == "valid") {
        padding = {0, 0};
      } else if (mode == "same") {
        if ((*stride)[0] != 1 || (*stride)[1] != 1) {
          error(loc) << "padding='same' needs stride 1 in Conv2d";
          return std::nullopt;
        }
        for (int i = 0; i < 2; ++i) {
          int64_t total = (*dilation)[i] * ((*kernel)[i] - 1);
          if (total % 2) {
            error(loc) << "padding='same' with this kernel needs asymmetric "
                          "padding, which Conv2d here does not support";
            return std::nullopt;
          }
          padding.push_back(total / 2);
        }
      } else {
        error(loc) << "expected padding of Conv2d to be 'same', 'valid' or "
                      "integers but got \"" << mode << "\"";
        return std::nullopt;
      }
    } else {
      auto p = toInts(c["padding"], 2, loc, "padding of Conv2d");
      if (!p) return std::nullopt;
      for (int64_t v : *p)
        if (v < 0) {
          error(loc) << "expected padding of Conv2d to be at least 0 but got " << v;
          return std::nullopt;
        }
      padding = *p;
    }
    if (*in % *groups || *out % *groups) {
      error(loc) << "Conv2d: in_channels (" << *in << ") and out_channels ("
                 << *out << ") must be divisible by groups (" << *groups << ")";
      return std::nullopt;
    }
    llvm::SmallVector<int64_t, 4> weightShape = {*out, *in / *groups, (*kernel)[0], (*kernel)[1]};
    if (!checkShape(weightShape)) return std::nullopt;
    c["kernel_size"] = EValue::ofTuple({EValue::ofInt((*kernel)[0]), EValue::ofInt((*kernel)[1])});
    c["stride"] = EValue::ofTuple({EValue::ofInt((*stride)[0]), EValue::ofInt((*stride)[1])});
    c["dilation"] = EValue::ofTuple({EValue::ofInt((*dilation)[0]), EValue::ofInt((*dilation)[1])});
    c["padding"] = EValue::ofTuple({EValue::ofInt(padding[0]), EValue::ofInt(padding[1])});
    double fanIn = double(*in / *groups) * double((*kernel)[0]) * double((*kernel)[1]);
    double bound = 1.0 / std::sqrt(fanIn);
    layer->slots.push_back(makeSlot("weight", weightShape, Role::param, InitKind::uniform, bound));
    if (*bias)
      layer->slots.push_back(makeSlot("bias", {*out}, Role::param, InitKind::uniform, bound));
    return EValue::ofLayer(layer);
  }

  if (type == "ConvTranspose2d") {
    // nn.ConvTranspose2d: the adjoint of a Conv2d from out_channels to
    // in_channels, whose weight [in, out / groups, kh, kw] it shares.
    ParamDecl params[] = {req("in_channels"),
                          req("out_channels"),
                          req("kernel_size"),
                          opt("stride", EValue::ofInt(1)),
                          opt("padding", EValue::ofInt(0)),
                          opt("output_padding", EValue::ofInt(0)),
                          opt("groups", EValue::ofInt(1)),
                          opt("bias", EValue::ofBool(true)),
                          opt("dilation", EValue::ofInt(1))};
    if (!bindArgs(args, params, c, what, loc))
      return std::nullopt;
    auto in = positive("in_channels"), out = positive("out_channels");
    auto groups = positive("groups");
    auto kernel =
        toInts(c["kernel_size"], 2, loc, "kernel_size of ConvTranspose2d");
    auto stride = toInts(c["stride"], 2, loc, "stride of ConvTranspose2d");
    auto padding = toInts(c["padding"], 2, loc, "padding of ConvTranspose2d");
    auto outputPadding = toInts(c["output_padding"], 2, loc,
                                "output_padding of ConvTranspose2d");
    auto dilation =
        toInts(c["dilation"], 2, loc, "dilation of ConvTranspose2d");
    auto bias = toBool(c["bias"], loc, "bias of ConvTranspose2d");
    if (!in || !out || !groups || !kernel || !stride || !padding ||
        !outputPadding || !dilation || !bias)
      return std::nullopt;
    for (int i = 0; i < 2; ++i) {
      const char *bad = (*kernel)[i] < 1     ? "kernel_size"
                        : (*stride)[i] < 1   ? "stride"
                        : (*dilation)[i] < 1 ? "dilation"
                        : (*padding)[i] < 0  ? "padding"
                                             : nullptr;
      if (bad) {
        error(loc) << "expected " << bad
                   << " of ConvTranspose2d to be at least "
                   << (std::string(bad) == "padding" ? 0 : 1);
        return std::nullopt;
      }
      // The output then convolves back to the input's size exactly.
      if ((*outputPadding)[i] < 0 || (*outputPadding)[i] >= (*stride)[i]) {
        error(loc) << "expected output_padding of ConvTranspose2d in [0, "
                      "stride) but got "
                   << (*outputPadding)[i] << " with stride " << (*stride)[i];
        return std::nullopt;
      }
    }
    if (*in % *groups || *out % *groups) {
      error(loc) << "ConvTranspose2d: in_channels (" << *in
                 << ") and out_channels (" << *out
                 << ") must be divisible by groups (" << *groups << ")";
      return std::nullopt;
    }
    llvm::SmallVector<int64_t, 4> weightShape = {*in, *out / *groups,
                                                 (*kernel)[0], (*kernel)[1]};
    if (!checkShape(weightShape))
      return std::nullopt;
    auto pair = [](llvm::ArrayRef<int64_t> v) {
      return EValue::ofTuple({EValue::ofInt(v[0]), EValue::ofInt(v[1])});
    };
    c["kernel_size"] = pair(*kernel);
    c["stride"] = pair(*stride);
    c["padding"] = pair(*padding);
    c["output_padding"] = pair(*outputPadding);
    c["dilation"] = pair(*dilation);
    // PyTorch's fan-in of the transposed weight: its dimension 1 times the
    // kernel's area.
    double fanIn =
        double(*out / *groups) * double((*kernel)[0]) * double((*kernel)[1]);
    double bound = 1.0 / std::sqrt(fanIn);
    layer->slots.push_back(
        makeSlot("weight", weightShape, Role::param, InitKind::uniform, bound));
    if (*bias)
      layer->slots.push_back(
          makeSlot("bias", {*out}, Role::param, InitKind::uniform, bound));
    return EValue::ofLayer(layer);
  }

  if (type == "BatchNorm1d" || type == "BatchNorm2d") {
    ParamDecl params[] = {req("num_features"), opt("eps", EValue::ofFloat(1e-5)),
                          opt("momentum", EValue::ofFloat(0.1)),
                          opt("affine", EValue::ofBool(true)),
                          opt("track_running_stats", EValue::ofBool(true))};
    if (!bindArgs(args, params, c, what, loc)) return std::nullopt;
    auto n = positive("num_features");
    auto eps = toFloat(c["eps"], loc, "eps of " + type);
    auto momentum = toFloat(c["momentum"], loc, "momentum of " + type);
    auto affine = toBool(c["affine"], loc, "affine of " + type);
    auto track = toBool(c["track_running_stats"], loc, "track_running_stats of " + type);
    if (!n || !eps || !momentum || !affine || !track) return std::nullopt;
    if (*eps <= 0 || *momentum < 0 || *momentum > 1) {
      error(loc) << type << ": expected eps > 0 and momentum in [0, 1] but got eps "
                 << formatNumber(*eps) << " and momentum " << formatNumber(*momentum);
      return std::nullopt;
    }
    c["eps"] = EValue::ofFloat(*eps);
    c["momentum"] = EValue::ofFloat(*momentum);
    if (*affine) {
      layer->slots.push_back(makeSlot("weight", {*n}, Role::param, InitKind::ones));
      layer->slots.push_back(makeSlot("bias", {*n}, Role::param, InitKind::zeros));
    }
    if (*track) {
      layer->slots.push_back(makeSlot("running_mean", {*n}, Role::buffer, InitKind::zeros));
      layer->slots.push_back(makeSlot("running_var", {*n}, Role::buffer, InitKind::ones));
      TensorSlot count = makeSlot("num_batches_tracked", {}, Role::buffer, InitKind::zeros);
      count.isInteger = true;
      layer->slots.push_back(count);
    }
    return EValue::ofLayer(layer);
  }

  if (type == "GroupNorm") {
    ParamDecl params[] = {req("num_groups"), req("num_channels"),
                          opt("eps", EValue::ofFloat(1e-5)),
                          opt("affine", EValue::ofBool(true))};
    if (!bindArgs(args, params, c, what, loc))
      return std::nullopt;
    auto groups = positive("num_groups"), channels = positive("num_channels");
    auto eps = toFloat(c["eps"], loc, "eps of GroupNorm");
    auto affine = toBool(c["affine"], loc, "affine of GroupNorm");
    if (!groups || !channels || !eps || !affine)
      return std::nullopt;
    if (*channels % *groups) {
      error(loc) << "GroupNorm: num_channels (" << *channels
                 << ") must be divisible by "
                 << "num_groups (" << *groups << ")";
      return std::nullopt;
    }
    if (!(*eps > 0)) {
      error(loc) << "expected eps of GroupNorm > 0 but got "
                 << formatNumber(*eps);
      return std::nullopt;
    }
    c["eps"] = EValue::ofFloat(*eps);
    if (*affine) {
      layer->slots.push_back(
          makeSlot("weight", {*channels}, Role::param, InitKind::ones));
      layer->slots.push_back(
          makeSlot("bias", {*channels}, Role::param, InitKind::zeros));
    }
    return EValue::ofLayer(layer);
  }
  if (type == "LayerNorm") {
    ParamDecl params[] = {req("normalized_shape"), opt("eps", EValue::ofFloat(1e-5)),
                          opt("elementwise_affine", EValue::ofBool(true)),
                          opt("bias", EValue::ofBool(true))};
    if (!bindArgs(args, params, c, what, loc)) return std::nullopt;
    auto shape = toIntList(c["normalized_shape"], loc, "normalized_shape of LayerNorm");
    auto eps = toFloat(c["eps"], loc, "eps of LayerNorm");
    auto affine = toBool(c["elementwise_affine"], loc, "elementwise_affine of LayerNorm");
    auto bias = toBool(c["bias"], loc, "bias of LayerNorm");
    if (!shape || !eps || !affine || !bias) return std::nullopt;
    if (shape->empty() || *eps <= 0) {
      error(loc) << "LayerNorm: expected a non-empty normalized_shape and eps > 0";
      return std::nullopt;
    }
    for (int64_t d : *shape)
      if (d < 1) {
        error(loc) << "expected normalized_shape of LayerNorm to hold sizes of at "
                      "least 1 but got " << d;
        return std::nullopt;
      }
    if (!checkShape(*shape)) return std::nullopt;
    std::vector<EValue> dims;
    for (int64_t d : *shape) dims.push_back(EValue::ofInt(d));
    c["normalized_shape"] = EValue::ofTuple(std::move(dims));
    c["eps"] = EValue::ofFloat(*eps);
    if (*affine) {
      layer->slots.push_back(makeSlot("weight", *shape, Role::param, InitKind::ones));
      if (*bias)
        layer->slots.push_back(makeSlot("bias", *shape, Role::param, InitKind::zeros));
    }
    return EValue::ofLayer(layer);
  }

  if (type == "Embedding") {
    ParamDecl params[] = {req("num_embeddings"), req("embedding_dim"),
                          opt("padding_idx", EValue::none())};
    if (!bindArgs(args, params, c, what, loc)) return std::nullopt;
    auto num = positive("num_embeddings"), dim = positive("embedding_dim");
    if (!num || !dim || !checkShape({*num, *dim})) return std::nullopt;
    if (c["padding_idx"].kind != EValue::Kind::None) {
      auto p = toInt(c["padding_idx"], loc, "padding_idx of Embedding");
      if (!p) return std::nullopt;
      int64_t idx = *p < 0 ? *p + *num : *p;
      if (idx < 0 || idx >= *num) {
        error(loc) << "expected padding_idx of Embedding in [" << -*num << ", "
                   << *num << ") but got " << *p;
        return std::nullopt;
      }
      c["padding_idx"] = EValue::ofInt(idx);
    }
    layer->slots.push_back(makeSlot("weight", {*num, *dim}, Role::param, InitKind::normal, 1.0));
    // nn.Embedding draws N(0, 1) and then zeroes the padding row.
    if (c["padding_idx"].kind == EValue::Kind::Int)
      layer->slots.back().zeroRow = c["padding_idx"].i;
    return EValue::ofLayer(layer);
  }

  if (type == "Dropout") {
    ParamDecl params[] = {opt("p", EValue::ofFloat(0.5))};
    if (!bindArgs(args, params, c, what, loc) || !probability("p")) return std::nullopt;
    return EValue::ofLayer(layer);
  }

  if (type == "MaxPool2d" || type == "AvgPool2d") {
    bool isMax = type == "MaxPool2d";
    std::vector<ParamDecl> params = {req("kernel_size"), opt("stride", EValue::none()),
                                     opt("padding", EValue::ofInt(0))};
    if (isMax)
      params.push_back(opt("dilation", EValue::ofInt(1)));
    params.push_back(opt("ceil_mode", EValue::ofBool(false)));
    if (!isMax)
      params.push_back(opt("count_include_pad", EValue::ofBool(true)));
    if (!bindArgs(args, params, c, what, loc)) return std::nullopt;
    auto kernel = toInts(c["kernel_size"], 2, loc, "kernel_size of " + type);
    if (!kernel) return std::nullopt;
    if (c["stride"].kind == EValue::Kind::None)
      c["stride"] = c["kernel_size"];
    auto stride = toInts(c["stride"], 2, loc, "stride of " + type);
    auto padding = toInts(c["padding"], 2, loc, "padding of " + type);
    auto ceil = toBool(c["ceil_mode"], loc, "ceil_mode of " + type);
    if (!kernel || !stride || !padding || !ceil) return std::nullopt;
    llvm::SmallVector<int64_t, 4> dilation = {1, 1};
    if (isMax) {
      auto d = toInts(c["dilation"], 2, loc, "dilation of MaxPool2d");
      if (!d) return std::nullopt;
      dilation = *d;
    } else if (!toBool(c["count_include_pad"], loc, "count_include_pad of AvgPool2d")) {
      return std::nullopt;
    }
    auto pair = [](llvm::ArrayRef<int64_t> v) {
      return EValue::ofTuple({EValue::ofInt(v[0]), EValue::ofInt(v[1])});
    };
    c["kernel_size"] = pair(*kernel);
    c["stride"] = pair(*stride);
    c["padding"] = pair(*padding);
    c["dilation"] = pair(dilation);
    return EValue::ofLayer(layer);
  }

  if (type == "AdaptiveAvgPool2d") {
    ParamDecl params[] = {req("output_size")};
    if (!bindArgs(args, params, c, what, loc)) return std::nullopt;
    auto size = toInts(c["output_size"], 2, loc, "output_size of AdaptiveAvgPool2d");
    if (!size) return std::nullopt;
    c["output_size"] = EValue::ofTuple({EValue::ofInt((*size)[0]), EValue::ofInt((*size)[1])});
    return EValue::ofLayer(layer);
  }

  if (type == "ReLU" || type == "Sigmoid" || type == "Tanh" || type == "SiLU" ||
      type == "Hardswish" || type == "Identity") {
    if (!bindArgs(args, {}, c, what, loc)) return std::nullopt;
    return EValue::ofLayer(layer);
  }
  if (type == "ReLU6") {
    if (!bindArgs(args, {}, c, what, loc))
      return std::nullopt;
    return EValue::ofLayer(layer);
  }
  if (type == "LeakyReLU") {
    ParamDecl params[] = {opt("negative_slope", EValue::ofFloat(0.01))};
    if (!bindArgs(args, params, c, what, loc) ||
        !toFloat(c["negative_slope"], loc, "negative_slope of LeakyReLU"))
      return std::nullopt;
    return EValue::ofLayer(layer);
  }
  if (type == "Hardtanh") {
    ParamDecl params[] = {opt("min_val", EValue::ofFloat(-1.0)),
                          opt("max_val", EValue::ofFloat(1.0))};
    if (!bindArgs(args, params, c, what, loc))
      return std::nullopt;
    auto lo = toFloat(c["min_val"], loc, "min_val of Hardtanh");
    auto hi =
        lo ? toFloat(c["max_val"], loc, "max_val of Hardtanh") : std::nullopt;
    if (!hi)
      return std::nullopt;
    // nn.Hardtanh's own check.
    if (*hi <= *lo) {
      error(loc)
          << "expected max_val of Hardtanh to be greater than min_val but got "
          << formatNumber(*hi) << " <= " << formatNumber(*lo);
      return std::nullopt;
    }
    return EValue::ofLayer(layer);
  }
  if (type == "GELU") {
    ParamDecl params[] = {opt("approximate", EValue::ofString("none"))};
    if (!bindArgs(args, params, c, what, loc)) return std::nullopt;
    auto approximate = toString(c["approximate"], loc, "approximate of GELU");
    if (!approximate) return std::nullopt;
    if (*approximate != "none" && *approximate != "tanh") {
      error(loc) << "expected approximate of GELU to be \"none\" or \"tanh\" but got \""
                 << *approximate << "\"";
      return std::nullopt;
    }
    return EValue::ofLayer(layer);
  }
  if (type == "Upsample") {
    // Checked by interpolate() when called, against the input's shape.
    ParamDecl params[] = {opt("size", EValue::none()),
                          opt("scale_factor", EValue::none()),
                          opt("mode", EValue::ofString("nearest")),
                          opt("align_corners", EValue::none())};
    if (!bindArgs(args, params, c, what, loc))
      return std::nullopt;
    return EValue::ofLayer(layer);
  }
  if (type == "Flatten") {
    ParamDecl params[] = {opt("start_dim", EValue::ofInt(1)), opt("end_dim", EValue::ofInt(-1))};
    if (!bindArgs(args, params, c, what, loc) ||
        !toInt(c["start_dim"], loc, "start_dim of Flatten") ||
        !toInt(c["end_dim"], loc, "end_dim of Flatten"))
      return std::nullopt;
    return EValue::ofLayer(layer);
  }
  if (type == "Softmax" || type == "LogSoftmax") {
    ParamDecl params[] = {req("dim")};
    if (!bindArgs(args, params, c, what, loc) || !toInt(c["dim"], loc, "dim of " + type))
      return std::nullopt;
    return EValue::ofLayer(layer);
  }

  assert(type == "Parameter" && "every name in kLayerNames is handled");
  ParamDecl params[] = {req("shape"), opt("init", EValue::ofString("zeros")),
                        opt("std", EValue::ofFloat(1.0)), opt("bound", EValue::ofFloat(1.0))};
  if (!bindArgs(args, params, c, what, loc)) return std::nullopt;
  auto shape = toIntList(c["shape"], loc, "shape of Parameter");
  auto init = toString(c["init"], loc, "init of Parameter");
  if (!shape || !init) return std::nullopt;
  for (int64_t d : *shape)
    if (d < 1) {
      error(loc) << "expected the shape of Parameter to hold sizes of at least 1 but got " << d;
      return std::nullopt;
    }
  if (!checkShape(*shape)) return std::nullopt;
  std::optional<InitKind> kind = symbolizeInitKind(*init);
  if (!kind) {
    error(loc) << "unknown init \"" << *init
               << "\" for Parameter; expected zeros, ones, uniform or normal";
    return std::nullopt;
  }
  double scale = 0;
  if (*kind == InitKind::normal || *kind == InitKind::uniform) {
    auto s = toFloat(c[*kind == InitKind::normal ? "std" : "bound"], loc,
                     *kind == InitKind::normal ? "std of Parameter" : "bound of Parameter");
    if (!s) return std::nullopt;
    if (*s < 0) {
      error(loc) << "expected a non-negative scale for Parameter but got " << formatNumber(*s);
      return std::nullopt;
    }
    scale = *s;
  }
  layer->slots.push_back(makeSlot("", *shape, Role::param, *kind, scale));
  return EValue::ofLayer(layer);
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

void Elaborator::forEachBuiltinName(llvm::function_ref<void(StringRef)> fn) const {
  for (const char *name : kLayerNames)
    fn(name);
  forEachBuiltinFunction(fn);
}

Result Elaborator::callLayer(Layer &layer, std::vector<CallArg> &args, ast::Loc loc) {
  if (!step(loc))
    return std::nullopt;
  const std::string &type = layer.type;
  if (layer.type == "list") {
    error(loc) << "'" << layer.displayName()
               << "' is a list of layers; call one of them, e.g. "
               << layer.displayName() << "[0](x)";
    return std::nullopt;
  }
  if (layer.module) {
    if (!layer.forward) {
      error(loc) << "module '" << layer.type << "' has no forward";
      return std::nullopt;
    }
    return callFunction(layer, *layer.forward, args, loc);
  }
  for (const TensorSlot &slot : layer.slots)
    if (slot.index < 0) {
      error(loc) << "layer '" << layer.type << "' is not part of the model; "
                    "assign it to a name in a module body before calling it";
      return std::nullopt;
    }

  if (type == "Sequential") {
    if (args.size() != 1 || !args[0].name.empty()) {
      error(loc) << "'" << layer.displayName() << "' (Sequential) takes one input";
      return std::nullopt;
    }
    EValue value = args[0].value;
    for (auto &[name, child] : layer.children) {
      std::vector<CallArg> childArgs = {{loc, "", value}};
      Result next = callLayer(*child, childArgs, loc);
      if (!next)
        return std::nullopt;
      value = *next;
    }
    return value;
  }

  // Every other builtin layer takes one tensor.
  std::string name = layer.displayName();
  std::string caller = "layer '" + name + "' (" + type + ")";
  std::string prefix = caller + ": ";
  if (args.size() != 1 || !args[0].name.empty() ||
      args[0].value.kind != EValue::Kind::Tensor) {
    error(loc) << prefix << "expected one tensor argument but got "
               << (args.size() == 1 ? describe(args[0].value)
                                    : std::to_string(args.size()) + " arguments");
    return std::nullopt;
  }
  mlir::Value input = args[0].value.tensor;
  mlir::OpBuilder &b = *fn->builder;
  mlir::Location opLocation = opLoc(loc, name);
  mlir::Type elementType = elementTypeOf(input);
  auto tensorType = [&](llvm::ArrayRef<int64_t> shape) {
    return mlir::RankedTensorType::get(shape, elementType);
  };
  auto slot = [&](const char *slotName) -> mlir::Value {
    for (const TensorSlot &s : layer.slots)
      if (s.name == slotName)
        return fn->slotValues[s.index];
    return nullptr;
  };
  auto shapeError = [&](const std::string &why) -> Result {
    error(loc) << prefix << why;
    return std::nullopt;
  };
  std::string why;
  llvm::ArrayRef<int64_t> inShape = shapeOf(input);
  if (type == "Embedding") {
    if (!elementType.isInteger(64) && !elementType.isInteger(32))
      return shapeError("expected integer indices but got " + describe(args[0].value));
    mlir::Value weight = slot("weight");
    auto out = shapes::embedding(inShape, shapeOf(weight), why);
    if (!out) return shapeError(why);
    const EValue &pad = layer.config["padding_idx"];
    return EValue::ofTensor(EmbeddingOp::create(
        b, opLocation, mlir::RankedTensorType::get(*out, elementTypeOf(weight)), input,
        weight, pad.kind == EValue::Kind::Int ? b.getI64IntegerAttr(pad.i) : mlir::IntegerAttr()));
  }
  if (!llvm::isa<mlir::FloatType>(elementType))
    return shapeError("expected a floating-point input but got " + describe(args[0].value));
  if (elementType != f32Type() && !layer.slots.empty())
    return shapeError("expected an f32 input (parameters are f32) but got " +
                      describe(args[0].value));
  auto pairOf = [&](const char *key) {
    const EValue &v = layer.config[key];
    return llvm::SmallVector<int64_t, 2>{v.elems[0].i, v.elems[1].i};
  };

  if (type == "Linear") {
    mlir::Value weight = slot("weight"), bias = slot("bias");
    shapes::Shape biasShape;
    if (bias) biasShape.assign(shapeOf(bias).begin(), shapeOf(bias).end());
    auto out = shapes::linear(inShape, shapeOf(weight), bias ? &biasShape : nullptr, why);
    if (!out) return shapeError(why);
    return EValue::ofTensor(LinearOp::create(b, opLocation, tensorType(*out), input, weight, bias));
  }
  if (type == "Conv2d") {
    mlir::Value weight = slot("weight"), bias = slot("bias");
    shapes::Shape biasShape;
    if (bias) biasShape.assign(shapeOf(bias).begin(), shapeOf(bias).end());
    auto stride = pairOf("stride"), padding = pairOf("padding"), dilation = pairOf("dilation");
    int64_t groups = layer.config["groups"].i;
    auto out = shapes::conv2d(inShape, shapeOf(weight), bias ? &biasShape : nullptr,
                              stride, padding, dilation, groups, why);
    if (!out) return shapeError(why);
    return EValue::ofTensor(Conv2dOp::create(
        b, opLocation, tensorType(*out), input, weight, bias,
        b.getDenseI64ArrayAttr(stride), b.getDenseI64ArrayAttr(padding),
        b.getDenseI64ArrayAttr(dilation), b.getI64IntegerAttr(groups)));
  }
  if (type == "ConvTranspose2d") {
    mlir::Value weight = slot("weight"), bias = slot("bias");
    auto stride = pairOf("stride"), padding = pairOf("padding"),
         dilation = pairOf("dilation"),
         outputPadding = pairOf("output_padding");
    int64_t groups = layer.config["groups"].i;
    llvm::ArrayRef<int64_t> w = shapeOf(weight);
    if (inShape.size() != 4 || inShape[1] != w[0])
      return shapeError("expected an input [N, " + std::to_string(w[0]) +
                        ", H, W] but got " + shapes::format(inShape));
    shapes::Shape out = {inShape[0], w[1] * groups};
    for (int i = 0; i < 2; ++i) {
      int64_t size = (inShape[2 + i] - 1) * stride[i] - 2 * padding[i] +
                     dilation[i] * (w[2 + i] - 1) + outputPadding[i] + 1;
      if (size < 1)
        return shapeError("the output would have " + std::to_string(size) +
                          " rows or columns along spatial dimension " +
                          std::to_string(i) + " for an input of shape " +
                          shapes::format(inShape));
      out.push_back(size);
    }
    if (!shapes::numElements(out, why))
      return shapeError(why);
    // The bias in the op, added before its result is rounded (in half
    // precision, autocast's conv_transpose2d rounds once).
    return EValue::ofTensor(Conv2dGradInputOp::create(
        b, opLocation, tensorType(out), input, weight, bias,
        b.getDenseI64ArrayAttr(stride), b.getDenseI64ArrayAttr(padding),
        b.getDenseI64ArrayAttr(dilation), b.getI64IntegerAttr(groups)));
  }
  if (type == "BatchNorm1d" || type == "BatchNorm2d") {
    bool is2d = type == "BatchNorm2d";
    if (is2d ? inShape.size() != 4 : (inShape.size() != 2 && inShape.size() != 3))
      return shapeError(std::string("expected a ") + (is2d ? "4-D input [N, C, H, W]" :
                        "2-D or 3-D input [N, C] or [N, C, L]") + " but got " +
                        shapes::format(inShape));
    auto out = shapes::batchNorm(inShape, layer.config["num_features"].i, why);
    if (!out) return shapeError(why);
    mlir::Value mean = slot("running_mean"), var = slot("running_var");
    bool training = fn->training || !mean;
    return EValue::ofTensor(BatchNormOp::create(
        b, opLocation, tensorType(*out), input, slot("weight"), slot("bias"), mean, var,
        b.getF64FloatAttr(layer.config["eps"].f),
        b.getF64FloatAttr(layer.config["momentum"].f), b.getBoolAttr(training)));
  }
  if (type == "GroupNorm") {
    // nn.GroupNorm: each sample's channels in num_groups groups, each group
    // normalized over its channels and positions (biased variance, eps
    // inside the root) as one row of a layer norm without affine; then the
    // per-channel weight and bias.
    int64_t groups = layer.config["num_groups"].i,
            channels = layer.config["num_channels"].i;
    if (inShape.size() < 2 || inShape[1] != channels)
      return shapeError("expected an input [N, " + std::to_string(channels) +
                        ", ...] but got " + shapes::format(inShape));
    int64_t perGroup = 1;
    for (size_t i = 1; i < inShape.size(); ++i)
      perGroup *= inShape[i];
    perGroup /= groups;
    shapes::Shape rows = {inShape[0], groups, perGroup};
    mlir::Value r = ReshapeOp::create(b, opLocation, tensorType(rows), input);
    r = LayerNormOp::create(b, opLocation, tensorType(rows), r, mlir::Value(),
                            mlir::Value(), b.getI64IntegerAttr(1),
                            b.getF64FloatAttr(layer.config["eps"].f));
    r = ReshapeOp::create(b, opLocation, tensorType(inShape), r);
    if (mlir::Value weight = slot("weight")) {
      // [C, 1, ...]: aligned with dimension 1 of the input.
      shapes::Shape column(inShape.size() - 1, 1);
      column[0] = channels;
      r = MulOp::create(
          b, opLocation, tensorType(inShape), r,
          ReshapeOp::create(b, opLocation, tensorType(column), weight));
      r = AddOp::create(
          b, opLocation, tensorType(inShape), r,
          ReshapeOp::create(b, opLocation, tensorType(column), slot("bias")));
    }
    return EValue::ofTensor(r);
  }
  if (type == "LayerNorm") {
    auto normalized = toIntList(layer.config["normalized_shape"], loc, "normalized_shape");
    auto out = shapes::layerNorm(inShape, *normalized, why);
    if (!out) return shapeError(why);
    return EValue::ofTensor(LayerNormOp::create(
        b, opLocation, tensorType(*out), input, slot("weight"), slot("bias"),
        b.getI64IntegerAttr(normalized->size()),
        b.getF64FloatAttr(layer.config["eps"].f)));
  }
  if (type == "Dropout") {
    double p = layer.config["p"].f;
    if (!fn->training || p == 0)
      return EValue::ofTensor(input);
    return EValue::ofTensor(DropoutOp::create(
        b, opLocation, input.getType(), input, b.getF64FloatAttr(p), b.getBoolAttr(true),
        b.getI64IntegerAttr(fn->nextDropoutStream++)));
  }
  if (type == "MaxPool2d") {
    auto kernel = pairOf("kernel_size"), stride = pairOf("stride"),
         padding = pairOf("padding"), dilation = pairOf("dilation");
    bool ceil = layer.config["ceil_mode"].b;
    auto out = shapes::maxPool2d(inShape, kernel, stride, padding, dilation, ceil, why);
    if (!out) return shapeError(why);
    return EValue::ofTensor(MaxPool2dOp::create(
        b, opLocation, tensorType(*out), input, b.getDenseI64ArrayAttr(kernel),
        b.getDenseI64ArrayAttr(stride), b.getDenseI64ArrayAttr(padding),
        b.getDenseI64ArrayAttr(dilation), b.getBoolAttr(ceil)));
  }
  if (type == "AvgPool2d") {
    auto kernel = pairOf("kernel_size"), stride = pairOf("stride"), padding = pairOf("padding");
    bool ceil = layer.config["ceil_mode"].b;
    auto out = shapes::avgPool2d(inShape, kernel, stride, padding, ceil, why);
    if (!out) return shapeError(why);
    return EValue::ofTensor(AvgPool2dOp::create(
        b, opLocation, tensorType(*out), input, b.getDenseI64ArrayAttr(kernel),
        b.getDenseI64ArrayAttr(stride), b.getDenseI64ArrayAttr(padding),
        b.getBoolAttr(ceil), b.getBoolAttr(layer.config["count_include_pad"].b)));
  }
  if (type == "AdaptiveAvgPool2d") {
    auto size = pairOf("output_size");
    auto out = shapes::adaptiveAvgPool2d(inShape, size, why);
    if (!out) return shapeError(why);
    return EValue::ofTensor(AdaptiveAvgPool2dOp::create(
        b, opLocation, tensorType(*out), input, b.getDenseI64ArrayAttr(size)));
  }
  if (type == "Identity")
    return EValue::ofTensor(input);

  // Activation and reshaping layers are their functional forms.
  std::vector<CallArg> fnArgs = {args[0]};
  std::string function = llvm::StringSwitch<std::string>(type)
                             .Case("ReLU", "relu")
                             .Case("GELU", "gelu")
                             .Case("Sigmoid", "sigmoid")
                             .Case("Tanh", "tanh")
                             .Case("SiLU", "silu")
                             .Case("Hardswish", "hardswish")
                             .Case("ReLU6", "relu6")
                             .Case("LeakyReLU", "leaky_relu")
                             .Case("Hardtanh", "hardtanh")
                             .Case("Upsample", "interpolate")
                             .Case("Flatten", "flatten")
                             .Case("Softmax", "softmax")
                             .Case("LogSoftmax", "log_softmax")
                             .Default("");
  for (auto &[key, value] : layer.config)
    fnArgs.push_back({loc, key, value});
  return callBuiltin(function, fnArgs, loc, name, caller);
}
