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

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

using namespace cairn::codegen;

namespace {

/// Longest model-file line quoted in a comment.
constexpr size_t kMaxQuotedLine = 72;

const char *getCType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "float";
  case DType::F64:
    return "double";
  case DType::I32:
    return "int32_t";
  case DType::I64:
    return "int64_t";
  case DType::F16:
  case DType::BF16:
    break;
  }
  llvm_unreachable("the CPU lowering rejects half-precision tensors");
}

const char *getRuntimeDType(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  }
  llvm_unreachable("unknown dtype");
}

const char *getRuntimeRole(BufferKind kind) {
  switch (kind) {
  case BufferKind::Input:
    return "Input";
  case BufferKind::Param:
    return "Param";
  case BufferKind::Buffer:
    return "Buffer";
  case BufferKind::Optimizer:
    return "OptimizerState";
  case BufferKind::Grad:
    return "Gradient"; // per-step, reported through StepContext::observe
  case BufferKind::Output:
    return "Output";
  default:
    break;
  }
  llvm_unreachable("only persistent buffers and gradients are in the spec");
}

const char *getRuntimeInit(InitKind kind) {
  switch (kind) {
  case InitKind::None:
    return "None";
  case InitKind::Zeros:
    return "Zeros";
  case InitKind::Ones:
    return "Ones";
  case InitKind::Uniform:
    return "Uniform";
  case InitKind::Normal:
    return "Normal";
  }
  llvm_unreachable("unknown init kind");
}

/// The shortest decimal form that reads back as `value` in `T`'s precision,
/// as a C++ literal of type T (float: an `f` suffix).
std::string formatReal(double value, bool isFloat) {
  const char *type = isFloat ? "float" : "double";
  if (std::isnan(value))
    return std::string("std::numeric_limits<") + type + ">::quiet_NaN()";
  if (std::isinf(value))
    return std::string(value < 0 ? "-" : "") + "std::numeric_limits<" + type +
           ">::infinity()";
  char buffer[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (isFloat ? std::strtof(buffer, nullptr) == static_cast<float>(value)
                : std::strtod(buffer, nullptr) == value)
      break;
  }
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return isFloat ? text + "f" : text;
}

std::string formatDouble(double value) { return formatReal(value, false); }

std::string formatInt(int64_t value) {
  // -2^63 has no literal: it is the negation of a too-large one.
  if (value == INT64_MIN)
    return "(-9223372036854775807 - 1)";
  return std::to_string(value);
}

std::string formatBool(bool value) { return value ? "true" : "false"; }

template <typename Range, typename Format>
std::string formatList(const Range &values, Format format) {
  std::string text;
  for (const auto &value : values) {
    if (!text.empty())
      text += ", ";
    text += format(value);
  }
  return text;
}

std::string formatInts(llvm::ArrayRef<int64_t> values) {
  return formatList(values, formatInt);
}

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  return "[" + formatInts(shape) + "]";
}

/// A C++ string literal; octal escapes, which stop after three digits.
std::string quote(llvm::StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c < 0x20 || c >= 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof(escape), "\\%03o", c);
      out += escape;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// Names the generated code declares itself, and C++'s keywords: a tensor
