//===- FuseElementwise.cpp - Element-wise chains as one kernel ------------===//
//
// Runs before the schedule and the plan, so a fused intermediate never gets
// a buffer: what the plan does not see takes no arena bytes.
//
// A chain starts at an element-wise kernel (add, sub, mul, div, an
// activation or its gradient, on operands of its own size or of one
// element; a dropout too where the target's chains draw masks, the CPU's,
// which draw element i's as the dropout kernel does) and grows to the one
// reader of its last result while nothing else reads that result (directly or
// through a view) and the runtime does not read it, or a view of it, by name (a
// persistent buffer, a gradient). A view between two members (a reshape) is the
// register's other name and goes with the intermediate's buffer. The reader
// need not be the next kernel of the list: the chain runs where its last member
// was, so the kernels in between may produce the last members' other
// inputs (the backward's gradient sum feeding a relu_grad), but none may
// write what an earlier member reads or a chain result; and across such a
// gap the members' inputs that would have died before it must take no more
// bytes than the intermediate they replace, or fusing would raise the
// memory in between (a micro-batch's gradient added to the sum of the
// earlier ones after every micro-batch's backward: one chain would hold
// every micro-batch's gradient to the end). Glued kernels
// (`cairn.before_first_use`) fuse only with glued ones, and the chain stays
// glued. The target's limits bound a chain: distinct inputs, ops.
//
// A relu that alone reads a linear's result folds into the linear
// (`relu = true`): the product is never stored apart. So does the round
// trip through float32 in which a half model computes that relu.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

#include "ir/CairnDialect.h"
#include "ir/CairnKernelOps.h"
#include "ir/ProductTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace cairn {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

/// The chain op of an element-wise kernel: its name in the chain
/// (cairn.kernel.elementwise_chain's `ops`) and its two operands (the
/// second null for an op of one operand).
struct ChainStep {
  std::string kind;
  Value a, b;
};

/// An element-wise kernel's step in a chain: its kernel name, gelu's with
/// its approximation ("gelu_tanh_grad"), when the chain language has that op
/// (getChainOpArity) and, for a dropout, the target's chains draw masks
/// (`dropout`).
std::optional<ChainStep> getChainStep(Operation *op, bool dropout) {
  auto kernel = dyn_cast<KernelOpInterface>(op);
  if (!kernel || !isElementwiseKernel(op) ||
      (isa<DropoutKernelOp>(op) && !dropout))
    return std::nullopt;
  std::string name = kernel.getKernelName().str();
  if (auto gelu = dyn_cast<GeluKernelOp>(op))
    name = gelu.getTanh() ? "gelu_tanh" : "gelu_exact";
  else if (auto grad = dyn_cast<GeluGradKernelOp>(op))
    name = grad.getTanh() ? "gelu_tanh_grad" : "gelu_exact_grad";
  std::optional<unsigned> arity = getChainOpArity(name);
  SmallVector<Value> in = kernel.getKernelInputs();
  if (!arity || in.size() != *arity)
    return std::nullopt;
  return ChainStep{std::move(name), in[0], *arity == 2 ? in[1] : Value()};
}

int64_t getNumElements(Value value) {
  return cast<MemRefType>(value.getType()).getNumElements();
}

/// The views of `value`, views of views included, each after its source.
SmallVector<ViewOp> getViews(Value value) {
  SmallVector<ViewOp> views;
  for (Operation *user : value.getUsers())
    if (auto view = dyn_cast<ViewOp>(user)) {
      views.push_back(view);
      llvm::append_range(views, getViews(view.getResult()));
    }
  return views;
}

/// Whether `operand` reads the bytes `output` writes (itself or a view).
bool reads(Value operand, Value output) {
  return operand && getViewRoot(operand) == output;
}

class StepFuser {
public:
  StepFuser(StepOp step, unsigned maxInputs, unsigned maxOps, bool dropout)
      : step(step), maxInputs(maxInputs), maxOps(maxOps), dropout(dropout) {}

