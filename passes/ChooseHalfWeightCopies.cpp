//===- ChooseHalfWeightCopies.cpp - Keep a weight's half copy or cast again
//===//
//
// In half precision the forward casts each float32 master weight to half
// once (cairn-autocast), and the backward reads that copy again (a linear's
// or a convolution's input gradient). Keeping it from the forward to the
// backward costs its bytes over the whole backward; casting it again from
// the master weight, which lives anyway, right before the backward reads it
// costs a cast. In a model whose activations dominate, the copies are small
// beside the peak and keeping them is free; in a model whose weights
// dominate (an MLP), they are what the peak is made of. This pass asks the
// plan: it marks the casts of parameters `cairn.recompute` (so
// cairn-recompute-checkpoints casts again before the backward's first
// reader) when the whole rest of the pipeline plans a smaller arena so, and
// leaves them kept otherwise (ties keep: a cast saved).
//
//===----------------------------------------------------------------------===//

#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include "ir/CairnKernelOps.h"
#include "ir/CairnProgramOps.h"

namespace cairn {
#define GEN_PASS_DEF_CHOOSEHALFWEIGHTCOPIESPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

/// The train step's casts of a parameter to a half copy the backward reads
/// (a `saved` buffer), not marked already.
SmallVector<Operation *> findWeightCasts(ProgramOp program) {
  SmallVector<Operation *> casts;
  for (auto step : program.getBody().front().getOps<StepOp>()) {
    if (step.getKind() != StepKind::train_step)
      continue;
    for (auto cast : step.getBody().front().getOps<CastKernelOp>()) {
      auto input = cast.getInput().getDefiningOp<BufferOp>();
      auto output = cast.getResult().getDefiningOp<BufferOp>();
      if (input && output && input.getKind() == BufferKind::param &&
          output.getKind() == BufferKind::saved &&
          !cast->hasAttr(CairnDialect::kRecomputeAttrName))
        casts.push_back(cast);
    }
  }
  return casts;
}

struct ChooseHalfWeightCopiesPass
    : cairn::impl::ChooseHalfWeightCopiesPassBase<ChooseHalfWeightCopiesPass> {
  using ChooseHalfWeightCopiesPassBase::ChooseHalfWeightCopiesPassBase;

  /// The arena the rest of the pipeline plans with the weight casts marked
  /// (`recast`) or not, on a copy of the module.
  FailureOr<int64_t> planArena(bool recast) {
    PipelineOptions rest;
    rest.target = target;
    rest.fuse = fuse;
    rest.reorder = reorder;
    rest.planSeconds = planSeconds;
    rest.replicas = replicas;
    rest.bucketBytes = bucketBytes;
    OwningOpRef<ModuleOp> copy = planMarkedCopy(
        getOperation(), getArgument(), rest, [&](ProgramOp program) {
          if (recast)
            markRecast(findWeightCasts(program));
        });
    if (!copy)
      return failure();
    // Split across devices: the largest device's.
    std::optional<uint64_t> arena = getLargestProgram(*copy).getArenaBytes();
    if (!arena)
      return failure();
    return int64_t(*arena);
  }

  void runOnOperation() override {
    ProgramOp program = getProgramFor(getOperation(), getArgument());
    if (!program)
      return signalPassFailure();
    SmallVector<Operation *> casts = findWeightCasts(program);
    if (casts.empty())
      return;
    // A pipeline that fails fails alike both ways: its error once.
    FailureOr<int64_t> kept = planArena(/*recast=*/false);
    if (failed(kept))
      return signalPassFailure();
    FailureOr<int64_t> recast = planArena(/*recast=*/true);
    if (failed(recast))
      return signalPassFailure();
    if (*recast < *kept)
      markRecast(casts);
  }

  void markRecast(ArrayRef<Operation *> casts) {
    for (Operation *kernel : casts)
      kernel->setAttr(CairnDialect::kRecomputeAttrName,
                      UnitAttr::get(&getContext()));
  }
};

} // namespace
