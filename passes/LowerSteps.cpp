//===- LowerSteps.cpp - @train_step and @forward to kernel lists ----------===//
//
// Arguments become persistent buffers, shared by name between the steps.
// Each op becomes a kernel writing fresh buffers (LowerOps.cpp). Then the
// results are placed: a result with `cairn.updates = i` must end up in
// argument i's buffer, which the kernel computing it writes directly when
// nothing later reads the old value, and a copy at the end otherwise;
// in-place kernels (optimizer updates, running statistics) overwrite their
// state operand under the same rule, on a copy when the old value is still
// needed. Last, each step's buffers get their kinds.
//
//===----------------------------------------------------------------------===//

#include "passes/StepLowering.h"

#include "ir/CairnDialect.h"
#include "ir/CairnKernelOps.h"
#include "ir/CairnOps.h"
#include "ir/TrainingSettings.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace cairn;

namespace {

std::optional<BufferKind> getArgumentKind(Role role) {
  switch (role) {
  case Role::input:
    return BufferKind::input;
  case Role::param:
    return BufferKind::param;
  case Role::buffer:
    return BufferKind::buffer;
  case Role::optimizer_state:
    return BufferKind::optimizer;
  case Role::gradient:
  case Role::output:
    return std::nullopt;
  }
  return std::nullopt;
}

Buffer makeBuffer(std::string name, Type type, BufferKind kind, Location loc) {
  auto tensor = cast<RankedTensorType>(type);
  Buffer buffer;
  buffer.name = std::move(name);
  buffer.dtype = *getDType(tensor);
  buffer.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  buffer.bytes = buffer.getNumElements() * getDTypeBytes(buffer.dtype);
  buffer.kind = kind;
  buffer.loc = formatModelLocation(loc);
  buffer.irLoc = loc;
  return buffer;
}

} // namespace

//===----------------------------------------------------------------------===//
// KernelGraphBuilder
//===----------------------------------------------------------------------===//

std::string KernelGraphBuilder::uniqueName(StringRef base) {
  for (;;) {
    unsigned count = nameCounts[base]++;
    std::string name =
        count == 0 ? base.str() : (base + "." + Twine(count)).str();
    if (!persistentByName.count(name))
      return name;
  }
}

int KernelGraphBuilder::addBuffer(Buffer buffer) {
  buffer.id = program.buffers.size();
  if (isPersistent(buffer.kind))
    persistentByName[buffer.name] = buffer.id;
  else
    buffer.name = uniqueName(buffer.name);
  program.buffers.push_back(std::move(buffer));
  replacedBy.push_back(kNoBuffer);
  return program.buffers.back().id;
}

int KernelGraphBuilder::lookupPersistent(StringRef name) const {
  auto it = persistentByName.find(name);
  return it == persistentByName.end() ? kNoBuffer : it->second;
}

void KernelGraphBuilder::makePersistent(int id, StringRef name, BufferKind kind) {
  Buffer &buffer = program.buffers[id];
  buffer.name = name.str();
  buffer.kind = kind;
  buffer.step.reset();
  persistentByName[name] = id;
}

void KernelGraphBuilder::nameGradient(int id, StringRef name) {
  Buffer &buffer = program.buffers[id];
  buffer.name = uniqueName(name);
  buffer.kind = BufferKind::grad;
}

void KernelGraphBuilder::replaceBuffer(int from, int to) { replacedBy[from] = to; }

int KernelGraphBuilder::resolve(int id) const {
  while (id != kNoBuffer && replacedBy[id] != kNoBuffer)
    id = replacedBy[id];
  return id;
}

void KernelGraphBuilder::compact() {
  std::vector<int> newId(program.buffers.size(), kNoBuffer);
  std::vector<Buffer> kept;
  for (Buffer &buffer : program.buffers) {
    if (replacedBy[buffer.id] != kNoBuffer)
      continue;
    newId[buffer.id] = kept.size();
    kept.push_back(std::move(buffer));
  }
  auto remap = [&](int &id) {
    if (id != kNoBuffer)
      id = newId[resolve(id)];
  };
  for (Buffer &buffer : kept) {
    buffer.id = newId[buffer.id];
    remap(buffer.aliasOf);
  }
  for (StepKind step : kAllSteps) {
    for (Kernel &kernel : program.getStep(step).kernels) {
      for (int &id : kernel.inputs)
        remap(id);
      for (int &id : kernel.outputs)
        remap(id);
      remap(kernel.workspace);
    }
  }
  program.buffers = std::move(kept);
  replacedBy.assign(program.buffers.size(), kNoBuffer);
  persistentByName.clear();
  for (const Buffer &buffer : program.buffers)
    if (isPersistent(buffer.kind))
      persistentByName[buffer.name] = buffer.id;
}

