//===- LoweringTargets.cpp - What the CPU and CUDA kernels need -----------===//
//
// The workspace rules of each target, in the compiler: the plan holds every
// byte a kernel or a library writes besides its outputs, so the compiler
// must know how much each one takes before anything runs.
//
//===----------------------------------------------------------------------===//

#include "passes/ArenaPlan.h"
#include "passes/Lowering.h"

#include "ir/CairnOps.h"
#include "ir/ProductTypes.h"
#include "runtime/kernels/ConvLibrary.h"
#include "runtime/kernels/HalfConv.h"
#include "runtime/kernels/HalfGemm.h"

#include "mlir/IR/TypeUtilities.h"

#include <algorithm>

using namespace cairn;

namespace {

/// Conv2dKernelOp's `shape` as the kernels take it.
kernels::Conv2dShape toConvShape(llvm::ArrayRef<int64_t> s) {
  return {s[0], s[1], s[2],  s[3],  s[4],  s[5],  s[6],  s[7],
          s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15]};
}

/// im2col + GEMM: the CPU kernels' own rule (runtime/kernels/Conv.h), the
/// column matrix of one group of conv2dImagesPerGemm images and, for more
/// than one, their outputs side by side. oneDNN runs a CPU convolution only
/// inside it (runtime/kernels/ConvLibrary.h).
int64_t getIm2colElements(llvm::ArrayRef<int64_t> s, kernels::ConvPass pass,
                          bool /*half*/, bool /*float32Result*/) {
  return kernels::conv2dWorkspaceElements(toConvShape(s), pass);
}

/// The CPU's: im2col's for a float convolution; for a half one, HalfConv.h's
/// floats as half elements (two each).
int64_t getCpuConvElements(llvm::ArrayRef<int64_t> s, kernels::ConvPass pass,
                           bool half, bool float32Result) {
  return half ? 2 * kernels::halfConv2dWorkspaceElements(toConvShape(s), pass,
                                                         float32Result)
              : kernels::conv2dWorkspaceElements(toConvShape(s), pass);
}

/// oneDNN's most (runtime/kernels/ConvLibrary.h).
int64_t getOneDnnWorkspaceBytes(llvm::ArrayRef<int64_t> s,
                                kernels::ConvPass pass) {
  return kernels::conv2dLibraryWorkspaceBytes(toConvShape(s), pass);
}

/// cuBLASLt's split-K keeps partial sums of the output (m x n in the compute
/// type) in its workspace, and pays only when K is longer than both output
/// sides (few output tiles, a long reduction each): those GEMMs get about the
/// output's bytes, at most kCudaGemmWorkspaceBytes, the others none. A
/// workspace no algorithm would use still takes arena bytes when its kernel
/// is at the peak (an MLP's weight gradient, K = the batch, would grow the
/// plan by a quarter). Rounded up to the arena's granule.
int64_t getSplitKWorkspaceBytes(int64_t /*batch*/, int64_t m, int64_t n,
                                int64_t k, int64_t outputBytes, bool /*half*/) {
  if (k <= std::max(m, n))
    return 0;
  return std::min(kCudaGemmWorkspaceBytes,
                  std::max(kArenaAlignment, alignToArena(outputBytes)));
}

/// The CPU's float GEMMs need no scratch; its half GEMMs widen panels of
/// their operands and round tiles of their result in float32 scratch
/// (runtime/kernels/HalfGemm.h's rule, a batch's for a batched matmul).
int64_t getHalfGemmWorkspaceBytes(int64_t batch, int64_t m, int64_t n,
                                  int64_t k, int64_t /*outputBytes*/,
                                  bool half) {
  return half ? kernels::batchedHalfGemmWorkspaceElements(batch, m, n, k) * 4
              : 0;
}

/// All of `op`'s tensors have one half type.
bool hasOneHalfType(mlir::Operation *op) {
  mlir::Type half;
  for (mlir::Type type :
       llvm::concat<mlir::Type>(op->getOperandTypes(), op->getResultTypes())) {
    auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
    if (!tensor)
      return false;
    mlir::Type element = tensor.getElementType();
    if (!isHalfElementType(element) || (half && element != half))
      return false;
    half = element;
  }
  return static_cast<bool>(half);
}

} // namespace

bool cairn::isHalfProduct(mlir::Operation *op) {
  return mlir::isa<MatmulOp, LinearOp, LinearGradInputOp, LinearGradWeightOp,
                   Conv2dOp, Conv2dGradInputOp>(op) &&
         hasOneHalfType(op);
}

bool cairn::isHalfStorageOp(mlir::Operation *op) {
  // A product's float32 tensors, if any, are rounded to its half type as it
  // reads or writes them (ir/ProductTypes.h).
  if (mlir::isa<LinearOp, LinearGradInputOp, LinearGradWeightOp, Conv2dOp,
                Conv2dGradInputOp, Conv2dGradWeightOp>(op))
    return computesInHalf(op);
  if (isOneHalfTypeStorageOp(op))
    return true;
  if (mlir::isa<MatmulOp>(op))
    return hasOneHalfType(op);
  // A sum, a mean or a softmax reads its half input widened and computes in
  // float32 into a float32 result.
  if (mlir::isa<SumOp, MeanOp, SoftmaxOp, LogSoftmaxOp>(op)) {
    mlir::Type input = mlir::getElementTypeOrSelf(op->getOperand(0).getType());
    return isHalfElementType(input) &&
           mlir::getElementTypeOrSelf(op->getResult(0).getType()).isF32();
  }
  return false;
}

