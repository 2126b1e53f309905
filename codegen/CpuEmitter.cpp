//===- CpuEmitter.cpp - Kernel lists as C++ for the CPU -------------------===//
//
// The printed code is meant to be read: one pointer per tensor at the top of
// each step, then one commented call per kernel. Same-shape elementwise
// arithmetic and relu are loops (the host compiler vectorises them); the
// rest are calls into cairn::kernels, whose implementations are shared with
// the kernel tests.
//
//===----------------------------------------------------------------------===//

#include "codegen/CpuEmitter.h"

#include "codegen/EmitterSupport.h"
#include "codegen/KernelCalls.h"

#include "ir/CairnKernelOps.h"
#include "ir/ProductTypes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <set>

using namespace mlir;
using namespace cairn;
using namespace cairn::codegen;

namespace {

/// How this emitter spells runtime calls (KernelCalls.h, emitTableKernel).
const CallStyle kCallStyle = {
    "cairn::kernels::", "", "cairn::runtime::replicaSum(ctx)",
    "cairn::runtime::devicesSum(ctx, \"the gradients' norm\")"};

class CpuEmitter {
public:
  CpuEmitter(const ProgramGraph &graph, llvm::StringRef modelSource,
             llvm::raw_ostream &os)
      : graph(graph), program(graph.graph), os(os),
        sourceLines(splitSourceLines(modelSource)),
        identifiers(nameIdentifiers(program)),
        specIndex(getSpecIndices(program)) {}

  void emit();
  /// The file's comment and #includes.
  void emitHeader(int64_t devices);
  /// The steps and the spec of this program.
  void emitDevice();

private:
  void emitStep(const StepKernels &step, llvm::StringRef function,
                llvm::StringRef summary);
  void emitKernel(Operation *op);
  void emitBinary(Operation *op, Value lhs, Value rhs, Value result,
                  llvm::ArrayRef<int64_t> lhsStrides,
                  llvm::ArrayRef<int64_t> rhsStrides);
  void emitLinear(LinearKernelOp op);
  /// Kernel `op`'s GEMM in half precision (HalfGemm.h), in its workspace;
  /// `bias` and `relu` as a linear's.
  void emitHalfGemm(Operation *op, Value result, Value workspace, bool transA,
                    bool transB, int64_t m, int64_t n, int64_t k, Value a,
                    int64_t lda, Value b, int64_t ldb, Value bias, bool relu);
  void emitMatmul(MatmulKernelOp op);
  void emitChain(ElementwiseChainKernelOp op);

  /// The next convolution's call site (ConvLibrary), unique in the program.
  int nextConvSite = 0;

  /// The pointer to `value`'s buffer, nullptr for a null Value.
  std::string ptr(Value value) const {
    return value ? identifiers[graph.ids.lookup(value)] : "nullptr";
  }
  /// An update's lr: times the step's scheduled factor when there is a
  /// schedule.
  std::string formatLr(double lr) const {
    std::string text = formatDouble(lr);
    return program.lrSchedule.empty() ? text : text + " * ctx.lrFactor";
  }
  /// `cairn::kernels::name<float>` for the element type of `value` (a half
  /// one's storage tag, Convert.h's F16 or Bf16).
  std::string call(Value value, llvm::StringRef name) const {
    return ("cairn::kernels::" + name + "<" + getTemplateType(value) + ">")
        .str();
  }
  llvm::raw_ostream &line() { return os.indent(indent); }
  /// With loss scaling, the next statement (an update) runs unless the step
  /// is skipped: opens the guard and indents; returns the indent to restore.
  unsigned emitSkipGuard(Value foundInf) {
    unsigned outer = indent;
    if (foundInf) {
      line() << "if (" << ptr(foundInf) << "[0] == 0)\n";
      indent += 2;
    }
    return outer;
  }
  /// Opens `for (i ...)` over [0, n) inside Parallel.h's parallelFor, so
  /// the loop is split across threads when it is long enough; `cost` is
  /// the work of one element in parallelFor's units. The body goes at
  /// indent + 4; closeParallelLoop ends it.
  void openParallelLoop(int64_t n, int64_t cost) {
    line() << "cairn::kernels::parallelFor(" << n << ", " << cost
           << ", [&](int64_t begin, int64_t end) {\n";
    line() << "  for (int64_t i = begin; i < end; ++i)";
  }
  void closeParallelLoop() { line() << "});\n"; }

