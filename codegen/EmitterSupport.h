//===- EmitterSupport.h - What the CPU and CUDA emitters share --*- C++ -*-===//
//
// Both emitters print the same kernel lists over the same arena: literals in
// C++ spelling, one identifier per buffer, the comment that names a kernel's
// model line, the gradients to observe and the buffers to poison after each
// kernel, and the ProgramSpec table the runtime reads. They differ in the
// calls they print and in the backend the spec names.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_CODEGEN_EMITTERSUPPORT_H
#define CAIRN_CODEGEN_EMITTERSUPPORT_H

#include "passes/KernelGraph.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace cairn::codegen {

//===--- Literals
//-----------------------------------------------------------===//

/// "float", "double", "int32_t", "int64_t", "uint8_t"; "uint16_t" for f16
/// and bf16, their bits (kernels widen them to float: Convert.h).
const char *getCType(DType dtype);

/// The shortest decimal form that reads back as `value` in float (isFloat)
/// or double precision, as a C++ literal of that type (float: an `f`
/// suffix); NaN and infinities through std::numeric_limits.
std::string formatReal(double value, bool isFloat);
std::string formatDouble(double value);
std::string formatInt(int64_t value);
std::string formatBool(bool value);
/// formatReal of `value` as a literal of `typedBy`'s element type.
std::string formatRealOf(mlir::Value typedBy, double value);
/// Whether the buffer `value` holds f16 or bf16 elements.
bool isHalfBuffer(mlir::Value value);
/// `value` as a literal of the type a kernel computes `typedBy`'s elements
/// in: float for a half buffer (its kernels widen it), else formatRealOf.
std::string formatComputedRealOf(mlir::Value typedBy, double value);
/// `sizeof(float)`: the element size of `value` in C++ terms.
std::string formatSizeOf(mlir::Value value);
/// The elements of a buffer or view (a memref value).
int64_t getNumElements(mlir::Value value);

/// `format(v0), format(v1), ...`.
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

std::string formatInts(llvm::ArrayRef<int64_t> values);
/// "[64, 784]", for comments.
std::string formatShape(llvm::ArrayRef<int64_t> shape);
/// A C++ string literal; octal escapes, which stop after three digits.
std::string quote(llvm::StringRef text);

//===--- Buffers
//--------------------------------------------------------------===//

/// One C++ identifier per buffer, by id: the buffer's name with every other
/// character made `_`, unique, and never a C++ keyword, a name the
/// generated code declares itself (shared by both emitters) or one of
/// `extraReserved` (the emitter's own local names).
std::vector<std::string>
nameIdentifiers(const KernelGraph &program,
                const llvm::StringSet<> &extraReserved = {});

/// The buffer ids of spec.tensors in order (the persistent buffers and the
/// gradients): the persistent buffers in
/// program order, then the gradients in the order of their params.
std::vector<int> getSpecOrder(const KernelGraph &program);
/// By buffer id: its index in spec.tensors, or -1.
std::vector<int> getSpecIndices(const KernelGraph &program);

/// `float *name = reinterpret_cast<float *>(arena + OFFSET); // kind [shape]`
/// (and ", a view of ROOT"), the declaration both emitters open a step with.
void emitBufferPointer(llvm::raw_ostream &os, unsigned indent,
                       const KernelGraph &program, int id,
                       llvm::StringRef identifier);

//===--- Kernels
//--------------------------------------------------------------===//

/// Splits the model file into lines for describeKernel.
llvm::SmallVector<llvm::StringRef> splitSourceLines(llvm::StringRef source);

/// `file:line:col layer op: the model line` (the line quoted when the
/// location is in program.sourceFile, cut at 72 characters): what the
/// comment above each call says.
std::string describeKernel(const Kernel &kernel, const KernelGraph &program,
                           llvm::ArrayRef<llvm::StringRef> sourceLines);

/// How an emitter spells a runtime call: the namespace
/// ("cairn::kernels::" or "cairn::cuda::"), the arguments every call
/// starts with ("" on the CPU, "cx, " on CUDA), and the kernels::RankSum
/// over the replicas (synchronised batch norm) and over the devices of a
/// split model (the gradients' norm): the MPI transport's on the CPU,
/// NCCL's on CUDA (runtime/cuda/DeviceCollectives.h).
struct CallStyle {
  llvm::StringRef ns;
  llvm::StringRef context;
  llvm::StringRef replicaSum;
  llvm::StringRef devicesSum;
};