  /// Fuses every chain and linear + relu of the step; returns the number of
  /// kernels fused away.
  int run();

private:
  /// Kernels reading `buffer`, through any of its views.
  unsigned countReaders(Value buffer) {
    return readers.lookup(buffer).size();
  }
  /// A result a later kernel may take in as an intermediate: a per-step
  /// buffer the runtime does not read by name, written here, nor through
  /// any of its views (a reshape between two members is a register's
  /// other name).
  bool isFusable(Value result) {
    auto buffer = result.getDefiningOp<BufferOp>();
    auto isPrivate = [](BufferKind kind) {
      return !isPersistent(kind) && kind != BufferKind::grad &&
             kind != BufferKind::workspace;
    };
    return buffer && isPrivate(buffer.getKind()) &&
           llvm::all_of(getViews(result), [&](ViewOp view) {
             return isPrivate(view.getKind());
           });
  }
  bool isChainable(Operation *op, int64_t n, Type element);
  bool holdsMoreThan(ArrayRef<Operation *> members,
                     const llvm::SetVector<Value> &inputs, Operation *reader,
                     Value intermediate);
  void collectReaders();
  int fuseChain(ArrayRef<Operation *> members);
  bool foldRelu(Operation *linear);
  Operation *getSoleReader(Value buffer);

  std::optional<ChainStep> getStep(Operation *op) {
    return getChainStep(op, dropout);
  }

  StepOp step;
  unsigned maxInputs, maxOps;
  /// Whether dropouts join chains (the target's chains draw masks).
  bool dropout;
  /// By root buffer: the kernels that read it.
  llvm::DenseMap<Value, SmallVector<Operation *>> readers;
};

void StepFuser::collectReaders() {
  readers.clear();
  for (Operation &op : step.getBody().front())
    if (auto kernel = dyn_cast<KernelOpInterface>(op))
      for (Value input : kernel.getKernelInputs())
        if (input) {
          SmallVector<Operation *> &list = readers[getViewRoot(input)];
          if (list.empty() || list.back() != &op)
            list.push_back(&op);
        }
}

bool StepFuser::isChainable(Operation *op, int64_t n, Type element) {
  std::optional<ChainStep> chainStep = getStep(op);
  if (!chainStep)
    return false;
  Value result = cast<KernelOpInterface>(op).getKernelOutputs().front();
  auto type = cast<MemRefType>(result.getType());
  // A chain computes in its buffers' type: a kernel on half storage (the
  // CPU's activations) widens and rounds each element itself, alone.
  if (!isa<FloatType>(type.getElementType()) ||
      isHalfElementType(type.getElementType()) ||
      (n >= 0 &&
       (type.getNumElements() != n || type.getElementType() != element)))
    return false;
  // Operands of the result's size or single elements: no strided broadcast.
  for (Value operand : {chainStep->a, chainStep->b}) {
    if (!operand)
      continue;
    int64_t elements = getNumElements(operand);
    if (cast<MemRefType>(operand.getType()).getElementType() !=
            type.getElementType() ||
        (elements != type.getNumElements() && elements != 1))
      return false;
  }
  return true;
}

/// Whether growing the chain `members` (reading `inputs`) to `reader` holds
/// more bytes across the kernels between them than the `intermediate` it
/// replaces: the inputs that no kernel after the last member but the chain
/// reads, and that are not persistent, would live on until `reader`.
bool StepFuser::holdsMoreThan(ArrayRef<Operation *> members,
                              const llvm::SetVector<Value> &inputs,
                              Operation *reader, Value intermediate) {
  Operation *last = members.back();
  Operation *next = last->getNextNode();
  while (next && !isa<KernelOpInterface>(next))
    next = next->getNextNode();
  if (next == reader)
    return false;
  int64_t held = 0;
  for (Value input : inputs) {
    Value root = getViewRoot(input);
    auto buffer = root.getDefiningOp<BufferOp>();
    if (!buffer || isPersistent(buffer.getKind()))
      continue;
    bool readLater = llvm::any_of(readers.lookup(root), [&](Operation *op) {
      return op != reader && last->isBeforeInBlock(op);
    });
    if (!readLater)
      held += getMemRefBytes(cast<MemRefType>(root.getType()));
  }
  return held > getMemRefBytes(cast<MemRefType>(intermediate.getType()));
}

