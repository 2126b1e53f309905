//===- KernelCalls.h - Runtime calls both emitters print alike --*- C++ -*-===//
//
// Most kernel kinds are one call into the runtime with the same arguments
// on both targets: `cairn::kernels::layerNormForward<float>(rows, cols, x,
// w, b, eps, y)` on the CPU, the same under `cairn::cuda::` with the stream's
// context first on CUDA. Those kinds are described once, here, from the
// typed kernel op (ir/CairnKernelOps.td): the function, its template
// arguments and its arguments. Each emitter prints the description in its
// own CallStyle; only the kinds whose code differs by target (GEMMs, element-
// wise loops, fills, copies, dropout, optimizer updates) have a body in each
// emitter. Adding such a plain kind is its op, its case below, and its CPU
// and CUDA runtime functions.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_CODEGEN_KERNELCALLS_H
#define CAIRN_CODEGEN_KERNELCALLS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace cairn::codegen {

struct CallStyle;

/// One argument of a call: text, an enum constant of the runtime's
/// namespace ("Activation::Sigmoid", printed after the style's namespace),
/// the kernel's workspace (each target passes scratch its own way), or the
/// sum over the replicas (the style's).
struct CallArg {
  enum class Kind { Text, Enum, Workspace, ReplicaSum };
  Kind kind = Kind::Text;
  std::string text;
  mlir::Value workspace;
};

struct KernelCall {
  /// The runtime function: "softmaxForward".
  std::string name;
  /// Its template arguments: element types ("float", "int64_t").
  std::vector<std::string> types;
  /// A library call (cuDNN, and oneDNN's convolutions on the CPU): its
  /// call-site id follows the context.
  bool librarySite = false;
  std::vector<CallArg> args;
};

/// The call of kernel `op` when its kind is one both targets print alike;
/// nullopt for the others. `pointer` names an operand's buffer ("nullptr"
/// for a null Value).
std::optional<KernelCall>
describeKernelCall(mlir::Operation *op,
                   llvm::function_ref<std::string(mlir::Value)> pointer);

/// Prints `call;` on one line: `style.ns name<types>(style.context
/// [site, ] args)`. `site` gives the next call-site id (asked only for
/// library calls, and only when given), `workspace` spells the workspace
/// argument.
void printKernelCall(llvm::raw_ostream &os, unsigned indent,
                     const KernelCall &call, const CallStyle &style,
                     llvm::function_ref<std::string()> site,
                     llvm::function_ref<std::string(mlir::Value)> workspace);

/// "Add", "Sub", "Mul" or "Div": the runtime's BinaryOp of an arithmetic
/// kernel.
const char *getBinaryOpName(mlir::Operation *op);

/// Stops with an internal error: `target` ("CPU") has no body for `op`.
[[noreturn]] void reportMissingBody(mlir::Operation *op, llvm::StringRef target);

/// "float", "double", "int32_t", "int64_t" for the elements of `value`'s
/// memref.
const char *getElementCType(mlir::Value value);
/// A kernel's template argument for `value`'s elements: its C type, or for
/// f16 and bf16 the storage tag cairn::kernels::F16 or Bf16 (Convert.h).
const char *getTemplateType(mlir::Value value);
/// The template argument of GEMM or convolution kernel `op` writing
/// `result`: the half type it computes in (its float32 tensors rounded to
/// it, ir/ProductTypes.h), else getTemplateType(result).
const char *getProductTemplateType(mlir::Operation *op, mlir::Value result);
/// The kernels::CastType enumerator of a cast's side ("F32", "F16", "BF16").
const char *getCastTypeName(mlir::Value value);

} // namespace cairn::codegen

#endif // CAIRN_CODEGEN_KERNELCALLS_H