/// named like one gets a suffix.
const llvm::StringSet<> &getReservedNames() {
  static const llvm::StringSet<> names = {
      // Ours.
      "arena", "ctx", "spec", "main", "trainStep", "forward", "cairn", "std",
      "i", "r", "b", "kValues", "kShape", "kInShape", "kOutShape", "kPerm",
      "kStart", "kStep", "kStrides", "kLhsStrides", "kRhsStrides",
      "kLhsOffsets", "kRhsOffsets", "kReduced", "kFull", "kPart", "int8_t",
      "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
      "uint64_t", "size_t", "NULL",
      // C++17 keywords and alternative tokens.
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
      "bool", "break", "case", "catch", "char", "char16_t", "char32_t", "class",
      "compl", "const", "constexpr", "const_cast", "continue", "decltype",
      "default", "delete", "do", "double", "dynamic_cast", "else", "enum",
      "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept",
      "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private",
      "protected", "public", "register", "reinterpret_cast", "return", "short",
      "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try",
      "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
      "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  return names;
}

class CpuEmitter {
public:
  CpuEmitter(const Program &program, llvm::StringRef modelSource,
             llvm::raw_ostream &os)
      : program(program), os(os) {
    modelSource.split(sourceLines, '\n');
    nameIdentifiers();
    specIndex.assign(program.buffers.size(), -1);
    int next = 0;
    for (const Buffer &b : program.buffers)
      if (isInSpec(b))
        specIndex[b.id] = next++;
  }

  void emit();

private:
  void nameIdentifiers();
  void emitStep(const StepKernels &step, llvm::StringRef function,
                llvm::StringRef summary);
  void emitComment(const Kernel &kernel);
  void emitKernel(const Kernel &kernel);
  void emitBinary(const Kernel &kernel, const char *op);
  void emitMatmul(const Kernel &kernel);
  void emitConcat(const Kernel &kernel);
  /// The buffers to report and to poison after one kernel.
  struct AfterKernel {
    std::vector<int> observed, dying;
  };
  std::vector<AfterKernel> collectAfterKernels(const StepKernels &step) const;
  void emitAfterKernel(const AfterKernel &after);
  void emitSpec();
  void emitMain();
  /// The tensors the ProgramSpec lists: persistent ones and gradients.
  bool isInSpec(const Buffer &b) const {
    return isPersistent(b.kind) || b.kind == BufferKind::Grad;
  }

  const Buffer &buffer(int id) const { return program.buffers[id]; }
  /// The pointer to buffer `id`, or nullptr for an absent one.
  std::string ptr(int id) const {
    return id == kNoBuffer ? "nullptr" : identifiers[id];
  }
  std::string in(const Kernel &k, unsigned i) const { return ptr(k.inputs[i]); }
  std::string out(const Kernel &k, unsigned i) const {
    return ptr(k.outputs[i]);
  }
  /// `cairn::kernels::name<float>` for the element type of the kernel's
  /// output 0 (of input 0 when that output is absent).
  std::string call(const Kernel &k, llvm::StringRef name) const;
  std::string real(const Kernel &k, double value) const {
    return formatReal(value, buffer(k.outputs[0]).dtype == DType::F32);
  }
  /// `sizeof(float)`: the element size of buffer `id` in C++ terms.
  std::string sizeOf(int id) const {
    return std::string("sizeof(") + getCType(buffer(id).dtype) + ")";
  }
  llvm::raw_ostream &line() { return os.indent(indent); }

  const Program &program;
  llvm::raw_ostream &os;
  llvm::SmallVector<llvm::StringRef> sourceLines;
  std::vector<std::string> identifiers;
  /// By buffer id: its index in spec.tensors, or -1.
  std::vector<int> specIndex;
  unsigned indent = 0;
};

} // namespace

void CpuEmitter::nameIdentifiers() {
  std::set<std::string> used;
  for (const Buffer &b : program.buffers) {
    std::string id;
    for (char c : b.name)
      id += llvm::isAlnum(c) ? c : '_';
    if (id.empty() || !llvm::isAlpha(id[0]))
      id = "t" + id;
    std::string unique = id;
    for (int n = 2; used.count(unique) || getReservedNames().contains(unique);
         ++n)
      unique = id + "_" + std::to_string(n);
    used.insert(unique);
    identifiers.push_back(unique);
  }
}

std::string CpuEmitter::call(const Kernel &k, llvm::StringRef name) const {
  int typed = k.outputs.empty() || k.outputs[0] == kNoBuffer ? k.inputs[0]
                                                             : k.outputs[0];
  return ("cairn::kernels::" + name + "<" + getCType(buffer(typed).dtype) + ">")
      .str();
}

void CpuEmitter::emit() {
  os << "// Generated by cairn " << CAIRN_VERSION << " from "
     << program.sourceFile << ": model " << program.model << ", batch "
     << program.batch << ".\n"
     << "// The training step and the forward pass as kernel calls on one "
        "arena of "
     << program.arenaBytes << " bytes.\n\n";
  for (const char *header :
       {"CpuBackend.h", "Program.h", "kernels/Conv.h", "kernels/Dropout.h",
        "kernels/Elementwise.h", "kernels/Gemm.h", "kernels/Loss.h",
        "kernels/Movement.h", "kernels/Normalization.h", "kernels/Optimizer.h",
        "kernels/Pool.h", "kernels/Reduction.h", "kernels/Softmax.h"})
    os << "#include \"runtime/" << header << "\"\n";
  os << "\n#include <algorithm>\n#include <cstdint>\n#include <cstdio>\n"
        "#include <cstring>\n#include <limits>\n\n";
  emitStep(program.trainStep, "trainStep",
           "One training step: forward, loss, backward, optimizer update.");
  emitStep(program.forward, "forward",
           "Inference: reads the image, the params and buffers; writes "
           "\"output\".");
  emitSpec();
  emitMain();
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
  for (int id : touched) {
    const Buffer &b = buffer(id);
    const char *type = getCType(b.dtype);
    line() << type << " *" << identifiers[id] << " = reinterpret_cast<" << type
           << " *>(arena + " << b.offset << "); // "
           << getBufferKindName(b.kind) << " " << formatShape(b.shape);
    if (b.isAlias())
      os << ", a view of " << buffer(program.getAliasRoot(id)).name;
    os << "\n";
  }
  std::vector<AfterKernel> after = collectAfterKernels(step);
  for (int index = 0, e = step.kernels.size(); index < e; ++index) {
    os << "\n";
    emitComment(step.kernels[index]);
    emitKernel(step.kernels[index]);
    emitAfterKernel(after[index]);
  }
  indent = 0;
  os << "}\n\n";
}

