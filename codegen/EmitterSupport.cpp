//===- EmitterSupport.cpp - What the CPU and CUDA emitters share ----------===//

#include "codegen/EmitterSupport.h"
#include "codegen/KernelCalls.h"

#include "ir/CairnKernelOps.h"
#include "ir/TrainingSettings.h"

#include "llvm/ADT/TypeSwitch.h"

#include "llvm/ADT/StringMap.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

using namespace mlir;
using namespace cairn;
using namespace cairn::codegen;

namespace {

/// Longest model-file line quoted in a comment.
constexpr size_t kMaxQuotedLine = 72;

const char *getRuntimeRole(BufferKind kind) {
  switch (kind) {
  case BufferKind::input:
    return "Input";
  case BufferKind::param:
    return "Param";
  case BufferKind::buffer:
    return "Buffer";
  case BufferKind::optimizer:
    return "OptimizerState";
  case BufferKind::grad:
    return "Gradient"; // per-step, reported through StepContext::observe
  case BufferKind::output:
    return "Output";
  default:
    break;
  }
  llvm_unreachable("only persistent buffers and gradients are in the spec");
}

/// The runtime's spelling of an initialiser (runtime/Program.h).
const char *getRuntimeInit(std::optional<cairn::InitKind> kind) {
  if (!kind)
    return "None";
  switch (*kind) {
  case cairn::InitKind::zeros:
    return "Zeros";
  case cairn::InitKind::ones:
    return "Ones";
  case cairn::InitKind::uniform:
    return "Uniform";
  case cairn::InitKind::normal:
    return "Normal";
  }
  llvm_unreachable("unknown init kind");
}

/// Names the generated code declares itself, and C++'s keywords: a tensor
/// named like one gets a suffix.
const llvm::StringSet<> &getReservedNames() {
  static const llvm::StringSet<> names = [] {
    llvm::StringSet<> names = {
        // Ours.
        "arena", "ctx", "spec", "main", "trainStep", "forward", "evalLoss",
        "cairn", "std", "i", "r", "b", "kValues", "kShape", "kInShape",
        "kOutShape", "kPerm", "kStart", "kStep", "kStrides", "kLhsStrides",
        "kRhsStrides", "kLhsOffsets", "kRhsOffsets", "kReduced", "kFull",
        "kPart", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
        "uint16_t", "uint32_t", "uint64_t", "size_t", "NULL",
        // C++17 keywords and alternative tokens.
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
        "bool", "break", "case", "catch", "char", "char16_t", "char32_t",
        "class", "compl", "const", "constexpr", "const_cast", "continue",
        "decltype", "default", "delete", "do", "double", "dynamic_cast", "else",
        "enum", "explicit", "export", "extern", "false", "float", "for",
        "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace",
        "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
        "or_eq", "private", "protected", "public", "register",
        "reinterpret_cast", "return", "short", "signed", "sizeof", "static",
        "static_assert", "static_cast", "struct", "switch", "template", "this",
        "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
        "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t",
        "while", "xor", "xor_eq",
        // A parallel loop's chunk, a chain's block.
        "begin", "end", "first", "count"};
    // A chain's registers, and its dropouts' keep bytes, scales and streams.
    for (unsigned k = 0; k < kMaxChainInputs + kMaxChainOps; ++k)
      for (const char *prefix : {"r", "keep", "kKeepScale", "kStream"})
        names.insert(prefix + std::to_string(k));
    return names;
  }();
  return names;
}

} // namespace

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

const char *cairn::codegen::getCType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "float";
  case DType::F64:
    return "double";
  case DType::I32:
    return "int32_t";
  case DType::I64:
    return "int64_t";
  case DType::U8:
    return "uint8_t";
  case DType::F16:
  case DType::BF16:
    // Their bits: kernels widen them to float32 as they read them and
    // round as they write (Convert.h), or read float32 copies.
    return "uint16_t";
  }
  llvm_unreachable("unknown dtype");
}

