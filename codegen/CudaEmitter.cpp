//===- CudaEmitter.cpp - Kernel lists as CUDA C++ -------------------------===//
//
// The printed code is host code: one pointer into the device arena per
// buffer a step uses, then one commented call per kernel into
// cairn::cuda (runtime/cuda/Kernels.h, Library.h), each launching on the
// Context's stream. Nothing in it allocates or synchronises, so the
// executor can capture a step as a CUDA graph; the only device data it
// defines are the tables of Constant kernels, as __device__ arrays.
//
// Fusion is decided before the plan (passes/FuseElementwise.cpp): an
// element-wise chain is one cairn.kernel.elementwise_chain, printed as one
// elementwiseChain launch, and a linear with `relu` gets cuBLASLt's relu
// epilogue; a run of updates cairn-group-updates marked
// (`cairn.update_group`) is one multi-tensor launch. The emitter decides
// nothing: it prints what the IR says.
//
//===----------------------------------------------------------------------===//

#include "codegen/CudaEmitter.h"

#include "codegen/EmitterSupport.h"
#include "codegen/KernelCalls.h"

#include "ir/CairnKernelOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <set>

using namespace mlir;
using namespace cairn;
using namespace cairn::codegen;

namespace {

/// How this emitter spells runtime calls (emitTableKernel).
const CallStyle kCallStyle = {"cairn::cuda::", "cx, ",
                               "cairn::cuda::sumOverRanks(cx)",
                               "cairn::cuda::sumOverRanks(cx)"};

/// The local names the CUDA code declares besides those of both emitters:
/// a tensor named like one gets a suffix.
const llvm::StringSet<> &getCudaReservedNames() {
  static const llvm::StringSet<> names = {
      "cx",       "kChain",     "kInputs",      "kUpdates",
      "kAddress", "kConstants", "deviceAddress"};
  return names;
}

bool isUpdate(Operation *op) {
  return isa<SgdUpdateKernelOp, AdamUpdateKernelOp>(op);
}

/// cairn::cuda::ChainOpKind of an op of cairn.kernel.elementwise_chain: the
/// op's name in CamelCase ("relu_grad": ReluGrad).
std::string getChainOpKind(llvm::StringRef op) {
  return llvm::convertToCamelFromSnakeCase(op, /*capitalizeFirst=*/true);
}

/// A device of a split model, or a replica: one process of several, which
/// the executor links by NCCL.
bool runsSeveralProcesses(const KernelGraph &program) {
  return program.devices > 1 || program.replicas > 1;
}

class CudaEmitter {
public:
  CudaEmitter(const ProgramGraph &graph, llvm::StringRef modelSource,
              llvm::raw_ostream &os)
      : graph(graph), program(graph.graph), os(os),
        sourceLines(splitSourceLines(modelSource)),
        identifiers(nameIdentifiers(program, getCudaReservedNames())),
        specIndex(getSpecIndices(program)) {}

  /// Prints the device's constant tables, its steps and its spec.
  void emitDevice();
  bool hasConstants() const { return !constants.empty(); }
  size_t getChainInputs() const { return chainInputs; }
  size_t getChainOps() const { return chainOps; }

private:
  /// Prints one step function into `out`.
  void emitStep(const StepKernels &step, llvm::StringRef function,
                llvm::StringRef summary, llvm::raw_ostream &out);

  //===--- Calls
  //-----------------------------------------------------------===//
  void emitKernel(Operation *op);
  void emitChain(ElementwiseChainKernelOp op);
  void emitUpdates(const StepKernels &step, int first, int count);
  void emitBinary(Operation *op, Value lhs, Value rhs, Value result,
                  llvm::ArrayRef<int64_t> lhsStrides,
                  llvm::ArrayRef<int64_t> rhsStrides);
  void emitMatmul(MatmulKernelOp op);
  void emitConstant(ConstantKernelOp op);

