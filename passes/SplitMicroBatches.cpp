//===- SplitMicroBatches.cpp - A batch as micro-batches, in one step ------===//
//
// The model is lowered at the micro-batch size b; this pass makes each step
// take the whole batch B = M b by running its kernels once per micro-batch,
// each on its rows of the inputs (a slice). Unrolled in the step, so that
// the plan holds exactly what is live: on one device, each micro-batch's
// forward and backward in turn (gradient accumulation: the activations of
// one micro-batch, the update of the whole batch); on several, a pipeline,
// which the transfers' tag order enforces: GPipe's (every forward first,
// then every backward: stage s holds all M micro-batches' activations) or
// 1F1B's (stage s of N runs min(N - s - 1, M) forwards ahead, then
// alternates one forward and one backward: it holds at most N - s). The
// 1F1B order is the list every stage's own order projects from: units (one
// micro-batch's forward or backward kernels on one device) are taken from
// each device's 1F1B sequence in turn as soon as every unit they read from
// is in the list. Gradients are summed over the micro-batches in their order,
// each micro-batch's loss seeded with 1/M, so the update sees the mean over the
// batch; the loss is the mean of the micro-batches' losses. Batch norm uses
// each micro-batch's statistics and updates its running statistics once per
// micro-batch, as GPipe and PyTorch's gradient accumulation do. A dropout
// draws another mask per micro-batch (its stream shifted). With f16's loss
// scaler, each micro-batch's backward starts from the scale over M (its
// unscaled gradients summed: the scale is a power of two), and found_inf and
// the skip_selects run once, on the sums: micro-batch m updates m - 1's
// uncommitted running statistics, and the last micro-batch's are committed
// unless the step is skipped.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

#include "ir/CairnKernelOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <array>
#include <functional>
#include <set>

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
  MicroBatchSplitter(ProgramOp program, int64_t count,
                     bool oneForwardOneBackward)
      : program(program), count(count),
        oneForwardOneBackward(oneForwardOneBackward), b(program.getContext()) {}

  LogicalResult run();