std::string cairn::codegen::formatReal(double value, bool isFloat) {
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

std::string cairn::codegen::formatDouble(double value) {
  return formatReal(value, false);
}

std::string cairn::codegen::formatInt(int64_t value) {
  // -2^63 has no literal: it is the negation of a too-large one.
  if (value == INT64_MIN)
    return "(-9223372036854775807 - 1)";
  return std::to_string(value);
}

std::string cairn::codegen::formatBool(bool value) {
  return value ? "true" : "false";
}

std::string cairn::codegen::formatRealOf(Value typedBy, double value) {
  return formatReal(
      value, cast<MemRefType>(typedBy.getType()).getElementType().isF32());
}

bool cairn::codegen::isHalfBuffer(Value value) {
  Type element = cast<MemRefType>(value.getType()).getElementType();
  return element.isF16() || element.isBF16();
}

std::string cairn::codegen::formatComputedRealOf(Value typedBy, double value) {
  return isHalfBuffer(typedBy) ? formatReal(value, /*isFloat=*/true)
                               : formatRealOf(typedBy, value);
}

std::string cairn::codegen::formatSizeOf(Value value) {
  return std::string("sizeof(") + getElementCType(value) + ")";
}

int64_t cairn::codegen::getNumElements(Value value) {
  return cast<MemRefType>(value.getType()).getNumElements();
}

std::string cairn::codegen::formatInts(llvm::ArrayRef<int64_t> values) {
  return formatList(values, formatInt);
}

std::string cairn::codegen::formatShape(llvm::ArrayRef<int64_t> shape) {
  return "[" + formatInts(shape) + "]";
}

std::string cairn::codegen::quote(llvm::StringRef text) {
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

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

std::vector<std::string>
cairn::codegen::nameIdentifiers(const KernelGraph &program,
                                const llvm::StringSet<> &extraReserved) {
  std::vector<std::string> identifiers;
  std::set<std::string> used;
  for (const Buffer &b : program.buffers) {
    std::string id;
    for (char c : b.name)
      id += llvm::isAlnum(c) ? c : '_';
    if (id.empty() || !llvm::isAlpha(id[0]))
      id = "t" + id;
    std::string unique = id;
    for (int n = 2; used.count(unique) || getReservedNames().contains(unique) ||
                    extraReserved.contains(unique);
         ++n)
      unique = id + "_" + std::to_string(n);
    used.insert(unique);
    identifiers.push_back(unique);
  }
  return identifiers;
}

std::vector<int> cairn::codegen::getSpecOrder(const KernelGraph &program) {
  std::vector<int> order;
  llvm::StringMap<int> persistent;
  for (const Buffer &b : program.buffers)
    if (isPersistent(b.kind)) {
      order.push_back(b.id);
      persistent[b.name] = b.id;
    }
  // Gradients in the order of their params ("grad.fc1.weight" after
  // "grad.fc1.bias" when fc1.bias comes first), whatever order the step
  // computes them in.
  std::vector<std::pair<int, int>> gradients; // (param id, gradient id)
  for (const Buffer &b : program.buffers) {
    if (b.kind != BufferKind::grad)
      continue;
    llvm::StringRef name(b.name);
    auto param = persistent.find(name.drop_front(llvm::StringRef("grad.").size()));
    gradients.push_back({name.starts_with("grad.") && param != persistent.end()
                             ? param->second
                             : int(program.buffers.size()),
                         b.id});
  }
  llvm::stable_sort(gradients);
  for (auto [param, id] : gradients)
    order.push_back(id);
  return order;
}

std::vector<int> cairn::codegen::getSpecIndices(const KernelGraph &program) {
  std::vector<int> specIndex(program.buffers.size(), -1);
  int next = 0;
  for (int id : getSpecOrder(program))
    specIndex[id] = next++;
  return specIndex;
}

void cairn::codegen::emitBufferPointer(llvm::raw_ostream &os, unsigned indent,
                                       const KernelGraph &program, int id,
                                       llvm::StringRef identifier) {
  const Buffer &b = program.buffers[id];
  const char *type = getCType(b.dtype);
  os.indent(indent) << type << " *" << identifier << " = reinterpret_cast<"
                    << type << " *>(arena + " << b.offset << "); // "
                    << stringifyBufferKind(b.kind) << " " << formatShape(b.shape);
  if (b.isAlias())
    os << ", a view of " << program.buffers[program.getAliasRoot(id)].name;
  os << "\n";
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

llvm::SmallVector<llvm::StringRef>
cairn::codegen::splitSourceLines(llvm::StringRef source) {
  llvm::SmallVector<llvm::StringRef> lines;
  source.split(lines, '\n');
  return lines;
}

std::string
cairn::codegen::describeKernel(const Kernel &k, const KernelGraph &program,
                               llvm::ArrayRef<llvm::StringRef> sourceLines) {
  std::string text = k.loc;
  if (!k.layer.empty())
    text += " " + k.layer;
  text += " ";
  text += k.kind == CopyKernelOp::getOperationName()
              ? llvm::StringRef("copy")
              : llvm::StringRef(k.opName).rsplit('.').second;
  // The location is "file:line:col"; quote that line when it is the model's.
  llvm::StringRef rest = k.loc;
  auto [fileLine, col] = rest.rsplit(':');
  auto [file, lineText] = fileLine.rsplit(':');
  unsigned lineNumber = 0;
  if (file == program.sourceFile && !lineText.getAsInteger(10, lineNumber) &&
      lineNumber >= 1 && lineNumber <= sourceLines.size()) {
    std::string quoted;
    for (char c : sourceLines[lineNumber - 1].trim())
      quoted += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    if (quoted.size() > kMaxQuotedLine)
      quoted = quoted.substr(0, kMaxQuotedLine - 3) + "...";
    // A backslash would continue the comment onto the next line.
    while (!quoted.empty() && quoted.back() == '\\')
      quoted.pop_back();
    text += ": " + quoted;
  }
  return text;
}

std::vector<AfterKernel>
cairn::codegen::collectAfterKernels(const KernelGraph &program,
                                    const StepKernels &step) {
  std::vector<AfterKernel> after(step.kernels.size());
  std::vector<bool> handedOn(program.buffers.size(), false);
  for (const Buffer &b : program.buffers)
    if (b.inPlaceOf != kNoBuffer)
      handedOn[b.inPlaceOf] = true;
  for (const Buffer &b : program.buffers) {
    if (b.step != step.step)
      continue;
    if (b.kind == BufferKind::grad && b.definedBy >= 0)
      after[b.definedBy].observed.push_back(b.id);
    if (!b.isAlias() && !isPersistent(b.kind) && b.bytes > 0 &&
        b.definedBy >= 0 && b.lastUse >= 0 && !handedOn[b.id])
      after[b.lastUse].dying.push_back(b.id);
  }
  return after;
}

void cairn::codegen::emitAfterKernel(llvm::raw_ostream &os, unsigned indent,
                                     const KernelGraph &program,
                                     const AfterKernel &after,
                                     llvm::ArrayRef<int> specIndices,
                                     llvm::ArrayRef<std::string> identifiers,
                                     llvm::StringRef poisonCall) {
  for (int id : after.observed)
    os.indent(indent) << "if (ctx.observe) ctx.observe(ctx.observer, "
                      << specIndices[id] << ", arena); // "
                      << program.buffers[id].name << "\n";
  if (after.dying.empty())
    return;
  os.indent(indent) << "if (ctx.poison) {\n";
  for (int id : after.dying)
    os.indent(indent) << "  " << poisonCall << "arena + "
                      << program.buffers[id].offset << ", "
                      << program.buffers[id].getUsableBytes() << "); // "
                      << identifiers[id] << "\n";
  os.indent(indent) << "}\n";
}

//===----------------------------------------------------------------------===//
// The program
//===----------------------------------------------------------------------===//

void cairn::codegen::emitProgramSpec(llvm::raw_ostream &os,
                                     const KernelGraph &program,
                                     llvm::StringRef backend) {
  os << "/// Every named tensor: the runtime initialises, loads, saves, feeds "
        "and reads\n/// them at these offsets.\n"
     << "static const cairn::runtime::ProgramSpec spec"
     << getDeviceSuffix(program) << " = [] {\n"
     << "  using cairn::runtime::DType;\n"
     << "  using cairn::runtime::InitKind;\n"
     << "  using cairn::runtime::TensorRole;\n"
     << "  cairn::runtime::ProgramSpec s;\n"
     << "  s.model = " << quote(program.model) << ";\n"
     << "  s.sourceFile = " << quote(program.sourceFile) << ";\n"
     << "  s.batch = " << program.batch << ";\n"
     << "  s.arenaBytes = " << program.arenaBytes << ";\n"
     << "  s.optimizer = " << quote(program.optimizer) << ";\n";
  if (program.devices > 1)
    os << "  s.device = " << program.device << ";\n"
       << "  s.devices = " << program.devices << ";\n";
  if (program.replicas > 1)
    os << "  s.replicas = " << program.replicas << ";\n";
  if (program.syncBatchNorm)
    os << "  s.syncBatchNorm = true;\n";
  if (!program.lrSchedule.empty()) {
    os << "  s.baseLr = " << formatDouble(program.baseLr) << ";\n"
       << "  s.lrSchedule = {\n"
       << "      // kind, step_size, gamma, T_max, eta_min, start_factor, "
          "end_factor, total_iters\n";
    for (const runtime::LrScheduler &s : program.lrSchedule)
      os << "      {cairn::runtime::LrSchedulerKind::"
         << getLrSchedulerName(s.kind) << ", " << s.stepSize << ", "
         << formatDouble(s.gamma) << ", " << s.tMax << ", "
         << formatDouble(s.etaMin) << ", " << formatDouble(s.startFactor)
         << ", " << formatDouble(s.endFactor) << ", " << s.totalIters << "},\n";
    os << "  };\n";
  }
  if (program.loss.kind != runtime::LossKind::Unknown)
    os << "  s.loss = {cairn::runtime::LossKind::"
       << (program.loss.kind == runtime::LossKind::CrossEntropy ? "CrossEntropy"
                                                                : "MseLoss")
       << ", " << quote(program.loss.target) << ", "
       << formatDouble(program.loss.labelSmoothing) << "};\n";
  os << "  s.forwardInputs = {";
  llvm::interleaveComma(program.getStepInputs(StepKind::forward), os,
                        [&](const std::string &name) { os << quote(name); });
  os << "};\n";
  os << "  s.tensors = {\n"
     << "      // name, dtype, shape, role, init, init scale, zeroed row, "
        "offset, location\n";
  for (int id : getSpecOrder(program)) {
    const Buffer &b = program.buffers[id];
    os << "      {" << quote(b.name)
       << ", DType::" << runtime::dtypeName(b.dtype) << ", {"
       << formatInts(b.shape) << "}, TensorRole::" << getRuntimeRole(b.kind)
       << ", InitKind::" << getRuntimeInit(b.init) << ", "
       << formatDouble(b.initScale) << ", " << b.initZeroRow << ", " << b.offset
       << ", " << quote(b.loc) << "},\n";
  }
  os << "  };\n";
  // The training step's kernels, for `EXE train --profile`: named by the
  // buffer each writes, as the plan and `cairn --kernel-times` name them.
  os << "  s.trainKernels = {\n"
     << "      // name, kernel op, location\n";
  for (const Kernel &kernel : program.trainStep.kernels)
    os << "      {" << quote(kernel.name) << ", " << quote(kernel.kind) << ", "
       << quote(kernel.loc) << "},\n";
  os << "  };\n"
     << "  s.trainStep = trainStep" << getDeviceSuffix(program) << ";\n"
     << "  s.forward = forward" << getDeviceSuffix(program) << ";\n"
     << (program.evalLoss.kernels.empty()
             ? ""
             : "  s.evalLoss = evalLoss" + getDeviceSuffix(program) + ";\n")
     << "  s.backend = " << backend << ";\n"
     << "  return s;\n"
     << "}();\n\n";
}

std::string cairn::codegen::getDeviceSuffix(const KernelGraph &program) {
  return program.devices > 1 ? "Device" + std::to_string(program.device) : "";
}

void cairn::codegen::emitMain(llvm::raw_ostream &os, int64_t devices,
                              int64_t replicas) {
  os << "int main(int argc, char **argv) {\n";
  if (replicas > 1) {
    os << "  // One process per replica, launched by mpirun.\n"
       << "  return cairn::runtime::runReplicatedMain(spec, "
          "cairn::runtime::openMpiTransport, argc, argv);\n"
       << "}\n";
    return;
  }
  if (devices == 1) {
    os << "  return cairn::runtime::runMain(spec, argc, argv);\n"
       << "}\n";
    return;
  }
  os << "  // One process per device, launched by mpirun: each runs its "
        "rank's spec.\n"
     << "  static const cairn::runtime::ProgramSpec *const kDevices[] = {";
  for (int64_t device = 0; device < devices; ++device)
    os << (device ? ", " : "") << "&specDevice" << device;
  os << "};\n"
     << "  return cairn::runtime::runPartitionedMain(kDevices, " << devices
     << ", cairn::runtime::openMpiTransport, argc, argv);\n"
     << "}\n";
}

bool cairn::codegen::isTableKernel(Operation *op) {
  return isa<PermuteKernelOp, SliceKernelOp, SliceGradKernelOp, ConcatKernelOp,
             BroadcastKernelOp, ReduceSumKernelOp, ClipCoefficientKernelOp>(op);
}

void cairn::codegen::emitGradientTables(
    llvm::raw_ostream &os, unsigned indent, ValueRange grads,
    llvm::StringRef type, llvm::function_ref<std::string(Value)> pointer,
    llvm::StringRef suffix) {
  // A device of a split model may have none of the gradients (C++ has no
  // empty arrays).
  if (grads.empty()) {
    os.indent(indent) << "const " << type << " *const *kGrads" << suffix
                      << " = nullptr;\n";
    os.indent(indent) << "const int64_t *kSizes" << suffix << " = nullptr;\n";
    return;
  }
  os.indent(indent) << "const " << type << " *const kGrads" << suffix
                    << "[] = {";
  llvm::interleaveComma(grads, os, [&](Value grad) { os << pointer(grad); });
  os << "};\n";
  os.indent(indent) << "static const int64_t kSizes" << suffix << "[] = {";
  llvm::interleaveComma(grads, os, [&](Value grad) {
    os << cast<MemRefType>(grad.getType()).getNumElements();
  });
  os << "};\n";
}

FoundInfGradients cairn::codegen::splitFoundInfGradients(ValueRange grads) {
  FoundInfGradients split;
  SmallVector<Value> f16, bf16;
  for (Value grad : grads) {
    Type type = getElementTypeOrSelf(grad.getType());
    (type.isF16() ? f16 : type.isBF16() ? bf16 : split.wide).push_back(grad);
  }
  for (auto [suffix, group] :
       {std::pair<StringRef, SmallVector<Value> &>{"F16", f16}, {"Bf16", bf16}})
    if (!group.empty())
      split.half.push_back({suffix, getTemplateType(group.front()), group});
  return split;
}

void cairn::codegen::emitTableKernel(
    llvm::raw_ostream &os, unsigned indent, Operation *op,
    llvm::function_ref<std::string(Value)> pointer, const CallStyle &style) {
  auto line = [&]() -> llvm::raw_ostream & { return os.indent(indent); };
  auto shapeOf = [](Value value) {
    return cast<MemRefType>(value.getType()).getShape();
  };
  Value result = cast<KernelOpInterface>(op).getKernelOutputs().front();
  const char *type = getElementCType(result);
  std::string out = pointer(result);
  std::string sizeOf = formatSizeOf(result);
  // `ns::name<float>(context` for the typed calls, `ns::name(context` for
  // the byte copies.
  auto typed = [&](llvm::StringRef name) {
    return (style.ns + name + "<" + type + ">(" + style.context).str();
  };
  auto untyped = [&](llvm::StringRef name) {
    return (style.ns + name + "(" + style.context).str();
  };
  auto real = [&](double value) { return formatRealOf(result, value); };

  llvm::TypeSwitch<Operation *>(op)
      .Case([&](PermuteKernelOp k) {
        llvm::ArrayRef<int64_t> in = shapeOf(k.getInput());
        line() << "{\n";
        line() << "  static const int64_t kInShape[] = {" << formatInts(in)
               << "};\n";
        line() << "  static const int64_t kPerm[] = {"
               << formatInts(k.getPerm()) << "};\n";
        line() << "  " << untyped("permute") << in.size()
               << ", kInShape, kPerm, " << sizeOf << ", "
               << pointer(k.getInput()) << ", " << out << ");\n";
        line() << "}\n";
      })
      .Case<SliceKernelOp, SliceGradKernelOp>([&](auto k) {
        // slice reads part of its input; slice_grad writes dy into dx.
        bool grad = isa<SliceGradKernelOp>(k.getOperation());
        Value source = k.getOperation()->getOperand(0);
        llvm::ArrayRef<int64_t> full = shapeOf(grad ? result : source);
        llvm::ArrayRef<int64_t> part = shapeOf(grad ? source : result);
        line() << "{\n";
        line() << "  static const int64_t kFull[] = {" << formatInts(full)
               << "};\n";
        line() << "  static const int64_t kStart[] = {"
               << formatInts(k.getStart()) << "};\n";
        line() << "  static const int64_t kStep[] = {"
               << formatInts(k.getStep()) << "};\n";
        line() << "  static const int64_t kPart[] = {" << formatInts(part)
               << "};\n";
        line() << "  " << untyped(grad ? "insertSlice" : "extractSlice")
               << full.size() << ", kFull, kStart, kStep, kPart, " << sizeOf
               << ", " << pointer(source) << ", " << out << ");\n";
        line() << "}\n";
      })
      .Case([&](ConcatKernelOp k) {
        int64_t dim = k.getDim();
        llvm::ArrayRef<int64_t> shape = shapeOf(result);
        size_t rank = shape.size();
        line() << "{\n";
        line() << "  static const int64_t kFull[] = {" << formatInts(shape)
               << "};\n";
        line() << "  static const int64_t kStep[] = {"
               << formatInts(std::vector<int64_t>(rank, 1)) << "};\n";
        for (auto [input, start] : llvm::zip(k.getInputs(), k.getStarts())) {
          std::vector<int64_t> starts(rank, 0);
          starts[dim] = start;
          line() << "  {\n";
          line() << "    static const int64_t kStart[] = {"
                 << formatInts(starts) << "};\n";
          line() << "    static const int64_t kPart[] = {"
                 << formatInts(shapeOf(input)) << "};\n";
          line() << "    " << untyped("insertSlice") << rank
                 << ", kFull, kStart, kStep, kPart, " << sizeOf << ", "
                 << pointer(input) << ", " << out << ");\n";
          line() << "  }\n";
        }
        line() << "}\n";
      })
      .Case([&](BroadcastKernelOp k) {
        llvm::ArrayRef<int64_t> shape = shapeOf(result);
        line() << "{\n";
        line() << "  static const int64_t kShape[] = {" << formatInts(shape)
               << "};\n";
        line() << "  static const int64_t kStrides[] = {"
               << formatInts(k.getInStrides()) << "};\n";
        line() << "  " << typed("broadcastTo") << shape.size()
               << ", kShape, kStrides, " << real(1) << ", "
               << pointer(k.getInput()) << ", " << out << ");\n";
        line() << "}\n";
      })
      .Case([&](ReduceSumKernelOp k) {
        llvm::ArrayRef<int64_t> in = shapeOf(k.getInput());
        line() << "{\n";
        line() << "  static const int64_t kShape[] = {" << formatInts(in)
               << "};\n";
        line() << "  static const bool kReduced[] = {"
               << formatList(k.getReduced(), formatBool) << "};\n";
        // Typed by its input: a half one (the CPU's, isHalfStorageOp) is
        // read widened into a float32 result.
        line() << "  "
               << (style.ns + "reduceSum<" + getTemplateType(k.getInput()) +
                   ">(" + style.context)
               << in.size() << ", kShape, kReduced, " << real(k.getAlpha())
               << ", " << pointer(k.getInput()) << ", " << out << ");\n";
        line() << "}\n";
      })
      .Case([&](ClipCoefficientKernelOp k) {
        line() << "{\n";
        emitGradientTables(os, indent + 2, k.getGrads(), type, pointer);
        std::optional<llvm::ArrayRef<int64_t>> deviceChunks =
            k.getDeviceChunks();
        if (deviceChunks)
          line() << "  static const int64_t kDeviceChunks[] = {"
                 << formatInts(*deviceChunks) << "};\n";
        line() << "  " << typed("clipCoefficient") << k.getGrads().size()
               << ", kGrads, kSizes, " << formatDouble(k.getMaxNorm()) << ", "
               << formatDouble(k.getNormType()) << ", "
               << pointer(k.getWorkspace()) << ", " << out;
        // A device of a split model: every device's norm.
        if (deviceChunks)
          os << ", kDeviceChunks, " << style.devicesSum;
        os << ");\n";
        line() << "}\n";
      })
      .Default([](Operation *) {
        llvm_unreachable("not a table kernel (isTableKernel)");
      });
}