/// Whether a kernel after `from` and before `to` writes one of `values`
/// (by the bytes it writes: a view's root).
static bool isWrittenBetween(Operation *from, Operation *to,
                             const llvm::DenseSet<Value> &roots) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode())
    if (auto kernel = dyn_cast<KernelOpInterface>(op))
      for (Value output : kernel.getKernelOutputs())
        if (output && roots.contains(getViewRoot(output)))
          return true;
  return false;
}

static bool isGlued(Operation *op) {
  return op->hasAttr(CairnDialect::kBeforeFirstUseAttrName);
}

int StepFuser::fuseChain(ArrayRef<Operation *> members) {
  // Where the last member was: every input is written by then.
  OpBuilder b(members.back());

  llvm::SetVector<Value> inputs;
  llvm::DenseMap<Value, int64_t> registers;
  SmallVector<Attribute> kinds;
  SmallVector<int64_t> args;
  SmallVector<Location> locs;
  std::string names;
  // Inputs come first in the registers: collect them all before numbering
  // the ops' results.
  SmallVector<ChainStep> steps;
  // Each dropout's rate, stream and replica stride, in chain order.
  SmallVector<double> dropoutP;
  SmallVector<int64_t> dropoutStreams, dropoutReplicaStrides;
  for (Operation *member : members) {
    ChainStep chainStep = *getStep(member);
    if (auto dropoutOp = dyn_cast<DropoutKernelOp>(member)) {
      dropoutP.push_back(dropoutOp.getP());
      dropoutStreams.push_back(dropoutOp.getStream());
      dropoutReplicaStrides.push_back(dropoutOp.getReplicaStride().value_or(0));
    }
    for (Value operand : {chainStep.a, chainStep.b})
      if (operand && !llvm::any_of(members, [&](Operation *other) {
            return reads(
                operand,
                cast<KernelOpInterface>(other).getKernelOutputs().front());
          }))
        inputs.insert(operand);
    steps.push_back(std::move(chainStep));
  }
  for (auto [index, input] : llvm::enumerate(inputs))
    registers[input] = index;
  // An input is its own register; a member's result, through any view.
  auto getRegister = [&](Value operand) -> int64_t {
    if (!operand)
      return -1;
    auto it = registers.find(operand);
    return it != registers.end() ? it->second
                                 : registers.lookup(getViewRoot(operand));
  };
  for (auto [index, member] : llvm::enumerate(members)) {
    const ChainStep &chainStep = steps[index];
    kinds.push_back(b.getStringAttr(chainStep.kind));
    args.push_back(getRegister(chainStep.a));
    args.push_back(getRegister(chainStep.b));
    Value result = cast<KernelOpInterface>(member).getKernelOutputs().front();
    registers[result] = inputs.size() + index;
    locs.push_back(member->getLoc());
    if (auto fused = dyn_cast<FusedLoc>(member->getLoc()))
      if (auto name = dyn_cast_or_null<StringAttr>(fused.getMetadata()))
        names += (names.empty() ? "" : "+") +
                 name.getValue().rsplit('.').second.str();
  }
  Value result = cast<KernelOpInterface>(members.back()).getKernelOutputs().front();
  Location loc = FusedLoc::get(b.getContext(), locs,
                               b.getStringAttr("cairn." + names));
  auto chain = ElementwiseChainKernelOp::create(
      b, loc, inputs.getArrayRef(), result, getNumElements(result),
      b.getArrayAttr(kinds), b.getDenseI64ArrayAttr(args),
      dropoutP.empty() ? nullptr : b.getDenseF64ArrayAttr(dropoutP),
      dropoutP.empty() ? nullptr : b.getDenseI64ArrayAttr(dropoutStreams),
      dropoutP.empty() ? nullptr
                       : b.getDenseI64ArrayAttr(dropoutReplicaStrides));
  if (isGlued(members.front()))
    chain->setAttr(CairnDialect::kBeforeFirstUseAttrName, b.getUnitAttr());
  // The members go, then their intermediate buffers and their views, last
  // view first (a later member still read them).
  SmallVector<Operation *> intermediates;
  for (Operation *member : members) {
    Value output = cast<KernelOpInterface>(member).getKernelOutputs().front();
    if (output != result) {
      intermediates.push_back(output.getDefiningOp());
      for (ViewOp view : getViews(output))
        intermediates.push_back(view);
    }
    member->erase();
  }
  for (Operation *op : llvm::reverse(intermediates))
    op->erase();
  return members.size() - 1;
}

