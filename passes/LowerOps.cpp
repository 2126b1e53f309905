//===- LowerOps.cpp - One kernel (or view) per cairn op -------------------===//
//
// Each op becomes one kernel whose attributes hold every size its call
// needs (rows, strides, window shapes), so emitters only print. Reshapes,
// eval-mode dropout and broadcasts that add only 1s are views.
//
//===----------------------------------------------------------------------===//

#include "passes/StepLowering.h"

#include "passes/ArenaPlan.h"

#include "ir/CairnKernelOps.h"
#include "ir/CairnOps.h"
#include "ir/ProductTypes.h"
#include "runtime/kernels/Optimizer.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace cairn;

namespace {

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

int64_t numel(Value value) { return product(shapeOf(value)); }

std::vector<int64_t> vec(ArrayRef<int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

/// Strides in elements of `in` read over `out`'s shape by NumPy
/// broadcasting: dimensions aligned on the right, 0 where `in` repeats.
std::vector<int64_t> broadcastStrides(ArrayRef<int64_t> in,
                                      ArrayRef<int64_t> out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (int64_t i = in.size() - 1, o = out.size() - 1; i >= 0; --i, --o) {
    if (in[i] != 1 || out[o] == 1)
      strides[o] = in[i] == 1 ? 0 : stride;
    stride *= in[i];
  }
  return strides;
}

/// Conv2dShape's fields in order: n, c, h, w, o, kh, kw, sh, sw, ph, pw,
/// dh, dw, groups, ho, wo.
std::vector<int64_t> convShape(ArrayRef<int64_t> x, ArrayRef<int64_t> w,
                               ArrayRef<int64_t> y, ArrayRef<int64_t> stride,
                               ArrayRef<int64_t> padding,
                               ArrayRef<int64_t> dilation, int64_t groups) {
  return {x[0],        x[1],       x[2],       x[3],
          w[0],        w[2],       w[3],       stride[0],
          stride[1],   padding[0], padding[1], dilation[0],
          dilation[1], groups,     y[2],       y[3]};
}

/// Pool2dShape's fields in order: n, c, h, w, kh, kw, sh, sw, ph, pw, dh,
/// dw, ho, wo.
std::vector<int64_t> poolShape(ArrayRef<int64_t> x, ArrayRef<int64_t> y,
                               ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> stride,
                               ArrayRef<int64_t> padding,
                               ArrayRef<int64_t> dilation) {
  return {x[0],        x[1],        x[2],      x[3],       kernel[0],
          kernel[1],   stride[0],   stride[1], padding[0], padding[1],
          dilation[0], dilation[1], y[2],      y[3]};
}

class OpLowering {
public:
  explicit OpLowering(StepLowering &l) : l(l) {}

  LogicalResult lower(Operation *op);

private:
  LogicalResult lowerConstant(ConstantOp op);
  LogicalResult lowerBinary(llvm::StringRef kind, Operation *op);
  LogicalResult lowerUnary(llvm::StringRef kind, Operation *op,
                           ValueRange inputs);
  LogicalResult lowerSoftmax(llvm::StringRef kind, Operation *op,
                             ValueRange inputs, int64_t dim);
  LogicalResult lowerMatmul(MatmulOp op);
  LogicalResult lowerLinear(llvm::StringRef kind, Operation *op,
                            ValueRange inputs, ArrayRef<int64_t> weightShape,
                            int64_t rows);
  LogicalResult lowerConv(llvm::StringRef kind, Operation *op,
                          ValueRange inputs, std::vector<int64_t> shape);
  LogicalResult lowerNormGrad(llvm::StringRef kind, Operation *op, Value dy,
                              Value x, Value weight, KernelAttrs attrs);
  LogicalResult lowerReduce(Operation *op, Value input, ArrayRef<int64_t> dims,
                            bool mean);
  /// `inputs` in the kernel's order, null for an absent optional one.
  LogicalResult lowerUpdate(llvm::StringRef kind, Operation *op,
                            KernelAttrs attrs, std::vector<int> tied,
                            ArrayRef<Value> inputs);
  /// Gives the `batch` m x n x kDepth GEMMs of kernel `k` of `op` the
  /// workspace the target asks for.
  void addGemmWorkspace(Kernel &k, Operation *op, int64_t batch, int64_t m,
                        int64_t n, int64_t kDepth);

  Kernel &add(llvm::StringRef kind, Operation *op, ValueRange inputs) {
    std::vector<int> in;
    for (Value v : inputs)
      in.push_back(l.get(v));
    std::vector<int> out;
    for (Value r : op->getResults())
      out.push_back(l.define(r));
    return l.addKernel(kind, op, std::move(in), std::move(out));
  }

  StepLowering &l;
};

} // namespace

LogicalResult OpLowering::lower(Operation *op) {
  auto unsupported = [&](Operation *op) -> LogicalResult {
    return op->emitError() << "cannot lower '" << op->getName() << "' to the "
                           << l.getTarget().name << " backend";
  };
  auto noLossScaling = [&](Operation *op) -> LogicalResult {
    return op->emitError() << "cannot lower '" << op->getName() << "' to the "
                           << l.getTarget().name
                           << " backend: its kernels do not scale the loss "
                              "(build f16 models for the CPU)";
  };
  // Every tensor the op touches must have a type the target's kernels take;
  // a target that stores half tensors only converts and reshapes them
  // (cairn-compute-half-in-float32 made every other op read float32), and
  // multiplies them where it has half GEMMs.
  const LoweringTarget &target = l.getTarget();
  bool storesHalf =
      target.halfStorage &&
      runsOnHalf(op, target.halfProducts, target.halfStorageKernels);
  for (Type type :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    std::optional<DType> dtype = getDType(type);
    bool half = dtype && (*dtype == DType::F16 || *dtype == DType::BF16);
    if (!isa<RankedTensorType>(type) || !dtype ||
        (half && !target.halfPrecision && !storesHalf))
      return op->emitError()
             << "cannot lower '" << op->getName() << "' on " << type
             << " to the " << target.name
             << " backend (it takes f32 and f64 tensors, i32 and i64 indices"
             << (target.halfStorage ? "; f16 and bf16 ones are converted "
                                      "and reshaped only"
                                    : "")
             << ")"
             // A model built in half precision: say what runs it.
             << (half && !target.halfStorage
                     ? "; a model in half precision builds for the CPU "
                       "(--target cpu) or in float32 (--precision f32)"
                     : "");
  }

  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ConstantOp op) { return lowerConstant(op); })
      .Case([&](AddOp op) {
        return lowerBinary(AddKernelOp::getOperationName(), op);
      })
      .Case([&](SubOp op) {
        return lowerBinary(SubKernelOp::getOperationName(), op);
      })
      .Case([&](MulOp op) {
        return lowerBinary(MulKernelOp::getOperationName(), op);
      })
      .Case([&](DivOp op) {
        return lowerBinary(DivKernelOp::getOperationName(), op);
      })
      .Case([&](CastOp op) {
        return lowerUnary(CastKernelOp::getOperationName(), op,
                          op->getOperands());
      })
      .Case([&](ReluOp op) {
        return lowerUnary(ReluKernelOp::getOperationName(), op,
                          op->getOperands());
      })
      .Case([&](SigmoidOp op) {
        return lowerUnary(SigmoidKernelOp::getOperationName(), op,
                          op->getOperands());
      })
      .Case([&](TanhOp op) {
        return lowerUnary(TanhKernelOp::getOperationName(), op,
                          op->getOperands());
      })
      .Case([&](GeluOp op) {
        return lowerUnary(GeluKernelOp::getOperationName(), op,
                          op->getOperands());
      })
      .Case([&](SiluOp op) {
        return lowerUnary(SiluKernelOp::getOperationName(), op,
                          op->getOperands());
      })
      .Case([&](HardswishOp op) {
        return lowerUnary(HardswishKernelOp::getOperationName(), op,
                          op->getOperands());
      })
      .Case([&](ClampOp op) {
        return lowerUnary(ClampKernelOp::getOperationName(), op,
                          op->getOperands());
      })
      .Case([&](LeakyReluOp op) {
        return lowerUnary(LeakyReluKernelOp::getOperationName(), op,
                          op->getOperands());
      })
      .Case([&](ClampGradOp op) {
        return lowerUnary(ClampGradKernelOp::getOperationName(), op,
                          {op.getDy(), op.getInput()});
      })
      .Case([&](LeakyReluGradOp op) {
        return lowerUnary(LeakyReluGradKernelOp::getOperationName(), op,
                          {op.getDy(), op.getInput()});
      })
      .Case([&](ReluGradOp op) {
        return lowerUnary(ReluGradKernelOp::getOperationName(), op,
                          {op.getDy(), op.getOutput()});
      })
      .Case([&](SigmoidGradOp op) {
        return lowerUnary(SigmoidGradKernelOp::getOperationName(), op,
                          {op.getDy(), op.getOutput()});
      })
      .Case([&](TanhGradOp op) {
        return lowerUnary(TanhGradKernelOp::getOperationName(), op,
                          {op.getDy(), op.getOutput()});
      })
      .Case([&](GeluGradOp op) {
        return lowerUnary(GeluGradKernelOp::getOperationName(), op,
                          {op.getDy(), op.getInput()});
      })
      .Case([&](SiluGradOp op) {
        return lowerUnary(SiluGradKernelOp::getOperationName(), op,
                          {op.getDy(), op.getInput()});
      })
      .Case([&](HardswishGradOp op) {
        return lowerUnary(HardswishGradKernelOp::getOperationName(), op,
                          {op.getDy(), op.getInput()});
      })
      .Case([&](SoftmaxOp op) {
        return lowerSoftmax(SoftmaxKernelOp::getOperationName(), op,
                            op->getOperands(), op.getDim());
      })
      .Case([&](LogSoftmaxOp op) {
        return lowerSoftmax(LogSoftmaxKernelOp::getOperationName(), op,
                            op->getOperands(), op.getDim());
      })
      .Case([&](SoftmaxGradOp op) {
        return lowerSoftmax(SoftmaxGradKernelOp::getOperationName(), op,
                            {op.getDy(), op.getOutput()}, op.getDim());
      })
      .Case([&](LogSoftmaxGradOp op) {
        return lowerSoftmax(LogSoftmaxGradKernelOp::getOperationName(), op,
                            {op.getDy(), op.getOutput()}, op.getDim());
      })
      .Case([&](MatmulOp op) { return lowerMatmul(op); })
      .Case([&](LinearOp op) {
        ArrayRef<int64_t> w = shapeOf(op.getWeight());
        return lowerLinear(LinearKernelOp::getOperationName(), op,
                           {op.getInput(), op.getWeight(), op.getBias()}, w,
                           numel(op.getInput()) / w[1]);
      })
      .Case([&](LinearGradInputOp op) {
        ArrayRef<int64_t> w = shapeOf(op.getWeight());
        return lowerLinear(LinearGradInputKernelOp::getOperationName(), op,
                           {op.getDy(), op.getWeight()}, w,
                           numel(op.getDy()) / w[0]);
      })
      .Case([&](LinearGradWeightOp op) {
        ArrayRef<int64_t> w = shapeOf(op.getResult());
        return lowerLinear(LinearGradWeightKernelOp::getOperationName(), op,
                           {op.getDy(), op.getInput()}, w,
                           numel(op.getDy()) / w[0]);
      })
      .Case([&](Conv2dOp op) {
        return lowerConv(
            Conv2dKernelOp::getOperationName(), op,
            {op.getInput(), op.getWeight(), op.getBias()},
            convShape(shapeOf(op.getInput()), shapeOf(op.getWeight()),
                      shapeOf(op.getResult()), op.getStride(), op.getPadding(),
                      op.getDilation(), op.getGroups()));
      })
      .Case([&](Conv2dGradInputOp op) {
        return lowerConv(Conv2dGradInputKernelOp::getOperationName(), op,
                         {op.getDy(), op.getWeight(), op.getBias()},
                         convShape(shapeOf(op.getResult()),
                                   shapeOf(op.getWeight()), shapeOf(op.getDy()),
                                   op.getStride(), op.getPadding(),
                                   op.getDilation(), op.getGroups()));
      })
      .Case([&](Conv2dGradWeightOp op) {
        return lowerConv(Conv2dGradWeightKernelOp::getOperationName(), op,
                         {op.getDy(), op.getInput()},
                         convShape(shapeOf(op.getInput()),
                                   shapeOf(op.getResult()), shapeOf(op.getDy()),
                                   op.getStride(), op.getPadding(),
                                   op.getDilation(), op.getGroups()));
      })
      .Case([&](BatchNormOp op) {
        ArrayRef<int64_t> x = shapeOf(op.getInput());
        Kernel &k =
            op.getTraining()
                ? add(BatchNormTrainingKernelOp::getOperationName(), op,
                      {op.getInput(), op.getWeight(), op.getBias()})
                : add(BatchNormInferenceKernelOp::getOperationName(), op,
                      {op.getInput(), op.getWeight(), op.getBias(),
                       op.getRunningMean(), op.getRunningVar()});
        k.attrs.set("n", x[0]);
        k.attrs.set("c", x[1]);
        k.attrs.set("spatial", product(x.drop_front(2)));
        k.attrs.set("eps", op.getEps());
        return success();
      })
      .Case([&](BatchNormGradOp op) {
        ArrayRef<int64_t> x = shapeOf(op.getInput());
        KernelAttrs attrs;
        attrs.set("n", x[0]);
        attrs.set("c", x[1]);
        attrs.set("spatial", product(x.drop_front(2)));
        attrs.set("eps", op.getEps());
        return lowerNormGrad(BatchNormGradKernelOp::getOperationName(), op,
                             op.getDy(), op.getInput(), op.getWeight(),
                             std::move(attrs));
      })
      .Case([&](BatchNormRunningUpdateOp op) {
        ArrayRef<int64_t> x = shapeOf(op.getInput());
        KernelAttrs attrs;
        attrs.set("n", x[0]);
        attrs.set("c", x[1]);
        attrs.set("spatial", product(x.drop_front(2)));
        attrs.set("momentum", op.getMomentum());
        return lowerUpdate(BatchNormRunningUpdateKernelOp::getOperationName(),
                           op, std::move(attrs), {1, 2, 3},
                           llvm::to_vector(op->getOperands()));
      })
      .Case([&](LayerNormOp op) {
        ArrayRef<int64_t> x = shapeOf(op.getInput());
        int64_t cols = product(x.take_back(op.getNormalizedRank()));
        Kernel &k = add(LayerNormKernelOp::getOperationName(), op,
                        {op.getInput(), op.getWeight(), op.getBias()});
        k.attrs.set("rows", product(x) / cols);
        k.attrs.set("cols", cols);
        k.attrs.set("eps", op.getEps());
        return success();
      })
      .Case([&](LayerNormGradOp op) {
        ArrayRef<int64_t> x = shapeOf(op.getInput());
        int64_t cols = product(x.take_back(op.getNormalizedRank()));
        KernelAttrs attrs;
        attrs.set("rows", product(x) / cols);
        attrs.set("cols", cols);
        attrs.set("eps", op.getEps());
        return lowerNormGrad(LayerNormGradKernelOp::getOperationName(), op,
                             op.getDy(), op.getInput(), op.getWeight(),
                             std::move(attrs));
      })
      .Case([&](EmbeddingOp op) {
        ArrayRef<int64_t> w = shapeOf(op.getWeight());
        Kernel &k = add(EmbeddingKernelOp::getOperationName(), op,
                        {op.getIndices(), op.getWeight()});
        k.attrs.set("num_indices", numel(op.getIndices()));
        k.attrs.set("dim", w[1]);
        k.attrs.set("num_embeddings", w[0]);
        return success();
      })
      .Case([&](EmbeddingGradOp op) {
        Kernel &k = add(EmbeddingGradKernelOp::getOperationName(), op,
                        {op.getIndices(), op.getDy()});
        k.attrs.set("num_indices", numel(op.getIndices()));
        k.attrs.set("dim", shapeOf(op.getDy()).back());
        k.attrs.set("num_embeddings", op.getNumEmbeddings());
        k.attrs.set("padding_idx",
                    static_cast<int64_t>(op.getPaddingIdx().value_or(-1)));
        return success();
      })
      .Case([&](DropoutOp op) {
        // Eval mode and p = 0 are the identity.
        if (!op.getTraining() || op.getP() == 0) {
          l.defineAlias(op.getResult(), op.getInput());
          return success();
        }
        Kernel &k =
            add(DropoutKernelOp::getOperationName(), op, {op.getInput()});
        k.attrs.set("n", numel(op.getInput()));
        k.attrs.set("p", op.getP());
        k.attrs.set("stream", op.getStream());
        return success();
      })
      .Case([&](MaxPool2dOp op) {
        Kernel &k =
            add(MaxPool2dKernelOp::getOperationName(), op, {op.getInput()});
        k.attrs.set("shape",
                    poolShape(shapeOf(op.getInput()), shapeOf(op.getResult()),
                              op.getKernelSize(), op.getStride(),
                              op.getPadding(), op.getDilation()));
        return success();
      })
      .Case([&](MaxPool2dGradOp op) {
        Kernel &k = add(MaxPool2dGradKernelOp::getOperationName(), op,
                        {op.getDy(), op.getInput()});
        k.attrs.set("shape",
                    poolShape(shapeOf(op.getInput()), shapeOf(op.getDy()),
                              op.getKernelSize(), op.getStride(),
                              op.getPadding(), op.getDilation()));
        return success();
      })
      .Case([&](AvgPool2dOp op) {
        Kernel &k =
            add(AvgPool2dKernelOp::getOperationName(), op, {op.getInput()});
        k.attrs.set("shape",
                    poolShape(shapeOf(op.getInput()), shapeOf(op.getResult()),
                              op.getKernelSize(), op.getStride(),
                              op.getPadding(), {1, 1}));
        k.attrs.set("count_include_pad", op.getCountIncludePad());
        return success();
      })
      .Case([&](AvgPool2dGradOp op) {
        Kernel &k =
            add(AvgPool2dGradKernelOp::getOperationName(), op, {op.getDy()});
        k.attrs.set("shape",
                    poolShape(shapeOf(op.getResult()), shapeOf(op.getDy()),
                              op.getKernelSize(), op.getStride(),
                              op.getPadding(), {1, 1}));
        k.attrs.set("count_include_pad", op.getCountIncludePad());
        return success();
      })
      .Case([&](AdaptiveAvgPool2dOp op) {
        Kernel &k = add(AdaptiveAvgPool2dKernelOp::getOperationName(), op,
                        {op.getInput()});
        ArrayRef<int64_t> x = shapeOf(op.getInput()),
                          y = shapeOf(op.getResult());
        k.attrs.set("shape",
                    std::vector<int64_t>{x[0], x[1], x[2], x[3], y[2], y[3]});
        return success();
      })
      .Case([&](AdaptiveAvgPool2dGradOp op) {
        Kernel &k = add(AdaptiveAvgPool2dGradKernelOp::getOperationName(), op,
                        {op.getDy()});
        ArrayRef<int64_t> x = shapeOf(op.getResult()), y = shapeOf(op.getDy());
        k.attrs.set("shape",
                    std::vector<int64_t>{x[0], x[1], x[2], x[3], y[2], y[3]});
        return success();
      })
      .Case([&](ReshapeOp op) {
        l.defineAlias(op.getResult(), op.getInput());
        return success();
      })
      .Case([&](PermuteOp op) {
        Kernel &k =
            add(PermuteKernelOp::getOperationName(), op, {op.getInput()});
        k.attrs.set("perm", vec(op.getPermutation()));
        return success();
      })
      .Case([&](ConcatOp op) {
        Kernel &k = add(ConcatKernelOp::getOperationName(), op, op.getInputs());
        std::vector<int64_t> starts;
        int64_t start = 0;
        for (Value input : op.getInputs()) {
          starts.push_back(start);
          start += shapeOf(input)[op.getDim()];
        }
        k.attrs.set("dim", op.getDim());
        k.attrs.set("starts", std::move(starts));
        return success();
      })
      .Case([&](SliceOp op) {
        Kernel &k = add(SliceKernelOp::getOperationName(), op, {op.getInput()});
        k.attrs.set("start", vec(op.getStart()));
        k.attrs.set("step", vec(op.getStep()));
        return success();
      })
      .Case([&](SliceGradOp op) {
        Kernel &k =
            add(SliceGradKernelOp::getOperationName(), op, {op.getDy()});
        k.attrs.set("start", vec(op.getStart()));
        k.attrs.set("step", vec(op.getStep()));
        return success();
      })
      .Case([&](BroadcastOp op) {
        // Same element count: only 1s were added, the layout is the same.
        if (numel(op.getInput()) == numel(op.getResult())) {
          l.defineAlias(op.getResult(), op.getInput());
          return success();
        }
        if (!runtime::isFloatDType(*getDType(op.getInput().getType())))
          return unsupported(op);
        Kernel &k =
            add(BroadcastKernelOp::getOperationName(), op, {op.getInput()});
        k.attrs.set("in_strides", broadcastStrides(shapeOf(op.getInput()),
                                                   shapeOf(op.getResult())));
        return success();
      })
      .Case([&](SumOp op) {
        return lowerReduce(op, op.getInput(), op.getDims(), /*mean=*/false);
      })
      .Case([&](MeanOp op) {
        return lowerReduce(op, op.getInput(), op.getDims(), /*mean=*/true);
      })
      .Case([&](CrossEntropyOp op) {
        ArrayRef<int64_t> logits = shapeOf(op.getLogits());
        Kernel &k = add(CrossEntropyKernelOp::getOperationName(), op,
                        {op.getLogits(), op.getLabels()});
        k.attrs.set("rows", logits[0]);
        k.attrs.set("classes", logits[1]);
        k.attrs.set("label_smoothing", op.getLabelSmoothing());
        return success();
      })
      .Case([&](CrossEntropyGradOp op) {
        ArrayRef<int64_t> logits = shapeOf(op.getLogits());
        Kernel &k = add(CrossEntropyGradKernelOp::getOperationName(), op,
                        {op.getDloss(), op.getLogits(), op.getLabels()});
        k.attrs.set("rows", logits[0]);
        k.attrs.set("classes", logits[1]);
        k.attrs.set("label_smoothing", op.getLabelSmoothing());
        return success();
      })
      .Case([&](MseLossOp op) {
        Kernel &k = add(MseLossKernelOp::getOperationName(), op,
                        {op.getInput(), op.getTarget()});
        k.attrs.set("n", numel(op.getInput()));
        return success();
      })
      .Case([&](MseLossGradOp op) {
        Kernel &k = add(MseLossGradKernelOp::getOperationName(), op,
                        {op.getDloss(), op.getInput(), op.getTarget()});
        k.attrs.set("n", numel(op.getInput()));
        return success();
      })
      .Case([&](ClipCoefficientOp op) {
        Kernel &k =
            add(ClipCoefficientKernelOp::getOperationName(), op, op.getGrads());
        SmallVector<int64_t> sizes;
        for (Value grad : op.getGrads())
          sizes.push_back(numel(grad));
        k.workspace =
            l.createWorkspace(op, DType::F64,
                              kernels::clipCoefficientWorkspaceElements(
                                  sizes.data(), sizes.size()));
        k.attrs.set("max_norm", op.getMaxNorm());
        k.attrs.set("norm_type", op.getNormType());
        return success();
      })
      .Case([&](LossScaleOp op) {
        if (!target.lossScaling)
          return noLossScaling(op);
        Kernel &k = add(LossScaleKernelOp::getOperationName(), op, {});
        k.attrs.set("inverse", op.getInverse());
        return success();
      })
      .Case([&](FoundInfOp op) {
        if (!target.lossScaling)
          return noLossScaling(op);
        add(FoundInfKernelOp::getOperationName(), op, op.getGrads());
        return success();
      })
      .Case([&](SkipSelectOp op) {
        if (!target.lossScaling)
          return noLossScaling(op);
        KernelAttrs attrs;
        attrs.set("n", numel(op.getOld()));
        return lowerUpdate(SkipSelectKernelOp::getOperationName(), op,
                           std::move(attrs), {0},
                           {op.getOld(), op.getUpdated(), op.getFoundInf()});
      })
      .Case([&](SGDUpdateOp op) {
        if (op.getFoundInf() && !target.lossScaling)
          return noLossScaling(op);
        KernelAttrs attrs;
        attrs.set("n", numel(op.getParam()));
        attrs.set("lr", op.getLr());
        attrs.set("momentum", op.getMomentum());
        attrs.set("dampening", op.getDampening());
        attrs.set("weight_decay", op.getWeightDecay());
        attrs.set("nesterov", op.getNesterov());
        return lowerUpdate(SgdUpdateKernelOp::getOperationName(), op,
                           std::move(attrs), {0, 2},
                           {op.getParam(), op.getGrad(), op.getMomentumBuffer(),
                            op.getFoundInf()});
      })
      .Case([&](AdamUpdateOp op) {
        if (op.getFoundInf() && !target.lossScaling)
          return noLossScaling(op);
        KernelAttrs attrs;
        attrs.set("n", numel(op.getParam()));
        attrs.set("lr", op.getLr());
        attrs.set("beta1", op.getBeta1());
        attrs.set("beta2", op.getBeta2());
        attrs.set("eps", op.getEps());
        attrs.set("weight_decay", op.getWeightDecay());
        if (op.getDecoupledWeightDecay())
          attrs.set("decoupled_weight_decay", true);
        return lowerUpdate(AdamUpdateKernelOp::getOperationName(), op,
                           std::move(attrs), {0, 2, 3},
                           {op.getParam(), op.getGrad(), op.getExpAvg(),
                            op.getExpAvgSq(), op.getFoundInf()});
      })
      .Default([&](Operation *op) { return unsupported(op); });
}