/// What follows each kernel of `step`: the gradients it completes go to
/// ctx.observe, and with ctx.poison the buffers whose lifetime ends there
/// are overwritten (unless an in-place output took their bytes over). One
/// pass over the buffers, both lists in buffer order.
std::vector<CpuEmitter::AfterKernel>
CpuEmitter::collectAfterKernels(const StepKernels &step) const {
  std::vector<AfterKernel> after(step.kernels.size());
  std::vector<bool> handedOn(program.buffers.size(), false);
  for (const Buffer &b : program.buffers)
    if (b.inPlaceOf != kNoBuffer)
      handedOn[b.inPlaceOf] = true;
  for (const Buffer &b : program.buffers) {
    if (b.step != step.step)
      continue;
    if (b.kind == BufferKind::Grad && b.definedBy >= 0)
      after[b.definedBy].observed.push_back(b.id);
    if (!b.isAlias() && !isPersistent(b.kind) && b.bytes > 0 &&
        b.definedBy >= 0 && b.lastUse >= 0 && !handedOn[b.id])
      after[b.lastUse].dying.push_back(b.id);
  }
  return after;
}

void CpuEmitter::emitAfterKernel(const AfterKernel &after) {
  for (int id : after.observed)
    line() << "if (ctx.observe) ctx.observe(ctx.observer, " << specIndex[id]
           << ", arena); // " << buffer(id).name << "\n";
  if (after.dying.empty())
    return;
  line() << "if (ctx.poison) {\n";
  for (int id : after.dying)
    line() << "  cairn::runtime::poisonBytes(arena + " << buffer(id).offset
           << ", " << buffer(id).bytes << "); // " << identifiers[id] << "\n";
  line() << "}\n";
}

/// `// file:line:col layer op: the model line`.
void CpuEmitter::emitComment(const Kernel &k) {
  line() << "// " << k.loc;
  if (!k.layer.empty())
    os << " " << k.layer;
  os << " "
     << (k.kind == KernelKind::Copy
             ? llvm::StringRef("copy")
             : llvm::StringRef(k.opName).rsplit('.').second);
  // The location is "file:line:col"; quote that line when it is the model's.
  llvm::StringRef rest = k.loc;
  auto [fileLine, col] = rest.rsplit(':');
  auto [file, lineText] = fileLine.rsplit(':');
  unsigned lineNumber = 0;
  if (file == program.sourceFile && !lineText.getAsInteger(10, lineNumber) &&
      lineNumber >= 1 && lineNumber <= sourceLines.size()) {
    std::string text;
    for (char c : sourceLines[lineNumber - 1].trim())
      text += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    if (text.size() > kMaxQuotedLine)
      text = text.substr(0, kMaxQuotedLine - 3) + "...";
    // A backslash would continue the comment onto the next line.
    while (!text.empty() && text.back() == '\\')
      text.pop_back();
    os << ": " << text;
  }
  os << "\n";
}

void CpuEmitter::emitBinary(const Kernel &k, const char *op) {
  const Buffer &lhs = buffer(k.inputs[0]), &rhs = buffer(k.inputs[1]),
               &result = buffer(k.outputs[0]);
  int64_t n = k.attrs.getInt("n");
  std::string a = in(k, 0), b = in(k, 1), y = out(k, 0);
  if (lhs.getNumElements() == n &&
      (rhs.getNumElements() == n || rhs.getNumElements() == 1)) {
    line() << "for (int64_t i = 0; i < " << n << "; ++i)\n";
    line() << "  " << y << "[i] = " << a << "[i] " << op << " " << b
           << (rhs.getNumElements() == n ? "[i]" : "[0]") << ";\n";
    return;
  }
  if (lhs.getNumElements() == 1 && rhs.getNumElements() == n) {
    line() << "for (int64_t i = 0; i < " << n << "; ++i)\n";
    line() << "  " << y << "[i] = " << a << "[0] " << op << " " << b
           << "[i];\n";
    return;
  }
  const char *names[] = {"Add", "Sub", "Mul", "Div"};
  const char *name =
      names[static_cast<int>(k.kind) - static_cast<int>(KernelKind::Add)];
  line() << "{\n";
  line() << "  static const int64_t kShape[] = {" << formatInts(result.shape)
         << "};\n";
  line() << "  static const int64_t kLhsStrides[] = {"
         << formatInts(k.attrs.getInts("lhs_strides")) << "};\n";
  line() << "  static const int64_t kRhsStrides[] = {"
         << formatInts(k.attrs.getInts("rhs_strides")) << "};\n";
  line() << "  " << call(k, "binaryBroadcast")
         << "(cairn::kernels::BinaryOp::" << name << ", " << result.shape.size()
         << ", kShape, " << a << ", kLhsStrides, " << b << ", kRhsStrides, "
         << y << ");\n";
  line() << "}\n";
}

