//===- KernelGraphIR.cpp - A cairn.program as a KernelGraph ---------------===//

#include "passes/KernelGraphIR.h"

#include "ir/CairnAttrs.h"
#include "ir/CairnDialect.h"
#include "ir/CairnKernelOps.h"
#include "ir/TrainingSettings.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

using namespace mlir;
using namespace cairn;

//===----------------------------------------------------------------------===//
// Locations and names
//===----------------------------------------------------------------------===//

/// The model-file position inside `loc`.
static FileLineColLoc getFileLineCol(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file;
  if (auto name = dyn_cast<NameLoc>(loc))
    return getFileLineCol(name.getChildLoc());
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return getFileLineCol(call.getCaller());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (FileLineColLoc file = getFileLineCol(inner))
        return file;
  return {};
}

std::string cairn::formatModelLocation(Location loc) {
  FileLineColLoc file = getFileLineCol(loc);
  if (!file)
    return "";
  return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
          Twine(file.getColumn()))
      .str();
}

std::string cairn::getModelFileName(Location loc) {
  FileLineColLoc file = getFileLineCol(loc);
  return file ? file.getFilename().str() : "";
}

StringRef cairn::getKernelProfileName(Operation *kernel) {
  for (Value output : cast<KernelOpInterface>(kernel).getKernelOutputs()) {
    if (!output)
      continue;
    if (auto buffer = output.getDefiningOp<BufferOp>())
      return buffer.getName();
    if (auto view = output.getDefiningOp<ViewOp>())
      return view.getName();
  }
  return kernel->getName().getStringRef();
}

std::string cairn::getLayerName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  // A kernel's location: fused<"cairn.op">[the op's location], or for a
  // fused kernel the locations of its parts, the first naming the layer.
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return getLayerName(fused.getLocations().front());
  return "";
}

/// The op a kernel comes from: the metadata of its fused location.
static std::string getSourceOpName(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (auto name = dyn_cast_or_null<StringAttr>(fused.getMetadata()))
      return name.str();
  return "";
}

static Type getElementType(MLIRContext *context, DType dtype) {
  Builder b(context);
  switch (dtype) {
  case DType::F16:
    return b.getF16Type();
  case DType::BF16:
    return b.getBF16Type();
  case DType::F32:
    return b.getF32Type();
  case DType::F64:
    return b.getF64Type();
  case DType::I32:
    return b.getI32Type();
  case DType::I64:
    return b.getI64Type();
  case DType::U8:
    break;
  }
  llvm_unreachable("no buffer of the planned step holds u8 (only data files)");
}

std::optional<DType> cairn::getDType(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isF16())
    return DType::F16;
  if (element.isBF16())
    return DType::BF16;
  if (element.isF32())
    return DType::F32;
  if (element.isF64())
    return DType::F64;
  if (element.isSignlessInteger(32))
    return DType::I32;
  if (element.isSignlessInteger(64))
    return DType::I64;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// KernelGraph -> IR
//===----------------------------------------------------------------------===//

namespace {

class ProgramWriter {
public:
  ProgramWriter(const KernelGraph &graph, ModuleOp module)
      : graph(graph), module(module), b(module.getContext()),
        values(graph.buffers.size()) {}

  ProgramOp write();

private:
  Location getLoc(LocationAttr loc) {
    return loc ? Location(loc) : Location(b.getUnknownLoc());
  }
  /// Declares buffer `id` (after what it depends on) at the builder's point.
  Value declare(int id);
  LogicalResult writeKernel(const Kernel &kernel);
  Attribute getAttribute(const KernelAttrs::Value &value);

  const KernelGraph &graph;
  ModuleOp module;
  OpBuilder b;
  std::vector<Value> values;
};

} // namespace