LogicalResult OpLowering::lowerConstant(ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError() << "cannot lower '" << op->getName() << "' to the "
                          << l.getTarget().name
                          << " backend: only dense constants are supported";
  bool isFloatType = isa<FloatType>(dense.getElementType());
  llvm::StringRef kind = dense.isSplat() ? FillKernelOp::getOperationName()
                                         : ConstantKernelOp::getOperationName();
  Kernel &k = add(kind, op, {});
  k.attrs.set("n", numel(op.getResult()));
  if (dense.isSplat()) {
    if (isFloatType)
      k.attrs.set("value", dense.getSplatValue<APFloat>().convertToDouble());
    else
      k.attrs.set("value", dense.getSplatValue<APInt>().getSExtValue());
    return success();
  }
  if (isFloatType) {
    std::vector<double> values;
    for (const APFloat &v : dense.getValues<APFloat>())
      values.push_back(v.convertToDouble());
    k.attrs.set("values", std::move(values));
  } else {
    std::vector<int64_t> values;
    for (const APInt &v : dense.getValues<APInt>())
      values.push_back(v.getSExtValue());
    k.attrs.set("values", std::move(values));
  }
  return success();
}

LogicalResult OpLowering::lowerBinary(llvm::StringRef kind, Operation *op) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  ArrayRef<int64_t> out = shapeOf(op->getResult(0));
  Kernel &k = add(kind, op, {lhs, rhs});
  k.attrs.set("n", product(out));
  k.attrs.set("lhs_strides", broadcastStrides(shapeOf(lhs), out));
  k.attrs.set("rhs_strides", broadcastStrides(shapeOf(rhs), out));
  return success();
}