void CpuEmitter::emitMatmul(const Kernel &k) {
  const KernelAttrs &at = k.attrs;
  int64_t batch = at.getInt("batch"), m = at.getInt("m"), n = at.getInt("n");
  std::string head = formatBool(at.getBool("transpose_lhs")) + ", " +
                     formatBool(at.getBool("transpose_rhs")) + ", " +
                     formatInt(m) + ", " + formatInt(n) + ", " +
                     formatInt(at.getInt("k")) + ", " + real(k, 1) + ", ";
  std::string lda = formatInt(at.getInt("lda")),
              ldb = formatInt(at.getInt("ldb"));
  if (at.has("lhs_stride") && at.has("rhs_stride")) {
    if (batch == 1) {
      line() << call(k, "gemm") << "(" << head << in(k, 0) << ", " << lda
             << ", " << in(k, 1) << ", " << ldb << ", " << real(k, 0) << ", "
             << out(k, 0) << ", " << n << ");\n";
      return;
    }
    line() << call(k, "batchedGemm") << "(" << batch << ", " << head << in(k, 0)
           << ", " << lda << ", " << at.getInt("lhs_stride") << ", " << in(k, 1)
           << ", " << ldb << ", " << at.getInt("rhs_stride") << ", "
           << real(k, 0) << ", " << out(k, 0) << ", " << n << ", " << m * n
           << ");\n";
    return;
  }
  // A partial broadcast of the batch dimensions: one GEMM per matrix.
  auto operand = [&](llvm::StringRef name, llvm::StringRef table,
                     const std::string &pointer) {
    if (at.has((name + "_offsets").str())) {
      line() << "  static const int64_t " << table << "[] = {"
             << formatInts(at.getInts((name + "_offsets").str())) << "};\n";
      return pointer + " + " + table.str() + "[b]";
    }
    return pointer + " + b * " + formatInt(at.getInt((name + "_stride").str()));
  };
  line() << "{\n";
  std::string a = operand("lhs", "kLhsOffsets", in(k, 0));
  std::string b = operand("rhs", "kRhsOffsets", in(k, 1));
  line() << "  for (int64_t b = 0; b < " << batch << "; ++b)\n";
  line() << "    " << call(k, "gemm") << "(" << head << a << ", " << lda << ", "
         << b << ", " << ldb << ", " << real(k, 0) << ", " << out(k, 0)
         << " + b * " << m * n << ", " << n << ");\n";
  line() << "}\n";
}

void CpuEmitter::emitConcat(const Kernel &k) {
  const Buffer &result = buffer(k.outputs[0]);
  int64_t dim = k.attrs.getInt("dim");
  size_t rank = result.shape.size();
  line() << "{\n";
  line() << "  static const int64_t kFull[] = {" << formatInts(result.shape)
         << "};\n";
  line() << "  static const int64_t kStep[] = {"
         << formatInts(std::vector<int64_t>(rank, 1)) << "};\n";
  for (auto [i, start] : llvm::enumerate(k.attrs.getInts("starts"))) {
    std::vector<int64_t> starts(rank, 0);
    starts[dim] = start;
    line() << "  {\n";
    line() << "    static const int64_t kStart[] = {" << formatInts(starts)
           << "};\n";
    line() << "    static const int64_t kPart[] = {"
           << formatInts(buffer(k.inputs[i]).shape) << "};\n";
    line() << "    cairn::kernels::insertSlice(" << rank
           << ", kFull, kStart, kStep, kPart, " << sizeOf(k.outputs[0]) << ", "
           << in(k, i) << ", " << out(k, 0) << ");\n";
    line() << "  }\n";
  }
  line() << "}\n";
}