//===----------------------------------------------------------------------===//
// StepLowering: the interface of the op lowerings
//===----------------------------------------------------------------------===//

int StepLowering::get(Value value) const {
  if (!value)
    return kNoBuffer;
  return builder.resolve(valueBuffers.lookup(value));
}

int StepLowering::define(Value result) {
  Operation *op = result.getDefiningOp();
  std::string layer = getLayerName(op->getLoc());
  std::string name = layer.empty() ? "" : layer + ".";
  name += op->getName().stripDialect();
  if (op->getNumResults() > 1)
    name += "." + std::to_string(cast<OpResult>(result).getResultNumber());
  Buffer buffer = makeBuffer(std::move(name), result.getType(),
                             BufferKind::temp, op->getLoc());
  buffer.step = step;
  int id = builder.addBuffer(std::move(buffer));
  valueBuffers[result] = id;
  return id;
}

int StepLowering::defineIfUsed(Value result) {
  return result.use_empty() ? kNoBuffer : define(result);
}

void StepLowering::defineAlias(Value result, Value source) {
  int id = define(result);
  Buffer &view = builder.getProgram().buffers[id];
  view.aliasOf = get(source);
  view.bytes = 0;
}

int StepLowering::createWorkspace(Operation *op, DType dtype,
                                  int64_t elements) {
  std::string layer = getLayerName(op->getLoc());
  Buffer buffer;
  buffer.name = (layer.empty() ? "" : layer + ".") + "workspace";
  buffer.dtype = dtype;
  buffer.shape = {elements};
  buffer.bytes = elements * getDTypeBytes(dtype);
  buffer.kind = BufferKind::workspace;
  buffer.loc = formatModelLocation(op->getLoc());
  buffer.irLoc = op->getLoc();
  buffer.step = step;
  return builder.addBuffer(std::move(buffer));
}

Kernel &StepLowering::addKernel(llvm::StringRef kind, Operation *op,
                                std::vector<int> inputs,
                                std::vector<int> outputs) {
  Kernel kernel;
  kernel.kind = kind;
  kernel.inputs = std::move(inputs);
  kernel.outputs = std::move(outputs);
  kernel.tiedInputs.assign(kernel.outputs.size(), -1);
  kernel.loc = formatModelLocation(op->getLoc());
  kernel.irLoc = op->getLoc();
  kernel.layer = getLayerName(op->getLoc());
  kernel.opName = op->getName().getStringRef().str();
  if (auto region =
          op->getAttrOfType<IntegerAttr>(CairnDialect::kCheckpointAttrName))
    kernel.checkpoint = region.getInt();
  if (auto device =
          op->getAttrOfType<IntegerAttr>(CairnDialect::kDeviceAttrName))
    kernel.device = device.getInt();
  kernel.backwardSeed = op->hasAttr(CairnDialect::kBackwardSeedAttrName);
  std::vector<Kernel> &kernels = builder.getProgram().getStep(step).kernels;
  kernels.push_back(std::move(kernel));
  kernelOps.push_back(op);
  return kernels.back();
}

//===----------------------------------------------------------------------===//
// StepLowering: arguments, results, kinds
//===----------------------------------------------------------------------===//

LogicalResult StepLowering::lower(func::FuncOp func) {
  if (failed(bindArguments(func)))
    return failure();
  for (Operation &op : func.getBody().front().without_terminator())
    if (failed(lowerOp(&op, *this)))
      return failure();
  std::vector<Result> results;
  if (failed(collectResults(func, results)))
    return failure();
  placeResults(results);
  return success();
}

