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

/// The most splits the --device-memory search plans (each from a few
/// milliseconds to most of a second with --memory-budget; the examples need
/// at most 25).
constexpr int kMaxSplitPlans = 1000;

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

/// The problem of cutting @loss's ops, in program order, into stages
/// (StageSplit.h): each op's modelled time, each cut's transfers and where a
/// cut may go.
StageSplitProblem describeStages(func::FuncOp loss) {
  StageSplitProblem problem;
  SmallVector<Operation *> ops;
  DenseMap<Operation *, int> index;
  for (Operation &op : loss.getBody().front().without_terminator()) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  int n = ops.size();
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
  return problem;
}

/// Places `module`'s ops by `split` of @loss's ops: @forward's and
/// @eval_loss's as the @loss op they repeat, the i-th op at a location as
/// the i-th @loss op there (one layer lowers to several ops at its location,
/// and a cut may fall between them).
void applySplit(ModuleOp module, const StageSplit &split) {
  auto loss = module.lookupSymbol<func::FuncOp>("loss");
  Builder b(module.getContext());
  SmallVector<Operation *> ops;
  for (Operation &op : loss.getBody().front().without_terminator())
    ops.push_back(&op);
  int stages = split.starts.size(), n = ops.size();
  DenseMap<Location, SmallVector<int64_t>> devicesAt;
  for (int stage = 0; stage < stages; ++stage) {
    int end = stage + 1 < stages ? split.starts[stage + 1] : n;
    for (int i = split.starts[stage]; i < end; ++i) {
      ops[i]->setAttr(CairnDialect::kDeviceAttrName,
                      b.getI64IntegerAttr(stage));
      devicesAt[ops[i]->getLoc()].push_back(stage);
    }
  }
  for (StringRef name : {"forward", "eval_loss"})
    if (auto function = module.lookupSymbol<func::FuncOp>(name)) {
      DenseMap<Location, size_t> seen;
      for (Operation &op : function.getBody().front().without_terminator())
        if (auto it = devicesAt.find(op.getLoc()); it != devicesAt.end()) {
          size_t occurrence = seen[op.getLoc()]++;
          op.setAttr(
              CairnDialect::kDeviceAttrName,
              b.getI64IntegerAttr(
                  it->second[std::min(occurrence, it->second.size() - 1)]));
        }
    }
}

/// The split of @loss into `devices` stages: the fastest, or with a device
/// memory, the fastest whose every device's plan fits it (`plan`: the rest
/// of the pipeline on a placed copy), by StageSplit.h's lazy search. Without
/// a fit, the planned split whose largest arena was smallest, whose plan
/// then says what each device needs.
FailureOr<StageSplit> chooseSplit(ModuleOp module, func::FuncOp loss,
                                  int64_t devices, int64_t deviceMemory,
                                  const PlanPlacement &plan) {
  StageSplitProblem problem = describeStages(loss);
  std::optional<StageSplit> fastest = splitIntoStages(problem, devices);
  if (!fastest)
    return loss.emitError()
           << "cannot split the model into " << devices
           << " stages: it has fewer places to cut (between ops that share no "
              "parameter) than that";
  if (deviceMemory <= 0 || !plan)
    return *fastest;
  PlanStages planStages = [&](const std::vector<int> &starts)
      -> std::optional<std::vector<int64_t>> {
    OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
    applySplit(*copy, StageSplit{starts, 0});
    FailureOr<std::vector<int64_t>> arenas = plan(*copy);
    if (failed(arenas))
      return std::nullopt;
    if (arenas->size() != size_t(devices)) {
      loss.emitError() << "a split into " << devices << " stages planned "
                       << arenas->size() << " devices";
      return std::nullopt;
    }
    return *arenas;
  };
  std::optional<FittingSplit> found = splitIntoStagesThatFit(
      problem, devices, deviceMemory, planStages, kMaxSplitPlans);
  if (!found)
    return failure();
  if (found->fits)
    return *found->fits;
  if (found->gaveUp)
    loss.emitWarning() << "--device-memory: no split fits after "
                       << found->plans
                       << " plans; the search stopped there, with the "
                          "closest split it planned";
  return StageSplit{found->closest, 0};
}

struct PlaceDevicesPass
    : public cairn::impl::PlaceDevicesPassBase<PlaceDevicesPass> {
  using PlaceDevicesPassBase::PlaceDevicesPassBase;
  PlaceDevicesPass(const PlaceDevicesPassOptions &options, PlanPlacement plan)
      : PlaceDevicesPassBase(options), plan(std::move(plan)) {}

  /// Plans a placed copy of the module (the --device-memory search); null
  /// from cairn-opt, which then takes the fastest split.
  PlanPlacement plan;

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
      FailureOr<StageSplit> split =
          chooseSplit(module, loss, devices, deviceMemory, plan);
      if (failed(split))
        return signalPassFailure();
      applySplit(module, *split);
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

std::unique_ptr<Pass>
cairn::createPlaceDevicesPass(const PlaceDevicesPassOptions &options,
                              PlanPlacement plan) {
  return std::make_unique<PlaceDevicesPass>(options, std::move(plan));
}
