//===- AllReduceGradients.cpp - A step for one of R data-parallel replicas ===//
//
// Data parallelism: R processes run the same program, each on its share of
// every batch (the program is lowered at batch / R), and sum their gradients
// before the updates, so every replica applies the same update. This pass
// makes the training step one replica's:
//
// - the backward's seed becomes 1/R (1/(M R) with M micro-batches), so that
//   the sum over the replicas is the mean over the whole batch, as one
//   process with R micro-batches computes it;
// - each dropout gets a replica stride, so that replica r draws the masks
//   of that process's micro-batch r;
// - the gradients are grouped into buckets of about `bucket-bytes`, in the
//   order the backward completes them (DDP's buckets), summed in place: an
//   all_reduce_start right after the backward completes a bucket's last
//   gradient, an all_reduce_wait right before the first kernel that needs
//   one of them summed; the bucket's buffer in the plan is the workspace of
//   the sum (the other replicas' copies of this one's chunk of the
//   gradients; each element's R values are added in rank order:
//   runtime/SumChunks.h);
// - whatever reads a summed gradient (the updates, found_inf, clipping), and
//   whatever must follow those, moves after the backward, so that the sums
//   run while the backward does.
//
// It runs after the memory-aware schedule, whose order it keeps otherwise:
// the scheduler would move a start next to its wait, which gives the bytes
// back sooner and the overlap up.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

#include "ir/CairnKernelOps.h"
#include "runtime/SumChunks.h"

#include "mlir/IR/Builders.h"

namespace cairn {
#define GEN_PASS_DEF_ALLREDUCEGRADIENTSPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

/// What a kernel reads and what it writes (outputs, workspace), as roots.
struct Access {
  SmallVector<Value> reads, writes;
};

Access getAccess(Operation *op) {
  auto kernel = cast<KernelOpInterface>(op);
  Access access;
  for (Value input : kernel.getKernelInputs())
    if (input)
      access.reads.push_back(getViewRoot(input));
  for (Value output : kernel.getKernelOutputs())
    if (output)
      access.writes.push_back(getViewRoot(output));
  if (Value workspace = kernel.getKernelWorkspace())
    access.writes.push_back(workspace);
  return access;
}

struct Bucket {
  SmallVector<Value> grads;
  int64_t bytes = 0;
  /// The kernel that completes its last gradient (an index in the step).
  int64_t completedBy = -1;
};

class GradientReducer {
public:
  GradientReducer(ProgramOp program, int64_t replicas, int64_t bucketBytes)
      : program(program), replicas(replicas), bucketBytes(bucketBytes) {}

  LogicalResult run();

private:
  LogicalResult scaleSeed(StepOp step);
  LogicalResult reduce(StepOp step);