private:
  LogicalResult splitTrainStep(StepOp step);
  /// The order of the units (stage, backward?, micro-batch) of a 1F1B
  /// pipeline over the kernels `forward` and `backward` placed on `device`.
  FailureOr<SmallVector<std::array<int64_t, 3>>>
  orderOneForwardOneBackward(StepOp step, ArrayRef<Operation *> forward,
                             ArrayRef<Operation *> backward,
                             ArrayRef<int64_t> device, int64_t stages);
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
  /// --pipeline 1f1b (else GPipe) when the step runs on several devices.
  bool oneForwardOneBackward;
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
  return BufferOp::create(b, buffer.getLoc(),
                          type ? type : cast<MemRefType>(original.getType()),
                          kind, b.getStringAttr(name), IntegerAttr(), Value(),
                          InitAttr(), IntegerAttr());
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
    auto whole =
        BufferOp::create(b, buffer.getLoc(), withRows(type, rows * count),
                         buffer.getKind(), buffer.getNameAttr(), IntegerAttr(),
                         Value(), InitAttr(), IntegerAttr());
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
  // `post`: the kernels that look at the whole batch's gradients, once,
  // before the updates: f16 loss scaling's found_inf and skip_select (which
  // commits batch norm's running statistics unless the step is skipped),
  // clip_grad_norm's coefficient and what reads it.
  SmallVector<Operation *> updates, post, forward, backward;
  DenseSet<Value> postResults;
  Value loss;
  bool pipeline = false;
  for (Operation *kernel : kernels) {
    if (auto device =
            kernel->getAttrOfType<IntegerAttr>(CairnDialect::kDeviceAttrName))
      pipeline |= device.getInt() > 0;
    if (isa<SgdUpdateKernelOp, AdamUpdateKernelOp>(kernel)) {
      updates.push_back(kernel);
      continue;
    }
    auto io = cast<KernelOpInterface>(kernel);
    if (isa<FoundInfKernelOp, SkipSelectKernelOp, ClipCoefficientKernelOp>(
            kernel) ||
        llvm::any_of(io.getKernelInputs(), [&](Value input) {
          return input && postResults.contains(input);
        })) {
      post.push_back(kernel);
      for (Value output : io.getKernelOutputs())
        if (output)
          postResults.insert(output);
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
  // Autodiff's d(loss) = 1, which it marks: 1/M here.
  FillKernelOp seed;
  for (Operation *kernel : backward)
    if (auto fill = dyn_cast<FillKernelOp>(kernel);
        fill && fill->hasAttr(CairnDialect::kBackwardSeedAttrName)) {
      auto value = dyn_cast<FloatAttr>(fill.getValue());
      if (seed || !value || value.getValueAsDouble() != 1.0)
        return fill->emitError() << "internal error: --micro-batches expects "
                                    "one backward seed, a fill of 1";
      seed = fill;
    }
  if (!seed)
    return step.emitError()
           << "internal error: --micro-batches found no seed of the backward";
  // The gradients summed over the micro-batches: what the updates read,
  // before clip_grad_norm scales them (the norm is the whole batch's).
  SmallVector<Value> grads = getSummedGradients(kernels);

  // The running statistics a skip_select commits: micro-batch m > 0 updates
  // micro-batch m - 1's uncommitted ones (its copy of `old` reads them), and
  // the skip_select commits the last micro-batch's.
  SmallVector<std::pair<Value, Value>> uncommitted; // (old, updated)
  for (Operation *kernel : post)
    if (auto select = dyn_cast<SkipSelectKernelOp>(kernel))
      uncommitted.push_back({select.getOld(), select.getUpdated()});

  Operation *anchor = post.empty() ? updates.front() : post.front();
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
  // The stage (pipeline) whose backward writes each gradient: its sum is
  // made right after that stage's backward of the micro-batch.
  SmallVector<int64_t> stageOf(forward.size() + backward.size(), 0);
  DenseMap<int64_t, int64_t> stageOfDevice;
  {
    int64_t last = 0;
    for (auto [k, kernel] :
         llvm::enumerate(llvm::concat<Operation *const>(forward, backward))) {
      if (auto device =
              kernel->getAttrOfType<IntegerAttr>(CairnDialect::kDeviceAttrName))
        last = device.getInt();
      // Stages in the order the forward reaches the devices.
      if (!stageOfDevice.count(last))
        stageOfDevice[last] = int64_t(stageOfDevice.size());
      stageOf[k] = stageOfDevice[last];
    }
  }
  const int64_t stages = int64_t(stageOfDevice.size());
  SmallVector<int64_t> gradStage(grads.size(), 0);
  for (auto [k, kernel] : llvm::enumerate(backward))
    for (Value output : cast<KernelOpInterface>(kernel).getKernelOutputs())
      for (auto [i, grad] : llvm::enumerate(grads))
        if (output == grad)
          gradStage[i] = stageOf[forward.size() + k];
  auto accumulate = [&](int64_t m, int64_t stage) {
    for (auto [i, grad] : llvm::enumerate(grads)) {
      if (stage >= 0 && gradStage[i] != stage)
        continue;
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
  // Micro-batch m's backward kernels on `stage` (-1: all of them).
  auto backwardOf = [&](int64_t m, int64_t stage) {
    SmallVector<Operation *> part;
    for (auto [k, kernel] : llvm::enumerate(backward))
      if (stage < 0 || stageOf[forward.size() + k] == stage)
        part.push_back(kernel);
    for (Operation *clone : cloneFor(part, m, mappings[m], anchor))
      if (auto fill = dyn_cast<FillKernelOp>(clone);
          fill && fill->hasAttr(CairnDialect::kBackwardSeedAttrName))
        fill.setValueAttr(b.getF64FloatAttr(1.0 / count));
    accumulate(m, stage);
  };
  auto forwardOf = [&](int64_t m, int64_t stage) {
    if (m > 0)
      for (auto [old, updated] : uncommitted)
        if (Value previous = mappings[m - 1].lookupOrNull(updated))
          mappings[m].map(old, previous);
    SmallVector<Operation *> part;
    for (auto [k, kernel] : llvm::enumerate(forward))
      if (stage < 0 || stageOf[k] == stage)
        part.push_back(kernel);
    cloneFor(part, m, mappings[m], anchor);
  };
  if (pipeline && oneForwardOneBackward && stages > 1) {
    FailureOr<SmallVector<std::array<int64_t, 3>>> order =
        orderOneForwardOneBackward(step, forward, backward, stageOf, stages);
    if (failed(order))
      return failure();
    for (auto [stage, isBackward, m] : *order)
      isBackward ? backwardOf(m, stage) : forwardOf(m, stage);
  } else if (pipeline) {
    for (int64_t m = 0; m < count; ++m)
      forwardOf(m, -1);
    for (int64_t m = 0; m < count; ++m)
      backwardOf(m, -1);
  } else {
    for (int64_t m = 0; m < count; ++m) {
      forwardOf(m, -1);
      backwardOf(m, -1);
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
  // found_inf reads the summed gradients (the gradients' own buffers); a
  // skip_select commits the last micro-batch's running statistics.
  for (Operation *kernel : post)
    for (OpOperand &operand : kernel->getOpOperands()) {
      auto buffer = operand.get().getDefiningOp<BufferOp>();
      if (!buffer || buffer.isPersistent() ||
          llvm::is_contained(grads, operand.get()))
        continue;
      if (Value last = mappings[count - 1].lookupOrNull(operand.get()))
        operand.set(last);
    }
  SmallVector<Operation *> originals(forward);
  originals.append(backward);
  replaceKernels(step, originals);
  return success();
}

/// The buffer a value is a view of (itself for a buffer).
Value getRootBuffer(Value value) {
  while (auto view = value ? value.getDefiningOp<ViewOp>() : ViewOp())
    value = view.getSource();
  return value;
}

FailureOr<SmallVector<std::array<int64_t, 3>>>
MicroBatchSplitter::orderOneForwardOneBackward(StepOp step,
                                               ArrayRef<Operation *> forward,
                                               ArrayRef<Operation *> backward,
                                               ArrayRef<int64_t> stageOf,
                                               int64_t stages) {
  // A unit is (stage, backward?): 2 stage + backward. What each unit reads
  // from the others, within one micro-batch (a step value's last writer).
  auto unitOf = [&](size_t k) {
    return 2 * stageOf[k] + (k >= forward.size() ? 1 : 0);
  };
  std::vector<std::set<int64_t>> reads(2 * stages);
  DenseMap<Value, int64_t> writer;
  size_t k = 0;
  for (Operation *kernel : llvm::concat<Operation *const>(forward, backward)) {
    auto io = cast<KernelOpInterface>(kernel);
    int64_t unit = unitOf(k++);
    for (Value input : io.getKernelInputs())
      if (auto it = writer.find(getRootBuffer(input)); it != writer.end())
        if (it->second != unit)
          reads[unit].insert(it->second);
    for (Value output : io.getKernelOutputs())
      if (output)
        writer[getRootBuffer(output)] = unit;
  }
  // Each stage's own 1F1B sequence: warm-up forwards, then one forward and
  // one backward in turn, then the backwards left.
  std::vector<std::vector<std::array<int64_t, 2>>> sequence(stages);
  for (int64_t stage = 0; stage < stages; ++stage) {
    int64_t warm = std::min(stages - stage - 1, count);
    auto &seq = sequence[stage];
    for (int64_t m = 0; m < warm; ++m)
      seq.push_back({0, m});
    for (int64_t i = 0; i + warm < count; ++i) {
      seq.push_back({0, warm + i});
      seq.push_back({1, i});
    }
    for (int64_t m = count - warm; m < count; ++m)
      seq.push_back({1, m});
  }
  // Take from each stage in turn what is ready, until every unit is in.
  std::vector<std::vector<bool>> done(2 * stages,
                                      std::vector<bool>(count, false));
  std::vector<size_t> next(stages, 0);
  SmallVector<std::array<int64_t, 3>> order;
  for (bool progress = true; progress;) {
    progress = false;
    for (int64_t stage = 0; stage < stages; ++stage)
      while (next[stage] < sequence[stage].size()) {
        auto [isBackward, m] = sequence[stage][next[stage]];
        int64_t unit = 2 * stage + isBackward;
        if (!llvm::all_of(reads[unit], [&](int64_t from) {
              return done[from][m] || from == unit;
            }))
          break;
        done[unit][m] = true;
        order.push_back({stage, isBackward, m});
        ++next[stage];
        progress = true;
      }
  }
  if (int64_t(order.size()) != 2 * stages * count)
    return step.emitError()
           << "--pipeline 1f1b: the stages' data flow admits no 1F1B order "
              "(a stage reads a later stage's forward); use --pipeline gpipe";
  return order;
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
    if (pipeline != "gpipe" && pipeline != "1f1b") {
      getOperation().emitError()
          << "--pipeline expects gpipe or 1f1b, got '" << pipeline << "'";
      return signalPassFailure();
    }
    if (failed(MicroBatchSplitter(program, microBatches, pipeline == "1f1b")
                   .run()))
      return signalPassFailure();
  }
};

} // namespace
