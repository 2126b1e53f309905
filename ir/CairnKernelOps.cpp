//===- CairnKernelOps.cpp - Kernels of the planned step -------------------===//
//
// The printed form every kernel shares, the checks every kernel must pass,
// and the in-place updates' own.
//
//===----------------------------------------------------------------------===//

#include "ir/CairnKernelOps.h"

#include "runtime/kernels/Normalization.h"
#include "runtime/kernels/Optimizer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace cairn;

static constexpr llvm::StringLiteral kSegmentSizes = "operandSegmentSizes";

//===----------------------------------------------------------------------===//
// The printed form: ins(%a, _ : types) outs(%b : types) workspace(%w : type)
//===----------------------------------------------------------------------===//

static void printGroups(OpAsmPrinter &printer, StringRef keyword,
                        ArrayRef<OperandRange> groups) {
  printer << " " << keyword << "(";
  SmallVector<Type> types;
  bool first = true;
  for (OperandRange group : groups) {
    if (group.empty()) {
      printer << (first ? "" : ", ") << "_";
      first = false;
      continue;
    }
    for (Value value : group) {
      printer << (first ? "" : ", ") << value;
      types.push_back(value.getType());
      first = false;
    }
  }
  if (!types.empty()) {
    printer << " : ";
    llvm::interleaveComma(types, printer);
  }
  printer << ")";
}

void cairn::detail::printKernelOp(OpAsmPrinter &printer, Operation *op,
                                  ArrayRef<OperandRange> groups,
                                  unsigned numInputs, unsigned numOutputs,
                                  bool hasWorkspace) {
  ArrayRef<OperandRange> all = groups;
  if (numInputs > 0)
    printGroups(printer, "ins", all.take_front(numInputs));
  printGroups(printer, "outs", all.slice(numInputs, numOutputs));
  if (hasWorkspace && !groups.back().empty())
    printer << " workspace(" << groups.back().front() << " : "
            << groups.back().front().getType() << ")";
  SmallVector<NamedAttribute> attrs;
  if (auto properties =
          dyn_cast_or_null<DictionaryAttr>(op->getPropertiesAsAttribute()))
    llvm::append_range(attrs, properties.getValue());
  llvm::append_range(attrs, op->getDiscardableAttrs());
  printer.printOptionalAttrDict(attrs, /*elidedAttrs=*/{kSegmentSizes});
}

/// Parses `keyword(entries : types)` into `numGroups` groups: one entry per
/// group (`_` for an empty one), or more operands than groups, the extra
/// ones the last group's (a single group's, or a variadic group after single
/// ones). Appends the group sizes to `sizes`.
static ParseResult parseGroups(OpAsmParser &parser, OperationState &result,
                               StringRef keyword, unsigned numGroups,
                               SmallVectorImpl<int32_t> &sizes) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(keyword) || parser.parseLParen())
    return failure();
  // Each entry: an operand, or nullopt for `_`.
  SmallVector<std::optional<OpAsmParser::UnresolvedOperand>> entries;
  SmallVector<Type> types;
  if (failed(parser.parseOptionalRParen())) {
    do {
      if (succeeded(parser.parseOptionalKeyword("_"))) {
        entries.push_back(std::nullopt);
        continue;
      }
      OpAsmParser::UnresolvedOperand operand;
      if (parser.parseOperand(operand))
        return failure();
      entries.push_back(operand);
    } while (succeeded(parser.parseOptionalComma()));
    if (succeeded(parser.parseOptionalColon()) && parser.parseTypeList(types))
      return failure();
    if (parser.parseRParen())
      return failure();
  }
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  for (auto &entry : entries)
    if (entry)
      operands.push_back(*entry);
  if (entries.size() == numGroups) {
    for (auto &entry : entries)
      sizes.push_back(entry ? 1 : 0);
  } else if (operands.size() == entries.size() && entries.size() > numGroups) {
    // More entries than groups: the last group is the variadic one, every
    // other a single operand (all_reduce_wait's bucket, then its gradients).
    sizes.append(numGroups - 1, 1);
    sizes.push_back(entries.size() - (numGroups - 1));
  } else {
    return parser.emitError(loc)
           << "expected " << numGroups << " entries in '" << keyword
           << "' (an operand, or _ for an absent optional one) but got "
           << entries.size();
  }
  if (types.size() != operands.size())
    return parser.emitError(loc) << "expected " << operands.size()
                                 << " types in '" << keyword << "' but got "
                                 << types.size();
  return parser.resolveOperands(operands, types, loc, result.operands);
}