Value ProgramWriter::declare(int id) {
  if (values[id])
    return values[id];
  const Buffer &buffer = graph.buffers[id];
  auto type = MemRefType::get(buffer.shape,
                              getElementType(b.getContext(), buffer.dtype));
  Location loc = getLoc(buffer.irLoc);
  if (buffer.isAlias()) {
    Value source = declare(buffer.aliasOf);
    values[id] =
        ViewOp::create(b, loc, type, buffer.kind, buffer.name, source);
    return values[id];
  }
  Value inPlace =
      buffer.inPlaceOf == kNoBuffer ? Value() : declare(buffer.inPlaceOf);
  IntegerAttr offset =
      buffer.offset >= 0 && graph.arenaBytes > 0
          ? b.getI64IntegerAttr(buffer.offset)
          : IntegerAttr();
  InitAttr init = buffer.init
                      ? InitAttr::get(b.getContext(), *buffer.init,
                                      buffer.initScale, buffer.initZeroRow)
                      : InitAttr();
  IntegerAttr spare = buffer.spareBytes > 0 && offset
                          ? b.getI64IntegerAttr(buffer.spareBytes)
                          : IntegerAttr();
  values[id] = BufferOp::create(b, loc, type, buffer.kind, buffer.name, offset,
                                inPlace, init, spare);
  return values[id];
}

Attribute ProgramWriter::getAttribute(const KernelAttrs::Value &value) {
  if (auto *v = std::get_if<bool>(&value))
    return b.getBoolAttr(*v);
  if (auto *v = std::get_if<int64_t>(&value))
    return b.getI64IntegerAttr(*v);
  if (auto *v = std::get_if<double>(&value))
    return b.getF64FloatAttr(*v);
  if (auto *v = std::get_if<std::string>(&value))
    return b.getStringAttr(*v);
  if (auto *v = std::get_if<std::vector<int64_t>>(&value))
    return b.getDenseI64ArrayAttr(*v);
  if (auto *v = std::get_if<std::vector<double>>(&value))
    return b.getDenseF64ArrayAttr(*v);
  if (auto *v = std::get_if<std::vector<std::string>>(&value))
    return b.getStrArrayAttr(
        llvm::SmallVector<StringRef>(v->begin(), v->end()));
  const auto &bools = std::get<std::vector<bool>>(value);
  return b.getDenseBoolArrayAttr(
      llvm::SmallVector<bool>(bools.begin(), bools.end()));
}

LogicalResult ProgramWriter::writeKernel(const Kernel &kernel) {
  const std::string &name = kernel.kind;
  std::optional<KernelSignature> signature = getKernelSignature(name);
  auto fail = [&](const Twine &why) {
    return module.emitError() << "internal error: kernel '" << name << "' "
                              << why;
  };
  if (!signature)
    return fail("has no op");
  // Each input group takes one buffer (none for an absent one), or a single
  // variadic group takes them all; outputs missing at the end are absent.
  SmallVector<Value> operands;
  SmallVector<int32_t> sizes;
  auto addGroup = [&](llvm::ArrayRef<int> ids) {
    int32_t size = 0;
    for (int id : ids)
      if (id != kNoBuffer) {
        operands.push_back(declare(id));
        ++size;
      }
    sizes.push_back(size);
  };
  if (kernel.inputs.size() == signature->numInputs) {
    for (int id : kernel.inputs)
      addGroup(id);
  } else if (signature->numInputs == 1) {
    addGroup(kernel.inputs);
  } else {
    return fail("expects " + Twine(signature->numInputs) + " inputs but has " +
                Twine(kernel.inputs.size()));
  }
  if (kernel.outputs.size() > signature->numOutputs)
    return fail("expects " + Twine(signature->numOutputs) +
                " outputs but has " + Twine(kernel.outputs.size()));
  for (unsigned i = 0; i < signature->numOutputs; ++i)
    addGroup(i < kernel.outputs.size() ? kernel.outputs[i] : kNoBuffer);
  if (signature->hasWorkspace)
    addGroup(kernel.workspace);
  else if (kernel.workspace != kNoBuffer)
    return fail("takes no workspace but has one");

  Location loc = FusedLoc::get(b.getContext(), {getLoc(kernel.irLoc)},
                               b.getStringAttr(kernel.opName));
  OperationState state(loc, name);
  state.addOperands(operands);
  if (signature->segmented)
    state.addAttribute("operandSegmentSizes", b.getDenseI32ArrayAttr(sizes));
  for (const auto &[attrName, value] : kernel.attrs.getEntries())
    state.addAttribute(attrName, getAttribute(value));
  Operation *op = b.create(state);
  // An attribute the op does not declare would pass as a discardable one.
  for (NamedAttribute attr : op->getDiscardableAttrs())
    return fail("has no attribute '" + attr.getName().getValue() + "'");
  if (kernel.beforeFirstUse)
    op->setAttr(CairnDialect::kBeforeFirstUseAttrName, b.getUnitAttr());
  if (kernel.checkpoint >= 0)
    op->setAttr(CairnDialect::kCheckpointAttrName,
                b.getI64IntegerAttr(kernel.checkpoint));
  if (kernel.device >= 0)
    op->setAttr(CairnDialect::kDeviceAttrName,
                b.getI64IntegerAttr(kernel.device));
  if (kernel.backwardSeed)
    op->setAttr(CairnDialect::kBackwardSeedAttrName, b.getUnitAttr());
  return success();
}