  /// An element of `value` at `index` as the loop computes it: a half one
  /// widened to float by its storage tag (Convert.h), which `stored` rounds
  /// back, so a loop over half tensors gives the float loop's bits between
  /// casts.
  std::string loaded(Value value, llvm::StringRef index) const {
    std::string element = ptr(value) + "[" + index.str() + "]";
    return isHalfBuffer(value)
               ? std::string(getTemplateType(value)) + "::load(" + element + ")"
               : element;
  }
  std::string stored(Value value, const std::string &computed) const {
    return isHalfBuffer(value) ? std::string(getTemplateType(value)) +
                                     "::store(" + computed + ")"
                               : computed;
  }

  const ProgramGraph &graph;
  const KernelGraph &program;
  llvm::raw_ostream &os;
  llvm::SmallVector<llvm::StringRef> sourceLines;
  std::vector<std::string> identifiers;
  /// By buffer id: its index in spec.tensors, or -1.
  std::vector<int> specIndex;
  unsigned indent = 0;
};

} // namespace

void CpuEmitter::emit() {
  emitHeader(1);
  emitDevice();
  emitMain(os, 1, program.replicas);
}

void CpuEmitter::emitHeader(int64_t devices) {
  os << "// Generated by cairn " << CAIRN_VERSION << " from "
     << program.sourceFile << ": model " << program.model << ", batch "
     << program.batch << ".\n"
     << "// The training step and the forward pass"
     << (program.evalLoss.kernels.empty() ? "" : " (and the eval-mode loss)");
  if (devices == 1)
    os << " as kernel calls on one arena of " << program.arenaBytes
       << " bytes.\n\n";
  else
    os << " on " << devices
       << " devices, each as kernel calls on its own arena, the values "
          "that cross\n// sent and received through the runtime's "
          "transport (MPI).\n\n";
  if (devices > 1 || program.replicas > 1)
    os << "#include \"runtime/MpiTransport.h\"\n";
  for (const char *header :
       {"CpuBackend.h", "Program.h", "kernels/Conv.h", "kernels/ConvLibrary.h",
        "kernels/Convert.h", "kernels/Dropout.h", "kernels/Elementwise.h",
        "kernels/Gemm.h", "kernels/HalfGemm.h", "kernels/Loss.h",
        "kernels/Movement.h", "kernels/Normalization.h", "kernels/Optimizer.h",
        "kernels/Parallel.h", "kernels/Pool.h", "kernels/Reduction.h",
        "kernels/ScalarOps.h", "kernels/Softmax.h"})
    os << "#include \"runtime/" << header << "\"\n";
  os << "\n#include <algorithm>\n#include <cstdint>\n#include <cstdio>\n"
        "#include <cstring>\n#include <limits>\n\n";
}

void CpuEmitter::emitDevice() {
  std::string suffix = getDeviceSuffix(program);
  if (program.devices > 1)
    os << "//===--- Device " << program.device << " of " << program.devices
       << ": an arena of " << program.arenaBytes << " bytes\n\n";
  emitStep(program.trainStep, "trainStep" + suffix,
           "One training step: forward, loss, backward, optimizer update.");
  emitStep(program.forward, "forward" + suffix,
           "Inference: reads the image, the params and buffers; writes "
           "\"output\".");
  if (!program.evalLoss.kernels.empty())
    emitStep(program.evalLoss, "evalLoss" + suffix,
             "The loss in eval mode, for the test loss: writes "
             "\"eval_loss\".");
  emitProgramSpec(os, program, "&cairn::runtime::kCpuBackend");
}

void CpuEmitter::emitStep(const StepKernels &step, llvm::StringRef function,
                          llvm::StringRef summary) {
  os << "/// " << summary << "\n"
     << "static void " << function
     << "(unsigned char *arena,\n    [[maybe_unused]] const "
        "cairn::runtime::StepContext &ctx) {\n";
  indent = 2;

  // Every tensor the step touches, in the order the lowering made them.
  std::set<int> touched;
  for (const Kernel &k : step.kernels) {
    for (int id : llvm::concat<const int>(k.inputs, k.outputs))
      if (id != kNoBuffer)
        touched.insert(id);
    if (k.workspace != kNoBuffer)
      touched.insert(k.workspace);
  }
  for (int id : touched)
    emitBufferPointer(os, indent, program, id, identifiers[id]);
  // After each kernel: the gradients it completes go to ctx.observe, and
  // with ctx.poison the buffers whose lifetime ends there are overwritten.
  std::vector<AfterKernel> after = collectAfterKernels(program, step);
  for (int index = 0, e = step.kernels.size(); index < e; ++index) {
    os << "\n";
    line() << "// " << describeKernel(step.kernels[index], program, sourceLines)
           << "\n";
    // `train --profile`: the time from here to the next kernel is this one's.
    if (step.step == StepKind::train_step)
      line() << "if (ctx.profile) ctx.profile->enter(" << index << ");\n";
    emitKernel(graph.getKernelOp(step.step, index));
    emitAfterKernel(os, indent, program, after[index], specIndex, identifiers,
                    "cairn::runtime::poisonBytes(");
  }
  indent = 0;
  os << "}\n\n";
}

