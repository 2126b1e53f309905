//===- ComputeHalfInFloat32.cpp - Half storage, float32 arithmetic --------===//
//
// For a target whose kernels compute in float32 only (the CPU: Debian's
// OpenBLAS has no half GEMM), after autodiff: every op but a cast or a
// reshape that reads or writes an f16 or bf16 tensor reads float32 copies
// of its half operands, made right before it, and writes a float32 result,
// which one cast then stores in the op's half type. The values the step keeps
// (saved for the backward, passed between ops) stay half, as cairn-autocast
// chose; the float32 copies live from the cast to the op. Rounding each result
// to half is what PyTorch's half kernels do on the CPU (they compute in float
// too), so the numbers are the same.
//
// With half-products, the GEMMs and convolutions on one half type stay as
// they are (isHalfProduct): the target accumulates them in float32 from the
// half operands and rounds the result once, which is what the widened
// product and its cast compute. With half-storage-kernels, so do the ops
// whose kernels widen and round their half tensors themselves
// (isHalfStorageOp): the same arithmetic, without the float32 copies. A sum
// or mean in float32 of a half value's float32 copy (autocast sums in
// float32; so does the sum this pass widens), and a softmax or log-softmax
// (autocast's float32 list), then reads the half value. A linear's or a
// convolution's casts of a parameter or of the input batch to half, and of
// a weight gradient back to float32, fuse into the product, which rounds
// those float32 tensors as it reads or writes them (ir/ProductTypes.h): the
// bits of the casts, without the half copies; the result's cast only where
// that holds fewer bytes (isResultCastCheaper).
//
//===----------------------------------------------------------------------===//

#include "passes/Lowering.h"
#include "passes/Passes.h"

#include "ir/CairnDialect.h"
#include "ir/CairnOps.h"
#include "ir/ElementConversion.h"
#include "ir/ProductTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"

namespace cairn {
#define GEN_PASS_DEF_COMPUTEHALFINFLOAT32PASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

bool isHalfTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isHalfElementType(tensor.getElementType());
}

/// Whether `value` holds a function argument's bytes: the argument or a
/// reshape of it (which lowers to an alias).
bool isArgumentView(Value value) {
  while (auto reshape = value.getDefiningOp<ReshapeOp>())
    value = reshape.getInput();
  return isa<BlockArgument>(value);
}

int64_t getTensorBytes(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.getNumElements() *
         int64_t(type.getElementType().getIntOrFloatBitWidth() / 8);
}

/// Whether `value`, an operand, has no other reader (nor has any value it
/// reshapes) and is no argument: its bytes are free once its reader has run.
bool diesAtItsReader(Value value) {
  while (true) {
    if (!value.hasOneUse() || isa<BlockArgument>(value))
      return false;
    auto reshape = value.getDefiningOp<ReshapeOp>();
    if (!reshape)
      return true;
    value = reshape.getInput();
  }
}

/// Whether writing `product`'s result in float32 (its widening cast fused)
/// holds fewer bytes than writing it in half and widening it after. Fused,
/// the product holds its operands and the float32 result (2h, for a half
/// result of h bytes) at once; not, the product holds its operands and h,
/// and the cast h and 2h once the operands that die at the product are
/// gone. So the cast is fused unless those operands take more than h: a
/// product whose inputs end with it (inference's linear2 after its gelu),
/// not a weight gradient, whose operands the backward reads again.
bool isResultCastCheaper(Operation *product) {
  int64_t dying = 0;
  for (Value operand : product->getOperands())
    if (diesAtItsReader(operand))
      dying += getTensorBytes(operand);
  return dying <= getTensorBytes(product->getResult(0));
}

class HalfInFloat32 {
public:
  HalfInFloat32(func::FuncOp func, bool halfProducts,
                HalfStorageKernels halfStorageKernels)
      : func(func), builder(func.getContext()),
        f32(Float32Type::get(func.getContext())), halfProducts(halfProducts),
        halfStorageKernels(halfStorageKernels) {}

  void run();

private:
  /// A float32 copy of the half value `value` for `reader`, made right
  /// before it: a copy per reader lives for one op, where one shared copy
  /// would keep float32 bytes from the forward to the backward.
  Value getFloat32(Value value, Operation *reader);
  /// A half constant made again in float32 (its values are exact there).
  void widenConstant(ConstantOp constant);
  /// Sums, means and softmaxes that read a float32 copy of a half value read
  /// the half value instead (isHalfStorageOp); copies nothing else reads go.
  void readHalvesInPlace();
  /// Products on half storage read a function argument (a parameter, the
  /// input batch: float32 values the step holds throughout) or a reshape of
  /// one instead of its half copy, and write a result only a widening cast
  /// reads (a weight gradient for the float32 master) in float32; copies
  /// nothing else reads go.
  void fuseProductCasts();

  func::FuncOp func;
  OpBuilder builder;
  Type f32;
  bool halfProducts;
  HalfStorageKernels halfStorageKernels;
  llvm::DenseMap<std::pair<Value, Operation *>, Value> copies;
};

