//===- SplitMicroBatches.cpp - A batch as micro-batches, in one step ------===//
//
// The model is lowered at the micro-batch size b; this pass makes each step
// take the whole batch B = M b by running its kernels once per micro-batch,
// each on its rows of the inputs (a slice). Unrolled in the step, so that
// the plan holds exactly what is live: on one device, each micro-batch's
// forward and backward in turn (gradient accumulation: the activations of
// one micro-batch, the update of the whole batch); on several, every
// forward first and then every backward (GPipe), which the transfers' tag
// order turns into a pipeline, each stage holding the micro-batches in
// flight. Gradients are summed over the micro-batches in their order, each
// micro-batch's loss seeded with 1/M, so the update sees the mean over the
// batch; the loss is the mean of the micro-batches' losses. Batch norm uses
// each micro-batch's statistics and updates its running statistics once per
// micro-batch, as GPipe and PyTorch's gradient accumulation do. A dropout
// draws another mask per micro-batch (its stream shifted).
//
//===----------------------------------------------------------------------===//

#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

#include "ir/CairnKernelOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <functional>

namespace cairn {
#define GEN_PASS_DEF_SPLITMICROBATCHESPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

std::vector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

MemRefType withRows(MemRefType type, int64_t rows) {
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = rows;
  return MemRefType::get(shape, type.getElementType());
}

class MicroBatchSplitter {
public:
  MicroBatchSplitter(ProgramOp program, int64_t count)
      : program(program), count(count), b(program.getContext()) {}

  LogicalResult run();

private:
  LogicalResult splitTrainStep(StepOp step);
  LogicalResult splitForward(StepOp step);
  /// Clones `kernels` for micro-batch `m` before `at` (null: the step's
  /// end), fresh per-step buffers named `<name>.mb<m>`; inputs read through
  /// their micro-batch's slice. Returns the clones in order.
  SmallVector<Operation *> cloneFor(ArrayRef<Operation *> kernels, int64_t m,
                                    IRMapping &mapping, Operation *before);
  Value slice(Value input, int64_t m, Operation *before);
  Value freshBuffer(Value original, const Twine &name, BufferKind kind,
                    Operation *before, MemRefType type = {});
  Operation *elementwise(StringRef kind, Value lhs, Value rhs, Value result,
                         Location loc);

  /// New ops go before `before`, or at the end of the step being split
  /// when it is null.
  void insertBefore(Operation *before) {
    if (before)
      b.setInsertionPoint(before);
    else
      b.setInsertionPointToEnd(current);
  }