  /// The pointer to `value`'s buffer (declared at the step's top), or
  /// nullptr for a null Value.
  std::string ptr(Value value) {
    if (!value)
      return "nullptr";
    int id = graph.ids.lookup(value);
    used.insert(id);
    return identifiers[id];
  }
  /// `cairn::cuda::name<float>` for the element type of `value`.
  std::string call(Value value, llvm::StringRef name) const {
    return ("cairn::cuda::" + name + "<" + getElementCType(value) + ">").str();
  }
  /// A kernel that also takes half storage (the activations, arithmetic and
  /// dropout of Kernels.h): typed by `value`'s storage tag, Convert.h's F16
  /// or Bf16 for a half tensor (both uint16_t in C).
  std::string storedCall(Value value, llvm::StringRef name) const {
    return ("cairn::cuda::" + name + "<" + getTemplateType(value) + ">").str();
  }
  /// gemm, batchedGemm or linearForward writing `result`: on half
  /// operands, its tensor-core twin (halfGemm<CastType::F16>, ...).
  std::string gemmCall(Value result, llvm::StringRef name) const {
    if (!isHalfBuffer(result))
      return call(result, name);
    return "cairn::cuda::" + getHalfTwin(name) +
           "<cairn::kernels::CastType::" + getCastTypeName(result) + ">";
  }
  /// "halfGemm" for "gemm": the runtime's name of a wrapper's half twin.
  static std::string getHalfTwin(llvm::StringRef name) {
    std::string twin = ("half" + name).str();
    twin[4] = llvm::toUpper(twin[4]);
    return twin;
  }
  /// `workspace, bytes` of a kernel's scratch, `nullptr, 0` without.
  std::string workspace(Value scratch);
  /// The next call-site id of a library call (Context::site): unique in
  /// the program, numbered across both steps.
  int site() { return nextSite++; }
  llvm::raw_ostream &line() { return body->indent(indent); }

  const ProgramGraph &graph;
  const KernelGraph &program;
  llvm::raw_ostream &os;
  llvm::SmallVector<llvm::StringRef> sourceLines;
  std::vector<std::string> identifiers;
  std::vector<int> specIndex;
  /// The step being printed goes here first; its pointer declarations,
  /// which are those `ptr` handed out, are printed above it.
  llvm::raw_ostream *body = nullptr;
  std::set<int> used;
  unsigned indent = 0;
  int nextSite = 0;
  /// The file-scope __device__ tables of the Constant kernels.
  std::string constants;
  int nextConstant = 0;
  /// The largest fused chain printed, checked against the runtime's limits.
  size_t chainInputs = 0, chainOps = 0;
};

} // namespace

//===----------------------------------------------------------------------===//
// The file
//===----------------------------------------------------------------------===//

void CudaEmitter::emitDevice() {
  // The steps first: they name the constant tables printed above them.
  std::string suffix = getDeviceSuffix(program);
  std::string steps;
  llvm::raw_string_ostream stepsOs(steps);
  emitStep(program.trainStep, "trainStep" + suffix,
           "One training step: forward, loss, backward, optimizer update.",
           stepsOs);
  emitStep(program.forward, "forward" + suffix,
           "Inference: reads the image, the params and buffers; writes "
           "\"output\".",
           stepsOs);
  if (!program.evalLoss.kernels.empty())
    emitStep(program.evalLoss, "evalLoss" + suffix,
             "The loss in eval mode, for the test loss: writes "
             "\"eval_loss\".",
             stepsOs);

  if (program.devices > 1)
    os << "//===--- Device " << program.device << " of " << program.devices
       << ": an arena of " << program.arenaBytes << " bytes\n\n";
  if (!constants.empty())
    os << "/// The values of the model's constant tensors, copied into the "
          "arena by the\n/// kernels that define them.\n"
       << "namespace kConstants {\n"
       << constants << "} // namespace kConstants\n\n";
  os << steps;
  // Several processes: the executor opens NCCL (DeviceCollectives.h).
  emitProgramSpec(os, program,
                  runsSeveralProcesses(program)
                      ? "&cairn::cuda::kCudaCollectiveBackend"
                      : "&cairn::cuda::kCudaBackend");
}