void CpuEmitter::emitBinary(Operation *op, Value lhs, Value rhs, Value result,
                            llvm::ArrayRef<int64_t> lhsStrides,
                            llvm::ArrayRef<int64_t> rhsStrides) {
  const char *symbol = llvm::TypeSwitch<Operation *, const char *>(op)
                           .Case([](AddKernelOp) { return "+"; })
                           .Case([](SubKernelOp) { return "-"; })
                           .Case([](MulKernelOp) { return "*"; })
                           .Case([](DivKernelOp) { return "/"; })
                           .Default([](Operation *) { return ""; });
  const char *name = getBinaryOpName(op);
  int64_t n = getNumElements(result);
  int64_t lhsN = getNumElements(lhs), rhsN = getNumElements(rhs);
  std::string a = ptr(lhs), b = ptr(rhs), y = ptr(result);
  // Whole operands, or one of them a single element: one loop. A half one
  // (the CPU's: isHalfStorageOp) widens its operands and rounds its result
  // (loaded, stored).
  if ((lhsN == n && (rhsN == n || rhsN == 1)) || (lhsN == 1 && rhsN == n)) {
    openParallelLoop(n, 1);
    os << "\n";
    line() << "    " << y << "[i] = "
           << stored(result, loaded(lhs, lhsN == n ? "i" : "0") + " " + symbol +
                                 " " + loaded(rhs, rhsN == n ? "i" : "0"))
           << ";\n";
    closeParallelLoop();
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
  line() << "  " << call(result, "binaryBroadcast")
         << "(cairn::kernels::BinaryOp::" << name << ", " << shape.size()
         << ", kShape, " << a << ", kLhsStrides, " << b << ", kRhsStrides, "
         << y << ");\n";
  line() << "}\n";
}

void CpuEmitter::emitHalfGemm(Operation *op, Value result, Value workspace,
                              bool transA, bool transB, int64_t m, int64_t n,
                              int64_t k, Value a, int64_t lda, Value b,
                              int64_t ldb, Value bias, bool relu) {
  line() << "cairn::kernels::halfGemm<" << getProductTemplateType(op, result)
         << ">(" << formatBool(transA) << ", " << formatBool(transB) << ", "
         << m << ", " << n << ", " << k << ", " << ptr(a) << ", " << lda << ", "
         << ptr(b) << ", " << ldb << ", " << ptr(bias) << ", "
         << formatBool(relu) << ", " << ptr(result) << ", " << n
         << ", reinterpret_cast<float *>(" << ptr(workspace) << "));\n";
}

void CpuEmitter::emitLinear(LinearKernelOp op) {
  int64_t rows = op.getRows(), inF = op.getIn(), outF = op.getOut();
  if (computesInHalf(op))
    return emitHalfGemm(op, op.getResult(), op.getWorkspace(), false, true,
                        rows, outF, inF, op.getInput(), inF, op.getWeight(),
                        inF, op.getBias(), op.getRelu().value_or(false));
  std::string y = ptr(op.getResult());
  bool bias = bool(op.getBias());
  if (bias) {
    // y starts as the bias in every row; the GEMM adds x W^T to it.
    line() << "for (int64_t r = 0; r < " << rows << "; ++r)\n";
    line() << "  std::memcpy(" << y << " + r * " << outF << ", "
           << ptr(op.getBias()) << ", " << outF << " * sizeof(*" << y
           << "));\n";
  }
  line() << call(op.getResult(), "gemm") << "(false, true, " << rows << ", "
         << outF << ", " << inF << ", " << formatRealOf(op.getResult(), 1)
         << ", " << ptr(op.getInput()) << ", " << inF << ", "
         << ptr(op.getWeight()) << ", " << inF << ", "
         << formatRealOf(op.getResult(), bias ? 1 : 0) << ", " << y << ", "
         << outF << ");\n";
  // A folded relu (cairn-fuse-elementwise) over the product, in place.
  if (op.getRelu().value_or(false)) {
    openParallelLoop(rows * outF, 1);
    os << "\n";
    line() << "    " << y << "[i] = std::max(" << y << "[i], "
           << formatRealOf(op.getResult(), 0) << ");\n";
    closeParallelLoop();
  }
}

void CpuEmitter::emitMatmul(MatmulKernelOp op) {
  Value result = op.getResult();
  int64_t batch = op.getBatch(), m = op.getM(), n = op.getN();
  std::string head = formatBool(op.getTransposeLhs()) + ", " +
                     formatBool(op.getTransposeRhs()) + ", " + formatInt(m) +
                     ", " + formatInt(n) + ", " + formatInt(op.getK()) + ", " +
                     formatRealOf(result, 1) + ", ";
  std::string lda = formatInt(op.getLda()), ldb = formatInt(op.getLdb());
  std::string lhs = ptr(op.getLhs()), rhs = ptr(op.getRhs()), y = ptr(result);
  if (isHalfBuffer(result)) {
    // HalfGemm.h's, whole products a thread; a partial broadcast of the
    // batch dimensions through offset tables.
    line() << "{\n";
    auto operand = [&](std::optional<llvm::ArrayRef<int64_t>> offsets,
                       std::optional<int64_t> stride, llvm::StringRef table) {
      if (!offsets)
        return formatInt(*stride) + ", nullptr";
      line() << "  static const int64_t " << table << "[] = {"
             << formatInts(*offsets) << "};\n";
      return "0, " + table.str();
    };
    std::string a =
        operand(op.getLhsOffsets(), op.getLhsStride(), "kLhsOffsets");
    std::string b =
        operand(op.getRhsOffsets(), op.getRhsStride(), "kRhsOffsets");
    line() << "  " << call(result, "batchedHalfGemm") << "(" << batch << ", "
           << formatBool(op.getTransposeLhs()) << ", "
           << formatBool(op.getTransposeRhs()) << ", " << m << ", " << n << ", "
           << op.getK() << ", " << lhs << ", " << lda << ", " << a << ", "
           << rhs << ", " << ldb << ", " << b << ", " << y
           << ", reinterpret_cast<float *>(" << ptr(op.getWorkspace())
           << "));\n";
    line() << "}\n";
    return;
  }
  if (op.getLhsStride() && op.getRhsStride()) {
    if (batch == 1) {
      line() << call(result, "gemm") << "(" << head << lhs << ", " << lda
             << ", " << rhs << ", " << ldb << ", " << formatRealOf(result, 0)
             << ", " << y << ", " << n << ");\n";
      return;
    }
    line() << call(result, "batchedGemm") << "(" << batch << ", " << head << lhs
           << ", " << lda << ", " << *op.getLhsStride() << ", " << rhs << ", "
           << ldb << ", " << *op.getRhsStride() << ", "
           << formatRealOf(result, 0) << ", " << y << ", " << n << ", " << m * n
           << ");\n";
    return;
  }
  // A partial broadcast of the batch dimensions: one GEMM per matrix.
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
  std::string a =
      operand(op.getLhsOffsets(), op.getLhsStride(), "kLhsOffsets", lhs);
  std::string b =
      operand(op.getRhsOffsets(), op.getRhsStride(), "kRhsOffsets", rhs);
  line() << "  for (int64_t b = 0; b < " << batch << "; ++b)\n";
  line() << "    " << call(result, "gemm") << "(" << head << a << ", " << lda
         << ", " << b << ", " << ldb << ", " << formatRealOf(result, 0) << ", "
         << y << " + b * " << m * n << ", " << n << ");\n";
  line() << "}\n";
}

/// One loop: each element's registers (element i of the inputs, element 0 of
/// a one-element one), then each op on them, the same expressions the
/// separate kernels use, in the same order. With dropouts the loop goes a
/// block of kDropoutKeepBlock elements at a time (each thread's chunk starts
/// on a Philox group): dropoutKeep decides the block's elements for each
/// dropout, as the dropout kernel draws them, then the elements run.
void CpuEmitter::emitChain(ElementwiseChainKernelOp op) {
  int64_t n = op.getN();
  Value result = op.getResult();
  const char *type = getElementCType(result);
  std::string zero = formatRealOf(result, 0);
  auto reg = [](int64_t r) { return "r" + std::to_string(r); };
  unsigned numInputs = op.getInputs().size();
  unsigned numOps = op.getOps().size();
  ArrayRef<double> dropoutP;
  if (std::optional<ArrayRef<double>> p = op.getDropoutP())
    dropoutP = *p;
  std::string body = "    ";
  if (dropoutP.empty()) {
    openParallelLoop(n, getChainWorkPerElement(op.getOps()));
    os << " {\n";
  } else {
    line() << "{\n";
    for (auto [k, p] : llvm::enumerate(dropoutP)) {
      line() << "  const " << type << " kKeepScale" << k
             << " = cairn::kernels::ops::dropoutScale<" << type << ">("
             << formatDouble(p) << ");\n";
      line() << "  const uint64_t kStream" << k << " = "
             << (*op.getDropoutStreams())[k];
      if (int64_t stride = (*op.getDropoutReplicaStrides())[k])
        os << " + " << stride << " * static_cast<uint64_t>(ctx.replica)";
      os << ";\n";
    }
    line() << "  cairn::kernels::parallelFor(" << n << ", "
           << getChainWorkPerElement(op.getOps())
           << ", [&](int64_t begin, int64_t end) {\n";
    for (size_t k = 0; k < dropoutP.size(); ++k)
      line() << "    uint8_t keep" << k
             << "[cairn::kernels::kDropoutKeepBlock];\n";
    line() << "    for (int64_t first = begin; first < end; first += "
              "cairn::kernels::kDropoutKeepBlock) {\n";
    line() << "      const int64_t count = std::min<int64_t>(end - first, "
              "cairn::kernels::kDropoutKeepBlock);\n";
    for (auto [k, p] : llvm::enumerate(dropoutP))
      line() << "      cairn::kernels::dropoutKeep(first, count, "
             << formatDouble(p)
             << ", ctx.seed, static_cast<uint64_t>(ctx.step), kStream" << k
             << ", keep" << k << ");\n";
    line() << "      for (int64_t i = first; i < first + count; ++i) {\n";
    body = "        ";
  }
  for (auto [j, input] : llvm::enumerate(op.getInputs()))
    line() << body << "const " << type << " " << reg(j) << " = " << ptr(input)
           << (getNumElements(input) == n ? "[i]" : "[0]") << ";\n";
  unsigned dropouts = 0;
  for (unsigned j = 0; j < numOps; ++j) {
    auto [ra, rb] = op.getOpArgs(j);
    std::string a = reg(ra), b = reg(rb);
    llvm::StringRef kind = cast<StringAttr>(op.getOps()[j]).getValue();
    // The dropout kernel's select, of the bits: a dropped element is +0
    // whatever x is.
    std::string dropout;
    if (kind == "dropout") {
      std::string k = std::to_string(dropouts++);
      dropout = std::string("cairn::kernels::ops::dropoutKept<") + type +
                ">(keep" + k + "[i - first], " + a + " * kKeepScale" + k + ")";
    }
    auto scalar = [&](const char *name, bool backward) {
      return std::string("cairn::kernels::ops::") + name +
             (backward ? "::backward(" + a + ", " + b + ")"
                       : "::forward(" + a + ")");
    };
    std::string expr =
        llvm::StringSwitch<std::string>(kind)
            .Case("add", a + " + " + b)
            .Case("sub", a + " - " + b)
            .Case("mul", a + " * " + b)
            .Case("div", a + " / " + b)
            .Case("relu", "std::max(" + a + ", " + zero + ")")
            .Case("relu_grad", b + " > " + zero + " ? " + a + " : " + zero)
            .Case("sigmoid", scalar("Sigmoid", false))
            .Case("sigmoid_grad", scalar("Sigmoid", true))
            .Case("tanh", scalar("Tanh", false))
            .Case("tanh_grad", scalar("Tanh", true))
            .Case("gelu_exact", scalar("GeluExact", false))
            .Case("gelu_exact_grad", scalar("GeluExact", true))
            .Case("gelu_tanh", scalar("GeluTanh", false))
            .Case("gelu_tanh_grad", scalar("GeluTanh", true))
            .Case("silu", scalar("Silu", false))
            .Case("silu_grad", scalar("Silu", true))
            .Case("hardswish", scalar("Hardswish", false))
            .Case("hardswish_grad", scalar("Hardswish", true))
            .Case("dropout", dropout)
            .Default("");
    if (expr.empty())
      reportMissingBody(op, ("CPU (chain op '" + kind + "')").str());
    line() << body << "const " << type << " " << reg(numInputs + j) << " = "
           << expr << ";\n";
  }
  line() << body << ptr(result) << "[i] = " << reg(numInputs + numOps - 1)
         << ";\n";
  if (dropoutP.empty()) {
    line() << "  }\n";
    closeParallelLoop();
    return;
  }
  line() << "      }\n";
  line() << "    }\n";
  line() << "  }, 4);\n";
  line() << "}\n";
}

void CpuEmitter::emitKernel(Operation *op) {
  auto pointer = [&](Value value) { return ptr(value); };
  // The kinds both targets call alike (KernelCalls.h).
  if (std::optional<KernelCall> kernelCall = describeKernelCall(op, pointer)) {
    // A convolution names its call site in the executor's oneDNN library
    // (runtime/kernels/ConvLibrary.h), one per kernel of the program, and
    // its workspace's bytes (cairn-grow-workspaces may have grown it).
    auto site = [&] {
      return "cairn::runtime::convLibrary(ctx), " +
             std::to_string(nextConvSite++);
    };
    auto sizedWorkspace = [&](Value scratch) {
      return ptr(scratch) + ", " +
             std::to_string(
                 program.buffers[graph.ids.lookup(scratch)].getUsableBytes());
    };
    if (isa<Conv2dKernelOp, Conv2dGradInputKernelOp, Conv2dGradWeightKernelOp>(
            op))
      printKernelCall(os, indent, *kernelCall, kCallStyle, site,
                      sizedWorkspace);
    else
      printKernelCall(os, indent, *kernelCall, kCallStyle, nullptr, pointer);
    return;
  }
  if (isTableKernel(op) && !isa<SliceGradKernelOp>(op))
    return emitTableKernel(os, indent, op, pointer, kCallStyle);

  bool done =
      llvm::TypeSwitch<Operation *, bool>(op)
          // Transfers block until the peer takes or gives the bytes
          // (runtime/Transport.h); a failure ends every process.
          .Case([&](SendKernelOp k) {
            Value in = k.getInput();
            line() << "cairn::runtime::sendBytes(ctx, reinterpret_cast<const "
                      "unsigned char *>("
                   << ptr(in) << "), " << getNumElements(in) << " * sizeof(*"
                   << ptr(in) << "), " << k.getPeer() << ", " << k.getTag()
                   << ");\n";
            return true;
          })
          // A bucket of gradients summed across the replicas: started
          // when complete, waited for when needed (runtime/Transport.h).
          .Case([&](AllReduceStartKernelOp k) {
            line() << "cairn::runtime::allReduceStart(ctx, " << k.getIndex()
                   << ", " << ptr(k.getBucket()) << ", "
                   << getNumElements(k.getBucket()) << ", {";
            llvm::interleaveComma(k.getGrads(), os, [&](Value grad) {
              os << "{" << ptr(grad) << ", " << getNumElements(grad) << "}";
            });
            os << "});\n";
            return true;
          })
          // The transport holds the bucket's gradients since its start.
          .Case([&](AllReduceWaitKernelOp k) {
            line() << "cairn::runtime::allReduceWait(ctx, " << k.getIndex()
                   << ");\n";
            return true;
          })
          .Case([&](ReceiveKernelOp k) {
            Value out = k.getResult();
            line() << "cairn::runtime::receiveBytes(ctx, "
                      "reinterpret_cast<unsigned char *>("
                   << ptr(out) << "), " << getNumElements(out) << " * sizeof(*"
                   << ptr(out) << "), " << k.getPeer() << ", " << k.getTag()
                   << ");\n";
            return true;
          })
          .Case([&](FillKernelOp k) {
            Value out = k.getResult();
            Attribute value = k.getValue();
            std::string text =
                isa<FloatAttr>(value)
                    ? formatRealOf(out,
                                   cast<FloatAttr>(value).getValueAsDouble())
                    : formatInt(cast<IntegerAttr>(value).getInt());
            line() << "std::fill_n(" << ptr(out) << ", " << k.getN() << ", "
                   << text << ");\n";
            return true;
          })
          .Case([&](ConstantKernelOp k) {
            Value out = k.getResult();
            std::string values;
            if (auto reals = dyn_cast<DenseF64ArrayAttr>(k.getValues()))
              values = formatList(reals.asArrayRef(), [&](double v) {
                return formatRealOf(out, v);
              });
            else
              values = formatInts(
                  cast<DenseI64ArrayAttr>(k.getValues()).asArrayRef());
            line() << "{\n";
            line() << "  static const " << getElementCType(out)
                   << " kValues[] = {" << values << "};\n";
            line() << "  std::memcpy(" << ptr(out)
                   << ", kValues, sizeof(kValues));\n";
            line() << "}\n";
            return true;
          })
          .Case([&](CastKernelOp k) {
            line() << "cairn::kernels::castElements(" << ptr(k.getInput())
                   << ", cairn::kernels::CastType::"
                   << getCastTypeName(k.getInput()) << ", "
                   << ptr(k.getResult()) << ", cairn::kernels::CastType::"
                   << getCastTypeName(k.getResult()) << ", " << k.getN()
                   << ");\n";
            return true;
          })
          .Case([&](CopyKernelOp k) {
            line() << "std::memcpy(" << ptr(k.getResult()) << ", "
                   << ptr(k.getInput()) << ", " << getNumElements(k.getResult())
                   << " * " << formatSizeOf(k.getResult()) << ");\n";
            return true;
          })
          .Case<AddKernelOp, SubKernelOp, MulKernelOp, DivKernelOp>(
              [&](auto k) {
                emitBinary(k, k.getLhs(), k.getRhs(), k.getResult(),
                           k.getLhsStrides(), k.getRhsStrides());
                return true;
              })
          .Case([&](ReluKernelOp k) {
            // std::max keeps NaNs, as torch.relu.
            Value y = k.getResult();
            openParallelLoop(k.getN(), 1);
            os << "\n";
            line() << "    " << ptr(y) << "[i] = "
                   << stored(y, "std::max(" + loaded(k.getInput(), "i") + ", " +
                                    formatComputedRealOf(y, 0) + ")")
                   << ";\n";
            closeParallelLoop();
            return true;
          })
          .Case([&](ReluGradKernelOp k) {
            // dy is read unconditionally: a load under the select would
            // keep the compiler from vectorising the loop.
            Value dx = k.getResult();
            std::string zero = formatComputedRealOf(dx, 0);
            openParallelLoop(k.getN(), 1);
            os << " {\n";
            line() << "    const "
                   << (isHalfBuffer(dx) ? "float" : getElementCType(dx))
                   << " dy = " << loaded(k.getDy(), "i") << ";\n";
            line() << "    " << ptr(dx) << "[i] = "
                   << stored(dx, loaded(k.getOutput(), "i") + " > " + zero +
                                     " ? dy : " + zero)
                   << ";\n";
            line() << "  }\n";
            closeParallelLoop();
            return true;
          })
          .Case([&](MatmulKernelOp k) {
            emitMatmul(k);
            return true;
          })
          .Case([&](LinearKernelOp k) {
            emitLinear(k);
            return true;
          })
          .Case([&](LinearGradInputKernelOp k) {
            // dx = dy W.
            int64_t rows = k.getRows(), inF = k.getIn(), outF = k.getOut();
            Value dx = k.getResult();
            if (computesInHalf(k)) {
              emitHalfGemm(k, dx, k.getWorkspace(), false, false, rows, inF,
                           outF, k.getDy(), outF, k.getWeight(), inF, Value(),
                           false);
              return true;
            }
            line() << call(dx, "gemm") << "(false, false, " << rows << ", "
                   << inF << ", " << outF << ", " << formatRealOf(dx, 1) << ", "
                   << ptr(k.getDy()) << ", " << outF << ", "
                   << ptr(k.getWeight()) << ", " << inF << ", "
                   << formatRealOf(dx, 0) << ", " << ptr(dx) << ", " << inF
                   << ");\n";
            return true;
          })
          .Case([&](LinearGradWeightKernelOp k) {
            // dW = dy^T x.
            int64_t rows = k.getRows(), inF = k.getIn(), outF = k.getOut();
            Value dw = k.getResult();
            if (computesInHalf(k)) {
              emitHalfGemm(k, dw, k.getWorkspace(), true, false, outF, inF,
                           rows, k.getDy(), outF, k.getInput(), inF, Value(),
                           false);
              return true;
            }
            line() << call(dw, "gemm") << "(true, false, " << outF << ", "
                   << inF << ", " << rows << ", " << formatRealOf(dw, 1) << ", "
                   << ptr(k.getDy()) << ", " << outF << ", "
                   << ptr(k.getInput()) << ", " << inF << ", "
                   << formatRealOf(dw, 0) << ", " << ptr(dw) << ", " << inF
                   << ");\n";
            return true;
          })
          .Case([&](ElementwiseChainKernelOp k) {
            emitChain(k);
            return true;
          })
          .Case([&](DropoutKernelOp k) {
            line() << call(k.getResult(), "dropout") << "(" << k.getN() << ", "
                   << formatDouble(k.getP())
                   << ", ctx.seed, static_cast<uint64_t>(ctx.step), "
                   << k.getStream();
            if (std::optional<int64_t> stride = k.getReplicaStride())
              os << " + " << *stride << " * static_cast<uint64_t>(ctx.replica)";
            os << ", " << ptr(k.getInput()) << ", " << ptr(k.getResult())
               << ");\n";
            return true;
          })
          .Case([&](SliceGradKernelOp k) {
            // slice_grad writes dy into a zeroed dx.
            line() << "std::memset(" << ptr(k.getResult()) << ", 0, "
                   << getNumElements(k.getResult()) << " * "
                   << formatSizeOf(k.getResult()) << ");\n";
            emitTableKernel(os, indent, k, pointer, kCallStyle);
            return true;
          })
          .Case([&](MseLossGradKernelOp k) {
            line() << call(k.getResult(), "mseBackward") << "(" << k.getN()
                   << ", " << ptr(k.getDloss()) << ", " << ptr(k.getInput())
                   << ", " << ptr(k.getTarget()) << ", " << ptr(k.getResult())
                   << ", nullptr);\n";
            return true;
          })
          .Case([&](LossScaleKernelOp k) {
            // GradScaler's inverse: 1 / scale in double, rounded once.
            line() << ptr(k.getResult()) << "[0] = "
                   << (k.getInverse()
                           ? "static_cast<float>(1.0 / ctx.lossScale)"
                           : "static_cast<float>(ctx.lossScale)")
                   << ";\n";
            return true;
          })
          .Case([&](FoundInfKernelOp k) {
            line() << "{\n";
            FoundInfGradients grads = splitFoundInfGradients(k.getGrads());
            emitGradientTables(os, indent + 2, grads.wide,
                               getElementCType(k.getResult()), pointer);
            // Half gradients (cairn-check-scaled-gradients) by their bits.
            SmallVector<std::string> checks;
            for (const FoundInfGradients::Half &half : grads.half) {
              emitGradientTables(os, indent + 2, half.grads, "uint16_t",
                                 pointer, half.suffix);
              checks.push_back(("cairn::kernels::anyNotFinite<" + half.tag +
                                ">(" + llvm::Twine(half.grads.size()) +
                                ", kGrads" + half.suffix + ", kSizes" +
                                half.suffix + ")")
                                   .str());
            }
            const std::string continued(indent + 6, ' ');
            if (!checks.empty())
              line() << "  const bool kHalfNotFinite =\n"
                     << continued << llvm::join(checks, " ||\n" + continued)
                     << ";\n";
            line() << "  " << call(k.getResult(), "foundInf") << "("
                   << grads.wide.size() << ", kGrads, kSizes, "
                   << ptr(k.getResult());
            // A device of a split model checks every device's gradients.
            if (k.getAcrossDevices())
              os << ", cairn::runtime::devicesSum(ctx, \"the gradients' "
                    "overflow check\")";
            else if (!checks.empty())
              os << ", cairn::kernels::RankSum()";
            if (!checks.empty())
              os << ", kHalfNotFinite";
            os << ");\n";
            line() << "}\n";
            return true;
          })
          .Case([&](SkipSelectKernelOp k) {
            // The result is `old`'s buffer: overwritten unless skipped.
            line() << "if (" << ptr(k.getFoundInf()) << "[0] == 0)\n";
            line() << "  std::memcpy(" << ptr(k.getResult()) << ", "
                   << ptr(k.getUpdated()) << ", " << k.getN() << " * "
                   << formatSizeOf(k.getResult()) << ");\n";
            return true;
          })
          .Case([&](SgdUpdateKernelOp k) {
            // Momentum starts from the gradient on the run's first step.
            unsigned outer = emitSkipGuard(k.getFoundInf());
            line() << call(k.getNewParam(), "sgdUpdate") << "(" << k.getN()
                   << ", " << formatLr(k.getLr()) << ", "
                   << formatDouble(k.getMomentum()) << ", "
                   << formatDouble(k.getDampening()) << ", "
                   << formatDouble(k.getWeightDecay()) << ", "
                   << formatBool(k.getNesterov()) << ", ctx.step == 0, "
                   << ptr(k.getParam()) << ", " << ptr(k.getGrad()) << ", "
                   << ptr(k.getMomentumBuffer()) << ");\n";
            indent = outer;
            return true;
          })
          .Case([&](AdamUpdateKernelOp k) {
            // Adam's bias correction counts steps from 1.
            unsigned outer = emitSkipGuard(k.getFoundInf());
            line() << call(k.getNewParam(), "adamUpdate") << "(" << k.getN()
                   << ", " << formatLr(k.getLr()) << ", "
                   << formatDouble(k.getBeta1()) << ", "
                   << formatDouble(k.getBeta2()) << ", "
                   << formatDouble(k.getEps()) << ", "
                   << formatDouble(k.getWeightDecay()) << ", "
                   << formatBool(k.isAdamW()) << ", ctx.step + 1, "
                   << ptr(k.getParam()) << ", " << ptr(k.getGrad()) << ", "
                   << ptr(k.getExpAvg()) << ", " << ptr(k.getExpAvgSq())
                   << ");\n";
            indent = outer;
            return true;
          })
          .Default([](Operation *) { return false; });
  if (!done)
    reportMissingBody(op, "CPU");
}

void cairn::codegen::emitCpuProgram(const ProgramGraph &graph,
                                    llvm::StringRef modelSource,
                                    llvm::raw_ostream &os) {
  CpuEmitter(graph, modelSource, os).emit();
}

void cairn::codegen::emitCpuProgram(
    llvm::ArrayRef<const ProgramGraph *> devices, llvm::StringRef modelSource,
    llvm::raw_ostream &os) {
  if (devices.size() == 1)
    return emitCpuProgram(*devices.front(), modelSource, os);
  CpuEmitter(*devices.front(), modelSource, os).emitHeader(devices.size());
  for (const ProgramGraph *device : devices)
    CpuEmitter(*device, modelSource, os).emitDevice();
  emitMain(os, devices.size());
}
