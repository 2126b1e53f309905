//===- CairnProgramOps.cpp - The planned step's structure -----------------===//
//
// Verifiers of cairn.program, cairn.step, cairn.buffer and cairn.view: where
// each may appear, and what the plan's decisions written on buffers (offset,
// in place) must satisfy on their own. Whether two buffers live at once share
// bytes is the arena verifier's business (passes/ArenaVerifier.h).
//
//===----------------------------------------------------------------------===//

#include "ir/CairnProgramOps.h"
#include "ir/CairnKernelOps.h"
#include "ir/TrainingSettings.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <iterator>

using namespace mlir;
using namespace cairn;

/// "an input", "a param".
static std::string getArticle(StringRef word) {
  bool vowel = !word.empty() && StringRef("aeiou").contains(word.front());
  return ((vowel ? "an " : "a ") + word).str();
}

int64_t cairn::getMemRefBytes(MemRefType type) {
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

//===----------------------------------------------------------------------===//
// ProgramOp
//===----------------------------------------------------------------------===//

StepOp ProgramOp::getStep(StepKind kind) {
  for (auto step : getBody().front().getOps<StepOp>())
    if (step.getKind() == kind)
      return step;
  return {};
}

LogicalResult ProgramOp::verify() {
  if (getBatch() < 1)
    return emitOpError() << "expected a batch size >= 1 but got "
                         << getBatch();
  if (getTarget() != "cpu" && getTarget() != "cuda")
    return emitOpError() << "expected target \"cpu\" or \"cuda\" but got \""
                         << getTarget() << "\"";
  if (getArenaBytes() && *getArenaBytes() < 0)
    return emitOpError() << "expected arena_bytes >= 0 but got "
                         << *getArenaBytes();
  if (getLrSchedule().has_value() != getLr().has_value())
    return emitOpError() << "expected lr_schedule and lr together";
  if (getLr() && !(*getLr() > 0))
    return emitOpError() << "expected lr > 0 but got " << *getLr();
  if (auto schedule = getLrScheduleAttr())
    if (failed(readLrSchedule(schedule, [&] { return emitOpError(); })))
      return failure();
  if (auto loss = getEvalLossAttr())
    if (failed(readEvalLoss(loss, [&] { return emitOpError(); })))
      return failure();
  if (getDevice().has_value() != getDevices().has_value())
    return emitOpError() << "expected device and devices together";
  if (getDevices() &&
      (*getDevices() < 2 || *getDevice() < 0 || *getDevice() >= *getDevices()))
    return emitOpError() << "expected 0 <= device < devices and devices >= 2 "
                            "but got device "
                         << *getDevice() << " of " << *getDevices();
  return success();
}

LogicalResult ProgramOp::verifyRegions() {
  llvm::StringMap<Operation *> names;
  bool steps[std::size(kAllSteps)] = {};
  auto checkName = [&](Operation *op, StringRef name) -> LogicalResult {
    auto [it, inserted] = names.try_emplace(name, op);
    if (inserted)
      return success();
    InFlightDiagnostic diag = op->emitOpError()
                              << "names '" << name
                              << "', which another buffer of the program has";
    diag.attachNote(it->second->getLoc()) << "the other buffer";
    return diag;
  };
  std::optional<int64_t> arena = getArenaBytes();
  for (Operation &op : getBody().front()) {
    if (auto buffer = dyn_cast<BufferOp>(op)) {
      if (failed(checkName(buffer, buffer.getName())))
        return failure();
    } else if (auto step = dyn_cast<StepOp>(op)) {
      unsigned kind = static_cast<unsigned>(step.getKind());
      if (steps[kind])
        return step.emitOpError() << "is the second '"
                                  << stringifyStepKind(step.getKind())
                                  << "' step of the program";
      steps[kind] = true;
      for (Operation &inner : step.getBody().front()) {
        if (auto buffer = dyn_cast<BufferOp>(inner)) {
          if (failed(checkName(buffer, buffer.getName())))
            return failure();
        } else if (auto view = dyn_cast<ViewOp>(inner)) {
          if (failed(checkName(view, view.getName())))
            return failure();
        }
      }
    } else {
      return op.emitOpError()
             << "cannot be in a cairn.program's body (it holds persistent "
                "cairn.buffer ops and cairn.step ops)";
    }
  }
  // Once planned, every buffer with bytes has its place in the arena.
  if (!arena)
    return success();
  WalkResult result = walk([&](BufferOp buffer) {
    if (buffer.getBytes() == 0)
      return WalkResult::advance();
    if (!buffer.getOffset()) {
      buffer.emitOpError() << "has no offset in the planned arena";
      return WalkResult::interrupt();
    }
    int64_t offset = *buffer.getOffset();
    int64_t bytes = buffer.getBytes() + buffer.getSpare().value_or(0);
    if (offset > *arena || bytes > *arena - offset) {
      buffer.emitOpError() << "of " << bytes << " bytes at offset " << offset
                           << " ends past the arena's " << *arena << " bytes";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// StepOp
//===----------------------------------------------------------------------===//

LogicalResult StepOp::verifyRegions() {
  // A per-step buffer holds nothing until a kernel of the step writes it.
  llvm::DenseSet<Value> written;
  for (Operation &op : getBody().front()) {
    if (isa<BufferOp, ViewOp>(op))
      continue;
    auto kernel = dyn_cast<KernelOpInterface>(op);
    if (!kernel)
      return op.emitOpError() << "cannot be in a cairn.step (it holds "
                                 "cairn.buffer, cairn.view and kernel ops)";
    for (Value input : kernel.getKernelInputs()) {
      if (!input)
        continue;
      auto buffer = getViewRoot(input).getDefiningOp<BufferOp>();
      if (buffer && !buffer.isPersistent() && !written.contains(buffer))
        return op.emitOpError() << "reads '" << buffer.getName()
                                << "' before any kernel of the step writes it";
    }
    for (Value output : kernel.getKernelOutputs())
      if (output)
        written.insert(getViewRoot(output));
    if (Value scratch = kernel.getKernelWorkspace())
      written.insert(scratch);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// BufferOp
//===----------------------------------------------------------------------===//

int64_t BufferOp::getBytes() {
  MemRefType type = getResult().getType();
  return getMemRefBytes(type);
}

bool BufferOp::isPersistent() { return cairn::isPersistent(getKind()); }

/// IR reads best with the buffer's own name: %fc1.weight prints as
/// %fc1.weight (MLIR makes it a valid, unique SSA name).
void BufferOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), getName());
}

LogicalResult BufferOp::verify() {
  if (getName().empty())
    return emitOpError() << "expected a non-empty name";
  bool inProgram = isa<ProgramOp>((*this)->getParentOp());
  bool inStep = isa<StepOp>((*this)->getParentOp());
  if (isPersistent() && !inProgram)
    return emitOpError() << "is " << getArticle(stringifyBufferKind(getKind()))
                         << " buffer, which lives for the whole run: it "
                            "belongs in the cairn.program's body";
  if (!isPersistent() && !inStep)
    return emitOpError() << "is " << getArticle(stringifyBufferKind(getKind()))
                         << " buffer, which lives within one step: it "
                            "belongs in a cairn.step";
  if (std::optional<int64_t> offset = getOffset())
    if (*offset < 0 || *offset % kArenaAlignment != 0)
      return emitOpError() << "expected an offset that is a non-negative "
                              "multiple of "
                           << kArenaAlignment << " but got " << *offset;
  if (std::optional<int64_t> spare = getSpare()) {
    if (getKind() != BufferKind::workspace || *spare <= 0)
      return emitOpError() << "expected spare bytes only on a workspace, and "
                              "more than 0";
    if (!getOffset())
      return emitOpError() << "has spare bytes but no offset: they are bytes "
                              "of a planned arena";
  }
  if (getInit() && getKind() != BufferKind::param &&
      getKind() != BufferKind::buffer && getKind() != BufferKind::optimizer)
    return emitOpError() << "has an initializer, which only param, buffer "
                            "and optimizer buffers take";
  if (Value over = getInPlace()) {
    auto source = over.getDefiningOp<BufferOp>();
    if (!source)
      return emitOpError() << "is in place over a value that is no "
                              "cairn.buffer (a view or an argument)";
    if (isPersistent() || source.isPersistent())
      return emitOpError() << "is in place over '" << source.getName()
                           << "', but only per-step buffers are written in "
                              "place over one another";
    if (source.getBytes() != getBytes() ||
        source.getType().getElementType() != getType().getElementType())
      return emitOpError() << "is in place over '" << source.getName()
                           << "', whose " << source.getType()
                           << " holds other elements than its "
                           << getType();
    if (getOffset() && source.getOffset() && *getOffset() != *source.getOffset())
      return emitOpError() << "is in place over '" << source.getName()
                           << "' at offset " << *getOffset()
                           << ", but that buffer is at " << *source.getOffset();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ViewOp
//===----------------------------------------------------------------------===//

Value cairn::getViewRoot(Value value) {
  while (auto view = value.getDefiningOp<ViewOp>())
    value = view.getSource();
  return value;
}

SmallVector<Operation *> cairn::getStepKernels(StepOp step) {
  SmallVector<Operation *> kernels;
  for (Operation &op : step.getBody().front())
    if (isa<KernelOpInterface>(op))
      kernels.push_back(&op);
  return kernels;
}

int cairn::getForwardEnd(ArrayRef<Operation *> kernels) {
  int end = -1;
  for (int k = 0, e = kernels.size(); k < e; ++k)
    for (Value output : cast<KernelOpInterface>(kernels[k]).getKernelOutputs())
      if (auto buffer = output ? output.getDefiningOp<BufferOp>() : BufferOp())
        if (buffer.getKind() == BufferKind::output &&
            buffer.getName() != kFoundInfBufferName)
          end = k;
  return end;
}

bool cairn::writesPersistentBuffer(Operation *kernel) {
  for (Value output : cast<KernelOpInterface>(kernel).getKernelOutputs())
    if (auto buffer =
            output ? getViewRoot(output).getDefiningOp<BufferOp>() : BufferOp())
      if (buffer.isPersistent())
        return true;
  return false;
}

llvm::DenseSet<Operation *>
cairn::getUncopiableKernels(ArrayRef<Operation *> kernels) {
  llvm::DenseSet<Operation *> uncopiable;
  llvm::DenseSet<Value> updated;
  for (Operation *kernel : kernels)
    if (updatesInPlace(kernel))
      for (Value output : cast<KernelOpInterface>(kernel).getKernelOutputs())
        if (output)
          updated.insert(output);
  for (Operation *kernel : kernels) {
    bool overwritten = llvm::any_of(
        cast<KernelOpInterface>(kernel).getKernelOutputs(),
        [&](Value output) { return output && updated.contains(output); });
    if (overwritten || writesPersistentBuffer(kernel) || updatesInPlace(kernel))
      uncopiable.insert(kernel);
  }
  return uncopiable;
}

bool cairn::updatesInPlace(Operation *kernel) {
  auto k = cast<KernelOpInterface>(kernel);
  SmallVector<Value> inputs = k.getKernelInputs();
  for (Value output : k.getKernelOutputs())
    if (output && llvm::is_contained(inputs, output))
      return true;
  return false;
}

BufferOp ViewOp::getRoot() {
  return getViewRoot(getSource()).getDefiningOp<BufferOp>();
}

void ViewOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), getName());
}

LogicalResult ViewOp::verify() {
  MemRefType from = getSource().getType(), to = getResult().getType();
  if (from.getElementType() != to.getElementType() ||
      from.getNumElements() != to.getNumElements())
    return emitOpError() << "expected a view with the element type and count "
                            "of its source "
                         << from << " but got " << to;
  if (!getRoot())
    return emitOpError() << "views a value that is no cairn.buffer";
  if (getName().empty())
    return emitOpError() << "expected a non-empty name";
  return success();
}

#define GET_OP_CLASSES
#include "ir/CairnProgramOps.cpp.inc"
