//===- CairnKernelOps.cpp - Kernels of the planned step -------------------===//
//
// The printed form every kernel shares, the checks every kernel must pass,
// and the in-place updates' own.
//
//===----------------------------------------------------------------------===//

#include "ir/CairnKernelOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringMap.h"

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
/// group (`_` for an empty one), or any number of operands for a single
/// group. Appends the group sizes to `sizes`.
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
  } else if (numGroups == 1 && operands.size() == entries.size()) {
    sizes.push_back(entries.size());
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
  if (auto buffer = value.getDefiningOp<BufferOp>())
    return ("'" + buffer.getName() + "'").str();
  if (auto view = value.getDefiningOp<ViewOp>())
    return ("the view '" + view.getName() + "'").str();
  return "a value";
}

LogicalResult cairn::detail::verifyKernelOp(Operation *op) {
  auto kernel = cast<KernelOpInterface>(op);
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
  if (llvm::none_of(outputs, [](Value v) { return bool(v); }))
    return op->emitOpError() << "writes nothing";
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
  for (auto [output, input] : llvm::zip(outputs, tied))
    if (output != inputs[input])
      return op->emitOpError()
             << "updates in place: expected output " << describe(output)
             << " to be its input " << describe(inputs[input]);
  return success();
}

LogicalResult SgdUpdateKernelOp::verify() { return verifyTied(*this, {0, 2}); }

LogicalResult AdamUpdateKernelOp::verify() {
  return verifyTied(*this, {0, 2, 3});
}

LogicalResult BatchNormRunningUpdateKernelOp::verify() {
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