bool cairn::isOneHalfTypeStorageOp(mlir::Operation *op) {
  // Batch norm's data (input, result, dy, dx) has one type and its
  // parameters and statistics are float32 where that type is half (the
  // verifiers' getNormParamElementType): the first operand says which.
  if (mlir::isa<BatchNormOp, BatchNormGradOp, BatchNormRunningUpdateOp>(op)) {
    mlir::Type data = mlir::getElementTypeOrSelf(op->getOperand(0).getType());
    return isHalfElementType(data);
  }
  if (!hasOneHalfType(op))
    return false;
  if (mlir::isa<DropoutOp, AddOp, SubOp, MulOp, DivOp, ReluOp, SigmoidOp,
                TanhOp, GeluOp, SiluOp, HardswishOp, ReluGradOp, SigmoidGradOp,
                TanhGradOp, GeluGradOp, SiluGradOp, HardswishGradOp,
                MaxPool2dOp>(op))
    return true;
  // Max pooling's gradient where no two windows overlap: each gradient
  // lands alone, with no sum to round. Windows overlap where the stride is
  // below the dilated window.
  auto grad = mlir::dyn_cast<MaxPool2dGradOp>(op);
  if (!grad)
    return false;
  for (int axis = 0; axis < 2; ++axis)
    if (grad.getStride()[axis] <
        grad.getDilation()[axis] * (grad.getKernelSize()[axis] - 1) + 1)
      return false;
  return true;
}

bool cairn::runsOnHalf(mlir::Operation *op, bool halfProducts,
                       HalfStorageKernels halfStorageKernels) {
  // found_inf tells a finite half value by its bits, on every target.
  if (mlir::isa<CastOp, ReshapeOp, FoundInfOp>(op) ||
      (halfProducts && isHalfProduct(op)))
    return true;
  switch (halfStorageKernels) {
  case HalfStorageKernels::None:
    return false;
  case HalfStorageKernels::OneType:
    return isOneHalfTypeStorageOp(op);
  case HalfStorageKernels::All:
    return isHalfStorageOp(op);
  }
  llvm_unreachable("unknown HalfStorageKernels");
}

llvm::StringRef cairn::getHalfStorageKernelsName(HalfStorageKernels kernels) {
  switch (kernels) {
  case HalfStorageKernels::None:
    return "none";
  case HalfStorageKernels::OneType:
    return "one-type";
  case HalfStorageKernels::All:
    return "all";
  }
  llvm_unreachable("unknown HalfStorageKernels");
}

std::optional<HalfStorageKernels>
cairn::parseHalfStorageKernels(llvm::StringRef name) {
  for (HalfStorageKernels kernels :
       {HalfStorageKernels::None, HalfStorageKernels::OneType,
        HalfStorageKernels::All})
    if (name == getHalfStorageKernelsName(kernels))
      return kernels;
  return std::nullopt;
}

LoweringTarget cairn::getCpuTarget() {
  LoweringTarget target;
  target.name = "CPU";
  target.halfStorage = true;
  target.halfStorageKernels = HalfStorageKernels::All;
  target.lossScaling = true;
  target.chainDropout = true;
  target.checkScaledGradients = true;
  target.gemmWorkspaceBytes = getHalfGemmWorkspaceBytes;
  target.convWorkspaceElements = getCpuConvElements;
  target.convLibraryWorkspaceBytes = getOneDnnWorkspaceBytes;
  return target;
}

std::optional<LoweringTarget> cairn::getLoweringTarget(llvm::StringRef name) {
  if (name == "cpu")
    return getCpuTarget();
  if (name == "cuda")
    return getCudaTarget();
  return std::nullopt;
}

LoweringTarget cairn::getCudaTarget() {
  LoweringTarget target;
  target.name = "CUDA";
  // Half tensors are stored and computed in float32 with the CPU's rounding.
  // The GEMMs and convolutions take half operands: cuBLASLt and cuDNN
  // accumulate in float32 on the tensor cores and round each result once,
  // as the float32 product of the widened operands followed by a cast
  // would; a product reads only half operands (no float32 master rounded as
  // it is read). A convolution's weight gradient stays float32: under
  // --deterministic it may need Cairn's own kernel
  // (runtime/cuda/ConvKernels.cu), which has no half twin. The element-wise,
  // max-pooling and batch-norm kernels read and write half tensors
  // themselves (ElementwiseKernels.cu, PoolKernels.cu, BatchNorm.cu:
  // Storage<T>); the sums and softmaxes read float32 copies
  // (PrecisionKernels.cu's casts). Its chain kernel (ElementwiseKernels.cu)
  // has no dropout: a dropout runs alone.
  target.halfStorage = true;
  target.halfProducts = true;
  target.halfStorageKernels = HalfStorageKernels::OneType;
  target.lossScaling = true;
  target.gemmWorkspaceBytes = getSplitKWorkspaceBytes;
  // cuDNN's budget: the CPU's im2col size, so that both arenas agree; the
  // algorithms are chosen among those that fit it.
  target.convWorkspaceElements = getIm2colElements;
  return target;
}
