//===- KernelCalls.cpp - Runtime calls both emitters print alike ----------===//

#include "codegen/KernelCalls.h"

#include "codegen/EmitterSupport.h"

#include "ir/CairnKernelOps.h"
#include "ir/ProductTypes.h"
#include "passes/KernelGraphIR.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace cairn;
using namespace cairn::codegen;

const char *cairn::codegen::getElementCType(Value value) {
  return getCType(*getDType(value.getType()));
}

const char *cairn::codegen::getTemplateType(Value value) {
  Type type = getElementTypeOrSelf(value.getType());
  if (type.isF16())
    return "cairn::kernels::F16";
  if (type.isBF16())
    return "cairn::kernels::Bf16";
  return getElementCType(value);
}

const char *cairn::codegen::getProductTemplateType(Operation *op,
                                                   Value result) {
  Type type = getProductElementType(op);
  if (type.isF16())
    return "cairn::kernels::F16";
  if (type.isBF16())
    return "cairn::kernels::Bf16";
  return getTemplateType(result);
}

const char *cairn::codegen::getCastTypeName(Value value) {
  Type type = cast<MemRefType>(value.getType()).getElementType();
  return type.isF16() ? "F16" : type.isBF16() ? "BF16" : "F32";
}

const char *cairn::codegen::getBinaryOpName(Operation *op) {
  return llvm::TypeSwitch<Operation *, const char *>(op)
      .Case([](AddKernelOp) { return "Add"; })
      .Case([](SubKernelOp) { return "Sub"; })
      .Case([](MulKernelOp) { return "Mul"; })
      .Case([](DivKernelOp) { return "Div"; })
      .Default([](Operation *) -> const char * {
        llvm_unreachable("not an arithmetic kernel");
      });
}

void cairn::codegen::reportMissingBody(Operation *op, llvm::StringRef target) {
  llvm::report_fatal_error(("internal error: '" +
                            op->getName().getStringRef() + "' has no " +
                            target + " body")
                               .str()
                               .c_str());
}

namespace {

/// Builds one call's arguments.
class CallBuilder {
public:
  CallBuilder(llvm::function_ref<std::string(Value)> pointer)
      : pointer(pointer) {}

  CallBuilder &name(llvm::StringRef name) {
    call.name = name.str();
    return *this;
  }
  /// Template arguments: the element types of `values` (a half one as its
  /// storage tag, Convert.h's F16 or Bf16, since both are uint16_t in C).
  CallBuilder &types(std::initializer_list<Value> values) {
    for (Value value : values)
      call.types.push_back(getTemplateType(value));
    return *this;
  }
  /// The template argument of a GEMM or convolution kernel: the type it
  /// computes in (ir/ProductTypes.h).
  CallBuilder &productType(Operation *op, Value result) {
    call.types.push_back(getProductTemplateType(op, result));
    return *this;
  }
  CallBuilder &site() {
    call.librarySite = true;
    return *this;
  }
  CallBuilder &arg(std::string text) {
    call.args.push_back({CallArg::Kind::Text, std::move(text), {}});
    return *this;
  }
  CallBuilder &arg(int64_t value) { return arg(formatInt(value)); }
  CallBuilder &real(double value) { return arg(formatDouble(value)); }
  CallBuilder &flag(bool value) { return arg(formatBool(value)); }
  CallBuilder &ints(llvm::ArrayRef<int64_t> values, bool braces = true) {
    return arg(braces ? "{" + formatInts(values) + "}" : formatInts(values));
  }
  CallBuilder &ptr(Value value) { return arg(pointer(value)); }
  CallBuilder &enumerator(std::string text) {
    call.args.push_back({CallArg::Kind::Enum, std::move(text), {}});
    return *this;
  }
  CallBuilder &workspace(Value value) {
    call.args.push_back({CallArg::Kind::Workspace, "", value});
    return *this;
  }
  CallBuilder &replicaSum() {
    call.args.push_back({CallArg::Kind::ReplicaSum, "", {}});
    return *this;
  }
  KernelCall take() { return std::move(call); }

private:
  llvm::function_ref<std::string(Value)> pointer;
  KernelCall call;
};

/// A batch norm kernel of a replica with --sync-batchnorm takes the
/// workspace its sums go in and the sum over the replicas last
/// (runtime/kernels/Normalization.h).
void syncReplicas(CallBuilder &c, bool sync, Value workspace) {
  if (sync)
    c.ptr(workspace).replicaSum();
}

/// The runtime's Activation enumerator of an activation kernel.
std::string getActivationName(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case<SigmoidKernelOp, SigmoidGradKernelOp>(
          [](auto) { return "Activation::Sigmoid"; })
      .Case<TanhKernelOp, TanhGradKernelOp>(
          [](auto) { return "Activation::Tanh"; })
      .Case<SiluKernelOp, SiluGradKernelOp>(
          [](auto) { return "Activation::Silu"; })
      .Case<HardswishKernelOp, HardswishGradKernelOp>(
          [](auto) { return "Activation::Hardswish"; })
      .Case([](GeluKernelOp gelu) {
        return gelu.getTanh() ? "Activation::GeluTanh"
                              : "Activation::GeluExact";
      })
      .Case([](GeluGradKernelOp gelu) {
        return gelu.getTanh() ? "Activation::GeluTanh"
                              : "Activation::GeluExact";
      });
}

} // namespace