namespace {

/// The file of one program or of a split model's devices: the header, each
/// device's constants, steps and spec, and main.
void emitFile(llvm::ArrayRef<const ProgramGraph *> devices,
              llvm::StringRef modelSource, llvm::raw_ostream &os) {
  std::string bodies;
  llvm::raw_string_ostream bodiesOs(bodies);
  bool constants = false;
  size_t chainInputs = 0, chainOps = 0;
  for (const ProgramGraph *device : devices) {
    CudaEmitter emitter(*device, modelSource, bodiesOs);
    emitter.emitDevice();
    constants |= emitter.hasConstants();
    chainInputs = std::max(chainInputs, emitter.getChainInputs());
    chainOps = std::max(chainOps, emitter.getChainOps());
  }

  const KernelGraph &program = devices.front()->graph;
  const bool processes = runsSeveralProcesses(program);
  os << "// Generated by cairn " << CAIRN_VERSION << " from "
     << program.sourceFile << ": model " << program.model << ", batch "
     << program.batch << ".\n"
     << "// The training step and the forward pass"
     << (program.evalLoss.kernels.empty() ? "" : " (and the eval-mode loss)");
  if (devices.size() > 1)
    os << " on " << devices.size()
       << " GPUs, each as CUDA kernel and library\n// calls on its own "
          "device arena, the values that cross sent and received by NCCL.\n\n";
  else
    os << " as CUDA kernel and library calls on one\n// device arena of "
       << program.arenaBytes
       << " bytes (the executor allocates it; this code allocates "
          "nothing).\n\n";
  if (processes)
    for (const char *header : {"MpiTransport.h", "cuda/DeviceCollectives.h"})
      os << "#include \"runtime/" << header << "\"\n";
  for (const char *header :
       {"Program.h", "cuda/Check.h", "cuda/Context.h", "cuda/CudaBackend.h",
        "cuda/Kernels.h", "cuda/Library.h"})
    os << "#include \"runtime/" << header << "\"\n";
  os << "\n#include <cstddef>\n#include <cstdint>\n#include <limits>\n\n";
  if (chainOps > 0)
    os << "static_assert(cairn::cuda::kMaxChainInputs >= " << chainInputs
       << " && cairn::cuda::kMaxChainOps >= " << chainOps
       << ",\n              \"the fused chains below fit the runtime's "
          "Chain\");\n\n";
  if (constants)
    os << "/// The device address of a constant table. Called on a step's "
          "first run, which\n/// the executor runs eagerly: "
          "cudaGetSymbolAddress may not run while a graph is\n/// being "
          "captured.\n"
       << "template <typename T, size_t N>\n"
       << "static const void *deviceAddress(const T (&table)[N]) {\n"
       << "  void *address = nullptr;\n"
       << "  CAIRN_CUDA_CHECK(cudaGetSymbolAddress(&address, table));\n"
       << "  return address;\n"
       << "}\n\n";
  os << bodies;
  emitMain(os, devices.size(), program.replicas);
}

} // namespace

