//===- SyncBatchNorm.cpp - Batch norm over every replica's examples -------===//
//
// Data-parallel replicas (cairn-all-reduce-gradients) each normalise by
// their own examples' statistics by default, as PyTorch DDP does. With
// `cairn build --replicas R --sync-batchnorm`, as PyTorch's SyncBatchNorm,
// the training step's batch norms use the statistics of the whole batch:
// this pass marks their kernels (the forward, its gradient and the running
// statistics' update, recomputed ones and every micro-batch's too)
// `sync_replicas`, and the runtime sums their per-channel sums across the
// replicas as each kernel runs (runtime/kernels/Normalization.h): the MPI
// transport's sum in rank order on the CPU, NCCL's on CUDA. The parameter
// gradients stay each replica's share, which the gradient sums add. Each
// marked kernel gets a workspace for those sums, a few doubles per channel
// in the plan, on the host or the GPU alike.
//
// It runs after cairn-all-reduce-gradients, on the program that pass made a
// replica's.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

#include "ir/CairnKernelOps.h"
#include "ir/CairnProgramOps.h"
#include "runtime/kernels/Normalization.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace cairn {
#define GEN_PASS_DEF_SYNCBATCHNORMPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

/// A workspace of the step for the sums of batch norm kernel `kernel`,
/// declared where the step's buffers are and named after its first output
/// (numbered where that name is taken: a running statistic is updated once
/// per micro-batch).
Value createWorkspace(OpBuilder &b, Operation *kernel, int64_t channels,
                      bool backward, llvm::StringSet<> &names) {
  Value output = cast<KernelOpInterface>(kernel).getKernelOutputs().front();
  std::string base = "batch_norm";
  if (auto buffer = output.getDefiningOp<BufferOp>())
    base = buffer.getName().str();
  else if (auto view = output.getDefiningOp<ViewOp>())
    base = view.getName().str();
  base += ".replica_sums";
  std::string name = base;
  for (int k = 2; !names.insert(name).second; ++k)
    name = base + "." + std::to_string(k);
  b.setInsertionPointToStart(
      &kernel->getParentOfType<StepOp>().getBody().front());
  return BufferOp::create(
      b, kernel->getLoc(),
      MemRefType::get(
          {kernels::batchNormReplicaSumElements(channels, backward)},
          b.getF64Type()),
      BufferKind::workspace, b.getStringAttr(name), IntegerAttr(), Value(),
      InitAttr(), IntegerAttr());
}

struct SyncBatchNormPass
    : public cairn::impl::SyncBatchNormPassBase<SyncBatchNormPass> {
  void runOnOperation() override {
    SmallVector<ProgramOp> programs =
        getProgramsFor(getOperation(), getArgument());
    if (programs.empty())
      return signalPassFailure();
    for (ProgramOp program : programs) {
      auto replicas =
          program->getAttrOfType<IntegerAttr>(CairnDialect::kReplicasAttrName);
      if (!replicas || replicas.getInt() < 2) {
        getOperation().emitError()
            << "--sync-batchnorm shares batch norm's statistics between "
               "data-parallel replicas; it needs --replicas R (R >= 2)";
        return signalPassFailure();
      }
      program->setAttr(CairnDialect::kSyncBatchNormAttrName,
                       UnitAttr::get(program.getContext()));
      llvm::StringSet<> names;
      SmallVector<Operation *> kernels;
      program.walk([&](Operation *op) {
        if (auto buffer = dyn_cast<BufferOp>(op))
          names.insert(buffer.getName());
        else if (auto view = dyn_cast<ViewOp>(op))
          names.insert(view.getName());
        else if (isa<BatchNormTrainingKernelOp, BatchNormGradKernelOp,
                     BatchNormRunningUpdateKernelOp>(op))
          kernels.push_back(op);
      });
      OpBuilder b(program.getContext());
      for (Operation *op : kernels)
        llvm::TypeSwitch<Operation *>(op)
            .Case<BatchNormTrainingKernelOp, BatchNormRunningUpdateKernelOp>(
                [&](auto kernel) {
                  kernel.setSyncReplicas(true);
                  kernel.getWorkspaceMutable().assign(createWorkspace(
                      b, kernel, kernel.getC(), /*backward=*/false, names));
                })
            .Case([&](BatchNormGradKernelOp kernel) {
              kernel.setSyncReplicas(true);
              kernel.getWorkspaceMutable().assign(createWorkspace(
                  b, kernel, kernel.getC(), /*backward=*/true, names));
            });
    }
  }
};

} // namespace