void CpuEmitter::emitKernel(const Kernel &k) {
  const KernelAttrs &at = k.attrs;
  auto ints = [&](llvm::StringRef name) {
    return formatInts(at.getInts(name));
  };
  auto n = [&] { return formatInt(at.getInt("n")); };
  auto activation = [&]() -> std::string {
    switch (k.kind) {
    case KernelKind::Sigmoid:
    case KernelKind::SigmoidGrad:
      return "cairn::kernels::Activation::Sigmoid";
    case KernelKind::Tanh:
    case KernelKind::TanhGrad:
      return "cairn::kernels::Activation::Tanh";
    default:
      return at.getBool("tanh") ? "cairn::kernels::Activation::GeluTanh"
                                : "cairn::kernels::Activation::GeluExact";
    }
  };
  auto indexType = [&](int id) { return getCType(buffer(id).dtype); };

  switch (k.kind) {
  case KernelKind::Fill: {
    const Buffer &b = buffer(k.outputs[0]);
    std::string value = isFloat(b.dtype) ? real(k, at.getDouble("value"))
                                         : formatInt(at.getInt("value"));
    line() << "std::fill_n(" << out(k, 0) << ", " << n() << ", " << value
           << ");\n";
    return;
  }
  case KernelKind::Constant: {
    const Buffer &b = buffer(k.outputs[0]);
    std::string values = isFloat(b.dtype)
                             ? formatList(at.getDoubles("values"),
                                          [&](double v) { return real(k, v); })
                             : formatInts(at.getInts("values"));
    line() << "{\n";
    line() << "  static const " << getCType(b.dtype) << " kValues[] = {"
           << values << "};\n";
    line() << "  std::memcpy(" << out(k, 0) << ", kValues, sizeof(kValues));\n";
    line() << "}\n";
    return;
  }
  case KernelKind::Copy:
    line() << "std::memcpy(" << out(k, 0) << ", " << in(k, 0) << ", "
           << buffer(k.outputs[0]).getNumElements() << " * "
           << sizeOf(k.outputs[0]) << ");\n";
    return;
  case KernelKind::Add:
    return emitBinary(k, "+");
  case KernelKind::Sub:
    return emitBinary(k, "-");
  case KernelKind::Mul:
    return emitBinary(k, "*");
  case KernelKind::Div:
    return emitBinary(k, "/");
  case KernelKind::Relu:
    // std::max keeps NaNs, as torch.relu.
    line() << "for (int64_t i = 0; i < " << n() << "; ++i)\n";
    line() << "  " << out(k, 0) << "[i] = std::max(" << in(k, 0) << "[i], "
           << real(k, 0) << ");\n";
    return;
  case KernelKind::ReluGrad:
    line() << "for (int64_t i = 0; i < " << n() << "; ++i)\n";
    line() << "  " << out(k, 0) << "[i] = " << in(k, 1) << "[i] > "
           << real(k, 0) << " ? " << in(k, 0) << "[i] : " << real(k, 0)
           << ";\n";
    return;
  case KernelKind::Sigmoid:
  case KernelKind::Tanh:
  case KernelKind::Gelu:
    line() << call(k, "activationForward") << "(" << activation() << ", " << n()
           << ", " << in(k, 0) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::SigmoidGrad:
  case KernelKind::TanhGrad:
  case KernelKind::GeluGrad:
    line() << call(k, "activationBackward") << "(" << activation() << ", "
           << n() << ", " << in(k, 0) << ", " << in(k, 1) << ", " << out(k, 0)
           << ");\n";
    return;
  case KernelKind::Softmax:
  case KernelKind::LogSoftmax:
  case KernelKind::SoftmaxGrad:
  case KernelKind::LogSoftmaxGrad: {
    bool log = k.kind == KernelKind::LogSoftmax ||
               k.kind == KernelKind::LogSoftmaxGrad;
    bool grad = k.kind == KernelKind::SoftmaxGrad ||
                k.kind == KernelKind::LogSoftmaxGrad;
    line() << call(k, grad ? "softmaxBackward" : "softmaxForward") << "("
           << formatBool(log) << ", " << at.getInt("outer") << ", "
           << at.getInt("dim") << ", " << at.getInt("inner") << ", " << in(k, 0)
           << ", " << (grad ? in(k, 1) + ", " : "") << out(k, 0) << ");\n";
    return;
  }
  case KernelKind::Matmul:
    return emitMatmul(k);
  case KernelKind::Linear: {
    int64_t rows = at.getInt("rows"), inF = at.getInt("in"),
            outF = at.getInt("out");
    bool bias = k.inputs[2] != kNoBuffer;
    if (bias) {
      // y starts as the bias in every row; the GEMM adds x W^T to it.
      line() << "for (int64_t r = 0; r < " << rows << "; ++r)\n";
      line() << "  std::memcpy(" << out(k, 0) << " + r * " << outF << ", "
             << in(k, 2) << ", " << outF << " * sizeof(*" << out(k, 0)
             << "));\n";
    }
    line() << call(k, "gemm") << "(false, true, " << rows << ", " << outF
           << ", " << inF << ", " << real(k, 1) << ", " << in(k, 0) << ", "
           << inF << ", " << in(k, 1) << ", " << inF << ", "
           << real(k, bias ? 1 : 0) << ", " << out(k, 0) << ", " << outF
           << ");\n";
    return;
  }
  case KernelKind::LinearGradInput: {
    // dx = dy W.
    int64_t rows = at.getInt("rows"), inF = at.getInt("in"),
            outF = at.getInt("out");
    line() << call(k, "gemm") << "(false, false, " << rows << ", " << inF
           << ", " << outF << ", " << real(k, 1) << ", " << in(k, 0) << ", "
           << outF << ", " << in(k, 1) << ", " << inF << ", " << real(k, 0)
           << ", " << out(k, 0) << ", " << inF << ");\n";
    return;
  }
  case KernelKind::LinearGradWeight: {
    // dW = dy^T x.
    int64_t rows = at.getInt("rows"), inF = at.getInt("in"),
            outF = at.getInt("out");
    line() << call(k, "gemm") << "(true, false, " << outF << ", " << inF << ", "
           << rows << ", " << real(k, 1) << ", " << in(k, 0) << ", " << outF
           << ", " << in(k, 1) << ", " << inF << ", " << real(k, 0) << ", "
           << out(k, 0) << ", " << inF << ");\n";
    return;
  }
  case KernelKind::Conv2d:
    line() << call(k, "conv2dForward") << "({" << ints("shape") << "}, "
           << in(k, 0) << ", " << in(k, 1) << ", " << in(k, 2) << ", "
           << out(k, 0) << ", " << ptr(k.workspace) << ");\n";
    return;
  case KernelKind::Conv2dGradInput:
    line() << call(k, "conv2dBackwardInput") << "({" << ints("shape") << "}, "
           << in(k, 0) << ", " << in(k, 1) << ", " << out(k, 0) << ", "
           << ptr(k.workspace) << ");\n";
    return;
  case KernelKind::Conv2dGradWeight:
    line() << call(k, "conv2dBackwardWeight") << "({" << ints("shape") << "}, "
           << in(k, 0) << ", " << in(k, 1) << ", " << out(k, 0) << ", nullptr, "
           << ptr(k.workspace) << ");\n";
    return;
  case KernelKind::BatchNormTraining:
    line() << call(k, "batchNormTrainingForward") << "(" << at.getInt("n")
           << ", " << at.getInt("c") << ", " << at.getInt("spatial") << ", "
           << in(k, 0) << ", " << in(k, 1) << ", " << in(k, 2) << ", "
           << formatDouble(at.getDouble("eps")) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::BatchNormInference:
    line() << call(k, "batchNormInferenceForward") << "(" << at.getInt("n")
           << ", " << at.getInt("c") << ", " << at.getInt("spatial") << ", "
           << in(k, 0) << ", " << in(k, 1) << ", " << in(k, 2) << ", "
           << in(k, 3) << ", " << in(k, 4) << ", "
           << formatDouble(at.getDouble("eps")) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::BatchNormGrad:
    line() << call(k, "batchNormBackward") << "(" << at.getInt("n") << ", "
           << at.getInt("c") << ", " << at.getInt("spatial") << ", " << in(k, 0)
           << ", " << in(k, 1) << ", " << in(k, 2) << ", "
           << formatDouble(at.getDouble("eps")) << ", " << out(k, 0) << ", "
           << out(k, 1) << ", " << out(k, 2) << ");\n";
    return;
  case KernelKind::BatchNormRunningUpdate:
    line() << call(k, "batchNormUpdateRunningStats") << "(" << at.getInt("n")
           << ", " << at.getInt("c") << ", " << at.getInt("spatial") << ", "
           << in(k, 0) << ", " << formatDouble(at.getDouble("momentum")) << ", "
           << in(k, 1) << ", " << in(k, 2) << ", " << in(k, 3) << ");\n";
    return;
  case KernelKind::LayerNorm:
    line() << call(k, "layerNormForward") << "(" << at.getInt("rows") << ", "
           << at.getInt("cols") << ", " << in(k, 0) << ", " << in(k, 1) << ", "
           << in(k, 2) << ", " << formatDouble(at.getDouble("eps")) << ", "
           << out(k, 0) << ");\n";
    return;
  case KernelKind::LayerNormGrad:
    line() << call(k, "layerNormBackward") << "(" << at.getInt("rows") << ", "
           << at.getInt("cols") << ", " << in(k, 0) << ", " << in(k, 1) << ", "
           << in(k, 2) << ", " << formatDouble(at.getDouble("eps")) << ", "
           << out(k, 0) << ", " << out(k, 1) << ", " << out(k, 2) << ");\n";
    return;
  case KernelKind::Embedding:
    line() << "cairn::kernels::embeddingForward<"
           << getCType(buffer(k.outputs[0]).dtype) << ", "
           << indexType(k.inputs[0]) << ">(" << at.getInt("num_indices") << ", "
           << at.getInt("dim") << ", " << at.getInt("num_embeddings") << ", "
           << in(k, 0) << ", " << in(k, 1) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::EmbeddingGrad:
    line() << "cairn::kernels::embeddingBackward<"
           << getCType(buffer(k.outputs[0]).dtype) << ", "
           << indexType(k.inputs[0]) << ">(" << at.getInt("num_indices") << ", "
           << at.getInt("dim") << ", " << at.getInt("num_embeddings") << ", "
           << in(k, 0) << ", " << in(k, 1) << ", " << at.getInt("padding_idx")
           << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::Dropout:
    line() << call(k, "dropout") << "(" << n() << ", "
           << formatDouble(at.getDouble("p"))
           << ", ctx.seed, static_cast<uint64_t>(ctx.step), "
           << at.getInt("stream") << ", " << in(k, 0) << ", " << out(k, 0)
           << ");\n";
    return;
  case KernelKind::MaxPool2d:
    line() << call(k, "maxPool2dForward") << "({" << ints("shape") << "}, "
           << in(k, 0) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::MaxPool2dGrad:
    line() << call(k, "maxPool2dBackward") << "({" << ints("shape") << "}, "
           << in(k, 0) << ", " << in(k, 1) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::AvgPool2d:
    line() << call(k, "avgPool2dForward") << "({" << ints("shape") << "}, "
           << formatBool(at.getBool("count_include_pad")) << ", " << in(k, 0)
           << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::AvgPool2dGrad:
    line() << call(k, "avgPool2dBackward") << "({" << ints("shape") << "}, "
           << formatBool(at.getBool("count_include_pad")) << ", " << in(k, 0)
           << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::AdaptiveAvgPool2d:
    line() << call(k, "adaptiveAvgPool2dForward") << "(" << ints("shape")
           << ", " << in(k, 0) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::AdaptiveAvgPool2dGrad:
    line() << call(k, "adaptiveAvgPool2dBackward") << "(" << ints("shape")
           << ", " << in(k, 0) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::Permute: {
    const Buffer &input = buffer(k.inputs[0]);
    line() << "{\n";
    line() << "  static const int64_t kInShape[] = {" << formatInts(input.shape)
           << "};\n";
    line() << "  static const int64_t kPerm[] = {" << ints("perm") << "};\n";
    line() << "  cairn::kernels::permute(" << input.shape.size()
           << ", kInShape, kPerm, " << sizeOf(k.outputs[0]) << ", " << in(k, 0)
           << ", " << out(k, 0) << ");\n";
    line() << "}\n";
    return;
  }
  case KernelKind::Concat:
    return emitConcat(k);
  case KernelKind::Slice:
  case KernelKind::SliceGrad: {
    // slice reads part of its input; slice_grad writes dy into a zeroed dx.
    bool grad = k.kind == KernelKind::SliceGrad;
    const Buffer &full = buffer(grad ? k.outputs[0] : k.inputs[0]);
    const Buffer &part = buffer(grad ? k.inputs[0] : k.outputs[0]);
    if (grad)
      line() << "std::memset(" << out(k, 0) << ", 0, " << full.getNumElements()
             << " * " << sizeOf(k.outputs[0]) << ");\n";
    line() << "{\n";
    line() << "  static const int64_t kFull[] = {" << formatInts(full.shape)
           << "};\n";
    line() << "  static const int64_t kStart[] = {" << ints("start") << "};\n";
    line() << "  static const int64_t kStep[] = {" << ints("step") << "};\n";
    line() << "  static const int64_t kPart[] = {" << formatInts(part.shape)
           << "};\n";
    if (grad)
      line() << "  cairn::kernels::insertSlice(" << full.shape.size()
             << ", kFull, kStart, kStep, kPart, " << sizeOf(k.outputs[0])
             << ", " << in(k, 0) << ", " << out(k, 0) << ");\n";
    else
      line() << "  cairn::kernels::extractSlice(" << full.shape.size()
             << ", kFull, kStart, kStep, kPart, " << sizeOf(k.outputs[0])
             << ", " << in(k, 0) << ", " << out(k, 0) << ");\n";
    line() << "}\n";
    return;
  }
  case KernelKind::Broadcast: {
    const Buffer &result = buffer(k.outputs[0]);
    line() << "{\n";
    line() << "  static const int64_t kShape[] = {" << formatInts(result.shape)
           << "};\n";
    line() << "  static const int64_t kStrides[] = {" << ints("in_strides")
           << "};\n";
    line() << "  " << call(k, "broadcastTo") << "(" << result.shape.size()
           << ", kShape, kStrides, " << real(k, 1) << ", " << in(k, 0) << ", "
           << out(k, 0) << ");\n";
    line() << "}\n";
    return;
  }
  case KernelKind::ReduceSum: {
    const Buffer &input = buffer(k.inputs[0]);
    line() << "{\n";
    line() << "  static const int64_t kShape[] = {" << formatInts(input.shape)
           << "};\n";
    line() << "  static const bool kReduced[] = {"
           << formatList(at.getBools("reduced"), formatBool) << "};\n";
    line() << "  " << call(k, "reduceSum") << "(" << input.shape.size()
           << ", kShape, kReduced, " << real(k, at.getDouble("alpha")) << ", "
           << in(k, 0) << ", " << out(k, 0) << ");\n";
    line() << "}\n";
    return;
  }
  case KernelKind::CrossEntropy:
  case KernelKind::CrossEntropyGrad: {
    bool grad = k.kind == KernelKind::CrossEntropyGrad;
    unsigned logits = grad ? 1 : 0;
    line() << "cairn::kernels::"
           << (grad ? "crossEntropyBackward<" : "crossEntropyForward<")
           << getCType(buffer(k.inputs[logits]).dtype) << ", "
           << indexType(k.inputs[logits + 1]) << ">(" << at.getInt("rows")
           << ", " << at.getInt("classes") << ", "
           << (grad ? in(k, 0) + ", " : "") << in(k, logits) << ", "
           << in(k, logits + 1) << ", "
           << formatDouble(at.getDouble("label_smoothing")) << ", " << out(k, 0)
           << ");\n";
    return;
  }
  case KernelKind::MseLoss:
    line() << call(k, "mseForward") << "(" << n() << ", " << in(k, 0) << ", "
           << in(k, 1) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::MseLossGrad:
    line() << call(k, "mseBackward") << "(" << n() << ", " << in(k, 0) << ", "
           << in(k, 1) << ", " << in(k, 2) << ", " << out(k, 0)
           << ", nullptr);\n";
    return;
  case KernelKind::SgdUpdate:
    // Momentum starts from the gradient on the run's first step.
    line() << call(k, "sgdUpdate") << "(" << n() << ", "
           << formatDouble(at.getDouble("lr")) << ", "
           << formatDouble(at.getDouble("momentum")) << ", "
           << formatDouble(at.getDouble("dampening")) << ", "
           << formatDouble(at.getDouble("weight_decay")) << ", "
           << formatBool(at.getBool("nesterov")) << ", ctx.step == 0, "
           << in(k, 0) << ", " << in(k, 1) << ", " << in(k, 2) << ");\n";
    return;
  case KernelKind::AdamUpdate:
    // Adam's bias correction counts steps from 1.
    line() << call(k, "adamUpdate") << "(" << n() << ", "
           << formatDouble(at.getDouble("lr")) << ", "
           << formatDouble(at.getDouble("beta1")) << ", "
           << formatDouble(at.getDouble("beta2")) << ", "
           << formatDouble(at.getDouble("eps")) << ", "
           << formatDouble(at.getDouble("weight_decay")) << ", ctx.step + 1, "
           << in(k, 0) << ", " << in(k, 1) << ", " << in(k, 2) << ", "
           << in(k, 3) << ");\n";
    return;
  }
  llvm_unreachable("unknown kernel kind");
}