LogicalResult OpLowering::lowerUnary(llvm::StringRef kind, Operation *op,
                                     ValueRange inputs) {
  Kernel &k = add(kind, op, inputs);
  k.attrs.set("n", numel(op->getResult(0)));
  if (auto gelu = dyn_cast<GeluOp>(op))
    k.attrs.set("tanh", gelu.getApproximate() == "tanh");
  if (auto gelu = dyn_cast<GeluGradOp>(op))
    k.attrs.set("tanh", gelu.getApproximate() == "tanh");
  // clamp's bounds (either may be absent) and leaky_relu's slope.
  if (isa<ClampOp, ClampGradOp, LeakyReluOp, LeakyReluGradOp>(op))
    for (llvm::StringRef name : {"min", "max", "negative_slope"})
      if (auto value = op->getAttrOfType<FloatAttr>(name))
        k.attrs.set(name, value.getValueAsDouble());
  return success();
}

LogicalResult OpLowering::lowerSoftmax(llvm::StringRef kind, Operation *op,
                                       ValueRange inputs, int64_t dim) {
  ArrayRef<int64_t> shape = shapeOf(op->getResult(0));
  Kernel &k = add(kind, op, inputs);
  k.attrs.set("outer", product(shape.take_front(dim)));
  k.attrs.set("dim", shape[dim]);
  k.attrs.set("inner", product(shape.drop_front(dim + 1)));
  return success();
}

