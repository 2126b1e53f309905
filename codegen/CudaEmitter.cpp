//===- CudaEmitter.cpp - Kernel lists as CUDA C++ -------------------------===//
//
// The printed code is host code: one pointer into the device arena per
// buffer a step uses, then one commented call per kernel into
// cairn::cuda (runtime/cuda/Kernels.h, Library.h), each launching on the
// Context's stream. Nothing in it allocates or synchronises, so the
// executor can capture a step as a CUDA graph; the only device data it
// defines are the tables of Constant kernels, as __device__ arrays.
//
// Fusions. The plan (offsets, lifetimes, in-place decisions) was made for
// the kernel list as lowered, one kernel after the other; a fused call must
// not change what any byte holds when a later kernel reads it:
//  - An element-wise chain writes only its last output, during its first
//    kernel's turn rather than its last's. The intermediates are never
//    written: their bytes stay whatever the plan put there, so they are not
//    poisoned. The output's bytes may belong, earlier in the chain, to an
//    input that dies inside it; the chain is cut short unless every such
//    input either has bytes apart from the output's or is the very region
//    the output takes over in place (same element, same address). A
//    one-element fill between two members runs before the chain, so its
//    bytes must be apart from the inputs that die before its own turn.
//  - A relu folded into its linear's epilogue writes relu's output during
//    the linear: that output must be the linear's bytes (relu in place) or
//    the relu must come right after the linear, and its bytes must be apart
//    from the linear's inputs and workspace.
//  - Adjacent optimizer updates only touch persistent state and their
//    gradients, which are live until then, so one launch does the same.
// Each fused call is followed by the union of its kernels' observe and
// poison lists, less the buffers it never writes.
//
//===----------------------------------------------------------------------===//

#include "codegen/CudaEmitter.h"

#include "codegen/EmitterSupport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <set>

using namespace cairn;
using namespace cairn::codegen;

namespace {

/// How this emitter spells runtime calls (emitTableKernel).
const CallStyle kCallStyle = {"cairn::cuda::", "cx, "};

/// The most inputs and ops of one fused chain: cairn::cuda::kMaxChainInputs
/// and kMaxChainOps (runtime/cuda/Kernels.h, which needs the CUDA headers
/// this library is built without). The generated code static_asserts that
/// its chains fit the runtime's.
constexpr size_t kMaxChainInputs = 4;
constexpr size_t kMaxChainOps = 8;

/// The local names the CUDA code declares besides those of both emitters:
/// a tensor named like one gets a suffix.
const llvm::StringSet<> &getCudaReservedNames() {
  static const llvm::StringSet<> names = {
      "cx",       "kChain",     "kInputs",      "kUpdates",
      "kAddress", "kConstants", "deviceAddress"};
  return names;
}

bool isElementwise(KernelKind kind) { return isElementwiseArithmetic(kind); }

bool isUpdate(KernelKind kind) {
  return kind == KernelKind::SgdUpdate || kind == KernelKind::AdamUpdate;
}

const char *getBinaryOpName(KernelKind kind) {
  switch (kind) {
  case KernelKind::Add:
    return "Add";
  case KernelKind::Sub:
    return "Sub";
  case KernelKind::Mul:
    return "Mul";
  case KernelKind::Div:
    return "Div";
  default:
    break;
  }
  llvm_unreachable("not a binary kernel");
}

/// `cairn::cuda::Activation::X` of an activation or its gradient.
std::string getActivation(const Kernel &k) {
  switch (k.kind) {
  case KernelKind::Relu:
  case KernelKind::ReluGrad:
    return "cairn::cuda::Activation::Relu";
  case KernelKind::Sigmoid:
  case KernelKind::SigmoidGrad:
    return "cairn::cuda::Activation::Sigmoid";
  case KernelKind::Tanh:
  case KernelKind::TanhGrad:
    return "cairn::cuda::Activation::Tanh";
  default:
    return k.attrs.getBool("tanh") ? "cairn::cuda::Activation::GeluTanh"
                                   : "cairn::cuda::Activation::GeluExact";
  }
}

/// The chain op computing kernel `k` (element-wise).
const char *getChainOpKind(const Kernel &k) {
  switch (k.kind) {
  case KernelKind::Add:
    return "Add";
  case KernelKind::Sub:
    return "Sub";
  case KernelKind::Mul:
    return "Mul";
  case KernelKind::Div:
    return "Div";
  case KernelKind::Relu:
    return "Relu";
  case KernelKind::Sigmoid:
    return "Sigmoid";
  case KernelKind::Tanh:
    return "Tanh";
  case KernelKind::Gelu:
    return k.attrs.getBool("tanh") ? "GeluTanh" : "GeluExact";
  case KernelKind::ReluGrad:
    return "ReluGrad";
  case KernelKind::SigmoidGrad:
    return "SigmoidGrad";
  case KernelKind::TanhGrad:
    return "TanhGrad";
  case KernelKind::GeluGrad:
    return k.attrs.getBool("tanh") ? "GeluTanhGrad" : "GeluExactGrad";
  default:
    break;
  }
  llvm_unreachable("not an element-wise kernel");
}

/// The hyper-parameters an update launch shares between its tensors.
const char *const kSgdSettings[] = {"lr", "momentum", "dampening",
                                    "weight_decay"};
const char *const kAdamSettings[] = {"lr", "beta1", "beta2", "eps",
                                     "weight_decay"};

/// The kernels of one element-wise chain, in list order. Between its
/// members there may be Fills of one element that only the next member
/// reads (the lowering puts each scalar constant right before its use):
/// the chain's call runs them first, and their values are its scalar
/// inputs.
struct ChainKernels {
  std::vector<int> members;
  std::vector<int> fills;
};

/// How one step's kernels become calls.
struct StepCalls {
  /// By kernel index: how many kernels from this one on its call covers (an
  /// element-wise chain with the fills it runs first, or a group of
  /// updates), 0 for a kernel an earlier call covers.
  std::vector<int> span;
  /// By kernel index: the relu folded into this linear's epilogue, or -1.
  std::vector<int> foldedRelu;
  /// By kernel index: a relu folded into an earlier linear.
  std::vector<bool> folded;
  /// By buffer id: never written by the fused calls (chain intermediates,
  /// a linear's output before its folded relu).
  std::vector<bool> elided;
};

class CudaEmitter {
public:
  CudaEmitter(const KernelGraph &program, llvm::StringRef modelSource,
              llvm::raw_ostream &os)
      : program(program), os(os), sourceLines(splitSourceLines(modelSource)),
        identifiers(nameIdentifiers(program, getCudaReservedNames())),
        specIndex(getSpecIndices(program)) {}

