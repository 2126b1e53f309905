//===- RecomputeCheckpoints.cpp - checkpoint { } regions recomputed -------===//
//
// Values computed inside `checkpoint { }` are not kept for the backward
// pass, except the region's inputs and outputs (values a forward kernel
// outside the region reads: torch.utils.checkpoint keeps what its function
// returns too; recomputing an output for the next layer's backward would
// bring the whole region back early). Each backward kernel of the training
// step that reads such a value reads a copy computed again right before it:
// the region's kernels that value depends on are cloned, with fresh buffers,
// in front of the first backward kernel that needs each value, and later
// backward readers share the copy. Only what some backward kernel reads is
// recomputed, from the region's inputs (values from outside the region,
// another region's included, stay as they are and live until the copies
// have read them).
//
// The copies are marked `cairn.before_first_use`: the memory-aware schedule
// runs each right before the first kernel that reads it and never hoists it
// back into the forward part. Every copy computes the same bits as the
// original: a dropout keeps its `stream`, so its mask is the same (Philox at
// the same seed, step and stream); a batch norm in training mode takes the
// batch's statistics again, while the running statistics are updated once,
// by batch_norm_running_update, which writes persistent buffers and is
// never copied. No kernel that writes a persistent buffer is copied: its
// outputs stay kept.
//
// Forward kernels marked `cairn.recompute` (cairn-choose-recomputation's
// choice under --memory-budget) are treated alike: their outputs are not
// kept, wherever they are read. One also marked `cairn.recompute_per_use`
// is copied again for each chain that needs it as an input (named
// `<name>.recomputed.2`, ...): a copy shared with its own backward readers
// would live from the first chain to the last of them (ResNet-18's stem
// output, needed to recompute layer1 long before the stem's backward).
//
// The originals then have only forward readers: their kind becomes
// `activation`; the copies are `temp` (the backward part defines them).
//
//===----------------------------------------------------------------------===//

#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

#include "ir/CairnKernelOps.h"
#include "ir/CairnProgramOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"

namespace cairn {
#define GEN_PASS_DEF_RECOMPUTECHECKPOINTSPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

std::optional<int64_t> getRegion(Operation *kernel) {
  if (auto region =
          kernel->getAttrOfType<IntegerAttr>(CairnDialect::kCheckpointAttrName))
    return region.getInt();
  return std::nullopt;
}

/// One training step's recomputation.
class StepRecomputation {
public:
  explicit StepRecomputation(StepOp step) : step(step), b(step.getContext()) {}

