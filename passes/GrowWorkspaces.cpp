//===- GrowWorkspaces.cpp - Free bytes of the plan to the libraries -------===//
//
// A convolution's workspace lives during its kernel alone, and the plan
// sized it by the im2col rule. Where the bytes above it are free at that
// kernel (no buffer live then lies there), the target's convolution library
// can use them: oneDNN on the CPU takes larger chunks of the batch, or runs
// at all where one image's blocked copies outgrow the column matrix
// (runtime/kernels/ConvLibrary.h). The workspace takes them as spare bytes
// (the buffer's `spare`), up to what the library can use; the arena, every
// offset and the plan's accounting stay as planned.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelGraphIR.h"
#include "passes/Lowering.h"
#include "passes/Passes.h"

#include "ir/CairnKernelOps.h"

#include "mlir/IR/Builders.h"

#include <algorithm>

namespace cairn {
#define GEN_PASS_DEF_GROWWORKSPACESPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

/// The convolution pass of a kernel op, or nullopt for another kernel.
std::optional<kernels::ConvPass> getConvPass(Operation *op) {
  if (isa<Conv2dKernelOp>(op))
    return kernels::ConvPass::Forward;
  if (isa<Conv2dGradInputKernelOp>(op))
    return kernels::ConvPass::BackwardInput;
  if (isa<Conv2dGradWeightKernelOp>(op))
    return kernels::ConvPass::BackwardWeight;
  return std::nullopt;
}

/// Whether `buffer` holds its bytes while kernel `index` of `step` runs.
bool isLiveAt(const Buffer &buffer, StepKind step, int index) {
  if (!buffer.step)
    return true; // persistent
  return *buffer.step == step && buffer.definedBy <= index &&
         index <= buffer.lastUse;
}

struct GrowWorkspacesPass
    : cairn::impl::GrowWorkspacesPassBase<GrowWorkspacesPass> {
  void runOnOperation() override {
    SmallVector<ProgramOp> programs =
        getProgramsFor(getOperation(), getArgument());
    if (programs.empty())
      return signalPassFailure();
    for (ProgramOp program : programs)
      growProgram(program);
  }

  void growProgram(ProgramOp program) {
    ProgramGraph graph = readProgram(program);
    const KernelGraph &g = graph.graph;
    std::optional<LoweringTarget> target =
        getLoweringTarget(program.getTarget());
    if (!target || !target->convLibraryWorkspaceBytes || !g.arenaBytes)
      return;
    Builder b(program.getContext());
    for (StepKind step : kAllSteps) {
      const std::vector<Kernel> &kernels = g.getStep(step).kernels;
      for (int index = 0, e = kernels.size(); index < e; ++index) {
        const Kernel &kernel = kernels[index];
        Operation *op = graph.getKernelOp(step, index);
        std::optional<kernels::ConvPass> pass = getConvPass(op);
        if (!pass || kernel.workspace == kNoBuffer)
          continue;
        const Buffer &workspace = g.buffers[kernel.workspace];
        if (workspace.dtype != DType::F32 || workspace.offset < 0)
          continue;
        auto shape = op->getAttrOfType<DenseI64ArrayAttr>("shape");
        int64_t want =
            target->convLibraryWorkspaceBytes(shape.asArrayRef(), *pass);
        if (want <= workspace.bytes)
          continue;
        // Up to the first byte above it that a live buffer holds.
        int64_t limit = g.arenaBytes;
        for (const Buffer &other : g.buffers)
          if (other.id != workspace.id && other.bytes > 0 &&
              other.offset >= workspace.offset + workspace.bytes &&
              isLiveAt(other, step, index))
            limit = std::min(limit, other.offset);
        int64_t bytes = std::min(want, limit - workspace.offset);
        if (bytes <= workspace.bytes)
          continue;
        graph.values[workspace.id].getDefiningOp<BufferOp>().setSpareAttr(
            b.getI64IntegerAttr(bytes - workspace.bytes));
      }
    }
  }
};

} // namespace