  void emit();

private:
  /// Prints one step function into `out`.
  void emitStep(const StepKernels &step, llvm::StringRef function,
                llvm::StringRef summary, llvm::raw_ostream &out);

  //===--- Fusion decisions
  //------------------------------------------------===//
  StepCalls planCalls(const StepKernels &step) const;
  bool isChainable(const Kernel &k) const;
  /// A Fill of one element that a chain may run first (ChainKernels).
  bool isScalarFill(const Kernel &k) const;
  /// The element-wise chain starting at kernel `first`: the longest, cut
  /// back until it is safe (file comment); one member: no chain.
  ChainKernels findChain(const StepKernels &step, int first,
                         const std::vector<std::vector<int>> &readers,
                         const std::vector<bool> &covered) const;
  bool isChainSafe(const StepKernels &step, const ChainKernels &chain) const;
  /// The relu kernel whose epilogue linear `index` can compute, or -1.
  int findFoldableRelu(const StepKernels &step, int index,
                       const std::vector<std::vector<int>> &readers) const;
  bool sameUpdateSettings(const Kernel &a, const Kernel &b) const;

  //===--- Calls
  //-----------------------------------------------------------===//
  void emitKernel(const Kernel &k, int foldedRelu, const StepKernels &step);
  void emitChain(const StepKernels &step, int first, int span);
  void emitUpdates(const StepKernels &step, int first, int count);
  void emitBinary(const Kernel &k);
  void emitMatmul(const Kernel &k);
  void emitConstant(const Kernel &k);

  const Buffer &buffer(int id) const { return program.buffers[id]; }
  int root(int id) const { return program.getAliasRoot(id); }
  /// The buffer whose bytes `id` is written over in place, transitively.
  int inPlaceRoot(int id) const {
    while (buffer(id).inPlaceOf != kNoBuffer)
      id = buffer(id).inPlaceOf;
    return id;
  }
  /// Whether the bytes of buffers `a` and `b` (their roots') intersect.
  bool overlaps(int a, int b) const;
  /// Persistent or a gradient: the runtime reads it by its spec entry.
  bool isSpecTensor(int id) const { return isInSpec(buffer(root(id))); }