  /// Fails (after a diagnostic) only on IR the lowering never makes.
  LogicalResult run() {
    SmallVector<Operation *> kernels = getStepKernels(step);
    int forwardEnd = getForwardEnd(kernels);
    if (forwardEnd < 0)
      return success(); // no loss: nothing is a backward part

    // The per-step buffers of a forward kernel are not kept (but a kernel
    // writing persistent buffers, updating one of its inputs, or writing a
    // buffer an update then overwrites is never copied).
    llvm::DenseSet<Operation *> uncopiable = getUncopiableKernels(kernels);
    auto notKept = [&](Operation *kernel) {
      if (uncopiable.contains(kernel))
        return;
      for (Value output : cast<KernelOpInterface>(kernel).getKernelOutputs())
        if (output)
          producers.try_emplace(output, kernel);
    };
    // Those of each region kernel of the forward part,
    for (int k = 0; k <= forwardEnd; ++k)
      if (getRegion(kernels[k]))
        notKept(kernels[k]);
    // A region's outputs (what a forward kernel outside it reads) are kept,
    // as torch.utils.checkpoint keeps what the function returns: recomputed,
    // the next layer's backward would bring back the whole region at once.
    for (int k = 0; k <= forwardEnd; ++k)
      for (Value input : cast<KernelOpInterface>(kernels[k]).getKernelInputs())
        if (Operation *from =
                input ? producers.lookup(getViewRoot(input)) : nullptr;
            from && getRegion(from) != getRegion(kernels[k]))
          kept.insert(getViewRoot(input));
    for (Value output : kept)
      producers.erase(output);
    // and what cairn-choose-recomputation marked, wherever the forward part
    // reads it.
    for (int k = 0; k <= forwardEnd; ++k)
      if (kernels[k]->hasAttr(CairnDialect::kRecomputeAttrName))
        notKept(kernels[k]);
    if (producers.empty())
      return success();

    for (int k = forwardEnd + 1, e = kernels.size(); k < e; ++k) {
      // A chain made per use serves the reader it was made for alone.
      chainCopies.clear();
      auto kernel = cast<KernelOpInterface>(kernels[k]);
      llvm::SmallPtrSet<Value, 4> outputs;
      for (Value output : kernel.getKernelOutputs())
        if (output)
          outputs.insert(output);
      llvm::SmallPtrSet<Value, 4> inputs;
      for (Value input : kernel.getKernelInputs())
        if (input && !outputs.contains(input) &&
            producers.count(getViewRoot(input)))
          inputs.insert(input);
      for (OpOperand &operand : kernels[k]->getOpOperands())
        if (inputs.contains(operand.get()))
          operand.set(getRecomputed(operand.get(), kernels[k]));
    }

    // The originals now feed the forward part alone.
    for (auto &[value, producer] : producers)
      if (auto buffer = value.getDefiningOp<BufferOp>();
          buffer && buffer.getKind() == BufferKind::saved)
        buffer.setKind(BufferKind::activation);
    for (Operation &op : step.getBody().front())
      if (auto view = dyn_cast<ViewOp>(op);
          view && view.getKind() == BufferKind::saved &&
          producers.count(getViewRoot(view.getResult())))
        view.setKind(BufferKind::activation);
    return success();
  }

private:
  /// `value` (a region value or a view of one) as recomputed for `reader`:
  /// the copy made for an earlier reader, or a new one right before it.
  Value getRecomputed(Value value, Operation *reader) {
    return getRecomputed(value, reader, /*chain=*/false);
  }
  /// `chain`: the copy is an input of another copy made for `reader`. A
  /// kernel marked per use then gets a copy of its own for that chain, not
  /// the one its own backward readers share (made now, it would live until
  /// they run, maybe much later).
  Value getRecomputed(Value value, Operation *reader, bool chain) {
    if (Value done = copies.lookup(value))
      return done;
    if (chain)
      if (Value done = chainCopies.lookup(value))
        return done;
    Operation *root = producers.lookup(getViewRoot(value));
    bool perUse =
        chain && root->hasAttr(CairnDialect::kRecomputePerUseAttrName);
    auto &into = perUse ? chainCopies : copies;
    if (auto view = value.getDefiningOp<ViewOp>()) {
      Value source = getRecomputed(view.getSource(), reader, chain);
      b.setInsertionPoint(reader);
      Value copy =
          ViewOp::create(b, view.getLoc(), view.getType(), BufferKind::temp,
                         copyName(view.getName()), source);
      into[value] = copy;
      return copy;
    }
    Operation *producer = root; // not a view: its own producer
    auto kernel = cast<KernelOpInterface>(producer);
    IRMapping mapping;
    // What it reads that is not kept comes first, recomputed too; kept
    // values (a region's inputs and outputs, unmarked values) are read as
    // they are.
    for (Value input : kernel.getKernelInputs())
      if (input && producers.count(getViewRoot(input)))
        mapping.map(input, getRecomputed(input, reader, /*chain=*/true));
    b.setInsertionPoint(reader);
    auto fresh = [&](Value original) {
      auto buffer = original.getDefiningOp<BufferOp>();
      BufferKind kind = buffer.getKind() == BufferKind::workspace
                            ? BufferKind::workspace
                            : BufferKind::temp;
      Value copy = BufferOp::create(b, buffer.getLoc(), buffer.getType(), kind,
                                    copyName(buffer.getName()), IntegerAttr(),
                                    Value(), InitAttr(), IntegerAttr());
      mapping.map(original, copy);
      return copy;
    };
    for (Value output : kernel.getKernelOutputs())
      if (output)
        into[output] = fresh(output);
    if (Value scratch = kernel.getKernelWorkspace())
      fresh(scratch);
    Operation *clone = b.clone(*producer, mapping);
    clone->removeAttr(CairnDialect::kCheckpointAttrName);
    clone->removeAttr(CairnDialect::kRecomputeAttrName);
    clone->removeAttr(CairnDialect::kRecomputePerUseAttrName);
    clone->setAttr(CairnDialect::kBeforeFirstUseAttrName, b.getUnitAttr());
    return into.lookup(value);
  }
  /// `<name>.recomputed`, and `.recomputed.2`, ... for a value copied again.
  std::string copyName(StringRef name) {
    int count = ++copyCount[name];
    std::string copy = (name + kRecomputedSuffix).str();
    return count == 1 ? copy : copy + "." + std::to_string(count);
  }

  StepOp step;
  OpBuilder b;
  /// Each region value (a per-step buffer) and the kernel that writes it.
  llvm::DenseMap<Value, Operation *> producers;
  /// Region values a forward kernel outside the region reads.
  llvm::SmallPtrSet<Value, 8> kept;
  /// Region values and views of them, and their recomputed copies.
  llvm::DenseMap<Value, Value> copies;
  /// Copies made per use for the chain being built, by original.
  llvm::DenseMap<Value, Value> chainCopies;
  /// How many copies of each buffer there are, for unique names.
  llvm::StringMap<int> copyCount;
};

struct RecomputeCheckpointsPass
    : cairn::impl::RecomputeCheckpointsPassBase<RecomputeCheckpointsPass> {
  void runOnOperation() override {
    ProgramOp program = getProgramFor(getOperation(), getArgument());
    if (!program)
      return signalPassFailure();
    for (auto step : program.getBody().front().getOps<StepOp>())
      if (step.getKind() == StepKind::train_step &&
          failed(StepRecomputation(step).run()))
        return signalPassFailure();
  }
};

} // namespace
