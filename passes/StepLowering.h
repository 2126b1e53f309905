//===- StepLowering.h - Lowering one step function (private) ----*- C++ -*-===//
//
// Shared by Lowering.cpp (arguments, results, in-place updates, buffer
// kinds) and LowerOps.cpp (one kernel or view per op).
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_STEPLOWERING_H
#define CAIRN_PASSES_STEPLOWERING_H

#include "passes/KernelGraphIR.h"
#include "passes/Lowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace cairn {

/// The program under construction: its buffers, shared by both steps.
class KernelGraphBuilder {
public:
  explicit KernelGraphBuilder(const LoweringTarget &target) : target(target) {}

  const LoweringTarget &getTarget() const { return target; }
  KernelGraph &getProgram() { return program; }

  /// Adds `buffer` with the next id; a per-step buffer's name gets a ".N"
  /// suffix when it is taken.
  int addBuffer(Buffer buffer);
  /// The persistent buffer named `name`, or kNoBuffer.
  int lookupPersistent(llvm::StringRef name) const;
  /// Makes `id` persistent under `name` (a step's result).
  void makePersistent(int id, llvm::StringRef name, BufferKind kind);
  /// Names the per-step buffer `id` as the gradient `name` ("grad.<param>").
  void nameGradient(int id, llvm::StringRef name);

  /// Every later reference to `from` means `to`.
  void replaceBuffer(int from, int to);
  int resolve(int id) const;

  /// Resolves replaced ids in every kernel and view, then drops the replaced
  /// buffers and renumbers the rest.
  void compact();

private:
  std::string uniqueName(llvm::StringRef base);

  const LoweringTarget &target;
  KernelGraph program;
  llvm::StringMap<int> persistentByName;
  llvm::StringMap<unsigned> nameCounts;
  std::vector<int> replacedBy;
};

/// Lowers one func.func of the cairn dialect into its step's kernel list.
class StepLowering {
public:
  StepLowering(KernelGraphBuilder &builder, StepKind step)
      : builder(builder), step(step) {}

  mlir::LogicalResult lower(mlir::func::FuncOp func);

  /// The last kernel index of the forward part (the kernel computing the
  /// loss) in the training step; past the end for @forward.
  int getForwardEnd() const { return forwardEnd; }

  //===--- For the op lowerings (LowerOps.cpp) ----------------------------===//

  const LoweringTarget &getTarget() const { return builder.getTarget(); }
  /// The buffer holding `value`, kNoBuffer for a null (absent) value.
  int get(mlir::Value value) const;
  /// A new buffer for `result`.
  int define(mlir::Value result);
  /// A new buffer for `result`, or kNoBuffer when nothing reads it (the
  /// kernel then skips that output).
  int defineIfUsed(mlir::Value result);
  /// `result` is `source` seen with another type: no kernel, no memory.
  void defineAlias(mlir::Value result, mlir::Value source);
  /// Scratch memory of `elements` elements for the kernel `op` lowers to.
  int createWorkspace(mlir::Operation *op, DType dtype, int64_t elements);
  Kernel &addKernel(llvm::StringRef kind, mlir::Operation *op,
                    std::vector<int> inputs, std::vector<int> outputs);

private:
  struct Result {
    mlir::Value value;
    std::string name;
    BufferKind kind;
    int updates; // the argument the result is written over, or -1
    mlir::Location loc;
  };

  mlir::LogicalResult bindArguments(mlir::func::FuncOp func);
  mlir::LogicalResult collectResults(mlir::func::FuncOp func,
                                     std::vector<Result> &results);
  void placeResults(const std::vector<Result> &results);
  Kernel makeCopy(int from, int to, const Kernel &like);

  KernelGraphBuilder &builder;
  StepKind step;
  llvm::DenseMap<mlir::Value, int> valueBuffers;
  std::vector<int> argBuffers;
  /// The op each kernel comes from, parallel to the step's kernel list.
  std::vector<mlir::Operation *> kernelOps;
  int forwardEnd = -1;
};

/// Appends the kernels (or the view) of `op` to `lowering`; reports an
/// error at `op` for ops the target cannot run.
mlir::LogicalResult lowerOp(mlir::Operation *op, StepLowering &lowering);


} // namespace cairn

#endif // CAIRN_PASSES_STEPLOWERING_H