ParseResult cairn::detail::parseKernelOp(OpAsmParser &parser,
                                         OperationState &result,
                                         unsigned numInputs,
                                         unsigned numOutputs,
                                         bool hasWorkspace, bool segmented) {
  SmallVector<int32_t> sizes;
  if (numInputs > 0 &&
      parseGroups(parser, result, "ins", numInputs, sizes))
    return failure();
  if (parseGroups(parser, result, "outs", numOutputs, sizes))
    return failure();
  if (hasWorkspace) {
    if (succeeded(parser.parseOptionalKeyword("workspace"))) {
      OpAsmParser::UnresolvedOperand operand;
      Type type;
      if (parser.parseLParen() || parser.parseOperand(operand) ||
          parser.parseColonType(type) || parser.parseRParen() ||
          parser.resolveOperand(operand, type, result.operands))
        return failure();
      sizes.push_back(1);
    } else {
      sizes.push_back(0);
    }
  }
  if (segmented)
    result.addAttribute(kSegmentSizes,
                        parser.getBuilder().getDenseI32ArrayAttr(sizes));
  return parser.parseOptionalAttrDict(result.attributes);
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

/// The name a diagnostic gives the buffer or view `value`.
static std::string describe(Value value) {
  if (!value)
    return "an absent operand";
  if (auto buffer = value.getDefiningOp<BufferOp>())
    return ("'" + buffer.getName() + "'").str();
  if (auto view = value.getDefiningOp<ViewOp>())
    return ("the view '" + view.getName() + "'").str();
  return "a value";
}

LogicalResult cairn::detail::verifyKernelOp(Operation *op) {
  auto kernel = cast<KernelOpInterface>(op);
  // ODS checks the operand counts of most kernels; where it records group
  // sizes it does not check that a required group is there.
  std::optional<Attribute> sizes = op->getInherentAttr(kSegmentSizes);
  if (auto segments =
          sizes ? dyn_cast_or_null<DenseI32ArrayAttr>(*sizes) : nullptr) {
    StringRef kinds = kernel.getKernelGroupKinds();
    llvm::ArrayRef<int32_t> groups = segments.asArrayRef();
    for (auto [index, kind] : llvm::enumerate(kinds)) {
      int32_t size = index < groups.size() ? groups[index] : 0;
      if ((kind == '1' && size != 1) || (kind == '?' && size > 1) ||
          (kind == '+' && size < 1))
        return op->emitOpError()
               << "expected operand group #" << index
               << (kind == '1'   ? " to be one buffer"
                   : kind == '?' ? " to be at most one buffer"
                                 : " to have a buffer or more")
               << " but got " << size;
    }
  }
  for (NamedAttribute attr : op->getDiscardableAttrs())
    if (!attr.getName().getValue().starts_with("cairn."))
      return op->emitOpError() << "has an attribute no kernel takes: '"
                               << attr.getName().getValue() << "'";
  for (Value value : op->getOperands())
    if (!value.getDefiningOp<BufferOp>() && !value.getDefiningOp<ViewOp>())
      return op->emitOpError()
             << "expected every operand to be a cairn.buffer or cairn.view";
  SmallVector<Value> outputs = kernel.getKernelOutputs();
  for (Value output : outputs) {
    if (!output)
      continue;
    if (!output.getDefiningOp<BufferOp>())
      return op->emitOpError()
             << "writes " << describe(output)
             << ": views are read, never written";
  }
  if (Value workspace = kernel.getKernelWorkspace()) {
    auto buffer = workspace.getDefiningOp<BufferOp>();
    if (!buffer || buffer.getKind() != BufferKind::workspace)
      return op->emitOpError() << "expected a workspace buffer as its "
                                  "workspace but got "
                               << describe(workspace);
    if (llvm::is_contained(outputs, workspace) ||
        llvm::is_contained(kernel.getKernelInputs(), workspace))
      return op->emitOpError() << "uses its workspace " << describe(workspace)
                               << " as an input or output too";
  }
  // A send is the one kernel that only reads: its result is on another
  // device.
  if (!isa<SendKernelOp>(op) &&
      llvm::none_of(outputs, [](Value v) { return bool(v); }))
    return op->emitOpError() << "writes nothing";
  if (isa<SendKernelOp, ReceiveKernelOp>(op)) {
    auto peer = op->getAttrOfType<IntegerAttr>("peer");
    auto tag = op->getAttrOfType<IntegerAttr>("tag");
    if (peer.getInt() < 0 || tag.getInt() < 0)
      return op->emitOpError() << "expected peer >= 0 and tag >= 0";
  }
  if (auto cast = dyn_cast<CastKernelOp>(op)) {
    auto in = llvm::cast<MemRefType>(cast.getInput().getType());
    auto out = llvm::cast<MemRefType>(cast.getResult().getType());
    if (in.getNumElements() != cast.getN() ||
        out.getNumElements() != cast.getN())
      return op->emitOpError() << "expected n = the elements of its input and "
                                  "result but got "
                               << cast.getN();
    if (!in.getElementType().isF32() && !out.getElementType().isF32())
      return op->emitOpError()
             << "converts to or from float32, not " << in.getElementType()
             << " to " << out.getElementType();
  }
  if (isElementwiseKernel(op)) {
    auto n = op->getAttrOfType<IntegerAttr>("n");
    auto result = cast<MemRefType>(outputs.front().getType());
    if (n && n.getInt() != result.getNumElements())
      return op->emitOpError() << "expected n = " << result.getNumElements()
                               << ", the elements of its result "
                               << describe(outputs.front()) << ", but got "
                               << n.getInt();
    for (Value input : kernel.getKernelInputs())
      if (input && cast<MemRefType>(input.getType()).getElementType() !=
                       result.getElementType())
        return op->emitOpError()
               << "reads " << describe(input) << " of type " << input.getType()
               << " but writes " << result;
  }
  return success();
}

/// An in-place update: output `i` must be the very buffer of input
/// `tied[i]` (both there or both absent).
static LogicalResult verifyTied(Operation *op, ArrayRef<unsigned> tied) {
  auto kernel = cast<KernelOpInterface>(op);
  SmallVector<Value> inputs = kernel.getKernelInputs();
  SmallVector<Value> outputs = kernel.getKernelOutputs();
  for (auto [index, pair] : llvm::enumerate(llvm::zip(outputs, tied))) {
    auto [output, input] = pair;
    if (output == inputs[input])
      continue;
    InFlightDiagnostic diag = op->emitOpError()
                              << "updates in place: expected output #" << index
                              << " to be its input " << describe(inputs[input]);
    if (output)
      diag << " but got " << describe(output);
    return diag;
  }
  return success();
}

LogicalResult ConcatKernelOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "expected at least one input";
  if (getStarts().size() != getInputs().size())
    return emitOpError() << "expected one start per input (" << getInputs().size()
                         << ") but got " << getStarts().size();
  return success();
}