/// A batch of row-major GEMMs. Each operand steps through its matrices with
/// one stride when its batch dimensions equal the result's (or are all 1:
/// stride 0); a partial broadcast gets a table of offsets instead.
LogicalResult OpLowering::lowerMatmul(MatmulOp op) {
  ArrayRef<int64_t> lhs = shapeOf(op.getLhs()), rhs = shapeOf(op.getRhs()),
                    out = shapeOf(op.getResult());
  bool transA = op.getTransposeLhs(), transB = op.getTransposeRhs();
  int64_t m = out[out.size() - 2], n = out.back();
  int64_t k = transA ? lhs[lhs.size() - 2] : lhs.back();
  ArrayRef<int64_t> batch = out.drop_back(2);

  Kernel &kernel =
      add(MatmulKernelOp::getOperationName(), op, {op.getLhs(), op.getRhs()});
  auto setOperand = [&](llvm::StringRef name, ArrayRef<int64_t> shape) {
    int64_t matrix = shape[shape.size() - 2] * shape.back();
    std::vector<int64_t> strides = broadcastStrides(shape.drop_back(2), batch);
    bool full = true, none = true;
    for (auto [stride, dim] : llvm::zip(strides, batch)) {
      full &= dim == 1 || stride != 0;
      none &= dim == 1 || stride == 0;
    }
    if (full || none) {
      kernel.attrs.set((name + "_stride").str(), none ? int64_t(0) : matrix);
      return;
    }
    std::vector<int64_t> offsets;
    for (int64_t b = 0, e = product(batch); b < e; ++b) {
      int64_t offset = 0, rest = b;
      for (int64_t d = batch.size() - 1; d >= 0; --d) {
        offset += (rest % batch[d]) * strides[d];
        rest /= batch[d];
      }
      offsets.push_back(offset * matrix);
    }
    kernel.attrs.set((name + "_offsets").str(), std::move(offsets));
  };
  kernel.attrs.set("batch", product(batch));
  kernel.attrs.set("m", m);
  kernel.attrs.set("n", n);
  kernel.attrs.set("k", k);
  kernel.attrs.set("transpose_lhs", transA);
  kernel.attrs.set("transpose_rhs", transB);
  kernel.attrs.set("lda", lhs.back());
  kernel.attrs.set("ldb", rhs.back());
  setOperand("lhs", lhs);
  setOperand("rhs", rhs);
  addGemmWorkspace(kernel, op, product(batch), m, n, k);
  return success();
}

