//===- PlaceDevices.cpp - Every op of a partitioned model on a device -----===//
//
// `on device K { }` marks some ops; the partition needs all of them placed,
// and before autodiff, which places each backward op with its forward op.
// The rule is the one a pipeline's author expects: code after a stage runs
// on that stage until another region says otherwise, because an op follows
// its first computed operand; an op that reads only inputs and constants
// follows its first user, so a model's inputs never cross devices.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "ir/CairnDialect.h"

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

/// Places the ops of `body` that have no device; true when one changed.
bool placeFromNeighbours(Block &body) {
  Builder b(body.getParentOp()->getContext());
  auto place = [&](Operation *op, int64_t device) {
    op->setAttr(CairnDialect::kDeviceAttrName, b.getI64IntegerAttr(device));
  };
  bool changed = false;
  // Forward: the first computed operand's device.
  for (Operation &op : body.without_terminator()) {
    if (getDevice(&op))
      continue;
    for (Value operand : op.getOperands())
      if (std::optional<int64_t> device = getDevice(operand.getDefiningOp())) {
        place(&op, *device);
        changed = true;
        break;
      }
  }
  // Backward: the first user's device, for ops with no computed operand.
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (getDevice(&op) || llvm::any_of(op.getOperands(), [](Value operand) {
          return operand.getDefiningOp() != nullptr;
        }))
      continue;
    Operation *first = nullptr;
    for (Operation *user : op.getUsers())
      if (getDevice(user) && (!first || user->isBeforeInBlock(first)))
        first = user;
    if (first) {
      place(&op, *getDevice(first));
      changed = true;
    }
  }
  return changed;
}

struct PlaceDevicesPass
    : public cairn::impl::PlaceDevicesPassBase<PlaceDevicesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions;
    for (StringRef name : {"forward", "loss", "eval_loss"})
      if (auto function = module.lookupSymbol<func::FuncOp>(name))
        functions.push_back(function);
    bool partitioned = false;
    for (func::FuncOp function : functions)
      function.walk([&](Operation *op) {
        if (getDevice(op))
          partitioned = true;
      });
    if (!partitioned)
      return;

    for (func::FuncOp function : functions) {
      // What the rules leave (ops that only feed each other), from the
      // first such op on, starts on device 0.
      Block &body = function.getBody().front();
      for (;;) {
        while (placeFromNeighbours(body)) {
        }
        auto unplaced =
            llvm::find_if(body.without_terminator(),
                          [](Operation &op) { return !getDevice(&op); });
        if (unplaced == body.without_terminator().end())
          break;
        unplaced->setAttr(CairnDialect::kDeviceAttrName,
                          Builder(&getContext()).getI64IntegerAttr(0));
      }
    }

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