  ProgramOp program;
  int64_t replicas;
  int64_t bucketBytes;
};

LogicalResult GradientReducer::run() {
  Builder b(program.getContext());
  // Replica r's dropouts draw the streams micro-batches r M to r M + M - 1
  // of one process would (cairn-split-micro-batches shifts each micro-batch
  // by the streams of one).
  // The dropouts fused into chains (on the CPU) count and shift alike.
  SmallVector<DropoutKernelOp> dropouts;
  SmallVector<ElementwiseChainKernelOp> chains;
  int64_t streams = 0;
  program.walk([&](Operation *op) {
    if (auto dropout = dyn_cast<DropoutKernelOp>(op)) {
      dropouts.push_back(dropout);
      streams = std::max<int64_t>(streams, dropout.getStream() + 1);
    } else if (auto chain = dyn_cast<ElementwiseChainKernelOp>(op)) {
      if (std::optional<ArrayRef<int64_t>> chained =
              chain.getDropoutStreams()) {
        chains.push_back(chain);
        for (int64_t stream : *chained)
          streams = std::max<int64_t>(streams, stream + 1);
      }
    }
  });
  for (DropoutKernelOp dropout : dropouts)
    dropout.setReplicaStrideAttr(b.getI64IntegerAttr(streams));
  for (ElementwiseChainKernelOp chain : chains)
    chain.setDropoutReplicaStridesAttr(b.getDenseI64ArrayAttr(
        SmallVector<int64_t>(chain.getDropoutStreams()->size(), streams)));
  for (auto step : program.getBody().front().getOps<StepOp>())
    if (step.getKind() == StepKind::train_step)
      if (failed(scaleSeed(step)) || failed(reduce(step)))
        return failure();
  program->setAttr(CairnDialect::kReplicasAttrName,
                   b.getI64IntegerAttr(replicas));
  dropPlan(program);
  return success();
}

LogicalResult GradientReducer::scaleSeed(StepOp step) {
  int64_t microBatches = 1;
  if (auto attr = program->getAttrOfType<IntegerAttr>("micro_batches"))
    microBatches = attr.getInt();
  Builder b(program.getContext());
  // With f16's loss scaling the seed is the scale times the marked fill.
  int seeds = 0;
  for (auto fill : step.getBody().front().getOps<FillKernelOp>()) {
    if (!fill->hasAttr(CairnDialect::kBackwardSeedAttrName))
      continue;
    fill.setValueAttr(b.getF64FloatAttr(1.0 / double(microBatches * replicas)));
    ++seeds;
  }
  if (seeds == 0)
    return step.emitError()
           << "internal error: --replicas found no seed of the backward";
  return success();
}

LogicalResult GradientReducer::reduce(StepOp step) {
  SmallVector<Operation *> kernels;
  for (Operation &op : step.getBody().front())
    if (isa<KernelOpInterface>(op))
      kernels.push_back(&op);
  SmallVector<Access> access;
  for (Operation *kernel : kernels)
    access.push_back(getAccess(kernel));

  // The gradients: what the updates read, before clip_grad_norm scales them
  // (the norm is the whole batch's, as DDP's clipping after its all-reduce).
  SmallVector<Value> grads = getSummedGradients(kernels);
  if (grads.empty())
    return step.emitError()
           << "internal error: --replicas found no gradient in the step";
  // A gradient is complete at its last write before the first kernel that
  // only reads it (an update, found_inf, a clipping norm).
  DenseMap<Value, int64_t> completedBy;
  for (Value grad : grads) {
    int64_t last = -1;
    for (auto [k, kernelAccess] : llvm::enumerate(access)) {
      bool writes = llvm::is_contained(kernelAccess.writes, grad);
      if (writes)
        last = int64_t(k);
      else if (llvm::is_contained(kernelAccess.reads, grad))
        break;
    }
    if (last < 0)
      return step.emitError() << "internal error: --replicas found no kernel "
                                 "computing the gradient '"
                              << grad.getDefiningOp<BufferOp>().getName()
                              << "' before it is read";
    auto type = cast<MemRefType>(grad.getType());
    if (!type.getElementType().isF32())
      return grad.getDefiningOp()->emitError()
             << "--replicas sums float32 gradients; '"
             << grad.getDefiningOp<BufferOp>().getName() << "' is "
             << type.getElementType()
             << " (a half-precision build): not supported yet";
    completedBy[grad] = last;
  }
  llvm::stable_sort(
      grads, [&](Value a, Value b) { return completedBy[a] < completedBy[b]; });

  // Buckets in the order the backward completes their gradients.
  SmallVector<Bucket> buckets;
  for (Value grad : grads) {
    if (buckets.empty() || buckets.back().bytes >= bucketBytes)
      buckets.emplace_back();
    Bucket &bucket = buckets.back();
    auto type = cast<MemRefType>(grad.getType());
    bucket.grads.push_back(grad);
    bucket.bytes += type.getNumElements() * 4;
    bucket.completedBy = std::max(bucket.completedBy, completedBy[grad]);
  }
  DenseMap<Value, size_t> bucketOf;
  for (auto [i, bucket] : llvm::enumerate(buckets))
    for (Value grad : bucket.grads)
      bucketOf[grad] = i;

  // Late kernels: those that touch a gradient after it is complete, and
  // those that must follow a late kernel (they read what it writes, or
  // write what it reads or writes).
  DenseSet<Value> lateReads, lateWrites;
  SmallVector<bool> late(kernels.size(), false);
  for (auto [k, kernelAccess] : llvm::enumerate(access)) {
    bool isLate = false;
    for (Value root :
         llvm::concat<Value>(kernelAccess.reads, kernelAccess.writes))
      if (auto it = completedBy.find(root);
          it != completedBy.end() && int64_t(k) > it->second)
        isLate = true;
    for (Value root : kernelAccess.reads)
      isLate |= lateWrites.contains(root);
    for (Value root : kernelAccess.writes)
      isLate |= lateWrites.contains(root) || lateReads.contains(root);
    if (!isLate)
      continue;
    late[k] = true;
    lateReads.insert(kernelAccess.reads.begin(), kernelAccess.reads.end());
    lateWrites.insert(kernelAccess.writes.begin(), kernelAccess.writes.end());
  }

  // The new order: the early kernels, each bucket's start right after the
  // kernel that completes it; then the late kernels, each bucket's wait
  // right before the first that touches one of its gradients.
  OpBuilder b(program.getContext());
  b.setInsertionPointToStart(&step.getBody().front());
  SmallVector<Value> bucketBuffers;
  for (auto [i, bucket] : llvm::enumerate(buckets)) {
    // The other replicas' copies of this one's chunk of the gradients.
    int64_t elements =
        runtime::getSumWorkspaceElements(bucket.bytes / 4, replicas);
    bucketBuffers.push_back(BufferOp::create(
        b, bucket.grads.front().getLoc(),
        MemRefType::get({elements}, b.getF32Type()), BufferKind::temp,
        b.getStringAttr("all_reduce.bucket" + Twine(i)), IntegerAttr(), Value(),
        InitAttr(), IntegerAttr()));
  }
  auto index = [&](size_t i) { return b.getI64IntegerAttr(int64_t(i)); };
  SmallVector<Operation *> order;
  for (auto [k, kernel] : llvm::enumerate(kernels)) {
    if (late[k])
      continue;
    order.push_back(kernel);
    for (auto [i, bucket] : llvm::enumerate(buckets))
      if (bucket.completedBy == int64_t(k)) {
        b.setInsertionPointAfter(kernel);
        order.push_back(AllReduceStartKernelOp::create(
            b, kernel->getLoc(), bucket.grads, bucketBuffers[i], index(i)));
      }
  }
  SmallVector<bool> waited(buckets.size(), false);
  auto wait = [&](size_t i, Location loc) {
    if (waited[i])
      return;
    waited[i] = true;
    b.setInsertionPointToEnd(&step.getBody().front());
    order.push_back(AllReduceWaitKernelOp::create(b, loc, bucketBuffers[i],
                                                  buckets[i].grads,
                                                  buckets[i].grads, index(i)));
  };
  for (auto [k, kernel] : llvm::enumerate(kernels)) {
    if (!late[k])
      continue;
    for (Value root : llvm::concat<Value>(access[k].reads, access[k].writes))
      if (auto it = bucketOf.find(root); it != bucketOf.end())
        wait(it->second, kernel->getLoc());
    order.push_back(kernel);
  }
  for (size_t i = 0; i < buckets.size(); ++i)
    wait(i, step.getLoc());
  reorderStep(step, order);
  return success();
}

struct AllReduceGradientsPass
    : public cairn::impl::AllReduceGradientsPassBase<AllReduceGradientsPass> {
  using AllReduceGradientsPassBase::AllReduceGradientsPassBase;

  void runOnOperation() override {
    if (replicas < 2)
      return;
    SmallVector<ProgramOp> programs =
        getProgramsFor(getOperation(), getArgument());
    if (programs.empty())
      return signalPassFailure();
    if (programs.size() > 1) {
      getOperation().emitError()
          << "--replicas replicates a model on one device; this one is split "
             "across "
          << programs.size()
          << " devices (data parallelism across pipeline stages is not "
             "supported yet)";
      return signalPassFailure();
    }
    if (bucketBytes < 1) {
      getOperation().emitError() << "--bucket expects a size > 0";
      return signalPassFailure();
    }
    ProgramOp program = programs.front();
    // Idempotent: the passes that plan in the loop run it on copies of a
    // program this pass may have seen.
    if (program->hasAttr(CairnDialect::kReplicasAttrName))
      return;
    if (failed(GradientReducer(program, replicas, bucketBytes).run()))
      return signalPassFailure();
  }
};

} // namespace