LogicalResult OpLowering::lowerLinear(llvm::StringRef kind, Operation *op,
                                      ValueRange inputs,
                                      ArrayRef<int64_t> weightShape,
                                      int64_t rows) {
  Kernel &k = add(kind, op, inputs);
  k.attrs.set("rows", rows);
  k.attrs.set("in", weightShape[1]);
  k.attrs.set("out", weightShape[0]);
  // The GEMM's m x n x k: y = x W^T, dx = dy W, dW = dy^T x.
  int64_t in = weightShape[1], out = weightShape[0];
  if (kind == LinearKernelOp::getOperationName())
    addGemmWorkspace(k, op, 1, rows, out, in);
  else if (kind == LinearGradInputKernelOp::getOperationName())
    addGemmWorkspace(k, op, 1, rows, in, out);
  else
    addGemmWorkspace(k, op, 1, out, in, rows);
  return success();
}

void OpLowering::addGemmWorkspace(Kernel &k, Operation *op, int64_t batch,
                                  int64_t m, int64_t n, int64_t kDepth) {
  auto rule = l.getTarget().gemmWorkspaceBytes;
  if (!rule)
    return;
  // In the type it computes in (a half GEMM's float32 tensors are rounded to
  // it: ir/ProductTypes.h).
  DType dtype = *getDType(getProductElementType(op));
  // A half GEMM accumulates, and keeps split-K's partial sums, in float32.
  int64_t accumulatorBytes = std::max<int64_t>(getDTypeBytes(dtype), 4);
  bool half = dtype == DType::F16 || dtype == DType::BF16;
  int64_t bytes = rule(batch, m, n, kDepth,
                       numel(op->getResult(0)) * accumulatorBytes, half);
  if (bytes == 0)
    return;
  // Workspace buffers count elements of a dtype: the GEMM's own, whose
  // sizes (2, 4 and 8 bytes) divide the 256-byte granule and any sane cap.
  int64_t elements = bytes / getDTypeBytes(dtype);
  k.workspace = l.createWorkspace(op, dtype, elements);
  k.attrs.set("workspace_bytes", elements * getDTypeBytes(dtype));
}