LogicalResult ElementwiseChainKernelOp::verify() {
  unsigned numInputs = getInputs().size();
  ArrayAttr ops = getOps();
  if (ops.empty())
    return emitOpError() << "expected at least one op";
  if (getArgs().size() != 2 * ops.size())
    return emitOpError() << "expected two args per op (" << 2 * ops.size()
                         << ") but got " << getArgs().size();
  MemRefType result = getResult().getType();
  if (!isa<FloatType>(result.getElementType()))
    return emitOpError() << "expected a float result but got " << result;
  for (Value input : getInputs()) {
    auto type = cast<MemRefType>(input.getType());
    if (type.getElementType() != result.getElementType() ||
        (type.getNumElements() != getN() && type.getNumElements() != 1))
      return emitOpError() << "expected inputs of " << getN()
                           << " elements or one, of the result's element "
                              "type, but got "
                           << type;
  }
  int64_t dropouts = llvm::count_if(ops, [](Attribute kind) {
    return cast<StringAttr>(kind).getValue() == "dropout";
  });
  // Each array's entries, -1 where it is absent, as it must be without a
  // dropout.
  auto entries = [](auto values) {
    return values ? int64_t(values->size()) : int64_t(-1);
  };
  const int64_t expected = dropouts > 0 ? dropouts : -1;
  if (entries(getDropoutP()) != expected ||
      entries(getDropoutStreams()) != expected ||
      entries(getDropoutReplicaStrides()) != expected)
    return emitOpError() << "expected dropout_p, dropout_streams and "
                            "dropout_replica_strides with one entry per "
                            "dropout ("
                         << dropouts << "), or none without a dropout";
  if (std::optional<ArrayRef<double>> rates = getDropoutP())
    for (double p : *rates)
      if (!(p >= 0 && p <= 1))
        return emitOpError()
               << "expected dropout rates in [0, 1] but got " << p;
  for (auto [index, attr] : llvm::enumerate(ops)) {
    StringRef kind = cast<StringAttr>(attr).getValue();
    std::optional<unsigned> arity = getChainOpArity(kind);
    if (!arity)
      return emitOpError() << "unknown op '" << kind << "' in the chain";
    auto [a, b] = getOpArgs(index);
    int64_t registers = numInputs + index;
    auto valid = [&](int64_t r) { return r >= 0 && r < registers; };
    if (!valid(a) || (*arity == 2 && !valid(b)) || (*arity == 1 && b != -1))
      return emitOpError() << "op " << index << " ('" << kind
                           << "') reads registers " << a << ", " << b
                           << " but may read "
                           << (*arity == 2 ? "two" : "one (then -1)")
                           << " of registers 0.." << registers - 1;
  }
  return success();
}