/// The one kernel reading `buffer`, when nothing else reads it (nor a view
/// of it) and it is fusable; else null.
Operation *StepFuser::getSoleReader(Value buffer) {
  if (!isFusable(buffer) || countReaders(buffer) != 1 ||
      !getViews(buffer).empty())
    return nullptr;
  return readers.lookup(buffer).front();
}

bool StepFuser::foldRelu(Operation *op) {
  auto linear = dyn_cast<LinearKernelOp>(op);
  if (!linear || linear.getRelu())
    return false;
  Value product = linear.getResult();
  Operation *reader = getSoleReader(product);
  // A half model's relu folds too, for round(relu(x)) is relu(round(x))
  // but for the sign of a zero (the epilogue writes +0 where a tiny
  // negative would round to -0). On a half product (CUDA's tensor cores),
  // cairn-compute-half-in-float32 computes the relu in float32 between two
  // casts (widen, relu, narrow), and the linear writes the narrowed result.
  // On the CPU both run on half storage (halfGemm, the relu loop), and the
  // relu reads the product directly, as in float32.
  SmallVector<Operation *> folded;
  bool halfProduct = isHalfElementType(getElementTypeOrSelf(product));
  if (auto first = dyn_cast_or_null<CastKernelOp>(reader)) {
    Value firstResult = first.getResult();
    if (!halfProduct || !getElementTypeOrSelf(firstResult).isF32())
      return false;
    folded.push_back(first);
    reader = getSoleReader(firstResult);
  }
  auto relu = dyn_cast_or_null<ReluKernelOp>(reader);
  if (!relu)
    return false;
  folded.push_back(relu);
  Value result = relu.getResult();
  if (folded.size() > 1) {
    auto narrow = dyn_cast_or_null<CastKernelOp>(getSoleReader(result));
    if (!narrow || narrow.getResult().getType() != product.getType())
      return false;
    folded.push_back(narrow);
    result = narrow.getResult();
  }
  // Glued kernels fold only with glued ones.
  if (llvm::any_of(folded, [&](Operation *kernel) {
        return isGlued(kernel) != isGlued(linear);
      }))
    return false;
  // The linear writes the last result where it runs, earlier than the
  // kernels it replaces did: nothing in between may write those bytes.
  if (isWrittenBetween(linear, folded.back(), {getViewRoot(result)}))
    return false;
  // (The pass puts every declaration back before its first use after.)
  linear.getResultMutable().assign(result);
  // The linear computes `relu` in its epilogue, and says so where it is.
  linear.setReluAttr(BoolAttr::get(linear.getContext(), true));
  SmallVector<Location> locs = {linear.getLoc(), relu.getLoc()};
  linear->setLoc(
      FusedLoc::get(linear.getContext(), locs,
                    StringAttr::get(linear.getContext(), "cairn.linear+relu")));
  // Each folded kernel read the previous result alone, and those results
  // go: the readers of every other buffer stay as they were.
  SmallVector<Value> dropped = {product};
  for (Operation *kernel : llvm::drop_end(folded))
    dropped.push_back(
        cast<KernelOpInterface>(kernel).getKernelOutputs().front());
  for (Operation *kernel : folded)
    kernel->erase();
  for (Value buffer : dropped) {
    readers.erase(buffer);
    buffer.getDefiningOp()->erase();
  }
  return true;
}

