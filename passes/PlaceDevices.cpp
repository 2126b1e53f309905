//===- PlaceDevices.cpp - Every op of a partitioned model on a device -----===//
//
// `on device K { }` marks some ops; the partition needs all of them placed,
// and before autodiff, which places each backward op with its forward op.
// The rule is the one a pipeline's author expects: code after a stage runs
// on that stage until another region says otherwise (device 0 before the
// first); a constant runs where its first user does, so it never crosses.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"
#include "passes/StageSplit.h"

#include "ir/CairnAttrs.h"
#include "ir/CairnDialect.h"
#include "ir/CairnInterfaces.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <map>

namespace cairn {
#define GEN_PASS_DEF_PLACEDEVICESPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

std::optional<int64_t> getDevice(Operation *op) {
  if (!op)
    return std::nullopt;
  if (auto device =
          op->getAttrOfType<IntegerAttr>(CairnDialect::kDeviceAttrName))
    return device.getInt();
  return std::nullopt;
}

/// Places the ops of `body` that have no device: each runs on the device
/// of the last placed op before it (device 0 before the first), except a
/// constant (an op without operands), which runs where its first user does.
void placeInProgramOrder(Block &body) {
  Builder b(body.getParentOp()->getContext());
  auto place = [&](Operation *op, int64_t device) {
    op->setAttr(CairnDialect::kDeviceAttrName, b.getI64IntegerAttr(device));
  };
  int64_t current = 0;
  SmallVector<Operation *> constants;
  for (Operation &op : body.without_terminator()) {
    if (std::optional<int64_t> device = getDevice(&op))
      current = *device;
    else if (op.getNumOperands() == 0)
      constants.push_back(&op);
    else
      place(&op, current);
  }
  for (Operation *op : constants) {
    Operation *first = nullptr;
    for (Operation *user : op->getUsers())
      if (user->getBlock() == &body && (!first || user->isBeforeInBlock(first)))
        first = user;
    place(op, first && getDevice(first) ? *getDevice(first) : 0);
  }
}

/// Bytes of a tensor value (0 for anything else).
int64_t getTensorBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return saturatingMul(type.getNumElements(),
                       (type.getElementTypeBitWidth() + 7) / 8);
}

/// FLOP-equivalents a core does in the time it moves one byte (as
/// CairnKernelCosts.cpp's roofline), and the same for a byte sent to
/// another process (an MPI message through shared memory or a network,
/// slower than a core's own loads).
constexpr int64_t kFlopsPerByte = 8;
constexpr int64_t kFlopsPerTransferredByte = 32;

/// An op's modelled time, forward and backward (about twice the forward).
int64_t getOpCost(Operation *op) {
  int64_t flops = 0;
  if (auto cost = dyn_cast<CostOpInterface>(op))
    flops = cost.getFlops();
  int64_t bytes = 0;
  for (Value value : llvm::concat<Value>(op->getOperands(), op->getResults()))
    bytes = saturatingAdd(bytes, getTensorBytes(value));
  return saturatingMul(std::max(flops, saturatingMul(bytes, kFlopsPerByte)), 3);
}