/// Arguments are persistent buffers named by `cairn.name`; the second step
/// finds the first one's.
LogicalResult StepLowering::bindArguments(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto name =
        func.getArgAttrOfType<StringAttr>(i, CairnDialect::kNameAttrName);
    auto role = func.getArgAttrOfType<RoleAttr>(i, CairnDialect::kRoleAttrName);
    std::optional<BufferKind> kind =
        role ? getArgumentKind(role.getValue()) : std::nullopt;
    if (!name || !kind)
      return emitError(arg.getLoc())
             << "internal error: argument #" << i << " of @" << func.getName()
             << " needs 'cairn.name' and an input, param, buffer or "
                "optimizer_state 'cairn.role'";
    std::optional<DType> dtype = getDType(arg.getType());
    if (!dtype || (!getTarget().halfPrecision &&
                   (*dtype == DType::F16 || *dtype == DType::BF16)))
      return emitError(arg.getLoc())
             << "cannot lower '" << name.getValue() << "' of type "
             << arg.getType() << " to the " << getTarget().name
             << " backend (it takes f32 and f64 tensors, i32 and i64 "
                "indices)";

    Buffer buffer = makeBuffer(name.str(), arg.getType(), *kind, arg.getLoc());
    if (auto init =
            func.getArgAttrOfType<InitAttr>(i, CairnDialect::kInitAttrName)) {
      buffer.init = init.getKind();
      buffer.initScale = init.getScale();
      buffer.initZeroRow = init.getZeroRow();
    }
    int id = builder.lookupPersistent(buffer.name);
    if (id == kNoBuffer) {
      id = builder.addBuffer(std::move(buffer));
    } else {
      const Buffer &existing = builder.getProgram().buffers[id];
      if (existing.dtype != buffer.dtype || existing.shape != buffer.shape ||
          existing.kind != buffer.kind)
        return emitError(arg.getLoc())
               << "internal error: '" << buffer.name << "' of @"
               << func.getName()
               << " differs from the tensor of that name in the other step";
    }
    valueBuffers[arg] = id;
    argBuffers.push_back(id);
  }
  return success();
}

/// @train_step's results carry cairn.name, cairn.role and, for new values
/// of arguments, cairn.updates; @forward's one result is "output" and
/// @eval_loss's "eval_loss".
LogicalResult StepLowering::collectResults(func::FuncOp func,
                                           std::vector<Result> &results) {
  Operation *ret = func.getBody().front().getTerminator();
  if (step != StepKind::train_step) {
    const bool forward = step == StepKind::forward;
    const char *output = forward ? "output" : "eval_loss";
    if (ret->getNumOperands() != 1)
      return ret->emitError() << "internal error: expected @" << func.getName()
                              << " to return one tensor (the "
                              << (forward ? "output" : "loss") << ")";
    results.push_back(
        {ret->getOperand(0), output, BufferKind::output, -1, ret->getLoc()});
    return success();
  }
  for (auto [i, value] : llvm::enumerate(ret->getOperands())) {
    auto name =
        func.getResultAttrOfType<StringAttr>(i, CairnDialect::kNameAttrName);
    auto role =
        func.getResultAttrOfType<RoleAttr>(i, CairnDialect::kRoleAttrName);
    auto updates = func.getResultAttrOfType<IntegerAttr>(
        i, CairnDialect::kUpdatesAttrName);
    if (!name || !role)
      return ret->emitError()
             << "internal error: result #" << i << " of @" << func.getName()
             << " needs 'cairn.name' and 'cairn.role'";
    Location loc =
        value.getDefiningOp() ? value.getDefiningOp()->getLoc() : ret->getLoc();
    if (updates) {
      int64_t arg = updates.getInt();
      if (arg < 0 || arg >= int64_t(argBuffers.size()) ||
          func.getArgument(arg).getType() != value.getType())
        return ret->emitError() << "internal error: result #" << i
                                << " updates no argument of its type";
      results.push_back({value, name.str(), BufferKind::temp, int(arg), loc});
      continue;
    }
    BufferKind kind;
    if (role.getValue() == Role::output)
      kind = BufferKind::output;
    else if (role.getValue() == Role::gradient)
      kind = BufferKind::grad;
    else
      return ret->emitError() << "internal error: result #" << i
                              << " is neither an output, a gradient nor "
                                 "the new value of an argument";
    results.push_back({value, name.str(), kind, -1, loc});
  }
  return success();
}

Kernel StepLowering::makeCopy(int from, int to, const Kernel &like) {
  Kernel copy;
  copy.kind = CopyKernelOp::getOperationName();
  copy.inputs = {from};
  copy.outputs = {to};
  copy.tiedInputs = {-1};
  copy.loc = like.loc;
  copy.irLoc = like.irLoc;
  copy.layer = like.layer;
  copy.opName = like.opName;
  return copy;
}