ProgramOp ProgramWriter::write() {
  b.setInsertionPointToEnd(module.getBody());
  std::string target = StringRef(graph.target).lower();
  auto program = ProgramOp::create(
      b, module.getLoc(), graph.model, graph.sourceFile, graph.batch,
      graph.optimizer, target,
      graph.arenaBytes > 0 ? b.getI64IntegerAttr(graph.arenaBytes)
                           : IntegerAttr(),
      StringAttr(), false,
      graph.lrSchedule.empty()
          ? ArrayAttr()
          : getLrScheduleAttr(b.getContext(), graph.lrSchedule),
      graph.lrSchedule.empty() ? FloatAttr() : b.getF64FloatAttr(graph.baseLr),
      graph.loss.kind == runtime::LossKind::Unknown
          ? DictionaryAttr()
          : getEvalLossAttr(b.getContext(), graph.loss),
      IntegerAttr(), IntegerAttr());
  Block &body = program.getBody().emplaceBlock();
  b.setInsertionPointToEnd(&body);
  for (const Buffer &buffer : graph.buffers)
    if (isPersistent(buffer.kind) && !buffer.isAlias())
      declare(buffer.id);
  for (StepKind kind : kAllSteps) {
    const StepKernels *step = &graph.getStep(kind);
    // A program has no eval_loss step unless the frontend made one.
    if (kind == StepKind::eval_loss && step->kernels.empty())
      continue;
    b.setInsertionPointToEnd(&body);
    auto stepOp = StepOp::create(b, module.getLoc(), step->step, IntegerAttr(),
                                 IntegerAttr(), IntegerAttr());
    b.setInsertionPointToEnd(&stepOp.getBody().emplaceBlock());
    for (const Kernel &kernel : step->kernels)
      if (failed(writeKernel(kernel))) {
        program.erase();
        return {};
      }
    for (const Buffer &buffer : graph.buffers)
      if (buffer.step == step->step)
        declare(buffer.id);
  }
  return program;
}

ProgramOp cairn::writeProgram(const KernelGraph &graph, ModuleOp module) {
  return ProgramWriter(graph, module).write();
}

//===----------------------------------------------------------------------===//
// IR -> KernelGraph
//===----------------------------------------------------------------------===//