void CudaEmitter::emitStep(const StepKernels &step, llvm::StringRef function,
                           llvm::StringRef summary, llvm::raw_ostream &out) {
  std::string text;
  llvm::raw_string_ostream textOs(text);
  body = &textOs;
  used.clear();
  indent = 2;

  std::vector<AfterKernel> after = collectAfterKernels(program, step);
  // The union of the lists of kernels [first, first + count), in buffer
  // order.
  auto emitAfter = [&](int first, int count) {
    AfterKernel merged;
    for (int index = first; index < first + count; ++index) {
      llvm::append_range(merged.observed, after[index].observed);
      llvm::append_range(merged.dying, after[index].dying);
    }
    llvm::sort(merged.observed);
    llvm::sort(merged.dying);
    emitAfterKernel(*body, indent, program, merged, specIndex, identifiers,
                    "cairn::cuda::poisonBytes(cx, ");
  };

  const std::vector<Kernel> &kernels = step.kernels;
  for (int index = 0, e = kernels.size(); index < e;) {
    const Kernel &k = kernels[index];
    *body << "\n";
    Operation *op = graph.getKernelOp(step.step, index);
    // A run of updates cairn-group-updates marked: one launch.
    auto group =
        op->getAttrOfType<IntegerAttr>(CairnDialect::kUpdateGroupAttrName);
    int span = group ? group.getInt() : 1;
    if (isUpdate(op)) {
      emitUpdates(step, index, span);
    } else {
      line() << "// " << describeKernel(k, program, sourceLines) << "\n";
      emitKernel(op);
    }
    emitAfter(index, span);
    index += span;
  }

  out << "/// " << summary << "\n"
      << "static void " << function
      << "(unsigned char *arena, const cairn::runtime::StepContext &ctx) {\n"
      << "  auto &cx = *static_cast<cairn::cuda::Context *>(ctx.device);\n";
  // The tensors the calls use, in the order the lowering made them.
  for (int id : used)
    emitBufferPointer(out, 2, program, id, identifiers[id]);
  out << text << "}\n\n";
  body = nullptr;
  indent = 0;
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

std::string CudaEmitter::workspace(Value scratch) {
  if (!scratch)
    return "nullptr, 0";
  return ptr(scratch) + ", " +
         std::to_string(
             program.buffers[graph.ids.lookup(scratch)].getUsableBytes());
}

void CudaEmitter::emitChain(ElementwiseChainKernelOp op) {
  int64_t n = op.getN();
  Value result = op.getResult();
  size_t numInputs = op.getInputs().size(), numOps = op.getOps().size();
  if (numInputs > kMaxChainInputs || numOps > kMaxChainOps)
    llvm::report_fatal_error("internal error: an element-wise chain exceeds "
                             "the CUDA runtime's limits");
  // CUDA's chains draw no masks (LoweringTarget::chainDropout).
  if (op.getDropoutP())
    reportMissingBody(op, "CUDA (chain op 'dropout')");
  chainInputs = std::max(chainInputs, numInputs);
  chainOps = std::max(chainOps, numOps);
  line() << "{\n";
  line() << "  cairn::cuda::Chain kChain;\n";
  line() << "  kChain.numInputs = " << numInputs << ";\n";
  for (auto [i, input] : llvm::enumerate(op.getInputs()))
    if (getNumElements(input) != n)
      line() << "  kChain.scalarInput[" << i << "] = true;\n";
  line() << "  kChain.numOps = " << numOps << ";\n";
  for (size_t i = 0; i < numOps; ++i) {
    auto [a, b] = op.getOpArgs(i);
    if (b < 0)
      b = a;
    line() << "  kChain.ops[" << i << "] = {cairn::cuda::ChainOpKind::"
           << getChainOpKind(cast<StringAttr>(op.getOps()[i]).getValue())
           << ", " << numInputs + i << ", " << a << ", " << b << "};\n";
  }
  line() << "  kChain.result = " << numInputs + numOps - 1 << ";\n";
  const char *type = getElementCType(result);
  line() << "  const " << type << " *const kInputs[] = {"
         << formatList(op.getInputs(), [&](Value v) { return ptr(v); })
         << "};\n";
  line() << "  cairn::cuda::elementwiseChain<" << type << ">(cx, kChain, " << n
         << ", kInputs, " << ptr(result) << ");\n";
  line() << "}\n";
}

void CudaEmitter::emitUpdates(const StepKernels &step, int first, int count) {
  Operation *op = graph.getKernelOp(step.step, first);
  auto adam = dyn_cast<AdamUpdateKernelOp>(op);
  if (count > 1)
    line() << "// " << count
           << " optimizer updates with the same settings in one launch:\n";
  for (int m = first; m < first + count; ++m)
    line() << "// " << (count > 1 ? "  " : "")
           << describeKernel(step.kernels[m], program, sourceLines) << "\n";
  line() << "{\n";
  // param, grad, state0 (momentum buffer or exp_avg), state1 (exp_avg_sq).
  line() << "  const cairn::cuda::UpdateTensor kUpdates[] = {\n";
  for (int m = first; m < first + count; ++m) {
    Operation *update = graph.getKernelOp(step.step, m);
    int64_t n = cast<IntegerAttr>(update->getAttr("n")).getInt();
    if (auto a = dyn_cast<AdamUpdateKernelOp>(update))
      line() << "      {" << ptr(a.getParam()) << ", " << ptr(a.getGrad())
             << ", " << ptr(a.getExpAvg()) << ", " << ptr(a.getExpAvgSq())
             << ", " << n << "},\n";
    else if (auto s = dyn_cast<SgdUpdateKernelOp>(update))
      line() << "      {" << ptr(s.getParam()) << ", " << ptr(s.getGrad())
             << ", " << ptr(s.getMomentumBuffer()) << ", nullptr, " << n
             << "},\n";
  }
  line() << "  };\n";
  Value param = op->getOperand(0);
  // The group shares one found-inf flag (haveSameUpdateSettings): with loss
  // scaling, a skipped step writes nothing.
  if (adam)
    // Adam's bias correction counts steps from 1: cx.scalars->step + 1.
    line() << "  " << call(param, "adamUpdate") << "(cx, " << count
           << ", kUpdates, " << formatDouble(adam.getLr()) << ", "
           << formatDouble(adam.getBeta1()) << ", "
           << formatDouble(adam.getBeta2()) << ", "
           << formatDouble(adam.getEps()) << ", "
           << formatDouble(adam.getWeightDecay()) << ", "
           << formatBool(adam.isAdamW())
           << (adam.getFoundInf() ? ", " + ptr(adam.getFoundInf()) : "")
           << ");\n";
  else {
    auto sgd = cast<SgdUpdateKernelOp>(op);
    // Momentum starts from the gradient on the run's first step.
    line() << "  " << call(param, "sgdUpdate") << "(cx, " << count
           << ", kUpdates, " << formatDouble(sgd.getLr()) << ", "
           << formatDouble(sgd.getMomentum()) << ", "
           << formatDouble(sgd.getDampening()) << ", "
           << formatDouble(sgd.getWeightDecay()) << ", "
           << formatBool(sgd.getNesterov())
           << (sgd.getFoundInf() ? ", " + ptr(sgd.getFoundInf()) : "")
           << ");\n";
  }
  line() << "}\n";
}

void CudaEmitter::emitBinary(Operation *op, Value lhs, Value rhs,
                             Value result, llvm::ArrayRef<int64_t> lhsStrides,
                             llvm::ArrayRef<int64_t> rhsStrides) {
  int64_t n = getNumElements(result);
  int64_t lhsN = getNumElements(lhs), rhsN = getNumElements(rhs);
  std::string kind =
      std::string("cairn::cuda::BinaryOp::") + getBinaryOpName(op);
  if (lhsN == n && rhsN == n) {
    line() << storedCall(result, "binarySameShape") << "(cx, " << kind << ", "
           << n << ", " << ptr(lhs) << ", " << ptr(rhs) << ", " << ptr(result)
           << ");\n";
    return;
  }
  if ((lhsN == n && rhsN == 1) || (lhsN == 1 && rhsN == n)) {
    bool scalarLhs = lhsN != n;
    line() << storedCall(result, "binaryScalar") << "(cx, " << kind << ", " << n
           << ", " << formatBool(scalarLhs) << ", " << ptr(lhs) << ", "
           << ptr(rhs) << ", " << ptr(result) << ");\n";
    return;
  }
  llvm::ArrayRef<int64_t> shape = cast<MemRefType>(result.getType()).getShape();
  line() << "{\n";
  line() << "  static const int64_t kShape[] = {" << formatInts(shape)
         << "};\n";
  line() << "  static const int64_t kLhsStrides[] = {" << formatInts(lhsStrides)
         << "};\n";
  line() << "  static const int64_t kRhsStrides[] = {" << formatInts(rhsStrides)
         << "};\n";
  line() << "  " << storedCall(result, "binaryBroadcast") << "(cx, " << kind
         << ", " << shape.size() << ", kShape, " << ptr(lhs)
         << ", kLhsStrides, " << ptr(rhs) << ", kRhsStrides, " << ptr(result)
         << ");\n";
  line() << "}\n";
}

void CudaEmitter::emitMatmul(MatmulKernelOp op) {
  Value result = op.getResult();
  int64_t batch = op.getBatch(), m = op.getM(), n = op.getN();
  std::string head = formatBool(op.getTransposeLhs()) + ", " +
                     formatBool(op.getTransposeRhs()) + ", " + formatInt(m) +
                     ", " + formatInt(n) + ", " + formatInt(op.getK()) + ", " +
                     formatComputedRealOf(result, 1) + ", ";
  std::string lda = formatInt(op.getLda()), ldb = formatInt(op.getLdb());
  std::string scratch = workspace(op.getWorkspace());
  int id = site();
  if (op.getLhsStride() && op.getRhsStride()) {
    if (batch == 1) {
      line() << gemmCall(result, "gemm") << "(cx, " << id << ", " << head
             << ptr(op.getLhs()) << ", " << lda << ", " << ptr(op.getRhs())
             << ", " << ldb << ", " << formatComputedRealOf(result, 0) << ", "
             << ptr(result) << ", " << n << ", " << scratch << ");\n";
      return;
    }
    line() << gemmCall(result, "batchedGemm") << "(cx, " << id << ", " << batch
           << ", " << head << ptr(op.getLhs()) << ", " << lda << ", "
           << *op.getLhsStride() << ", " << ptr(op.getRhs()) << ", " << ldb
           << ", " << *op.getRhsStride() << ", "
           << formatComputedRealOf(result, 0) << ", " << ptr(result) << ", "
           << n << ", " << m * n << ", " << scratch << ");\n";
    return;
  }
  // A partial broadcast of the batch dimensions: one GEMM per matrix, all
  // of the same shape, so one call site (one cuBLASLt plan) serves them.
  auto operand = [&](std::optional<llvm::ArrayRef<int64_t>> offsets,
                     std::optional<int64_t> stride, llvm::StringRef table,
                     const std::string &pointer) {
    if (offsets) {
      line() << "  static const int64_t " << table << "[] = {"
             << formatInts(*offsets) << "};\n";
      return pointer + " + " + table.str() + "[b]";
    }
    return pointer + " + b * " + formatInt(*stride);
  };
  line() << "{\n";
  std::string a = operand(op.getLhsOffsets(), op.getLhsStride(), "kLhsOffsets",
                          ptr(op.getLhs()));
  std::string b = operand(op.getRhsOffsets(), op.getRhsStride(), "kRhsOffsets",
                          ptr(op.getRhs()));
  line() << "  for (int64_t b = 0; b < " << batch << "; ++b)\n";
  line() << "    " << gemmCall(result, "gemm") << "(cx, " << id << ", " << head
         << a << ", " << lda << ", " << b << ", " << ldb << ", "
         << formatComputedRealOf(result, 0) << ", " << ptr(result) << " + b * "
         << m * n << ", " << n << ", " << scratch << ");\n";
  line() << "}\n";
}

void CudaEmitter::emitConstant(ConstantKernelOp op) {
  Value out = op.getResult();
  const Buffer &b = program.buffers[graph.ids.lookup(out)];
  std::string values;
  if (auto reals = dyn_cast<DenseF64ArrayAttr>(op.getValues()))
    values = formatList(reals.asArrayRef(),
                        [&](double v) { return formatRealOf(out, v); });
  else
    values = formatInts(cast<DenseI64ArrayAttr>(op.getValues()).asArrayRef());
  // A split model's devices share the file: device 1's tables are d1c0, ...
  std::string name = (program.devices > 1 ? "d" + std::to_string(program.device)
                                          : std::string()) +
                     "c" + std::to_string(nextConstant++);
  std::string table = "kConstants::" + name;
  constants += "static __device__ const " + std::string(getElementCType(out)) +
               " " + name + "[] = {" + values +
               "}; // " + b.name + "\n";
  line() << "{\n";
  // Looked up on the step's first call, which is never captured.
  line() << "  static const void *const kAddress = deviceAddress(" << table
         << ");\n";
  line() << "  cairn::cuda::copyBytes(cx, sizeof(" << table << "), kAddress, "
         << ptr(out) << ");\n";
  line() << "}\n";
}

void CudaEmitter::emitKernel(Operation *op) {
  auto pointer = [&](Value value) { return ptr(value); };
  // The kinds both targets call alike (KernelCalls.h).
  if (std::optional<KernelCall> kernelCall = describeKernelCall(op, pointer)) {
    // A half convolution calls its tensor-core twin, typed by its half type
    // (both are uint16_t in C).
    Value result = cast<KernelOpInterface>(op).getKernelOutputs().front();
    if (isa<Conv2dKernelOp, Conv2dGradInputKernelOp>(op) &&
        isHalfBuffer(result)) {
      kernelCall->name = getHalfTwin(kernelCall->name);
      kernelCall->types = {std::string("cairn::kernels::CastType::") +
                           getCastTypeName(result)};
    }
    printKernelCall(*body, indent, *kernelCall, kCallStyle,
                    [&] { return std::to_string(site()); },
                    [&](Value scratch) { return workspace(scratch); });
    return;
  }
  if (isTableKernel(op) && !isa<SliceGradKernelOp>(op))
    return emitTableKernel(*body, indent, op, pointer, kCallStyle);

  bool done =
      llvm::TypeSwitch<Operation *, bool>(op)
          .Case([&](FillKernelOp k) {
            Value out = k.getResult();
            Attribute value = k.getValue();
            std::string text =
                isa<FloatAttr>(value)
                    ? formatRealOf(out,
                                   cast<FloatAttr>(value).getValueAsDouble())
                    : formatInt(cast<IntegerAttr>(value).getInt());
            line() << call(out, "fill") << "(cx, " << k.getN() << ", " << text
                   << ", " << ptr(out) << ");\n";
            return true;
          })
          .Case([&](ConstantKernelOp k) {
            emitConstant(k);
            return true;
          })
          .Case([&](CopyKernelOp k) {
            line() << "cairn::cuda::copyBytes(cx, "
                   << getNumElements(k.getResult()) << " * "
                   << formatSizeOf(k.getResult()) << ", " << ptr(k.getInput())
                   << ", " << ptr(k.getResult()) << ");\n";
            return true;
          })
          .Case<AddKernelOp, SubKernelOp, MulKernelOp, DivKernelOp>(
              [&](auto k) {
                emitBinary(k, k.getLhs(), k.getRhs(), k.getResult(),
                           k.getLhsStrides(), k.getRhsStrides());
                return true;
              })
          .Case([&](ReluKernelOp k) {
            line() << storedCall(k.getResult(), "activationForward")
                   << "(cx, cairn::cuda::Activation::Relu, " << k.getN() << ", "
                   << ptr(k.getInput()) << ", " << ptr(k.getResult()) << ");\n";
            return true;
          })
          .Case([&](ReluGradKernelOp k) {
            // (dy, saved): relu's result.
            line() << storedCall(k.getResult(), "activationBackward")
                   << "(cx, cairn::cuda::Activation::Relu, " << k.getN() << ", "
                   << ptr(k.getDy()) << ", " << ptr(k.getOutput()) << ", "
                   << ptr(k.getResult()) << ");\n";
            return true;
          })
          .Case([&](MatmulKernelOp k) {
            emitMatmul(k);
            return true;
          })
          .Case([&](ElementwiseChainKernelOp k) {
            emitChain(k);
            return true;
          })
          .Case([&](LinearKernelOp k) {
            // y = x W^T + bias in one cuBLASLt call, the bias (and a relu
            // folded in by cairn-fuse-elementwise) as the epilogue.
            bool relu = k.getRelu().value_or(false);
            std::string scratch = workspace(k.getWorkspace());
            line() << gemmCall(k.getResult(), "linearForward") << "(cx, "
                   << site() << ", " << k.getRows() << ", " << k.getIn() << ", "
                   << k.getOut() << ", " << ptr(k.getInput()) << ", "
                   << ptr(k.getWeight()) << ", " << ptr(k.getBias()) << ", "
                   << formatBool(relu) << ", " << ptr(k.getResult()) << ", "
                   << scratch << ");\n";
            return true;
          })
          .Case([&](LinearGradInputKernelOp k) {
            // dx = dy W.
            int64_t rows = k.getRows(), inF = k.getIn(), outF = k.getOut();
            Value dx = k.getResult();
            std::string scratch = workspace(k.getWorkspace());
            line() << gemmCall(dx, "gemm") << "(cx, " << site()
                   << ", false, false, " << rows << ", " << inF << ", " << outF
                   << ", " << formatComputedRealOf(dx, 1) << ", "
                   << ptr(k.getDy()) << ", " << outF << ", "
                   << ptr(k.getWeight()) << ", " << inF << ", "
                   << formatComputedRealOf(dx, 0) << ", " << ptr(dx) << ", "
                   << inF << ", " << scratch << ");\n";
            return true;
          })
          .Case([&](LinearGradWeightKernelOp k) {
            // dW = dy^T x.
            int64_t rows = k.getRows(), inF = k.getIn(), outF = k.getOut();
            Value dw = k.getResult();
            std::string scratch = workspace(k.getWorkspace());
            line() << gemmCall(dw, "gemm") << "(cx, " << site()
                   << ", true, false, " << outF << ", " << inF << ", " << rows
                   << ", " << formatComputedRealOf(dw, 1) << ", "
                   << ptr(k.getDy()) << ", " << outF << ", "
                   << ptr(k.getInput()) << ", " << inF << ", "
                   << formatComputedRealOf(dw, 0) << ", " << ptr(dw) << ", "
                   << inF << ", " << scratch << ");\n";
            return true;
          })
          .Case([&](DropoutKernelOp k) {
            // The seed and the step come from cx.scalars, so a captured
            // graph draws a new mask on every replay.
            line() << storedCall(k.getResult(), "dropout") << "(cx, "
                   << k.getN() << ", " << formatDouble(k.getP()) << ", "
                   << k.getStream() << ", " << ptr(k.getInput()) << ", "
                   << ptr(k.getResult()) << ");\n";
            return true;
          })
          .Case([&](SliceGradKernelOp k) {
            // slice_grad writes dy into a zeroed dx.
            line() << "cairn::cuda::zeroBytes(cx, "
                   << getNumElements(k.getResult()) << " * "
                   << formatSizeOf(k.getResult()) << ", " << ptr(k.getResult())
                   << ");\n";
            emitTableKernel(*body, indent, k, pointer, kCallStyle);
            return true;
          })
          .Case([&](CastKernelOp k) {
            line() << "cairn::cuda::castElements(cx, " << ptr(k.getInput())
                   << ", cairn::kernels::CastType::"
                   << getCastTypeName(k.getInput()) << ", "
                   << ptr(k.getResult()) << ", cairn::kernels::CastType::"
                   << getCastTypeName(k.getResult()) << ", " << k.getN()
                   << ");\n";
            return true;
          })
          .Case([&](LossScaleKernelOp k) {
            // The scale is read on the device (cx.scalars), so a captured
            // graph follows the scaler.
            line() << "cairn::cuda::lossScale(cx, "
                   << formatBool(k.getInverse()) << ", " << ptr(k.getResult())
                   << ");\n";
            return true;
          })
          .Case([&](FoundInfKernelOp k) {
            line() << "{\n";
            FoundInfGradients grads = splitFoundInfGradients(k.getGrads());
            emitGradientTables(*body, indent + 2, grads.wide,
                               getElementCType(k.getResult()), pointer);
            line() << "  " << call(k.getResult(), "foundInf") << "(cx, "
                   << grads.wide.size() << ", kGrads, kSizes, "
                   << ptr(k.getResult()) << ");\n";
            // Half gradients (cairn-check-scaled-gradients) by their bits,
            // after foundInf cleared the flag.
            for (const FoundInfGradients::Half &half : grads.half) {
              emitGradientTables(*body, indent + 2, half.grads, "uint16_t",
                                 pointer, half.suffix);
              line() << "  cairn::cuda::markNotFinite<" << half.tag << ">(cx, "
                     << half.grads.size() << ", kGrads" << half.suffix
                     << ", kSizes" << half.suffix << ", " << ptr(k.getResult())
                     << ");\n";
            }
            // A device of a split model checks every device's gradients:
            // the flag (0 or 1) is the largest of the devices' flags.
            if (k.getAcrossDevices())
              line() << "  " << call(k.getResult(), "maxOverRanks") << "(cx, "
                     << ptr(k.getResult()) << ", 1);\n";
            line() << "}\n";
            return true;
          })
          // Transfers between the GPUs of a split model: NCCL on the step's
          // stream, in the schedule's order (DeviceCollectives.h).
          .Case([&](SendKernelOp k) {
            Value in = k.getInput();
            line() << "cairn::cuda::sendToPeer(cx, " << ptr(in) << ", "
                   << getNumElements(in) << " * " << formatSizeOf(in) << ", "
                   << k.getPeer() << ");\n";
            return true;
          })
          .Case([&](ReceiveKernelOp k) {
            Value out = k.getResult();
            line() << "cairn::cuda::receiveFromPeer(cx, " << ptr(out) << ", "
                   << getNumElements(out) << " * " << formatSizeOf(out)
                   << ", " << k.getPeer() << ");\n";
            return true;
          })
          // A replica's bucket of gradients, summed by NCCL beside the
          // backward; the bucket's buffer is the CPU transport's workspace.
          .Case([&](AllReduceStartKernelOp k) {
            line() << "cairn::cuda::allReduceStart(cx, " << k.getIndex()
                   << ", {";
            llvm::interleaveComma(k.getGrads(), *body, [&](Value grad) {
              *body << "{" << ptr(grad) << ", " << getNumElements(grad) << "}";
            });
            *body << "});\n";
            return true;
          })
          .Case([&](AllReduceWaitKernelOp k) {
            line() << "cairn::cuda::allReduceWait(cx, " << k.getIndex()
                   << ");\n";
            return true;
          })
          .Case([&](SkipSelectKernelOp k) {
            // The result is `old`'s buffer: overwritten unless skipped.
            line() << "cairn::cuda::skipSelect(cx, " << k.getN() << " * "
                   << formatSizeOf(k.getResult()) << ", " << ptr(k.getUpdated())
                   << ", " << ptr(k.getFoundInf()) << ", " << ptr(k.getResult())
                   << ");\n";
            return true;
          })
          .Case([&](MseLossGradKernelOp k) {
            line() << call(k.getResult(), "mseBackward") << "(cx, " << k.getN()
                   << ", " << ptr(k.getDloss()) << ", " << ptr(k.getInput())
                   << ", " << ptr(k.getTarget()) << ", " << ptr(k.getResult())
                   << ");\n";
            return true;
          })
          .Default([](Operation *) { return false; });
  if (!done)
    reportMissingBody(op, "CUDA");
}

void cairn::codegen::emitCudaProgram(
    llvm::ArrayRef<const ProgramGraph *> devices, llvm::StringRef modelSource,
    llvm::raw_ostream &os) {
  emitFile(devices, modelSource, os);
}