  /// The pointer to buffer `id` (declared at the step's top), or nullptr
  /// for an absent one.
  std::string ptr(int id) {
    if (id == kNoBuffer)
      return "nullptr";
    used.insert(id);
    return identifiers[id];
  }
  std::string in(const Kernel &k, unsigned i) { return ptr(k.inputs[i]); }
  std::string out(const Kernel &k, unsigned i) { return ptr(k.outputs[i]); }
  /// `cairn::cuda::name<float>` for the element type of the kernel's output
  /// 0 (of input 0 when that output is absent).
  std::string call(const Kernel &k, llvm::StringRef name) const;
  std::string real(const Kernel &k, double value) const {
    return formatReal(value, buffer(k.outputs[0]).dtype == DType::F32);
  }
  std::string sizeOf(int id) const {
    return std::string("sizeof(") + getCType(buffer(id).dtype) + ")";
  }
  /// `workspace, bytes` of kernel `k`'s scratch, `nullptr, 0` without.
  std::string workspace(const Kernel &k);
  /// The next call-site id of a library call (Context::site): unique in
  /// the program, numbered across both steps.
  int site() { return nextSite++; }
  llvm::raw_ostream &line() { return body->indent(indent); }
  /// emitTableKernel into the step's body, its buffers declared.
  void emitTable(const Kernel &k) {
    for (int id : llvm::concat<const int>(k.inputs, k.outputs))
      ptr(id);
    emitTableKernel(*body, indent, program, identifiers, k, kCallStyle);
  }

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

void CudaEmitter::emit() {
  // The steps first: they name the constant tables printed above them.
  std::string steps;
  llvm::raw_string_ostream stepsOs(steps);
  emitStep(program.trainStep, "trainStep",
           "One training step: forward, loss, backward, optimizer update.",
           stepsOs);
  emitStep(program.forward, "forward",
           "Inference: reads the image, the params and buffers; writes "
           "\"output\".",
           stepsOs);

  os << "// Generated by cairn " << CAIRN_VERSION << " from "
     << program.sourceFile << ": model " << program.model << ", batch "
     << program.batch << ".\n"
     << "// The training step and the forward pass as CUDA kernel and "
        "library calls on one\n// device arena of "
     << program.arenaBytes
     << " bytes (the executor allocates it; this code allocates "
        "nothing).\n\n";
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
  if (!constants.empty()) {
    os << "/// The values of the model's constant tensors, copied into the "
          "arena by the\n/// kernels that define them.\n"
       << "namespace kConstants {\n"
       << constants << "} // namespace kConstants\n\n"
       << "/// The device address of a constant table. Called on a step's "
          "first run, which\n/// the executor runs eagerly: "
          "cudaGetSymbolAddress may not run while a graph is\n/// being "
          "captured.\n"
       << "template <typename T, size_t N>\n"
       << "static const void *deviceAddress(const T (&table)[N]) {\n"
       << "  void *address = nullptr;\n"
       << "  CAIRN_CUDA_CHECK(cudaGetSymbolAddress(&address, table));\n"
       << "  return address;\n"
       << "}\n\n";
  }
  os << steps;
  emitProgramSpec(os, program, "&cairn::cuda::kCudaBackend");
  emitMain(os);
}

void CudaEmitter::emitStep(const StepKernels &step, llvm::StringRef function,
                           llvm::StringRef summary, llvm::raw_ostream &out) {
  std::string text;
  llvm::raw_string_ostream textOs(text);
  body = &textOs;
  used.clear();
  indent = 2;

  StepCalls calls = planCalls(step);
  std::vector<AfterKernel> after = collectAfterKernels(program, step);
  // The union of the lists of kernels [first, first + count), less the
  // buffers the calls never write, in buffer order.
  auto emitAfter = [&](int first, int count) {
    AfterKernel merged;
    for (int index = first; index < first + count; ++index) {
      llvm::append_range(merged.observed, after[index].observed);
      for (int id : after[index].dying)
        if (!calls.elided[id])
          merged.dying.push_back(id);
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
    if (calls.folded[index]) {
      line() << "// " << describeKernel(k, program, sourceLines) << "\n";
      line() << "// (computed by the linear above: cuBLASLt's relu "
                "epilogue)\n";
      emitAfter(index, 1);
      ++index;
      continue;
    }
    int span = calls.span[index];
    if (isUpdate(k.kind)) {
      emitUpdates(step, index, span);
    } else if (span > 1) {
      emitChain(step, index, span);
    } else {
      line() << "// " << describeKernel(k, program, sourceLines) << "\n";
      emitKernel(k, calls.foldedRelu[index], step);
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
// Fusion decisions
//===----------------------------------------------------------------------===//

bool CudaEmitter::overlaps(int a, int b) const {
  const Buffer &x = buffer(root(a)), &y = buffer(root(b));
  return x.bytes > 0 && y.bytes > 0 && x.offset < y.offset + y.bytes &&
         y.offset < x.offset + x.bytes;
}

StepCalls CudaEmitter::planCalls(const StepKernels &step) const {
  const std::vector<Kernel> &kernels = step.kernels;
  int e = kernels.size();
  StepCalls calls;
  calls.span.assign(e, 1);
  calls.foldedRelu.assign(e, -1);
  calls.folded.assign(e, false);
  calls.elided.assign(program.buffers.size(), false);

  // The kernels reading each buffer, through any of its views.
  std::vector<std::vector<int>> readers(program.buffers.size());
  for (int index = 0; index < e; ++index)
    for (int id : kernels[index].inputs)
      if (id != kNoBuffer &&
          (readers[root(id)].empty() || readers[root(id)].back() != index))
        readers[root(id)].push_back(index);

  std::vector<bool> covered(e, false);
  for (int index = 0; index < e; ++index) {
    if (covered[index])
      continue;
    const Kernel &k = kernels[index];
    if (k.kind == KernelKind::Linear) {
      int relu = findFoldableRelu(step, index, readers);
      if (relu >= 0) {
        calls.foldedRelu[index] = relu;
        calls.folded[relu] = true;
        covered[relu] = true;
        calls.elided[k.outputs[0]] = true;
      }
      continue;
    }
    if (isChainable(k)) {
      ChainKernels chain = findChain(step, index, readers, covered);
      if (chain.members.size() < 2)
        continue;
      int last = chain.members.back();
      calls.span[index] = last - index + 1;
      for (int m = index + 1; m <= last; ++m) {
        calls.span[m] = 0;
        covered[m] = true;
      }
      for (int m : llvm::ArrayRef<int>(chain.members).drop_back())
        calls.elided[kernels[m].outputs[0]] = true;
      continue;
    }
    // Adjacent updates with the same settings: one launch. The kernels are
    // not moved to make more of them adjacent: the memory-aware schedule
    // put each update right after its gradient is complete, so that the
    // gradient dies there (with --no-reorder they are all at the end of the
    // step and become one launch).
    if (isUpdate(k.kind)) {
      int last = index;
      while (last + 1 < e && sameUpdateSettings(k, kernels[last + 1]))
        ++last;
      calls.span[index] = last - index + 1;
      for (int m = index + 1; m <= last; ++m) {
        calls.span[m] = 0;
        covered[m] = true;
      }
    }
  }
  return calls;
}

bool CudaEmitter::isChainable(const Kernel &k) const {
  if (!isElementwise(k.kind) || k.outputs.size() != 1 ||
      k.outputs[0] == kNoBuffer)
    return false;
  const Buffer &result = buffer(k.outputs[0]);
  int64_t n = result.getNumElements();
  if (!isFloat(result.dtype))
    return false;
  // Same-size operands or single elements: no strided broadcast.
  for (int id : k.inputs) {
    if (id == kNoBuffer || buffer(id).dtype != result.dtype)
      return false;
    int64_t elements = buffer(id).getNumElements();
    if (elements != n && elements != 1)
      return false;
  }
  return true;
}

bool CudaEmitter::isScalarFill(const Kernel &k) const {
  return k.kind == KernelKind::Fill && k.outputs[0] != kNoBuffer &&
         buffer(k.outputs[0]).getNumElements() == 1 &&
         isFloat(buffer(k.outputs[0]).dtype) && !isSpecTensor(k.outputs[0]);
}

ChainKernels
CudaEmitter::findChain(const StepKernels &step, int first,
                       const std::vector<std::vector<int>> &readers,
                       const std::vector<bool> &covered) const {
  const std::vector<Kernel> &kernels = step.kernels;
  int64_t n = buffer(kernels[first].outputs[0]).getNumElements();
  ChainKernels chain;
  chain.members = {first};
  // Distinct buffers read from outside the chain, which take registers.
  std::set<int> inputs;
  auto addInputs = [&](const Kernel &k, std::set<int> &into) {
    for (int id : k.inputs) {
      bool intermediate = llvm::any_of(chain.members, [&](int m) {
        return kernels[m].outputs[0] == root(id);
      });
      if (!intermediate)
        into.insert(id);
    }
  };
  addInputs(kernels[first], inputs);
  // Fills seen since the last member, which join with the next one.
  std::vector<int> pendingFills;
  for (int next = first + 1, e = kernels.size(); next < e; ++next) {
    const Kernel &k = kernels[next];
    if (!covered[next] && isScalarFill(k) &&
        readers[k.outputs[0]].size() == 1 && readers[k.outputs[0]][0] > next) {
      pendingFills.push_back(next);
      continue;
    }
    int previous = kernels[chain.members.back()].outputs[0];
    // The previous result must be read by this kernel alone, and be nothing
    // the runtime reads by name (its bytes are never written); so must the
    // fills before it.
    if (covered[next] || !isChainable(k) ||
        buffer(k.outputs[0]).getNumElements() != n ||
        buffer(k.outputs[0]).dtype != buffer(previous).dtype ||
        isSpecTensor(previous) || readers[previous].size() != 1 ||
        readers[previous][0] != next ||
        chain.members.size() + 1 > kMaxChainOps ||
        llvm::any_of(pendingFills, [&](int fill) {
          return readers[kernels[fill].outputs[0]][0] != next;
        }))
      break;
    std::set<int> grown = inputs;
    addInputs(k, grown);
    if (grown.size() > kMaxChainInputs)
      break;
    inputs = std::move(grown);
    llvm::append_range(chain.fills, pendingFills);
    pendingFills.clear();
    chain.members.push_back(next);
  }
  while (chain.members.size() > 1 && !isChainSafe(step, chain)) {
    chain.members.pop_back();
    while (!chain.fills.empty() && chain.fills.back() > chain.members.back())
      chain.fills.pop_back();
  }
  return chain;
}

bool CudaEmitter::isChainSafe(const StepKernels &step,
                              const ChainKernels &chain) const {
  const std::vector<Kernel> &kernels = step.kernels;
  llvm::ArrayRef<int> members = chain.members;
  int last = members.back();
  int result = kernels[last].outputs[0];
  auto isIntermediate = [&](int r) {
    return llvm::any_of(members.drop_back(), [&](int other) {
      return kernels[other].outputs[0] == r;
    });
  };
  // The buffers read from outside the chain that die before kernel
  // `before`: their bytes may be another's from there on.
  auto diesBefore = [&](int r, int before) {
    return !isIntermediate(r) && !isPersistent(buffer(r).kind) &&
           buffer(r).lastUse < before;
  };
  for (int m : members) {
    for (int id : kernels[m].inputs) {
      int r = root(id);
      // One that lives through the last kernel is kept apart from the
      // result by the plan, unless the result is written over it in place;
      // one that dies inside the chain may give the result its bytes.
      if (diesBefore(r, last) && inPlaceRoot(r) != inPlaceRoot(result) &&
          overlaps(r, result))
        return false;
    }
  }
  // A fill runs before the chain, not at its own turn: its bytes must not
  // be those of an input that dies between the chain's start and that turn
  // (such as the value of an earlier fill).
  for (int fill : chain.fills)
    for (int m : members)
      if (m < fill)
        for (int id : kernels[m].inputs)
          if (diesBefore(root(id), fill) &&
              overlaps(root(id), kernels[fill].outputs[0]))
            return false;
  return true;
}

int CudaEmitter::findFoldableRelu(
    const StepKernels &step, int index,
    const std::vector<std::vector<int>> &readers) const {
  const Kernel &linear = step.kernels[index];
  int result = linear.outputs[0];
  if (result == kNoBuffer || isSpecTensor(result) ||
      readers[result].size() != 1)
    return -1;
  int reluIndex = readers[result][0];
  const Kernel &relu = step.kernels[reluIndex];
  if (relu.kind != KernelKind::Relu || reluIndex <= index ||
      relu.outputs[0] == kNoBuffer)
    return -1;
  int reluResult = relu.outputs[0];
  // The relu's result is written during the linear's turn: its bytes must
  // be free then (the linear's own, or the relu comes right next) ...
  bool inPlace = buffer(reluResult).inPlaceOf == result;
  if (!inPlace && reluIndex != index + 1)
    return -1;
  // ... and apart from everything the linear reads or scribbles on.
  for (int id : linear.inputs)
    if (id != kNoBuffer && overlaps(id, reluResult))
      return -1;
  if (linear.workspace != kNoBuffer && overlaps(linear.workspace, reluResult))
    return -1;
  return reluIndex;
}

bool CudaEmitter::sameUpdateSettings(const Kernel &a, const Kernel &b) const {
  if (a.kind != b.kind ||
      buffer(a.inputs[0]).dtype != buffer(b.inputs[0]).dtype)
    return false;
  if (a.kind == KernelKind::SgdUpdate) {
    for (const char *name : kSgdSettings)
      if (a.attrs.getDouble(name) != b.attrs.getDouble(name))
        return false;
    // Without momentum there is no momentum buffer.
    return a.attrs.getBool("nesterov") == b.attrs.getBool("nesterov") &&
           (a.inputs[2] == kNoBuffer) == (b.inputs[2] == kNoBuffer);
  }
  for (const char *name : kAdamSettings)
    if (a.attrs.getDouble(name) != b.attrs.getDouble(name))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

std::string CudaEmitter::call(const Kernel &k, llvm::StringRef name) const {
  int typed = k.outputs.empty() || k.outputs[0] == kNoBuffer ? k.inputs[0]
                                                             : k.outputs[0];
  return ("cairn::cuda::" + name + "<" + getCType(buffer(typed).dtype) + ">")
      .str();
}

std::string CudaEmitter::workspace(const Kernel &k) {
  if (k.workspace == kNoBuffer)
    return "nullptr, 0";
  return ptr(k.workspace) + ", " + std::to_string(buffer(k.workspace).bytes);
}

void CudaEmitter::emitChain(const StepKernels &step, int first, int span) {
  const std::vector<Kernel> &kernels = step.kernels;
  std::vector<int> members;
  for (int index = first; index < first + span; ++index) {
    if (kernels[index].kind != KernelKind::Fill) {
      members.push_back(index);
      continue;
    }
    // A scalar the chain reads, filled before it.
    line() << "// " << describeKernel(kernels[index], program, sourceLines)
           << "\n";
    emitKernel(kernels[index], -1, step);
  }
  line() << "// Fused element-wise chain: one kernel; the intermediates stay "
            "in registers\n";
  line() << "// and their buffers are never written.\n";
  for (int m : members)
    line() << "//   " << describeKernel(kernels[m], program, sourceLines)
           << "\n";

  const Kernel &lastKernel = kernels[members.back()];
  int result = lastKernel.outputs[0];
  int64_t n = buffer(result).getNumElements();
  // Registers: the inputs in the order the kernels read them, then one
  // per kernel; an intermediate is read from its kernel's register.
  auto intermediateIndex = [&](int id) -> int {
    for (size_t i = 0; i + 1 < members.size(); ++i)
      if (kernels[members[i]].outputs[0] == root(id))
        return i;
    return -1;
  };
  std::vector<int> inputs;
  for (int m : members)
    for (int id : kernels[m].inputs)
      if (intermediateIndex(id) < 0 && !llvm::is_contained(inputs, id))
        inputs.push_back(id);
  int numInputs = inputs.size();
  chainInputs = std::max(chainInputs, inputs.size());
  chainOps = std::max(chainOps, members.size());
  auto operand = [&](int id) {
    int i = intermediateIndex(id);
    if (i >= 0)
      return numInputs + i;
    return static_cast<int>(llvm::find(inputs, id) - inputs.begin());
  };

  line() << "{\n";
  line() << "  cairn::cuda::Chain kChain;\n";
  line() << "  kChain.numInputs = " << numInputs << ";\n";
  for (auto [i, id] : llvm::enumerate(inputs))
    if (buffer(id).getNumElements() != n)
      line() << "  kChain.scalarInput[" << i << "] = true;\n";
  line() << "  kChain.numOps = " << members.size() << ";\n";
  for (auto [i, m] : llvm::enumerate(members)) {
    const Kernel &k = kernels[m];
    int a = operand(k.inputs[0]);
    int b = k.inputs.size() > 1 ? operand(k.inputs[1]) : a;
    line() << "  kChain.ops[" << i
           << "] = {cairn::cuda::ChainOpKind::" << getChainOpKind(k) << ", "
           << numInputs + i << ", " << a << ", " << b << "};\n";
  }
  line() << "  kChain.result = " << numInputs + members.size() - 1 << ";\n";
  const char *type = getCType(buffer(result).dtype);
  line() << "  const " << type << " *const kInputs[] = {"
         << formatList(inputs, [&](int id) { return ptr(id); }) << "};\n";
  line() << "  cairn::cuda::elementwiseChain<" << type << ">(cx, kChain, " << n
         << ", kInputs, " << ptr(result) << ");\n";
  line() << "}\n";
}

void CudaEmitter::emitUpdates(const StepKernels &step, int first, int count) {
  const std::vector<Kernel> &kernels = step.kernels;
  const Kernel &k = kernels[first];
  bool adam = k.kind == KernelKind::AdamUpdate;
  if (count > 1)
    line() << "// " << count
           << " optimizer updates with the same settings in one launch:\n";
  for (int m = first; m < first + count; ++m)
    line() << "// " << (count > 1 ? "  " : "")
           << describeKernel(kernels[m], program, sourceLines) << "\n";
  line() << "{\n";
  // param, grad, state0 (momentum buffer or exp_avg), state1 (exp_avg_sq).
  line() << "  const cairn::cuda::UpdateTensor kUpdates[] = {\n";
  for (int m = first; m < first + count; ++m) {
    const Kernel &u = kernels[m];
    line() << "      {" << in(u, 0) << ", " << in(u, 1) << ", " << in(u, 2)
           << ", " << (adam ? in(u, 3) : "nullptr") << ", "
           << u.attrs.getInt("n") << "},\n";
  }
  line() << "  };\n";
  const KernelAttrs &at = k.attrs;
  if (adam)
    // Adam's bias correction counts steps from 1: cx.scalars->step + 1.
    line() << "  " << call(k, "adamUpdate") << "(cx, " << count
           << ", kUpdates, " << formatDouble(at.getDouble("lr")) << ", "
           << formatDouble(at.getDouble("beta1")) << ", "
           << formatDouble(at.getDouble("beta2")) << ", "
           << formatDouble(at.getDouble("eps")) << ", "
           << formatDouble(at.getDouble("weight_decay")) << ");\n";
  else
    // Momentum starts from the gradient on the run's first step.
    line() << "  " << call(k, "sgdUpdate") << "(cx, " << count << ", kUpdates, "
           << formatDouble(at.getDouble("lr")) << ", "
           << formatDouble(at.getDouble("momentum")) << ", "
           << formatDouble(at.getDouble("dampening")) << ", "
           << formatDouble(at.getDouble("weight_decay")) << ", "
           << formatBool(at.getBool("nesterov")) << ");\n";
  line() << "}\n";
}

void CudaEmitter::emitBinary(const Kernel &k) {
  const Buffer &lhs = buffer(k.inputs[0]), &rhs = buffer(k.inputs[1]),
               &result = buffer(k.outputs[0]);
  int64_t n = k.attrs.getInt("n");
  std::string op =
      std::string("cairn::cuda::BinaryOp::") + getBinaryOpName(k.kind);
  if (lhs.getNumElements() == n && rhs.getNumElements() == n) {
    line() << call(k, "binarySameShape") << "(cx, " << op << ", " << n << ", "
           << in(k, 0) << ", " << in(k, 1) << ", " << out(k, 0) << ");\n";
    return;
  }
  if ((lhs.getNumElements() == n && rhs.getNumElements() == 1) ||
      (lhs.getNumElements() == 1 && rhs.getNumElements() == n)) {
    bool scalarLhs = lhs.getNumElements() != n;
    line() << call(k, "binaryScalar") << "(cx, " << op << ", " << n << ", "
           << formatBool(scalarLhs) << ", " << in(k, 0) << ", " << in(k, 1)
           << ", " << out(k, 0) << ");\n";
    return;
  }
  line() << "{\n";
  line() << "  static const int64_t kShape[] = {" << formatInts(result.shape)
         << "};\n";
  line() << "  static const int64_t kLhsStrides[] = {"
         << formatInts(k.attrs.getInts("lhs_strides")) << "};\n";
  line() << "  static const int64_t kRhsStrides[] = {"
         << formatInts(k.attrs.getInts("rhs_strides")) << "};\n";
  line() << "  " << call(k, "binaryBroadcast") << "(cx, " << op << ", "
         << result.shape.size() << ", kShape, " << in(k, 0) << ", kLhsStrides, "
         << in(k, 1) << ", kRhsStrides, " << out(k, 0) << ");\n";
  line() << "}\n";
}

void CudaEmitter::emitMatmul(const Kernel &k) {
  const KernelAttrs &at = k.attrs;
  int64_t batch = at.getInt("batch"), m = at.getInt("m"), n = at.getInt("n");
  std::string head = formatBool(at.getBool("transpose_lhs")) + ", " +
                     formatBool(at.getBool("transpose_rhs")) + ", " +
                     formatInt(m) + ", " + formatInt(n) + ", " +
                     formatInt(at.getInt("k")) + ", " + real(k, 1) + ", ";
  std::string lda = formatInt(at.getInt("lda")),
              ldb = formatInt(at.getInt("ldb"));
  std::string scratch = workspace(k);
  int id = site();
  if (at.has("lhs_stride") && at.has("rhs_stride")) {
    if (batch == 1) {
      line() << call(k, "gemm") << "(cx, " << id << ", " << head << in(k, 0)
             << ", " << lda << ", " << in(k, 1) << ", " << ldb << ", "
             << real(k, 0) << ", " << out(k, 0) << ", " << n << ", " << scratch
             << ");\n";
      return;
    }
    line() << call(k, "batchedGemm") << "(cx, " << id << ", " << batch << ", "
           << head << in(k, 0) << ", " << lda << ", " << at.getInt("lhs_stride")
           << ", " << in(k, 1) << ", " << ldb << ", " << at.getInt("rhs_stride")
           << ", " << real(k, 0) << ", " << out(k, 0) << ", " << n << ", "
           << m * n << ", " << scratch << ");\n";
    return;
  }
  // A partial broadcast of the batch dimensions: one GEMM per matrix, all
  // of the same shape, so one call site (one cuBLASLt plan) serves them.
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
  line() << "    " << call(k, "gemm") << "(cx, " << id << ", " << head << a
         << ", " << lda << ", " << b << ", " << ldb << ", " << real(k, 0)
         << ", " << out(k, 0) << " + b * " << m * n << ", " << n << ", "
         << scratch << ");\n";
  line() << "}\n";
}

void CudaEmitter::emitConstant(const Kernel &k) {
  const Buffer &b = buffer(k.outputs[0]);
  std::string values = isFloat(b.dtype)
                           ? formatList(k.attrs.getDoubles("values"),
                                        [&](double v) { return real(k, v); })
                           : formatInts(k.attrs.getInts("values"));
  std::string table = "kConstants::c" + std::to_string(nextConstant);
  constants += "static __device__ const " + std::string(getCType(b.dtype)) +
               " c" + std::to_string(nextConstant++) + "[] = {" + values +
               "}; // " + b.name + "\n";
  line() << "{\n";
  // Looked up on the step's first call, which is never captured.
  line() << "  static const void *const kAddress = deviceAddress(" << table
         << ");\n";
  line() << "  cairn::cuda::copyBytes(cx, sizeof(" << table << "), kAddress, "
         << out(k, 0) << ");\n";
  line() << "}\n";
}

void CudaEmitter::emitKernel(const Kernel &k, int foldedRelu,
                             const StepKernels &step) {
  const KernelAttrs &at = k.attrs;
  auto ints = [&](llvm::StringRef name) {
    return formatInts(at.getInts(name));
  };
  auto n = [&] { return formatInt(at.getInt("n")); };
  auto indexType = [&](int id) { return getCType(buffer(id).dtype); };

  switch (k.kind) {
  case KernelKind::Fill: {
    const Buffer &b = buffer(k.outputs[0]);
    std::string value = isFloat(b.dtype) ? real(k, at.getDouble("value"))
                                         : formatInt(at.getInt("value"));
    line() << call(k, "fill") << "(cx, " << n() << ", " << value << ", "
           << out(k, 0) << ");\n";
    return;
  }
  case KernelKind::Constant:
    return emitConstant(k);
  case KernelKind::Copy:
    line() << "cairn::cuda::copyBytes(cx, "
           << buffer(k.outputs[0]).getNumElements() << " * "
           << sizeOf(k.outputs[0]) << ", " << in(k, 0) << ", " << out(k, 0)
           << ");\n";
    return;
  case KernelKind::Add:
  case KernelKind::Sub:
  case KernelKind::Mul:
  case KernelKind::Div:
    return emitBinary(k);
  case KernelKind::Relu:
  case KernelKind::Sigmoid:
  case KernelKind::Tanh:
  case KernelKind::Gelu:
    line() << call(k, "activationForward") << "(cx, " << getActivation(k)
           << ", " << n() << ", " << in(k, 0) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::ReluGrad:
  case KernelKind::SigmoidGrad:
  case KernelKind::TanhGrad:
  case KernelKind::GeluGrad:
    // (dy, saved): relu's and sigmoid's and tanh's result, gelu's input.
    line() << call(k, "activationBackward") << "(cx, " << getActivation(k)
           << ", " << n() << ", " << in(k, 0) << ", " << in(k, 1) << ", "
           << out(k, 0) << ");\n";
    return;
  case KernelKind::Softmax:
  case KernelKind::LogSoftmax:
  case KernelKind::SoftmaxGrad:
  case KernelKind::LogSoftmaxGrad: {
    bool log = k.kind == KernelKind::LogSoftmax ||
               k.kind == KernelKind::LogSoftmaxGrad;
    bool grad = k.kind == KernelKind::SoftmaxGrad ||
                k.kind == KernelKind::LogSoftmaxGrad;
    line() << call(k, grad ? "softmaxBackward" : "softmaxForward") << "(cx, "
           << formatBool(log) << ", " << at.getInt("outer") << ", "
           << at.getInt("dim") << ", " << at.getInt("inner") << ", " << in(k, 0)
           << ", " << (grad ? in(k, 1) + ", " : "") << out(k, 0) << ");\n";
    return;
  }
  case KernelKind::Matmul:
    return emitMatmul(k);
  case KernelKind::Linear: {
    // y = x W^T + bias in one cuBLASLt call, the bias (and a relu that
    // only follows it) as the epilogue.
    bool relu = foldedRelu >= 0;
    int result = relu ? step.kernels[foldedRelu].outputs[0] : k.outputs[0];
    std::string scratch = workspace(k);
    line() << call(k, "linearForward") << "(cx, " << site() << ", "
           << at.getInt("rows") << ", " << at.getInt("in") << ", "
           << at.getInt("out") << ", " << in(k, 0) << ", " << in(k, 1) << ", "
           << in(k, 2) << ", " << formatBool(relu) << ", " << ptr(result)
           << ", " << scratch << ");\n";
    return;
  }
  case KernelKind::LinearGradInput: {
    // dx = dy W.
    int64_t rows = at.getInt("rows"), inF = at.getInt("in"),
            outF = at.getInt("out");
    std::string scratch = workspace(k);
    line() << call(k, "gemm") << "(cx, " << site() << ", false, false, " << rows
           << ", " << inF << ", " << outF << ", " << real(k, 1) << ", "
           << in(k, 0) << ", " << outF << ", " << in(k, 1) << ", " << inF
           << ", " << real(k, 0) << ", " << out(k, 0) << ", " << inF << ", "
           << scratch << ");\n";
    return;
  }
  case KernelKind::LinearGradWeight: {
    // dW = dy^T x.
    int64_t rows = at.getInt("rows"), inF = at.getInt("in"),
            outF = at.getInt("out");
    std::string scratch = workspace(k);
    line() << call(k, "gemm") << "(cx, " << site() << ", true, false, " << outF
           << ", " << inF << ", " << rows << ", " << real(k, 1) << ", "
           << in(k, 0) << ", " << outF << ", " << in(k, 1) << ", " << inF
           << ", " << real(k, 0) << ", " << out(k, 0) << ", " << inF << ", "
           << scratch << ");\n";
    return;
  }
  case KernelKind::Conv2d: {
    std::string scratch = workspace(k);
    line() << call(k, "conv2dForward") << "(cx, " << site() << ", {"
           << ints("shape") << "}, " << in(k, 0) << ", " << in(k, 1) << ", "
           << in(k, 2) << ", " << out(k, 0) << ", " << scratch << ");\n";
    return;
  }
  case KernelKind::Conv2dGradInput: {
    std::string scratch = workspace(k);
    line() << call(k, "conv2dBackwardInput") << "(cx, " << site() << ", {"
           << ints("shape") << "}, " << in(k, 0) << ", " << in(k, 1) << ", "
           << out(k, 0) << ", " << scratch << ");\n";
    return;
  }
  case KernelKind::Conv2dGradWeight: {
    // The bias gradient is a reduction kernel of its own.
    std::string scratch = workspace(k);
    line() << call(k, "conv2dBackwardWeight") << "(cx, " << site() << ", {"
           << ints("shape") << "}, " << in(k, 0) << ", " << in(k, 1) << ", "
           << out(k, 0) << ", nullptr, " << scratch << ");\n";
    return;
  }
  case KernelKind::BatchNormTraining:
    line() << call(k, "batchNormTrainingForward") << "(cx, " << site() << ", "
           << at.getInt("n") << ", " << at.getInt("c") << ", "
           << at.getInt("spatial") << ", " << in(k, 0) << ", " << in(k, 1)
           << ", " << in(k, 2) << ", " << formatDouble(at.getDouble("eps"))
           << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::BatchNormInference:
    line() << call(k, "batchNormInferenceForward") << "(cx, " << site() << ", "
           << at.getInt("n") << ", " << at.getInt("c") << ", "
           << at.getInt("spatial") << ", " << in(k, 0) << ", " << in(k, 1)
           << ", " << in(k, 2) << ", " << in(k, 3) << ", " << in(k, 4) << ", "
           << formatDouble(at.getDouble("eps")) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::BatchNormGrad:
    line() << call(k, "batchNormBackward") << "(cx, " << site() << ", "
           << at.getInt("n") << ", " << at.getInt("c") << ", "
           << at.getInt("spatial") << ", " << in(k, 0) << ", " << in(k, 1)
           << ", " << in(k, 2) << ", " << formatDouble(at.getDouble("eps"))
           << ", " << out(k, 0) << ", " << out(k, 1) << ", " << out(k, 2)
           << ");\n";
    return;
  case KernelKind::BatchNormRunningUpdate:
    line() << call(k, "batchNormUpdateRunningStats") << "(cx, "
           << at.getInt("n") << ", " << at.getInt("c") << ", "
           << at.getInt("spatial") << ", " << in(k, 0) << ", "
           << formatDouble(at.getDouble("momentum")) << ", " << in(k, 1) << ", "
           << in(k, 2) << ", " << in(k, 3) << ");\n";
    return;
  case KernelKind::LayerNorm:
    line() << call(k, "layerNormForward") << "(cx, " << at.getInt("rows")
           << ", " << at.getInt("cols") << ", " << in(k, 0) << ", " << in(k, 1)
           << ", " << in(k, 2) << ", " << formatDouble(at.getDouble("eps"))
           << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::LayerNormGrad:
    line() << call(k, "layerNormBackward") << "(cx, " << at.getInt("rows")
           << ", " << at.getInt("cols") << ", " << in(k, 0) << ", " << in(k, 1)
           << ", " << in(k, 2) << ", " << formatDouble(at.getDouble("eps"))
           << ", " << out(k, 0) << ", " << out(k, 1) << ", " << out(k, 2)
           << ");\n";
    return;
  case KernelKind::Embedding:
    line() << "cairn::cuda::embeddingForward<"
           << getCType(buffer(k.outputs[0]).dtype) << ", "
           << indexType(k.inputs[0]) << ">(cx, " << at.getInt("num_indices")
           << ", " << at.getInt("dim") << ", " << at.getInt("num_embeddings")
           << ", " << in(k, 0) << ", " << in(k, 1) << ", " << out(k, 0)
           << ");\n";
    return;
  case KernelKind::EmbeddingGrad:
    line() << "cairn::cuda::embeddingBackward<"
           << getCType(buffer(k.outputs[0]).dtype) << ", "
           << indexType(k.inputs[0]) << ">(cx, " << at.getInt("num_indices")
           << ", " << at.getInt("dim") << ", " << at.getInt("num_embeddings")
           << ", " << in(k, 0) << ", " << in(k, 1) << ", "
           << at.getInt("padding_idx") << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::Dropout:
    // The seed and the step come from cx.scalars, so a captured graph
    // draws a new mask on every replay.
    line() << call(k, "dropout") << "(cx, " << n() << ", "
           << formatDouble(at.getDouble("p")) << ", " << at.getInt("stream")
           << ", " << in(k, 0) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::MaxPool2d:
    // cuDNN where it can express the shape; the call site remembers when it
    // cannot (dilation, ceil_mode's extra window) and runs Cairn's kernel.
    line() << call(k, "maxPool2dForward") << "(cx, " << site() << ", {"
           << ints("shape") << "}, " << in(k, 0) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::MaxPool2dGrad:
    line() << call(k, "maxPool2dBackward") << "(cx, {" << ints("shape") << "}, "
           << in(k, 0) << ", " << in(k, 1) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::AvgPool2d:
    line() << call(k, "avgPool2dForward") << "(cx, " << site() << ", {"
           << ints("shape") << "}, "
           << formatBool(at.getBool("count_include_pad")) << ", " << in(k, 0)
           << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::AvgPool2dGrad:
    line() << call(k, "avgPool2dBackward") << "(cx, {" << ints("shape") << "}, "
           << formatBool(at.getBool("count_include_pad")) << ", " << in(k, 0)
           << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::AdaptiveAvgPool2d:
    line() << call(k, "adaptiveAvgPool2dForward") << "(cx, " << ints("shape")
           << ", " << in(k, 0) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::AdaptiveAvgPool2dGrad:
    line() << call(k, "adaptiveAvgPool2dBackward") << "(cx, " << ints("shape")
           << ", " << in(k, 0) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::Permute:
  case KernelKind::Concat:
  case KernelKind::Slice:
  case KernelKind::Broadcast:
  case KernelKind::ReduceSum:
    return emitTable(k);
  case KernelKind::SliceGrad: {
    // slice_grad writes dy into a zeroed dx.
    const Buffer &full = buffer(k.outputs[0]);
    line() << "cairn::cuda::zeroBytes(cx, " << full.getNumElements() << " * "
           << sizeOf(k.outputs[0]) << ", " << out(k, 0) << ");\n";
    return emitTable(k);
  }
  case KernelKind::CrossEntropy:
  case KernelKind::CrossEntropyGrad: {
    bool grad = k.kind == KernelKind::CrossEntropyGrad;
    unsigned logits = grad ? 1 : 0;
    line() << "cairn::cuda::"
           << (grad ? "crossEntropyBackward<" : "crossEntropyForward<")
           << getCType(buffer(k.inputs[logits]).dtype) << ", "
           << indexType(k.inputs[logits + 1]) << ">(cx, " << at.getInt("rows")
           << ", " << at.getInt("classes") << ", "
           << (grad ? in(k, 0) + ", " : "") << in(k, logits) << ", "
           << in(k, logits + 1) << ", "
           << formatDouble(at.getDouble("label_smoothing")) << ", " << out(k, 0)
           << ");\n";
    return;
  }
  case KernelKind::MseLoss:
    line() << call(k, "mseForward") << "(cx, " << n() << ", " << in(k, 0)
           << ", " << in(k, 1) << ", " << out(k, 0) << ");\n";
    return;
  case KernelKind::MseLossGrad:
    line() << call(k, "mseBackward") << "(cx, " << n() << ", " << in(k, 0)
           << ", " << in(k, 1) << ", " << in(k, 2) << ", " << out(k, 0)
           << ");\n";
    return;
  case KernelKind::SgdUpdate:
  case KernelKind::AdamUpdate:
    break; // emitUpdates
  }
  llvm_unreachable("optimizer updates are printed in groups");
}

void cairn::codegen::emitCudaProgram(const KernelGraph &program,
                                     llvm::StringRef modelSource,
                                     llvm::raw_ostream &os) {
  CudaEmitter(program, modelSource, os).emit();
}