Value HalfInFloat32::getFloat32(Value value, Operation *reader) {
  Value &copy = copies[{value, reader}];
  if (copy)
    return copy;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(reader);
  auto type = cast<RankedTensorType>(value.getType()).clone(f32);
  copy = CastOp::create(builder, value.getLoc(), type, value);
  copyRegionAndDevice(reader, copy.getDefiningOp());
  return copy;
}

void HalfInFloat32::widenConstant(ConstantOp constant) {
  auto type = cast<RankedTensorType>(constant.getType());
  auto wide = type.clone(f32);
  auto values = cast<DenseElementsAttr>(constant.getValue());
  builder.setInsertionPoint(constant);
  Value replacement =
      ConstantOp::create(builder, constant.getLoc(), wide,
                         convertFloatElements(values, cast<FloatType>(f32)));
  Value half = CastOp::create(builder, constant.getLoc(), type, replacement);
  constant.getResult().replaceAllUsesWith(half);
  constant.erase();
}

void HalfInFloat32::readHalvesInPlace() {
  SmallVector<Operation *> readers;
  func.walk([&](Operation *op) {
    if (isa<SumOp, MeanOp, SoftmaxOp, LogSoftmaxOp>(op))
      readers.push_back(op);
  });
  for (Operation *reader : readers) {
    auto widen = reader->getOperand(0).getDefiningOp<CastOp>();
    if (!widen || !isHalfTensor(widen.getInput().getType()) ||
        !getElementTypeOrSelf(widen.getType()).isF32())
      continue;
    reader->setOperand(0, widen.getInput());
    if (widen->use_empty())
      widen->erase();
  }
}

void HalfInFloat32::fuseProductCasts() {
  SmallVector<Operation *> products;
  func.walk([&](Operation *op) {
    if (isa<LinearOp, LinearGradInputOp, LinearGradWeightOp, Conv2dOp,
            Conv2dGradInputOp, Conv2dGradWeightOp>(op) &&
        isHalfStorageOp(op))
      products.push_back(op);
  });
  for (Operation *product : products) {
    // The product rounds the float32 value to its half type as the cast
    // did (ir/ProductTypes.h); the value lives anyway, the copy need not.
    for (OpOperand &operand : product->getOpOperands()) {
      auto narrow = operand.get().getDefiningOp<CastOp>();
      if (!narrow || !isArgumentView(narrow.getInput()) ||
          !getElementTypeOrSelf(narrow.getInput().getType()).isF32())
        continue;
      operand.set(narrow.getInput());
      if (narrow->use_empty())
        narrow->erase();
    }
    // Its float32 result is the cast's: each sum rounded to half, widened.
    // A product keeps a half tensor, whose type it computes in
    // (ir/ProductTypes.h): with every operand float32 the result stays half.
    Value result = product->getResult(0);
    if (!result.hasOneUse() ||
        !llvm::any_of(product->getOperandTypes(), isHalfTensor) ||
        !isResultCastCheaper(product))
      continue;
    auto widen = dyn_cast<CastOp>(*result.getUsers().begin());
    if (!widen || !getElementTypeOrSelf(widen.getType()).isF32())
      continue;
    result.setType(widen.getType());
    widen.getResult().replaceAllUsesWith(result);
    widen->erase();
  }
}

void HalfInFloat32::run() {
  Block &body = func.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : ops) {
    if (runsOnHalf(op, halfProducts, halfStorageKernels))
      continue;
    bool touchesHalf = llvm::any_of(op->getOperandTypes(), isHalfTensor) ||
                       llvm::any_of(op->getResultTypes(), isHalfTensor);
    if (!touchesHalf)
      continue;
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      widenConstant(constant);
      continue;
    }
    for (OpOperand &operand : op->getOpOperands())
      if (isHalfTensor(operand.get().getType()))
        operand.set(getFloat32(operand.get(), op));
    builder.setInsertionPointAfter(op);
    for (Value result : op->getResults()) {
      auto type = cast<RankedTensorType>(result.getType());
      if (!isHalfTensor(type))
        continue;
      result.setType(type.clone(f32));
      auto half = CastOp::create(builder, op->getLoc(), type, result);
      copyRegionAndDevice(op, half);
      // Readers take the half value, rounded, as PyTorch's next op would;
      // not the float32 result before rounding.
      result.replaceAllUsesExcept(half, half);
    }
  }
  // Reading a half input into a float32 sum or softmax, and rounding a
  // float32 operand or result as a product reads or writes it, are the
  // CPU's kernels (isHalfStorageOp).
  if (halfStorageKernels == HalfStorageKernels::All) {
    readHalvesInPlace();
    fuseProductCasts();
  }
}

struct ComputeHalfInFloat32Pass
    : cairn::impl::ComputeHalfInFloat32PassBase<ComputeHalfInFloat32Pass> {
  using ComputeHalfInFloat32PassBase::ComputeHalfInFloat32PassBase;
  void runOnOperation() override {
    std::optional<HalfStorageKernels> kernels =
        parseHalfStorageKernels(halfStorageKernels);
    if (!kernels) {
      getOperation().emitError()
          << "unknown half-storage-kernels '" << halfStorageKernels
          << "' (none, one-type or all)";
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      HalfInFloat32(func, halfProducts, *kernels).run();
  }
};

} // namespace
