//===- SaveInHalf.cpp - Half steps keep their norms' saved values in f16 --===//
//
// Autocast runs softmax and layer norm in float32, so the values their
// backward reads (softmax's output, layer norm's input: in a transformer,
// every attention matrix and every residual sum) are float32, held from the
// forward to the backward at twice a half value's bytes. In an f16 step this
// pass stores each of them in f16 for that wait, as Megatron-LM's fused
// softmax and fp16 residual stream do: one cast after the value's last
// forward reader, one widening right before its first backward reader. The
// forward computes in float32 as before; the backward reads the value
// rounded to f16's 11 significant bits, an error no larger than the one
// each f16 product's inputs already carry. A bf16 step stores softmax's
// output in f16 too: in [0, 1] it cannot overflow f16, whose rounding is
// finer than bf16's; its residual sums, which could, stay float32 (bf16's
// 8 bits would add to the gradients' distance from PyTorch's autocast, which
// keeps them float32, that test/reference/check_bf16_agreement.py bounds).
// Nothing changes in a `precision f32` region. The choice is the
// precision's, not the plan's: builds with and without reuse, fusion or
// recomputation give the same bits.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/CairnDialect.h"
#include "ir/CairnOps.h"
#include "ir/ModelPrecision.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace cairn {
#define GEN_PASS_DEF_SAVEINHALFPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

/// The float32 forward value `reader` (a backward op) reads that this pass
/// stores in f16, or null: softmax_grad's y, layer_norm_grad's input, where
/// the forward softmax or layer norm is in an f16 part of the model.
Value getSavedNormValue(Operation *reader, Operation *seed,
                        std::optional<Precision> model) {
  Value value;
  Operation *forward = nullptr;
  // A softmax's output is in [0, 1]: f16 holds it without overflow and with
  // 11 significant bits, finer than bf16's 8, so a bf16 step stores it in
  // f16 too. A residual sum can exceed f16's range: f16 steps only.
  bool inBf16Too = false;
  if (auto grad = dyn_cast<SoftmaxGradOp>(reader)) {
    value = grad.getOutput();
    forward = value.getDefiningOp<SoftmaxOp>();
    inBf16Too = true;
  } else if (auto grad = dyn_cast<LayerNormGradOp>(reader)) {
    value = grad.getInput();
    for (Operation *user : value.getUsers())
      if (isa<LayerNormOp>(user) && user->isBeforeInBlock(seed))
        forward = user;
  }
  if (!forward)
    return {};
  std::optional<Precision> precision = getOpPrecision(forward, model);
  if (precision != Precision::f16 &&
      !(inBf16Too && precision == Precision::bf16))
    return {};
  Operation *def = value.getDefiningOp();
  // A block argument is an input, in the arena for the whole step anyway; a
  // value of a checkpoint region is computed again, not kept.
  if (!def || def->getBlock() != seed->getBlock() ||
      !def->isBeforeInBlock(seed) ||
      def->hasAttr(CairnDialect::kCheckpointAttrName) ||
      !getElementTypeOrSelf(value.getType()).isF32())
    return {};
  return value;
}

/// Stores `value` in f16 from its last forward reader to its first backward
/// one; leaves it where it has no reader on one side or is a step result.
void saveInHalf(Value value, Operation *seed, OpBuilder &builder) {
  Operation *lastForward = nullptr;
  Operation *firstBackward = nullptr;
  SmallVector<OpOperand *> backward;
  CastOp halfCopy;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (user->hasTrait<mlir::OpTrait::IsTerminator>())
      return;
    if (user->isBeforeInBlock(seed)) {
      if (!lastForward || lastForward->isBeforeInBlock(user))
        lastForward = user;
      // Autocast's f16 copy for a half product: the same bits, kept.
      auto copy = dyn_cast<CastOp>(user);
      if (copy && getElementTypeOrSelf(copy.getType()).isF16())
        halfCopy = copy;
      continue;
    }
    backward.push_back(&use);
    if (!firstBackward || user->isBeforeInBlock(firstBackward))
      firstBackward = user;
  }
  if (!lastForward || !firstBackward)
    return;
  auto type = cast<RankedTensorType>(value.getType());
  Value half = halfCopy ? halfCopy.getResult() : Value();
  if (!half) {
    builder.setInsertionPointAfter(lastForward);
    half = CastOp::create(builder, value.getLoc(),
                          type.clone(builder.getF16Type()), value);
    copyRegionAndDevice(value.getDefiningOp(), half.getDefiningOp());
  }
  builder.setInsertionPoint(firstBackward);
  auto wide = CastOp::create(builder, value.getLoc(), type, half);
  copyRegionAndDevice(firstBackward, wide);
  for (OpOperand *use : backward)
    use->set(wide);
}

struct SaveInHalfPass : cairn::impl::SaveInHalfPassBase<SaveInHalfPass> {
  using SaveInHalfPassBase::SaveInHalfPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<Precision> model;
    if (failed(
            getModelPrecision(module, precision, "cairn-save-in-half", model)))
      return signalPassFailure();
    auto step = module.lookupSymbol<func::FuncOp>("train_step");
    if (!step)
      return;
    Block &body = step.getBody().front();
    Operation *seed = nullptr;
    for (Operation &op : body)
      if (op.hasAttr(CairnDialect::kBackwardSeedAttrName)) {
        seed = &op;
        break;
      }
    if (!seed)
      return;
    llvm::SetVector<Value> saved;
    for (Operation *op = seed->getNextNode(); op; op = op->getNextNode())
      if (Value value = getSavedNormValue(op, seed, model))
        saved.insert(value);
    OpBuilder builder(&getContext());
    for (Value value : saved)
      saveInHalf(value, seed, builder);
  }
};

} // namespace