LogicalResult OpLowering::lowerConv(llvm::StringRef kind, Operation *op,
                                    ValueRange inputs,
                                    std::vector<int64_t> shape) {
  kernels::ConvPass pass = kind == Conv2dKernelOp::getOperationName()
                               ? kernels::ConvPass::Forward
                           : kind == Conv2dGradInputKernelOp::getOperationName()
                               ? kernels::ConvPass::BackwardInput
                               : kernels::ConvPass::BackwardWeight;
  DType dtype = *getDType(getProductElementType(op));
  bool half = dtype == DType::F16 || dtype == DType::BF16;
  int64_t elements = l.getTarget().convWorkspaceElements(
      shape, pass, half,
      half && getElementTypeOrSelf(op->getResult(0).getType()).isF32());
  Kernel &k = add(kind, op, inputs);
  k.workspace = l.createWorkspace(op, dtype, elements);
  k.attrs.set("shape", std::move(shape));
  k.attrs.set("workspace_elements", elements);
  return success();
}

/// batch_norm_grad and layer_norm_grad: the weight's and bias's gradients
/// are computed only when something reads them.
LogicalResult OpLowering::lowerNormGrad(llvm::StringRef kind, Operation *op,
                                        Value dy, Value x, Value weight,
                                        KernelAttrs attrs) {
  std::vector<int> outputs = {l.define(op->getResult(0)),
                              l.defineIfUsed(op->getResult(1)),
                              l.defineIfUsed(op->getResult(2))};
  Kernel &k = l.addKernel(kind, op, {l.get(dy), l.get(x), l.get(weight)},
                          std::move(outputs));
  k.attrs = std::move(attrs);
  return success();
}