void CpuEmitter::emitSpec() {
  os << "/// Every named tensor: the runtime initialises, loads, saves, feeds "
        "and reads\n/// them at these offsets.\n"
     << "static const cairn::runtime::ProgramSpec spec = [] {\n"
     << "  using cairn::runtime::DType;\n"
     << "  using cairn::runtime::InitKind;\n"
     << "  using cairn::runtime::TensorRole;\n"
     << "  cairn::runtime::ProgramSpec s;\n"
     << "  s.model = " << quote(program.model) << ";\n"
     << "  s.sourceFile = " << quote(program.sourceFile) << ";\n"
     << "  s.batch = " << program.batch << ";\n"
     << "  s.arenaBytes = " << program.arenaBytes << ";\n"
     << "  s.optimizer = " << quote(program.optimizer) << ";\n"
     << "  s.tensors = {\n"
     << "      // name, dtype, shape, role, init, init scale, offset, "
        "location\n";
  for (const Buffer &b : program.buffers) {
    if (!isInSpec(b))
      continue;
    os << "      {" << quote(b.name) << ", DType::" << getRuntimeDType(b.dtype)
       << ", {" << formatInts(b.shape)
       << "}, TensorRole::" << getRuntimeRole(b.kind)
       << ", InitKind::" << getRuntimeInit(b.init) << ", "
       << formatDouble(b.initScale) << ", " << b.offset << ", " << quote(b.loc)
       << "},\n";
  }
  os << "  };\n"
     << "  s.trainStep = trainStep;\n"
     << "  s.forward = forward;\n"
     << "  s.backend = &cairn::runtime::kCpuBackend;\n"
     << "  return s;\n"
     << "}();\n\n";
}

void CpuEmitter::emitMain() {
  os << "int main(int argc, char **argv) {\n";
  os << "  return cairn::runtime::runMain(spec, argc, argv);\n"
     << "}\n";
}

void cairn::codegen::emitCpuProgram(const Program &program,
                                    llvm::StringRef modelSource,
                                    llvm::raw_ostream &os) {
  CpuEmitter(program, modelSource, os).emit();
}