/// Declares `kGrads`, the addresses (`pointer`) of `grads` as `type`, and
/// `kSizes`, their element counts: the tables a kernel over many gradients
/// takes (null pointers for none); `kGrads<suffix>` and `kSizes<suffix>`
/// with a suffix.
void emitGradientTables(llvm::raw_ostream &os, unsigned indent,
                        mlir::ValueRange grads, llvm::StringRef type,
                        llvm::function_ref<std::string(mlir::Value)> pointer,
                        llvm::StringRef suffix = "");

/// found_inf's gradients by element type: those of its result's type, and
/// each half type's (cairn-check-scaled-gradients), which the runtime checks
/// by their bits (anyNotFinite, markNotFinite); `suffix` names their tables
/// (emitGradientTables), `tag` is their storage tag (getTemplateType).
struct FoundInfGradients {
  struct Half {
    llvm::StringRef suffix;
    std::string tag;
    llvm::SmallVector<mlir::Value> grads;
  };
  llvm::SmallVector<mlir::Value> wide;
  /// The half types present: f16, then bf16.
  llvm::SmallVector<Half, 2> half;
};
FoundInfGradients splitFoundInfGradients(mlir::ValueRange grads);

/// Whether emitTableKernel prints kernel `op`.
bool isTableKernel(mlir::Operation *op);

/// Permute, Slice, SliceGrad (its copy: the caller zeroes dx first),
/// Concat, Broadcast and ReduceSum: calls whose shapes go in static tables,
/// in a block of their own. The same code on both backends but for `style`.
void emitTableKernel(llvm::raw_ostream &os, unsigned indent,
                     mlir::Operation *op,
                     llvm::function_ref<std::string(mlir::Value)> pointer,
                     const CallStyle &style);

/// The buffers to report and to poison after one kernel.
struct AfterKernel {
  /// Gradients the kernel completes (StepContext::observe).
  std::vector<int> observed;
  /// Buffers whose lifetime ends at the kernel and whose bytes no in-place
  /// output took over (StepContext::poison).
  std::vector<int> dying;
};
/// By kernel index of `step`: one pass over the buffers, both lists in
/// buffer order.
std::vector<AfterKernel> collectAfterKernels(const KernelGraph &program,
                                             const StepKernels &step);

/// Prints what follows a kernel: `if (ctx.observe) ctx.observe(...)` for
/// each observed gradient, then one `if (ctx.poison) { ... }` block with
/// `poisonCall` followed by `arena + OFFSET, BYTES);` for each dying buffer
/// ("cairn::runtime::poisonBytes(" on the CPU).
void emitAfterKernel(llvm::raw_ostream &os, unsigned indent,
                     const KernelGraph &program, const AfterKernel &after,
                     llvm::ArrayRef<int> specIndices,
                     llvm::ArrayRef<std::string> identifiers,
                     llvm::StringRef poisonCall);

//===--- The program
//----------------------------------------------------------===//

/// The suffix of a device's step functions and spec in a program split
/// across devices ("Device1"), "" for a model on one device.
std::string getDeviceSuffix(const KernelGraph &program);

/// `static const cairn::runtime::ProgramSpec spec = ...;`: every tensor of
/// the spec with its offset, the two step functions, and `backend` (an
/// expression of type `const cairn::runtime::Backend *`). One device's of a
/// partitioned program: `specDevice1`, with its device and the count.
void emitProgramSpec(llvm::raw_ostream &os, const KernelGraph &program,
                     llvm::StringRef backend);

/// `int main(...) { return cairn::runtime::runMain(spec, argc, argv); }`;
/// for a program on `devices` > 1 devices, main hands every device's spec
/// to runPartitionedMain, which runs the one of its MPI rank; a program of
/// `replicas` > 1 data-parallel replicas calls runReplicatedMain.
void emitMain(llvm::raw_ostream &os, int64_t devices = 1, int64_t replicas = 1);

} // namespace cairn::codegen

#endif // CAIRN_CODEGEN_EMITTERSUPPORT_H