int StepFuser::run() {
  int fused = 0;
  Block &block = step.getBody().front();
  collectReaders();
  // Relu epilogues first: a relu folded into its linear is no chain's start.
  SmallVector<Operation *> linears;
  for (Operation &op : block)
    if (isa<LinearKernelOp>(op))
      linears.push_back(&op);
  for (Operation *linear : linears)
    if (foldRelu(linear))
      ++fused;

  SmallVector<Operation *> kernels;
  for (Operation &op : block)
    if (isa<KernelOpInterface>(op))
      kernels.push_back(&op);
  llvm::DenseSet<Operation *> erased;
  for (size_t first = 0; first < kernels.size(); ++first) {
    Operation *start = kernels[first];
    if (erased.contains(start) || !isChainable(start, -1, Type()))
      continue;
    Value startResult = cast<KernelOpInterface>(start).getKernelOutputs().front();
    int64_t n = getNumElements(startResult);
    Type element = cast<MemRefType>(startResult.getType()).getElementType();
    SmallVector<Operation *> members = {start};
    llvm::SetVector<Value> inputs;
    auto addInputs = [&](Operation *op, llvm::SetVector<Value> &into) {
      ChainStep chainStep = *getStep(op);
      for (Value operand : {chainStep.a, chainStep.b})
        if (operand && !llvm::any_of(members, [&](Operation *m) {
              return reads(operand,
                           cast<KernelOpInterface>(m).getKernelOutputs().front());
            }))
          into.insert(operand);
    };
    addInputs(start, inputs);
    while (members.size() < maxOps) {
      Value previous =
          cast<KernelOpInterface>(members.back()).getKernelOutputs().front();
      if (!isFusable(previous) || countReaders(previous) != 1)
        break;
      Operation *op = readers.lookup(previous).front();
      std::optional<ChainStep> chainStep = getStep(op);
      if (!isChainable(op, n, element) || isGlued(op) != isGlued(start) ||
          !members.back()->isBeforeInBlock(op) ||
          (!reads(chainStep->a, previous) && !reads(chainStep->b, previous)))
        break;
      // The chain runs where `op` is: what the members so far read and
      // write must hold until then.
      llvm::DenseSet<Value> held;
      for (Value input : inputs)
        held.insert(getViewRoot(input));
      for (Operation *member : members)
        held.insert(getViewRoot(
            cast<KernelOpInterface>(member).getKernelOutputs().front()));
      if (isWrittenBetween(members.back(), op, held))
        break;
      if (holdsMoreThan(members, inputs, op, previous))
        break;
      llvm::SetVector<Value> grown = inputs;
      addInputs(op, grown);
      if (grown.size() > maxInputs)
        break;
      // The chain writes its result while it still reads its inputs: none
      // may be the result's bytes but at the same element.
      Value result = cast<KernelOpInterface>(op).getKernelOutputs().front();
      if (llvm::any_of(grown, [&](Value input) {
            return getViewRoot(input) == getViewRoot(result) &&
                   (input != result || getNumElements(input) != n);
          }))
        break;
      inputs = std::move(grown);
      members.push_back(op);
    }
    if (members.size() < 2)
      continue;
    for (Operation *member : members)
      erased.insert(member);
    fused += fuseChain(members);
    collectReaders();
  }
  return fused;
}

struct FuseElementwisePass
    : cairn::impl::FuseElementwisePassBase<FuseElementwisePass> {
  using FuseElementwisePassBase::FuseElementwisePassBase;

  void runOnOperation() override {
    SmallVector<ProgramOp> programs =
        getProgramsFor(getOperation(), getArgument());
    if (programs.empty())
      return signalPassFailure();
    if (maxInputs < 1 || maxOps < 2) {
      programs.front().emitError()
          << "cairn-fuse-elementwise: max-inputs must be >= 1 and max-ops >= 2";
      return signalPassFailure();
    }
    for (ProgramOp program : programs)
      fuseProgram(program);
  }

  void fuseProgram(ProgramOp program) {
    for (auto step : program.getBody().front().getOps<StepOp>()) {
      if (StepFuser(step, maxInputs, maxOps, dropout).run() > 0)
        dropPlan(program);
      // Declarations right before their first use again.
      SmallVector<Operation *> kernels;
      for (Operation &op : step.getBody().front())
        if (isa<KernelOpInterface>(op))
          kernels.push_back(&op);
      reorderStep(step, kernels);
    }
  }
};

} // namespace