std::optional<unsigned> cairn::getChainOpArity(StringRef kind) {
  return llvm::StringSwitch<std::optional<unsigned>>(kind)
      .Cases({"add", "sub", "mul", "div"}, 2)
      .Cases({"relu", "sigmoid", "tanh", "gelu_exact", "gelu_tanh", "silu",
              "hardswish", "dropout"},
             1)
      .Cases({"relu_grad", "sigmoid_grad", "tanh_grad", "gelu_exact_grad",
              "gelu_tanh_grad", "silu_grad", "hardswish_grad"},
             2)
      .Default(std::nullopt);
}

int64_t cairn::getChainWorkPerElement(ArrayAttr ops) {
  int64_t work = 1;
  for (Attribute attr : ops) {
    StringRef kind = cast<StringAttr>(attr).getValue();
    // A dropout's Philox words cost what the dropout kernel says they do.
    if (kind == "dropout")
      work += 8;
    else if (!llvm::is_contained({"add", "sub", "mul", "div", "relu",
                                  "relu_grad", "hardswish", "hardswish_grad"},
                                 kind))
      work += 16;
  }
  return work;
}

bool cairn::haveSameUpdateSettings(Operation *a, Operation *b) {
  if (!isa<SgdUpdateKernelOp, AdamUpdateKernelOp>(a) ||
      a->getName() != b->getName() ||
      cast<MemRefType>(a->getOperand(0).getType()).getElementType() !=
          cast<MemRefType>(b->getOperand(0).getType()).getElementType())
    return false;
  if (auto sgdA = dyn_cast<SgdUpdateKernelOp>(a)) {
    auto sgdB = cast<SgdUpdateKernelOp>(b);
    // Without momentum there is no momentum buffer.
    return sgdA.getLr() == sgdB.getLr() &&
           sgdA.getMomentum() == sgdB.getMomentum() &&
           sgdA.getDampening() == sgdB.getDampening() &&
           sgdA.getWeightDecay() == sgdB.getWeightDecay() &&
           sgdA.getNesterov() == sgdB.getNesterov() &&
           bool(sgdA.getMomentumBuffer()) == bool(sgdB.getMomentumBuffer()) &&
           sgdA.getFoundInf() == sgdB.getFoundInf();
  }
  auto adamA = cast<AdamUpdateKernelOp>(a), adamB = cast<AdamUpdateKernelOp>(b);
  return adamA.getLr() == adamB.getLr() &&
         adamA.getBeta1() == adamB.getBeta1() &&
         adamA.getBeta2() == adamB.getBeta2() &&
         adamA.getEps() == adamB.getEps() &&
         adamA.getWeightDecay() == adamB.getWeightDecay() &&
         adamA.isAdamW() == adamB.isAdamW() &&
         adamA.getFoundInf() == adamB.getFoundInf();
}

SmallVector<Operation *> cairn::getKernelsAfter(Operation *op) {
  SmallVector<Operation *> kernels;
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
    if (isa<KernelOpInterface>(next))
      kernels.push_back(next);
  return kernels;
}

LogicalResult SgdUpdateKernelOp::verify() { return verifyTied(*this, {0, 2}); }

LogicalResult AdamUpdateKernelOp::verify() {
  return verifyTied(*this, {0, 2, 3});
}

LogicalResult SkipSelectKernelOp::verify() { return verifyTied(*this, {0}); }