void StepLowering::placeResults(const std::vector<Result> &results) {
  KernelGraph &program = builder.getProgram();
  std::vector<Kernel> &kernels = program.getStep(step).kernels;
  const int end = kernels.size();
  auto root = [&](int id) { return program.getAliasRoot(builder.resolve(id)); };

  // The last kernel reading each buffer, its views included; a result is
  // read at `end` (by its copy, if it needs one).
  std::vector<int> lastRead(program.buffers.size(), -1);
  std::vector<int> definedAt(program.buffers.size(), -1);
  llvm::DenseSet<int> tiedOutputs;
  for (int k = 0; k < end; ++k) {
    for (int id : kernels[k].inputs)
      if (id != kNoBuffer)
        lastRead[root(id)] = std::max(lastRead[root(id)], k);
    for (auto [i, id] : llvm::enumerate(kernels[k].outputs)) {
      if (id == kNoBuffer)
        continue;
      definedAt[id] = k;
      if (kernels[k].tiedInputs[i] >= 0)
        tiedOutputs.insert(id);
    }
  }
  for (const Result &result : results)
    lastRead[root(get(result.value))] = end;

  // A buffer a kernel of this step writes once, not a view, not persistent:
  // it can become a result's buffer.
  auto isFresh = [&](int id) {
    const Buffer &buffer = program.buffers[id];
    return !buffer.isAlias() && !isPersistent(buffer.kind) &&
           buffer.kind != BufferKind::workspace && definedAt[id] >= 0;
  };

  // Outputs and gradients: claim the value's buffer, or copy at the end.
  std::vector<std::pair<int, int>> endCopies; // (from, to)
  llvm::DenseMap<int, int> updateTarget;      // value buffer -> argument's
  for (const Result &result : results) {
    int id = get(result.value);
    if (result.updates >= 0) {
      int target = argBuffers[result.updates];
      if (id != target)
        updateTarget[id] = target;
      continue;
    }
    // A gradient is a per-step buffer under its state_dict name; the loss
    // and the output are persistent.
    bool gradient = result.kind == BufferKind::grad;
    if (isFresh(id) && !tiedOutputs.count(id)) {
      if (gradient)
        builder.nameGradient(id, result.name);
      else
        builder.makePersistent(id, result.name, result.kind);
      continue;
    }
    Buffer copy =
        makeBuffer(result.name, result.value.getType(), result.kind, result.loc);
    if (gradient)
      copy.step = step;
    int to = builder.addBuffer(std::move(copy));
    endCopies.push_back({id, to});
  }

  // In-place kernels, in order: overwrite the state operand when nothing
  // reads it later, else work on a copy (into the argument the output
  // updates when that one is free).
  std::vector<Kernel> placed;
  std::vector<Operation *> placedOps;
  for (int k = 0; k < end; ++k) {
    Kernel kernel = std::move(kernels[k]);
    for (int &id : kernel.inputs)
      id = builder.resolve(id);
    for (auto [i, tied] : llvm::enumerate(kernel.tiedInputs)) {
      int out = kernel.outputs[i];
      if (tied < 0 || out == kNoBuffer)
        continue;
      int in = kernel.inputs[tied];
      auto target = updateTarget.find(out);
      int dest = target == updateTarget.end() ? kNoBuffer : target->second;
      bool inFree = !program.buffers[in].isAlias() && lastRead[in] <= k;
      if (dest == in && inFree) {
        builder.replaceBuffer(out, in);
      } else if (dest != kNoBuffer && dest != in && lastRead[dest] < k) {
        placed.push_back(makeCopy(in, dest, kernel));
        placedOps.push_back(kernelOps[k]);
        kernel.inputs[tied] = dest;
        builder.replaceBuffer(out, dest);
      } else if (dest == kNoBuffer && inFree && isFresh(in)) {
        builder.replaceBuffer(out, in);
      } else {
        placed.push_back(makeCopy(in, out, kernel));
        placedOps.push_back(kernelOps[k]);
        kernel.inputs[tied] = out;
      }
      kernel.outputs[i] = builder.resolve(out);
    }
    placed.push_back(std::move(kernel));
    placedOps.push_back(kernelOps[k]);
  }

  // New values of arguments: computed in place when the argument is not
  // read from the kernel computing them on, else copied at the end.
  for (const Result &result : results) {
    if (result.updates < 0)
      continue;
    int id = get(result.value), target = argBuffers[result.updates];
    if (id == target)
      continue;
    if (isFresh(id) && !tiedOutputs.count(id) &&
        lastRead[target] < definedAt[id]) {
      builder.replaceBuffer(id, target);
      continue;
    }
    endCopies.push_back({id, target});
  }

  // Copies that read persistent buffers go first, before a copy overwrites
  // one of them.
  std::stable_partition(endCopies.begin(), endCopies.end(), [&](auto copy) {
    return isPersistent(program.buffers[root(copy.first)].kind);
  });
  Operation *ret = nullptr;
  if (!results.empty())
    ret = Value(results.front().value).getParentBlock()->getTerminator();
  for (auto [from, to] : endCopies) {
    Kernel like;
    like.loc = formatModelLocation(ret->getLoc());
    like.irLoc = ret->getLoc();
    like.opName = ret->getName().getStringRef().str();
    placed.push_back(makeCopy(from, to, like));
    placedOps.push_back(ret);
  }

  // The forward part ends with the kernel computing the loss (the training
  // step's output).
  forwardEnd = placed.size();
  auto loss = llvm::find_if(results, [](const Result &result) {
    return result.kind == BufferKind::output;
  });
  if (step == StepKind::train_step && loss != results.end())
    if (Operation *lossOp = loss->value.getDefiningOp())
      for (int k = placed.size() - 1; k >= 0; --k)
        if (placedOps[k] == lossOp) {
          forwardEnd = k;
          break;
        }
  kernels = std::move(placed);
  kernelOps = std::move(placedOps);
}