LogicalResult OpLowering::lowerReduce(Operation *op, Value input,
                                      ArrayRef<int64_t> dims, bool mean) {
  ArrayRef<int64_t> shape = shapeOf(input);
  std::vector<bool> reduced(shape.size(), false);
  int64_t count = 1;
  for (int64_t d : dims) {
    reduced[d] = true;
    count *= shape[d];
  }
  Kernel &k = add(ReduceSumKernelOp::getOperationName(), op, {input});
  k.attrs.set("reduced", std::move(reduced));
  k.attrs.set("alpha", mean ? 1.0 / count : 1.0);
  return success();
}

/// Optimizer updates and running statistics overwrite their state operands;
/// `tied[i]` is the operand result i replaces.
LogicalResult OpLowering::lowerUpdate(llvm::StringRef kind, Operation *op,
                                      KernelAttrs attrs, std::vector<int> tied,
                                      ArrayRef<Value> inputs) {
  Kernel &k = add(kind, op, {});
  for (Value input : inputs)
    k.inputs.push_back(input ? l.get(input) : kNoBuffer);
  k.attrs = std::move(attrs);
  // sgd_update without momentum has no momentum buffer (nor its result).
  k.tiedInputs.assign(tied.begin(), tied.begin() + op->getNumResults());
  return success();
}

LogicalResult cairn::lowerOp(Operation *op, StepLowering &lowering) {
  return OpLowering(lowering).lower(op);
}