  ProgramOp program;
  int64_t count;
  OpBuilder b;
  Block *current = nullptr;
  /// Between an input's name and `.mb<m>` in its slices' names.
  std::string sliceInfix;
  /// The micro-batch size and the inputs' and outputs' new buffers.
  int64_t rows = 0;
  DenseMap<Value, Value> wholeBatch;
  /// Dropout streams are shifted by this for each micro-batch.
  int64_t streams = 0;
};

Value MicroBatchSplitter::freshBuffer(Value original, const Twine &name,
                                      BufferKind kind, Operation *before,
                                      MemRefType type) {
  auto buffer = original.getDefiningOp<BufferOp>();
  insertBefore(before);
  return BufferOp::create(
      b, buffer.getLoc(), type ? type : cast<MemRefType>(original.getType()),
      kind, b.getStringAttr(name), IntegerAttr(), Value(), InitAttr());
}

Value MicroBatchSplitter::slice(Value input, int64_t m, Operation *before) {
  auto type = cast<MemRefType>(input.getType());
  auto buffer = input.getDefiningOp<BufferOp>();
  // Named per step: both steps slice the same inputs.
  Value part =
      freshBuffer(input, buffer.getName() + sliceInfix + ".mb" + Twine(m),
                  BufferKind::temp, before);
  SmallVector<int64_t> start(type.getRank(), 0), step(type.getRank(), 1);
  start[0] = m * rows;
  insertBefore(before);
  SliceKernelOp::create(b, buffer.getLoc(), wholeBatch.lookup(input), part,
                        b.getDenseI64ArrayAttr(start),
                        b.getDenseI64ArrayAttr(step));
  return part;
}

Operation *MicroBatchSplitter::elementwise(StringRef kind, Value lhs, Value rhs,
                                           Value result, Location loc) {
  auto type = cast<MemRefType>(result.getType());
  std::vector<int64_t> strides = rowMajorStrides(type.getShape());
  auto rhsType = cast<MemRefType>(rhs.getType());
  std::vector<int64_t> rhsStrides =
      rhsType.getRank() == 0 ? std::vector<int64_t>(type.getRank(), 0)
                             : strides;
  OperationState state(loc, kind);
  state.addOperands({lhs, rhs, result});
  state.addAttribute("n", b.getI64IntegerAttr(type.getNumElements()));
  state.addAttribute("lhs_strides", b.getDenseI64ArrayAttr(strides));
  state.addAttribute("rhs_strides", b.getDenseI64ArrayAttr(rhsStrides));
  return b.create(state);
}

SmallVector<Operation *>
MicroBatchSplitter::cloneFor(ArrayRef<Operation *> kernels, int64_t m,
                             IRMapping &mapping, Operation *before) {
  SmallVector<Operation *> clones;
  // A value of the step: this micro-batch's copy; an input of the model:
  // this micro-batch's rows; other persistent buffers: themselves.
  std::function<void(Value)> map = [&](Value value) {
    if (!value || mapping.contains(value))
      return;
    if (auto view = value.getDefiningOp<ViewOp>()) {
      map(view.getSource());
      insertBefore(before);
      Value copy =
          ViewOp::create(b, view.getLoc(), view.getType(), view.getKind(),
                         b.getStringAttr(view.getName() + ".mb" + Twine(m)),
                         mapping.lookupOrDefault(view.getSource()));
      mapping.map(value, copy);
      return;
    }
    auto buffer = value.getDefiningOp<BufferOp>();
    if (!buffer)
      return;
    if (buffer.getKind() == BufferKind::input) {
      mapping.map(value, slice(value, m, before));
      return;
    }
    if (buffer.isPersistent())
      return;
    mapping.map(value, freshBuffer(value, buffer.getName() + ".mb" + Twine(m),
                                   buffer.getKind(), before));
  };
  for (Operation *kernel : kernels) {
    for (Value operand : kernel->getOperands())
      map(operand);
    insertBefore(before);
    Operation *clone = b.clone(*kernel, mapping);
    if (auto dropout = dyn_cast<DropoutKernelOp>(clone))
      dropout.setStream(dropout.getStream() + m * streams);
    clones.push_back(clone);
  }
  return clones;
}

LogicalResult MicroBatchSplitter::run() {
  rows = program.getBatch();
  program.walk([&](DropoutKernelOp dropout) {
    streams = std::max<int64_t>(streams, dropout.getStream() + 1);
  });
  // The inputs and the forward output take the whole batch.
  Block &body = program.getBody().front();
  for (auto buffer : llvm::make_early_inc_range(body.getOps<BufferOp>())) {
    bool input = buffer.getKind() == BufferKind::input;
    bool output =
        buffer.getKind() == BufferKind::output && buffer.getName() == "output";
    if (!input && !output)
      continue;
    auto type = cast<MemRefType>(buffer.getType());
    if (type.getRank() == 0 || type.getShape()[0] != rows)
      return buffer.emitError()
             << "--micro-batches expects '" << buffer.getName()
             << "' to have a row per example";
    b.setInsertionPoint(buffer);
    auto whole = BufferOp::create(
        b, buffer.getLoc(), withRows(type, rows * count), buffer.getKind(),
        buffer.getNameAttr(), IntegerAttr(), Value(), InitAttr());
    wholeBatch[buffer.getResult()] = whole.getResult();
  }
  for (auto step : llvm::make_early_inc_range(body.getOps<StepOp>())) {
    if (step.getKind() == StepKind::eval_loss)
      return step.emitError() << "--micro-batches works with a cross-entropy "
                                 "or MSE loss of the forward output for now";
    if (failed(step.getKind() == StepKind::train_step ? splitTrainStep(step)
                                                      : splitForward(step)))
      return failure();
  }
  for (auto [part, whole] : wholeBatch) {
    if (!part.use_empty())
      return part.getDefiningOp()->emitError()
             << "internal error: a kernel still reads the micro-batch '"
             << part.getDefiningOp<BufferOp>().getName() << "'";
    part.getDefiningOp()->erase();
  }
  program.setBatch(rows * count);
  program->setAttr("micro_batches", b.getI64IntegerAttr(count));
  dropPlan(program);
  return success();
}

/// The kernels of `step`, in order.
SmallVector<Operation *> getKernels(StepOp step) {
  SmallVector<Operation *> kernels;
  for (Operation &op : step.getBody().front())
    if (isa<KernelOpInterface>(op))
      kernels.push_back(&op);
  return kernels;
}

/// Erases `kernels`, then the step's declarations nothing uses, and
/// declares the rest right before their first kernel.
void replaceKernels(StepOp step, ArrayRef<Operation *> kernels) {
  for (Operation *kernel : kernels)
    kernel->erase();
  Block &block = step.getBody().front();
  for (bool erased = true; erased;) {
    erased = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (isa<BufferOp, ViewOp>(op) && op.use_empty()) {
        op.erase();
        erased = true;
      }
  }
  reorderStep(step, getKernels(step));
}

LogicalResult MicroBatchSplitter::splitTrainStep(StepOp step) {
  current = &step.getBody().front();
  sliceInfix.clear();
  SmallVector<Operation *> kernels = getKernels(step);
  SmallVector<Operation *> updates, forward, backward;
  Value loss;
  bool pipeline = false;
  for (Operation *kernel : kernels) {
    if (isa<ClipCoefficientKernelOp, FoundInfKernelOp, LossScaleKernelOp>(
            kernel))
      return kernel->emitError()
             << "--micro-batches does not go with gradient clipping or f16 "
                "loss scaling yet";
    if (auto device =
            kernel->getAttrOfType<IntegerAttr>(CairnDialect::kDeviceAttrName))
      pipeline |= device.getInt() > 0;
    if (isa<SgdUpdateKernelOp, AdamUpdateKernelOp>(kernel)) {
      updates.push_back(kernel);
      continue;
    }
    (loss ? backward : forward).push_back(kernel);
    for (Value output : cast<KernelOpInterface>(kernel).getKernelOutputs())
      if (auto buffer = output ? output.getDefiningOp<BufferOp>() : BufferOp())
        if (buffer.getKind() == BufferKind::output &&
            buffer.getName() == "loss")
          loss = output;
  }
  if (!loss || updates.empty())
    return step.emitError() << "internal error: --micro-batches found no loss "
                               "or no update in the training step";
  // The seed of the backward: d(loss) = 1, now 1/M for each micro-batch.
  FillKernelOp seed;
  for (Operation *kernel : backward)
    if (auto fill = dyn_cast<FillKernelOp>(kernel);
        fill && !seed &&
        cast<MemRefType>(fill.getResult().getType()).getRank() == 0) {
      // Autodiff's first kernel after the loss: d(loss) = 1.
      auto value = dyn_cast<FloatAttr>(fill.getValue());
      if (value && value.getValueAsDouble() == 1.0)
        seed = fill;
      break;
    }
  if (!seed)
    return step.emitError()
           << "internal error: --micro-batches found no seed of the backward";
  SmallVector<Value> grads;
  for (Operation *update : updates)
    for (Value input : cast<KernelOpInterface>(update).getKernelInputs())
      if (auto buffer = input ? input.getDefiningOp<BufferOp>() : BufferOp())
        if (buffer.getKind() == BufferKind::grad &&
            !llvm::is_contained(grads, input))
          grads.push_back(input);

  Operation *anchor = updates.front();
  std::vector<IRMapping> mappings(count);
  std::vector<Value> losses(count);
  std::vector<SmallVector<Value>> partial(count);
  for (int64_t m = 0; m < count; ++m) {
    auto name = [&](Value value) {
      return value.getDefiningOp<BufferOp>().getName() + ".mb" + Twine(m);
    };
    losses[m] = freshBuffer(loss, name(loss), BufferKind::temp, anchor);
    mappings[m].map(loss, losses[m]);
    for (Value grad : grads) {
      partial[m].push_back(
          freshBuffer(grad, name(grad), BufferKind::temp, anchor));
      mappings[m].map(grad, partial[m].back());
    }
  }
  // Sums the micro-batches' gradients so far: after micro-batch m's
  // backward, the sum of 0..m (into the gradient itself after the last).
  SmallVector<Value> sums(grads.size());
  auto accumulate = [&](int64_t m) {
    for (auto [i, grad] : llvm::enumerate(grads)) {
      if (m == 0) {
        sums[i] = partial[0][i];
        continue;
      }
      Value into = m + 1 == count
                       ? grad
                       : freshBuffer(grad,
                                     grad.getDefiningOp<BufferOp>().getName() +
                                         ".sum" + Twine(m),
                                     BufferKind::temp, anchor);
      insertBefore(anchor);
      elementwise(AddKernelOp::getOperationName(), sums[i], partial[m][i], into,
                  grad.getLoc());
      sums[i] = into;
    }
  };
  auto backwardOf = [&](int64_t m) {
    for (Operation *clone : cloneFor(backward, m, mappings[m], anchor))
      if (auto fill = dyn_cast<FillKernelOp>(clone);
          fill && fill->getLoc() == seed->getLoc() &&
          cast<MemRefType>(fill.getResult().getType()).getRank() == 0)
        fill.setValueAttr(b.getF64FloatAttr(1.0 / count));
    accumulate(m);
  };
  if (pipeline) {
    for (int64_t m = 0; m < count; ++m)
      cloneFor(forward, m, mappings[m], anchor);
    for (int64_t m = 0; m < count; ++m)
      backwardOf(m);
  } else {
    for (int64_t m = 0; m < count; ++m) {
      cloneFor(forward, m, mappings[m], anchor);
      backwardOf(m);
    }
  }
  // The loss: the mean of the micro-batches'.
  Value sum = losses[0];
  for (int64_t m = 1; m < count; ++m) {
    Value into =
        freshBuffer(loss, "loss.sum" + Twine(m), BufferKind::temp, anchor);
    insertBefore(anchor);
    elementwise(AddKernelOp::getOperationName(), sum, losses[m], into,
                loss.getLoc());
    sum = into;
  }
  Value scale = freshBuffer(loss, "loss.scale", BufferKind::temp, anchor);
  insertBefore(anchor);
  FillKernelOp::create(b, loss.getLoc(), scale, b.getI64IntegerAttr(1),
                       b.getF64FloatAttr(1.0 / count));
  elementwise(MulKernelOp::getOperationName(), sum, scale, loss, loss.getLoc());
  SmallVector<Operation *> originals(forward);
  originals.append(backward);
  replaceKernels(step, originals);
  return success();
}

LogicalResult MicroBatchSplitter::splitForward(StepOp step) {
  current = &step.getBody().front();
  sliceInfix = "." + stringifyStepKind(step.getKind()).str();
  SmallVector<Operation *> kernels = getKernels(step);
  Value output;
  for (auto [part, whole] : wholeBatch)
    if (part.getDefiningOp<BufferOp>().getKind() == BufferKind::output)
      output = part;
  SmallVector<Value> outputs;
  for (int64_t m = 0; m < count; ++m) {
    IRMapping mapping;
    if (output) {
      outputs.push_back(freshBuffer(output, "output.mb" + Twine(m),
                                    BufferKind::activation, nullptr));
      mapping.map(output, outputs.back());
    }
    cloneFor(kernels, m, mapping, nullptr);
  }
  if (output) {
    SmallVector<int64_t> starts;
    for (int64_t m = 0; m < count; ++m)
      starts.push_back(m * rows);
    insertBefore(nullptr);
    ConcatKernelOp::create(b, output.getLoc(), outputs,
                           wholeBatch.lookup(output), b.getI64IntegerAttr(0),
                           b.getDenseI64ArrayAttr(starts));
  }
  replaceKernels(step, kernels);
  return success();
}

struct SplitMicroBatchesPass
    : public cairn::impl::SplitMicroBatchesPassBase<SplitMicroBatchesPass> {
  using SplitMicroBatchesPassBase::SplitMicroBatchesPassBase;

  void runOnOperation() override {
    if (microBatches < 2)
      return;
    ProgramOp program = getProgramFor(getOperation(), getArgument());
    if (!program)
      return signalPassFailure();
    if (failed(MicroBatchSplitter(program, microBatches).run()))
      return signalPassFailure();
  }
};

} // namespace