LogicalResult ClipCoefficientKernelOp::verify() {
  std::optional<ArrayRef<int64_t>> chunks = getDeviceChunks();
  if (!chunks)
    return success();
  if (chunks->size() != getGrads().size() + 1)
    return emitOpError()
           << "expected device_chunks of " << getGrads().size() + 1
           << " entries (one per gradient, then the count) but got "
           << chunks->size();
  const int64_t count = chunks->back();
  auto workspace = getWorkspace();
  if (!workspace ||
      cast<MemRefType>(workspace.getType()).getNumElements() < count)
    return emitOpError() << "expected a workspace of at least " << count
                         << " partials (device_chunks' count)";
  for (auto [i, first] : llvm::enumerate(chunks->drop_back())) {
    const int64_t n =
        cast<MemRefType>(getGrads()[i].getType()).getNumElements();
    const int64_t own = kernels::clipCoefficientWorkspaceElements(&n, 1);
    if (first < 0 || first + own > count)
      return emitOpError() << "device_chunks entry " << i << " puts " << own
                           << " partials at " << first << ", outside the "
                           << count << " partials";
  }
  return success();
}

/// The gradients of a bucket are float32; the bucket's buffer is the sum's
/// workspace, a run of floats (its size depends on the replicas:
/// runtime/SumChunks.h).
static LogicalResult verifyBucket(Operation *op, Value bucket,
                                  ValueRange grads) {
  for (Value grad : grads)
    if (!cast<MemRefType>(grad.getType()).getElementType().isF32())
      return op->emitOpError()
             << "sums float32 gradients, not " << describe(grad);
  auto type = cast<MemRefType>(bucket.getType());
  if (!type.getElementType().isF32() || type.getRank() != 1)
    return op->emitOpError()
           << "expected a 1-D float32 workspace as its bucket but got "
           << describe(bucket);
  return success();
}

LogicalResult AllReduceStartKernelOp::verify() {
  if (getGrads().empty())
    return emitOpError() << "expected at least one gradient";
  return verifyBucket(*this, getBucket(), getGrads());
}

LogicalResult AllReduceWaitKernelOp::verify() {
  if (getGrads().empty() || getGrads().size() != getNewGrads().size())
    return emitOpError() << "expected one output per gradient, in place";
  SmallVector<unsigned> tied;
  for (unsigned i = 0; i < getGrads().size(); ++i)
    tied.push_back(i + 1);
  if (failed(verifyTied(*this, tied)))
    return failure();
  return verifyBucket(*this, getBucket(), getGrads());
}

/// A batch norm kernel synchronised over the replicas sums its statistics
/// in its f64 workspace (runtime/kernels/Normalization.h); one of a single
/// replica has none.
static LogicalResult verifyReplicaSums(Operation *op, bool sync, Value workspace,
                                       int64_t c, bool backward) {
  if (!sync) {
    if (workspace)
      return op->emitOpError() << "has a workspace but is not sync_replicas";
    return success();
  }
  const int64_t need = kernels::batchNormReplicaSumElements(c, backward);
  auto type = workspace ? cast<MemRefType>(workspace.getType()) : MemRefType();
  if (!type || !type.getElementType().isF64() || type.getNumElements() < need)
    return op->emitOpError()
           << "is sync_replicas: expected an f64 workspace of at least "
           << need << " elements for its sums over the replicas but got "
           << describe(workspace);
  return success();
}

LogicalResult BatchNormTrainingKernelOp::verify() {
  return verifyReplicaSums(*this, getSyncReplicas(), getWorkspace(), getC(),
                           /*backward=*/false);
}

LogicalResult BatchNormGradKernelOp::verify() {
  return verifyReplicaSums(*this, getSyncReplicas(), getWorkspace(), getC(),
                           /*backward=*/true);
}

LogicalResult BatchNormRunningUpdateKernelOp::verify() {
  if (failed(verifyReplicaSums(*this, getSyncReplicas(), getWorkspace(),
                               getC(), /*backward=*/false)))
    return failure();
  return verifyTied(*this, {1, 2, 3});
}

#define GET_OP_CLASSES
#include "ir/CairnKernelOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Signatures by name
//===----------------------------------------------------------------------===//

template <typename... Ops>
static void addSignatures(llvm::StringMap<KernelSignature> &signatures) {
  (signatures.try_emplace(Ops::getOperationName(),
                          KernelSignature{Ops::kNumInputs, Ops::kNumOutputs,
                                          Ops::kHasWorkspace,
                                          Ops::kSegmented}),
   ...);
}

std::optional<KernelSignature> cairn::getKernelSignature(StringRef opName) {
  static const llvm::StringMap<KernelSignature> signatures = [] {
    llvm::StringMap<KernelSignature> map;
    addSignatures<
#define GET_OP_LIST
#include "ir/CairnKernelOps.cpp.inc"
        >(map);
    return map;
  }();
  auto it = signatures.find(opName);
  if (it == signatures.end())
    return std::nullopt;
  return it->second;
}
