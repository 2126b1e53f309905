//===- SyncBatchNorm.cpp - Batch norm over every replica's examples -------===//
//
// Data-parallel replicas (cairn-all-reduce-gradients) each normalise by
// their own examples' statistics by default, as PyTorch DDP does. With
// `cairn build --replicas R --sync-batchnorm`, as PyTorch's SyncBatchNorm,
// the training step's batch norms use the statistics of the whole batch:
// this pass marks their kernels (the forward, its gradient and the running
// statistics' update, recomputed ones and every micro-batch's too)
// `sync_replicas`, and the runtime sums their per-channel sums across the
// replicas as each kernel runs (runtime/kernels/Normalization.h). The
// parameter gradients stay each replica's share, which the gradient sums
// add. The plan does not change: the sums are a few doubles per channel.
//
// It runs after cairn-all-reduce-gradients, on the program that pass made a
// replica's.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

#include "ir/CairnKernelOps.h"

#include "llvm/ADT/TypeSwitch.h"

namespace cairn {
#define GEN_PASS_DEF_SYNCBATCHNORMPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

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
      // The sums over the replicas are the CPU transport's, in rank order;
      // the CUDA target has no twin of them yet.
      const bool cuda = program.getTarget() == "cuda";
      WalkResult walked = program.walk([&](Operation *op) {
        if (!isa<BatchNormTrainingKernelOp, BatchNormGradKernelOp,
                 BatchNormRunningUpdateKernelOp>(op))
          return WalkResult::advance();
        if (cuda) {
          op->emitError() << "--sync-batchnorm builds for the CPU target only "
                             "for now: its statistics are summed over the "
                             "replicas by the CPU transport";
          return WalkResult::interrupt();
        }
        llvm::TypeSwitch<Operation *>(op)
            .Case<BatchNormTrainingKernelOp, BatchNormGradKernelOp,
                  BatchNormRunningUpdateKernelOp>(
                [](auto kernel) { kernel.setSyncReplicas(true); });
        return WalkResult::advance();
      });
      if (walked.wasInterrupted())
        return signalPassFailure();
    }
  }
};

} // namespace