std::optional<KernelCall>
cairn::codegen::describeKernelCall(Operation *op,
                                   llvm::function_ref<std::string(Value)> pointer) {
  CallBuilder c(pointer);
  bool described =
      llvm::TypeSwitch<Operation *, bool>(op)
          // Activations other than relu (a loop on the CPU, a launch on CUDA).
          .Case<SigmoidKernelOp, TanhKernelOp, GeluKernelOp, SiluKernelOp,
                HardswishKernelOp>([&](auto k) {
            c.name("activationForward").types({k.getResult()});
            c.enumerator(getActivationName(k)).arg(k.getN());
            c.ptr(k.getInput()).ptr(k.getResult());
            return true;
          })
          .Case<SigmoidGradKernelOp, TanhGradKernelOp>([&](auto k) {
            // (dy, saved): the forward's result.
            c.name("activationBackward").types({k.getResult()});
            c.enumerator(getActivationName(k)).arg(k.getN());
            c.ptr(k.getDy()).ptr(k.getOutput()).ptr(k.getResult());
            return true;
          })
          .Case<GeluGradKernelOp, SiluGradKernelOp, HardswishGradKernelOp>(
              [&](auto k) {
                // (dy, saved): the forward's input.
                c.name("activationBackward").types({k.getResult()});
                c.enumerator(getActivationName(k)).arg(k.getN());
                c.ptr(k.getDy()).ptr(k.getInput()).ptr(k.getResult());
                return true;
              })
          .Case([&](ClampKernelOp k) {
            c.name("clampForward").types({k.getResult()}).arg(k.getN());
            c.flag(k.getMin().has_value()).real(k.getMin().value_or(0));
            c.flag(k.getMax().has_value()).real(k.getMax().value_or(0));
            c.ptr(k.getInput()).ptr(k.getResult());
            return true;
          })
          .Case([&](ClampGradKernelOp k) {
            c.name("clampBackward").types({k.getResult()}).arg(k.getN());
            c.flag(k.getMin().has_value()).real(k.getMin().value_or(0));
            c.flag(k.getMax().has_value()).real(k.getMax().value_or(0));
            c.ptr(k.getDy()).ptr(k.getInput()).ptr(k.getResult());
            return true;
          })
          .Case([&](LeakyReluKernelOp k) {
            c.name("leakyReluForward").types({k.getResult()}).arg(k.getN());
            c.real(k.getNegativeSlope());
            c.ptr(k.getInput()).ptr(k.getResult());
            return true;
          })
          .Case([&](LeakyReluGradKernelOp k) {
            c.name("leakyReluBackward").types({k.getResult()}).arg(k.getN());
            c.real(k.getNegativeSlope());
            c.ptr(k.getDy()).ptr(k.getInput()).ptr(k.getResult());
            return true;
          })
          .Case<SoftmaxKernelOp, LogSoftmaxKernelOp>([&](auto k) {
            // Typed by its input: a half one (the CPU's, isHalfStorageOp)
            // into a float32 result.
            c.name("softmaxForward").types({k.getInput()});
            c.flag(isa<LogSoftmaxKernelOp>(k.getOperation()));
            c.arg(k.getOuter()).arg(k.getDim()).arg(k.getInner());
            c.ptr(k.getInput()).ptr(k.getResult());
            return true;
          })
          .Case<SoftmaxGradKernelOp, LogSoftmaxGradKernelOp>([&](auto k) {
            c.name("softmaxBackward").types({k.getResult()});
            c.flag(isa<LogSoftmaxGradKernelOp>(k.getOperation()));
            c.arg(k.getOuter()).arg(k.getDim()).arg(k.getInner());
            c.ptr(k.getDy()).ptr(k.getOutput()).ptr(k.getResult());
            return true;
          })
          // Convolutions: call sites of cuDNN on CUDA, of oneDNN on the CPU
          // (im2col where it does not fit the workspace).
          .Case([&](Conv2dKernelOp k) {
            c.name("conv2dForward").productType(k, k.getResult()).site();
            c.ints(k.getShape()).ptr(k.getInput()).ptr(k.getWeight());
            c.ptr(k.getBias()).ptr(k.getResult()).workspace(k.getWorkspace());
            return true;
          })
          .Case([&](Conv2dGradInputKernelOp k) {
            c.name("conv2dBackwardInput").productType(k, k.getResult()).site();
            c.ints(k.getShape()).ptr(k.getDy()).ptr(k.getWeight());
            c.ptr(k.getBias()).ptr(k.getResult()).workspace(k.getWorkspace());
            return true;
          })
          .Case([&](Conv2dGradWeightKernelOp k) {
            // The bias gradient is a reduction kernel of its own.
            c.name("conv2dBackwardWeight").productType(k, k.getResult()).site();
            c.ints(k.getShape()).ptr(k.getDy()).ptr(k.getInput());
            c.ptr(k.getResult()).arg("nullptr").workspace(k.getWorkspace());
            return true;
          })
          // Normalization and embedding.
          .Case([&](BatchNormTrainingKernelOp k) {
            c.name("batchNormTrainingForward").types({k.getResult()}).site();
            c.arg(k.getN()).arg(k.getC()).arg(k.getSpatial());
            c.ptr(k.getInput()).ptr(k.getWeight()).ptr(k.getBias());
            c.real(k.getEps()).ptr(k.getResult());
            syncReplicas(c, k.getSyncReplicas(), k.getWorkspace());
            return true;
          })
          .Case([&](BatchNormInferenceKernelOp k) {
            c.name("batchNormInferenceForward").types({k.getResult()}).site();
            c.arg(k.getN()).arg(k.getC()).arg(k.getSpatial());
            c.ptr(k.getInput()).ptr(k.getWeight()).ptr(k.getBias());
            c.ptr(k.getRunningMean()).ptr(k.getRunningVar());
            c.real(k.getEps()).ptr(k.getResult());
            return true;
          })
          .Case([&](BatchNormGradKernelOp k) {
            c.name("batchNormBackward").types({k.getGradInput()}).site();
            c.arg(k.getN()).arg(k.getC()).arg(k.getSpatial());
            c.ptr(k.getDy()).ptr(k.getInput()).ptr(k.getWeight());
            c.real(k.getEps()).ptr(k.getGradInput()).ptr(k.getGradWeight());
            c.ptr(k.getGradBias());
            syncReplicas(c, k.getSyncReplicas(), k.getWorkspace());
            return true;
          })
          .Case([&](BatchNormRunningUpdateKernelOp k) {
            // The input's type: half storage beside float32 statistics.
            c.name("batchNormUpdateRunningStats").types({k.getInput()});
            c.arg(k.getN()).arg(k.getC()).arg(k.getSpatial());
            c.ptr(k.getInput()).real(k.getMomentum());
            c.ptr(k.getRunningMean()).ptr(k.getRunningVar());
            c.ptr(k.getNumBatchesTracked());
            syncReplicas(c, k.getSyncReplicas(), k.getWorkspace());
            return true;
          })
          .Case([&](LayerNormKernelOp k) {
            c.name("layerNormForward").types({k.getResult()});
            c.arg(k.getRows()).arg(k.getCols()).ptr(k.getInput());
            c.ptr(k.getWeight()).ptr(k.getBias()).real(k.getEps());
            c.ptr(k.getResult());
            return true;
          })
          .Case([&](LayerNormGradKernelOp k) {
            c.name("layerNormBackward").types({k.getGradInput()});
            c.arg(k.getRows()).arg(k.getCols()).ptr(k.getDy());
            c.ptr(k.getInput()).ptr(k.getWeight()).real(k.getEps());
            c.ptr(k.getGradInput()).ptr(k.getGradWeight()).ptr(k.getGradBias());
            return true;
          })
          .Case([&](EmbeddingKernelOp k) {
            c.name("embeddingForward").types({k.getResult(), k.getIndices()});
            c.arg(k.getNumIndices()).arg(k.getDim()).arg(k.getNumEmbeddings());
            c.ptr(k.getIndices()).ptr(k.getWeight()).ptr(k.getResult());
            return true;
          })
          .Case([&](EmbeddingGradKernelOp k) {
            c.name("embeddingBackward").types({k.getResult(), k.getIndices()});
            c.arg(k.getNumIndices()).arg(k.getDim()).arg(k.getNumEmbeddings());
            c.ptr(k.getIndices()).ptr(k.getDy()).arg(k.getPaddingIdx());
            c.ptr(k.getResult());
            return true;
          })
          // Pooling: cuDNN's forward where it can (a call site).
          .Case([&](MaxPool2dKernelOp k) {
            c.name("maxPool2dForward").types({k.getResult()}).site();
            c.ints(k.getShape()).ptr(k.getInput()).ptr(k.getResult());
            return true;
          })
          .Case([&](MaxPool2dGradKernelOp k) {
            c.name("maxPool2dBackward").types({k.getResult()});
            c.ints(k.getShape()).ptr(k.getDy()).ptr(k.getInput());
            c.ptr(k.getResult());
            return true;
          })
          .Case([&](AvgPool2dKernelOp k) {
            c.name("avgPool2dForward").types({k.getResult()}).site();
            c.ints(k.getShape()).flag(k.getCountIncludePad());
            c.ptr(k.getInput()).ptr(k.getResult());
            return true;
          })
          .Case([&](AvgPool2dGradKernelOp k) {
            c.name("avgPool2dBackward").types({k.getResult()});
            c.ints(k.getShape()).flag(k.getCountIncludePad());
            c.ptr(k.getDy()).ptr(k.getResult());
            return true;
          })
          .Case([&](AdaptiveAvgPool2dKernelOp k) {
            c.name("adaptiveAvgPool2dForward").types({k.getResult()});
            c.ints(k.getShape(), /*braces=*/false);
            c.ptr(k.getInput()).ptr(k.getResult());
            return true;
          })
          .Case([&](AdaptiveAvgPool2dGradKernelOp k) {
            c.name("adaptiveAvgPool2dBackward").types({k.getResult()});
            c.ints(k.getShape(), /*braces=*/false);
            c.ptr(k.getDy()).ptr(k.getResult());
            return true;
          })
          // Losses.
          .Case([&](CrossEntropyKernelOp k) {
            c.name("crossEntropyForward").types({k.getLogits(), k.getLabels()});
            c.arg(k.getRows()).arg(k.getClasses()).ptr(k.getLogits());
            c.ptr(k.getLabels()).real(k.getLabelSmoothing()).ptr(k.getResult());
            return true;
          })
          .Case([&](CrossEntropyGradKernelOp k) {
            c.name("crossEntropyBackward").types({k.getLogits(), k.getLabels()});
            c.arg(k.getRows()).arg(k.getClasses()).ptr(k.getDloss());
            c.ptr(k.getLogits()).ptr(k.getLabels());
            c.real(k.getLabelSmoothing()).ptr(k.getResult());
            return true;
          })
          .Case([&](MseLossKernelOp k) {
            c.name("mseForward").types({k.getResult()});
            c.arg(k.getN()).ptr(k.getInput()).ptr(k.getTarget());
            c.ptr(k.getResult());
            return true;
          })
          .Default([](Operation *) { return false; });
  if (!described)
    return std::nullopt;
  return c.take();
}

void cairn::codegen::printKernelCall(
    llvm::raw_ostream &os, unsigned indent, const KernelCall &call,
    const CallStyle &style, llvm::function_ref<std::string()> site,
    llvm::function_ref<std::string(Value)> workspace) {
  os.indent(indent) << style.ns << call.name;
  if (!call.types.empty()) {
    os << "<";
    llvm::interleaveComma(call.types, os);
    os << ">";
  }
  os << "(" << style.context;
  if (call.librarySite && site)
    os << site() << ", ";
  llvm::interleaveComma(call.args, os, [&](const CallArg &arg) {
    switch (arg.kind) {
    case CallArg::Kind::Text:
      os << arg.text;
      return;
    case CallArg::Kind::Enum:
      os << style.ns << arg.text;
      return;
    case CallArg::Kind::Workspace:
      os << workspace(arg.workspace);
      return;
    case CallArg::Kind::ReplicaSum:
      os << style.replicaSum;
      return;
    }
  });
  os << ");\n";
}