//===----------------------------------------------------------------------===//
// The program
//===----------------------------------------------------------------------===//

namespace {

/// Per-step buffers: Activation when only the forward part reads them,
/// Saved when the backward part does too, Temp when the backward part (or
/// the optimizer) defines them.
void classifyBuffers(KernelGraph &program, int forwardEnd) {
  for (Buffer &buffer : program.buffers) {
    if (isPersistent(buffer.kind) || buffer.kind == BufferKind::workspace ||
        buffer.kind == BufferKind::grad)
      continue;
    if (buffer.step != StepKind::train_step || buffer.definedBy < 0)
      buffer.kind = BufferKind::activation;
    else if (buffer.definedBy > forwardEnd)
      buffer.kind = BufferKind::temp;
    else if (buffer.lastUse > forwardEnd)
      buffer.kind = BufferKind::saved;
    else
      buffer.kind = BufferKind::activation;
  }
}

} // namespace

std::optional<KernelGraph>
cairn::lowerToKernels(ModuleOp module, const LoweringTarget &target) {
  auto trainStep = module.lookupSymbol<func::FuncOp>("train_step");
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!trainStep || !forward) {
    module.emitError() << "internal error: expected @train_step and @forward "
                          "to generate code for";
    return std::nullopt;
  }

  KernelGraphBuilder builder(target);
  KernelGraph &program = builder.getProgram();
  if (auto model =
          module->getAttrOfType<StringAttr>(CairnDialect::kModelAttrName))
    program.model = model.str();
  if (auto batch =
          module->getAttrOfType<IntegerAttr>(CairnDialect::kBatchAttrName))
    program.batch = batch.getInt();
  Attribute optimizer = module->getAttr(CairnDialect::kOptimizerAttrName);
  program.optimizer = describeOptimizer(optimizer);
  if (Attribute schedule = module->getAttr(CairnDialect::kLrScheduleAttrName)) {
    FailureOr<std::vector<runtime::LrScheduler>> read =
        readLrSchedule(schedule, [&] { return module.emitError(); });
    if (failed(read))
      return std::nullopt;
    program.lrSchedule = *read;
    if (auto sgd = dyn_cast_or_null<SGDAttr>(optimizer))
      program.baseLr = sgd.getLr();
    else if (auto adam = dyn_cast_or_null<AdamAttr>(optimizer))
      program.baseLr = adam.getLr();
    else {
      module.emitError() << "an lr schedule needs an optimizer";
      return std::nullopt;
    }
  }
  if (Attribute loss = module->getAttr(CairnDialect::kEvalLossAttrName)) {
    FailureOr<runtime::LossForm> read =
        readEvalLoss(loss, [&] { return module.emitError(); });
    if (failed(read))
      return std::nullopt;
    program.loss = *read;
  }
  program.target = target.name.str();
  program.sourceFile = getModelFileName(module.getLoc());

  StepLowering trainLowering(builder, StepKind::train_step);
  if (failed(trainLowering.lower(trainStep)))
    return std::nullopt;
  StepLowering forwardLowering(builder, StepKind::forward);
  if (failed(forwardLowering.lower(forward)))
    return std::nullopt;
  if (auto evalLoss = module.lookupSymbol<func::FuncOp>("eval_loss")) {
    StepLowering evalLossLowering(builder, StepKind::eval_loss);
    if (failed(evalLossLowering.lower(evalLoss)))
      return std::nullopt;
  }

  builder.compact();
  computeLiveness(program);
  classifyBuffers(program, trainLowering.getForwardEnd());
  return std::move(program);
}