/// Cuts `loss`'s ops into `devices` stages (StageSplit.h) and places them.
LogicalResult placeStages(func::FuncOp loss, int64_t devices) {
  Block &body = loss.getBody().front();
  SmallVector<Operation *> ops;
  DenseMap<Operation *, int> index;
  for (Operation &op : body.without_terminator()) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  int n = ops.size();
  StageSplitProblem problem;
  problem.opCost.reserve(n);
  for (Operation *op : ops)
    problem.opCost.push_back(getOpCost(op));
  problem.cutCost.assign(n + 1, 0);
  problem.allowed.assign(n + 1, true);
  // A value computed before boundary b and read after it crosses there:
  // forward, and its gradient backward.
  for (Operation *op : ops)
    for (Value result : op->getResults()) {
      int last = index[op];
      for (Operation *user : result.getUsers())
        if (index.count(user))
          last = std::max(last, index[user]);
      for (int b = index[op] + 1; b <= last; ++b)
        problem.cutCost[b] = saturatingAdd(
            problem.cutCost[b], saturatingMul(getTensorBytes(result),
                                              2 * kFlopsPerTransferredByte));
    }
  // A parameter or buffer lives on one device: no cut between its readers.
  for (BlockArgument arg : loss.getArguments()) {
    auto role = loss.getArgAttrOfType<RoleAttr>(arg.getArgNumber(),
                                                CairnDialect::kRoleAttrName);
    if (!role || role.getValue() == Role::input)
      continue;
    int first = n, last = -1;
    for (Operation *user : arg.getUsers())
      if (index.count(user)) {
        first = std::min(first, index[user]);
        last = std::max(last, index[user]);
      }
    for (int b = first + 1; b <= last; ++b)
      problem.allowed[b] = false;
  }
  std::optional<StageSplit> split = splitIntoStages(problem, devices);
  if (!split)
    return loss.emitError()
           << "cannot split the model into " << devices
           << " stages: it has fewer places to cut (between ops that share no "
              "parameter) than that";
  Builder b(loss.getContext());
  for (int stage = 0; stage < devices; ++stage) {
    int end = stage + 1 < devices ? split->starts[stage + 1] : n;
    for (int i = split->starts[stage]; i < end; ++i)
      ops[i]->setAttr(CairnDialect::kDeviceAttrName,
                      b.getI64IntegerAttr(stage));
  }
  return success();
}

struct PlaceDevicesPass
    : public cairn::impl::PlaceDevicesPassBase<PlaceDevicesPass> {
  using PlaceDevicesPassBase::PlaceDevicesPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions;
    for (StringRef name : {"forward", "loss", "eval_loss"})
      if (auto function = module.lookupSymbol<func::FuncOp>(name))
        functions.push_back(function);
    Operation *placed = nullptr;
    for (func::FuncOp function : functions)
      function.walk([&](Operation *op) {
        if (!placed && getDevice(op))
          placed = op;
      });
    // One device: the regions are ignored, the reference a split is
    // checked against.
    if (devices == 1) {
      for (func::FuncOp function : functions)
        function.walk([](Operation *op) {
          op->removeAttr(CairnDialect::kDeviceAttrName);
        });
      return;
    }
    if (devices > 1) {
      if (placed) {
        placed->emitError()
            << "--devices places a model without `on device` regions; this "
               "model places its ops itself";
        return signalPassFailure();
      }
      auto loss = module.lookupSymbol<func::FuncOp>("loss");
      if (!loss) {
        module.emitError() << "--devices places @loss's ops, and there is no "
                              "@loss";
        return signalPassFailure();
      }
      if (failed(placeStages(loss, devices)))
        return signalPassFailure();
      // The forward pass and the eval loss as their ops in @loss.
      DenseMap<Location, int64_t> deviceAt;
      for (Operation &op : loss.getBody().front().without_terminator())
        deviceAt.try_emplace(op.getLoc(), *getDevice(&op));
      for (func::FuncOp function : functions)
        if (function != loss)
          for (Operation &op : function.getBody().front().without_terminator())
            if (auto it = deviceAt.find(op.getLoc()); it != deviceAt.end())
              op.setAttr(CairnDialect::kDeviceAttrName,
                         Builder(&getContext()).getI64IntegerAttr(it->second));
    } else if (!placed) {
      return;
    }

    for (func::FuncOp function : functions)
      placeInProgramOrder(function.getBody().front());

    // Devices 0 to N-1, each with something to run.
    std::map<int64_t, Operation *> firstOnDevice;
    for (func::FuncOp function : functions)
      for (Operation &op : function.getBody().front().without_terminator())
        firstOnDevice.try_emplace(*getDevice(&op), &op);
    int64_t expected = 0;
    for (auto [device, op] : firstOnDevice) {
      if (device != expected) {
        op->emitError() << "device " << expected
                        << " has nothing to run: the devices of `on device` "
                           "are numbered from 0 without a gap, and this is "
                           "the first op on device "
                        << device;
        return signalPassFailure();
      }
      ++expected;
    }
  }
};

} // namespace