ProgramGraph cairn::readProgram(ProgramOp program) {
  ProgramGraph result;
  result.program = program;
  KernelGraph &graph = result.graph;
  graph.model = program.getModel().str();
  graph.sourceFile = program.getSource().str();
  graph.batch = program.getBatch();
  graph.optimizer = program.getOptimizer().str();
  if (auto schedule = program.getLrScheduleAttr()) {
    // Checked by the program's verifier.
    graph.lrSchedule =
        *readLrSchedule(schedule, [&] { return program.emitOpError(); });
    graph.baseLr = *program.getLr();
  }
  if (auto loss = program.getEvalLossAttr()) // checked by the verifier
    graph.loss = *readEvalLoss(loss, [&] { return program.emitOpError(); });
  graph.target = StringRef(program.getTarget()).upper();
  graph.arenaBytes = program.getArenaBytes().value_or(0);
  if (auto budget = program->getAttrOfType<IntegerAttr>(
          CairnDialect::kMemoryBudgetAttrName))
    graph.memoryBudget = budget.getInt();
  if (auto replicas =
          program->getAttrOfType<IntegerAttr>(CairnDialect::kReplicasAttrName))
    graph.replicas = replicas.getInt();
  graph.syncBatchNorm = program->hasAttr(CairnDialect::kSyncBatchNormAttrName);
  if (program.getDevices()) {
    graph.device = *program.getDevice();
    graph.devices = *program.getDevices();
  }

  auto add = [&](Buffer buffer, Value value, Location loc) {
    auto type = cast<MemRefType>(value.getType());
    buffer.id = graph.buffers.size();
    buffer.dtype = *getDType(type);
    buffer.shape.assign(type.getShape().begin(), type.getShape().end());
    buffer.loc = formatModelLocation(loc);
    buffer.irLoc = loc;
    result.ids[value] = buffer.id;
    result.values.push_back(value);
    graph.buffers.push_back(std::move(buffer));
  };
  auto addBuffer = [&](BufferOp op, std::optional<StepKind> step) {
    Buffer buffer;
    buffer.name = op.getName().str();
    buffer.kind = op.getKind();
    buffer.bytes = op.getBytes();
    buffer.step = step;
    if (InitAttr init = op.getInitAttr()) {
      buffer.init = init.getKind();
      buffer.initScale = init.getScale();
      buffer.initZeroRow = init.getZeroRow();
    }
    buffer.offset = op.getOffset().value_or(-1);
    buffer.spareBytes = op.getSpare().value_or(0);
    if (Value over = op.getInPlace())
      buffer.inPlaceOf = result.ids.lookup(over);
    add(std::move(buffer), op.getResult(), op.getLoc());
  };
  auto getId = [&](Value value) {
    return value ? result.ids.lookup(value) : kNoBuffer;
  };

  for (Operation &op : program.getBody().front()) {
    if (auto buffer = dyn_cast<BufferOp>(op)) {
      addBuffer(buffer, std::nullopt);
      continue;
    }
    auto step = cast<StepOp>(op);
    StepKind kind = step.getKind();
    std::vector<Kernel> &kernels = graph.getStep(kind).kernels;
    for (Operation &inner : step.getBody().front()) {
      if (auto buffer = dyn_cast<BufferOp>(inner)) {
        addBuffer(buffer, kind);
      } else if (auto view = dyn_cast<ViewOp>(inner)) {
        Buffer buffer;
        buffer.name = view.getName().str();
        buffer.kind = view.getKind();
        buffer.step = kind;
        buffer.aliasOf = result.ids.lookup(view.getSource());
        add(std::move(buffer), view.getResult(), view.getLoc());
      } else {
        auto kernelOp = cast<KernelOpInterface>(inner);
        Kernel kernel;
        kernel.kind = inner.getName().getStringRef().str();
        for (Value input : kernelOp.getKernelInputs())
          kernel.inputs.push_back(getId(input));
        for (Value output : kernelOp.getKernelOutputs())
          kernel.outputs.push_back(getId(output));
        kernel.workspace = getId(kernelOp.getKernelWorkspace());
        // An output that is one of the inputs is written in place.
        kernel.tiedInputs = findTiedInputs(kernel);
        kernel.elementwise = isElementwiseKernel(&inner);
        kernel.loc = formatModelLocation(inner.getLoc());
        kernel.layer = getLayerName(inner.getLoc());
        kernel.opName = getSourceOpName(inner.getLoc());
        kernel.name = getKernelProfileName(&inner).str();
        kernel.irLoc = inner.getLoc();
        kernel.beforeFirstUse =
            inner.hasAttr(CairnDialect::kBeforeFirstUseAttrName);
        if (auto device =
                inner.getAttrOfType<IntegerAttr>(CairnDialect::kDeviceAttrName))
          kernel.device = device.getInt();
        kernel.backwardSeed =
            inner.hasAttr(CairnDialect::kBackwardSeedAttrName);
        if (auto found = dyn_cast<FoundInfKernelOp>(inner))
          kernel.acrossDevices = found.getAcrossDevices();
        if (auto clip = dyn_cast<ClipCoefficientKernelOp>(inner))
          kernel.acrossDevices = clip.getDeviceChunks().has_value();
        if (isa<SendKernelOp, ReceiveKernelOp>(inner)) {
          kernel.peer = inner.getAttrOfType<IntegerAttr>("peer").getInt();
          kernel.tag = inner.getAttrOfType<IntegerAttr>("tag").getInt();
        }
        kernel.flops = kernelOp.getKernelFlops();
        kernels.push_back(std::move(kernel));
        result.kernels[static_cast<unsigned>(kind)].push_back(&inner);
      }
    }
  }
  // A view sits at its root's offset.
  for (Buffer &buffer : graph.buffers)
    if (buffer.isAlias())
      buffer.offset = graph.buffers[graph.getAliasRoot(buffer.id)].offset;
  computeLiveness(graph);
  return result;
}

//===----------------------------------------------------------------------===//
// Reordering
//===----------------------------------------------------------------------===//

void cairn::reorderStep(StepOp step, ArrayRef<Operation *> kernels) {
  Block &block = step.getBody().front();
  // Runs of adjacent updates may be runs no more.
  for (Operation *kernel : kernels)
    kernel->removeAttr(CairnDialect::kUpdateGroupAttrName);
  llvm::DenseSet<Operation *> placed;
  // Moves `op` to the end of the block, after the declarations it uses.
  std::function<void(Operation *)> place = [&](Operation *op) {
    if (!op || op->getBlock() != &block || placed.contains(op))
      return;
    for (Value operand : op->getOperands())
      place(operand.getDefiningOp());
    op->moveBefore(&block, block.end());
    placed.insert(op);
  };
  for (Operation *kernel : kernels)
    place(kernel);
  // Declarations no kernel touches keep their order, at the end.
  SmallVector<Operation *> rest;
  for (Operation &op : block)
    if (!placed.contains(&op))
      rest.push_back(&op);
  for (Operation *op : rest)
    place(op);
}

//===----------------------------------------------------------------------===//
// The program of a module
//===----------------------------------------------------------------------===//

ProgramOp cairn::getProgram(ModuleOp module) {
  auto programs = module.getOps<ProgramOp>();
  return programs.empty() ? ProgramOp() : *programs.begin();
}

ProgramOp cairn::getProgramFor(ModuleOp module, StringRef pass) {
  SmallVector<ProgramOp> programs = getProgramsFor(module, pass);
  if (programs.size() > 1) {
    module.emitError() << pass
                       << " expected one cairn.program, before "
                          "cairn-partition-devices, but found "
                       << programs.size();
    return {};
  }
  return programs.empty() ? ProgramOp() : programs.front();
}

SmallVector<ProgramOp> cairn::getProgramsFor(ModuleOp module, StringRef pass) {
  SmallVector<ProgramOp> programs(module.getOps<ProgramOp>());
  if (programs.empty())
    module.emitError() << pass
                       << " expected a cairn.program (cairn-lower-to-kernels "
                          "makes it from @train_step and @forward)";
  return programs;
}

FailureOr<ProgramGraph> cairn::readProgramFor(ModuleOp module,
                                              StringRef pass) {
  ProgramOp program = getProgramFor(module, pass);
  if (!program)
    return failure();
  return readProgram(program);
}

SmallVector<Value> cairn::getSummedGradients(ArrayRef<Operation *> kernels) {
  DenseSet<Value> coefficients;
  DenseMap<Value, Value> unclipped; // grad -> what the coefficient scales
  for (Operation *kernel : kernels)
    if (auto clip = dyn_cast<ClipCoefficientKernelOp>(kernel))
      coefficients.insert(clip.getResult());
  for (Operation *kernel : kernels)
    if (auto mul = dyn_cast<MulKernelOp>(kernel);
        mul && coefficients.contains(mul.getRhs()))
      unclipped[mul.getResult()] = mul.getLhs();
  SmallVector<Value> grads;
  for (Operation *kernel : kernels)
    if (isa<SgdUpdateKernelOp, AdamUpdateKernelOp>(kernel))
      for (Value input : cast<KernelOpInterface>(kernel).getKernelInputs())
        if (auto buffer = input ? input.getDefiningOp<BufferOp>() : BufferOp())
          if (buffer.getKind() == BufferKind::grad)
            if (Value grad =
                    unclipped.lookup(input) ? unclipped.lookup(input) : input;
                !llvm::is_contained(grads, grad))
              grads.push_back(grad);
  return grads;
}

void cairn::dropPlan(ProgramOp program) {
  program.walk([](BufferOp buffer) { buffer.removeOffsetAttr(); });
  program.removeArenaBytesAttr();
  program.removePlanMethodAttr();
  program.setPlanOptimal(false);
}
