//===- PartitionDevices.cpp - One program per device ----------------------===//
//
// A model placed on N devices runs as N processes, each with its own arena:
// so the partition is N programs, each a single device's program the rest
// of the pipeline schedules, plans and verifies as it would any other. The
// only new thing in them is the transfers: a value computed on one device
// and read on another is sent by the first and received by the second.
//
// Both ends of a transfer sit at the place of the reader's first use in the
// step's list, and the transfers are numbered (`tag`) in that order. Every
// device then runs its transfers in the same relative order (the schedule
// keeps them so: KernelSchedule.h), which is what makes blocking sends and
// receives safe: the transfer with the lowest tag not yet done always has
// both its devices waiting on it.
//
// The kernels that read every gradient (found_inf of loss scaling and
// clip_coefficient of gradient clipping) run on every device, over that
// device's gradients, and sum what they found over the devices in their
// place among the transfers (a collective every device joins, so the same
// argument holds). The sum is arranged to be exact, so every device gets
// the one-device result. The loss scale they go with is the runtime's, the
// same on every device: every device that reads it computes it.
//
//===----------------------------------------------------------------------===//

#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

#include "ir/CairnKernelOps.h"

#include "runtime/kernels/Optimizer.h"

#include "mlir/IR/Builders.h"

#include <array>
#include <set>

namespace cairn {
#define GEN_PASS_DEF_PARTITIONDEVICESPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

/// A value that crosses from device `from` to device `to` right before
/// kernel `position` of the step reads it.
struct Transfer {
  int position;
  int root;
  int64_t from;
  int64_t to;
};

/// `placed` of a kernel every device runs (reductions across devices, the
/// loss scale).
constexpr int64_t kEveryDevice = -2;

bool runsOnEveryDevice(Operation *op) {
  return isa<FoundInfKernelOp, ClipCoefficientKernelOp, LossScaleKernelOp>(op);
}

bool isState(const Buffer &buffer) {
  return buffer.kind == BufferKind::param ||
         buffer.kind == BufferKind::buffer ||
         buffer.kind == BufferKind::optimizer;
}

class Partitioner {
public:
  explicit Partitioner(ProgramGraph read)
      : read(std::move(read)), graph(this->read.graph) {}

  /// Places every kernel; the number of devices, 1 when there is nothing
  /// to partition, or failure after an error.
  FailureOr<int64_t> place();
  /// The transfers of every step, after place().
  LogicalResult findTransfers();
  /// Replaces the program by one per device.
  void write();

private:
  unsigned index(StepKind step) { return static_cast<unsigned>(step); }
  Operation *getKernelOp(StepKind step, int k) {
    return read.getKernelOp(step, k);
  }
  void placeOnEveryDevice();
  void restrictToDevice(Operation *op, const ProgramGraph &copy,
                        int64_t device);
  bool placeByState();
  bool placeByDataFlow();
  LogicalResult checkState();
  void writeDevice(ProgramOp program, int64_t device);

  ProgramGraph read;
  const KernelGraph &graph;
  int64_t devices = 1;
  /// By step, then kernel index: the kernel's device (-1: not yet placed,
  /// kEveryDevice).
  std::array<std::vector<int64_t>, std::size(kAllSteps)> placed;
  /// By buffer id: the device a param, buffer or optimizer state lives on.
  std::vector<int64_t> owner;
  /// By buffer id: some kernel of some step touches it (or a view of it).
  std::vector<bool> touched;
  /// The device that writes the forward step's "output".
  int64_t outputDevice = 0;
  std::array<std::vector<Transfer>, std::size(kAllSteps)> transfers;
  /// By buffer id: the device whose kernels write it in the training step
  /// (-1: none, kEveryDevice), after findTransfers().
  std::vector<int64_t> trainWriter;
};

FailureOr<int64_t> Partitioner::place() {
  touched.assign(graph.buffers.size(), false);
  for (StepKind step : kAllSteps)
    for (const Kernel &kernel : graph.getStep(step).kernels) {
      placed[index(step)].push_back(kernel.device);
      devices = std::max(devices, kernel.device + 1);
      for (Access access : getKernelAccesses(graph, kernel))
        touched[access.root] = true;
    }
  if (devices < 2)
    return devices;
  placeOnEveryDevice();
  owner.assign(graph.buffers.size(), -1);
  // State first (an update runs where its parameter is), then data flow,
  // until nothing changes; what is left runs on device 0.
  while (placeByState() || placeByDataFlow()) {
  }
  for (std::vector<int64_t> &step : placed)
    for (int64_t &device : step)
      if (device == -1)
        device = 0;
  while (placeByState()) {
  }
  if (failed(checkState()))
    return failure();
  return devices;
}

void Partitioner::placeOnEveryDevice() {
  for (StepKind step : kAllSteps)
    for (size_t k = 0; k < placed[index(step)].size(); ++k)
      if (runsOnEveryDevice(getKernelOp(step, k)))
        placed[index(step)][k] = kEveryDevice;
}

bool Partitioner::placeByState() {
  bool changed = false;
  for (StepKind step : kAllSteps) {
    const std::vector<Kernel> &kernels = graph.getStep(step).kernels;
    for (size_t k = 0; k < kernels.size(); ++k) {
      int64_t &device = placed[index(step)][k];
      if (device == kEveryDevice)
        continue;
      for (Access access : getKernelAccesses(graph, kernels[k])) {
        if (!isState(graph.buffers[access.root]))
          continue;
        int64_t &home = owner[access.root];
        if (device < 0 && home >= 0) {
          device = home;
          changed = true;
        } else if (device >= 0 && home < 0) {
          home = device;
          changed = true;
        }
      }
    }
  }
  return changed;
}

/// Places one kernel by the kernel computing its first input, else by the
/// first kernel reading one of its outputs; true when it placed one.
bool Partitioner::placeByDataFlow() {
  for (StepKind step : kAllSteps) {
    const std::vector<Kernel> &kernels = graph.getStep(step).kernels;
    std::vector<int64_t> &devicesOf = placed[index(step)];
    // By root: the devices of the kernels that write it, so far.
    std::vector<int64_t> writer(graph.buffers.size(), -1);
    for (size_t k = 0; k < kernels.size(); ++k) {
      if (devicesOf[k] == -1) {
        for (int id : kernels[k].inputs)
          if (id != kNoBuffer && writer[graph.getAliasRoot(id)] >= 0) {
            devicesOf[k] = writer[graph.getAliasRoot(id)];
            return true;
          }
      }
      for (Access access : getKernelAccesses(graph, kernels[k]))
        if (access.writes && devicesOf[k] >= 0)
          writer[access.root] = devicesOf[k];
    }
    for (size_t k = 0; k < kernels.size(); ++k) {
      if (devicesOf[k] != -1)
        continue;
      std::set<int> written;
      for (Access access : getKernelAccesses(graph, kernels[k]))
        if (access.writes)
          written.insert(access.root);
      for (size_t later = k + 1; later < kernels.size(); ++later) {
        if (devicesOf[later] < 0)
          continue;
        for (Access access : getKernelAccesses(graph, kernels[later]))
          if (!access.writes && written.count(access.root)) {
            devicesOf[k] = devicesOf[later];
            return true;
          }
      }
    }
  }
  return false;
}

LogicalResult Partitioner::checkState() {
  for (StepKind step : kAllSteps) {
    const std::vector<Kernel> &kernels = graph.getStep(step).kernels;
    for (size_t k = 0; k < kernels.size(); ++k)
      for (Access access : getKernelAccesses(graph, kernels[k])) {
        const Buffer &buffer = graph.buffers[access.root];
        if (!isState(buffer) || owner[access.root] == placed[index(step)][k] ||
            placed[index(step)][k] == kEveryDevice)
          continue;
        return getKernelOp(step, k)->emitError()
               << "'" << buffer.name << "' is on device " << owner[access.root]
               << " but this op runs on device " << placed[index(step)][k]
               << ": a parameter or buffer lives on one device (layers "
                  "shared across `on device` regions are not supported)";
      }
  }
  return success();
}

LogicalResult Partitioner::findTransfers() {
  for (StepKind step : kAllSteps) {
    const std::vector<Kernel> &kernels = graph.getStep(step).kernels;
    const std::vector<int64_t> &devicesOf = placed[index(step)];
    std::vector<int64_t> writer(graph.buffers.size(), -1);
    std::vector<int> writes(graph.buffers.size(), 0);
    for (size_t k = 0; k < kernels.size(); ++k)
      for (Access access : getKernelAccesses(graph, kernels[k]))
        if (access.writes) {
          if (writer[access.root] != -1 && writer[access.root] != devicesOf[k])
            return getKernelOp(step, k)->emitError()
                   << "internal error: '" << graph.buffers[access.root].name
                   << "' is written on devices " << writer[access.root]
                   << " and " << devicesOf[k];
          writer[access.root] = devicesOf[k];
          ++writes[access.root];
        }
    if (step == StepKind::train_step)
      trainWriter = writer;
    if (step == StepKind::forward)
      for (size_t k = 0; k < kernels.size(); ++k)
        for (Access access : getKernelAccesses(graph, kernels[k]))
          if (access.writes && graph.buffers[access.root].name == "output" &&
              graph.buffers[access.root].kind == BufferKind::output)
            outputDevice = devicesOf[k];
    std::set<std::pair<int, int64_t>> sent;
    for (size_t k = 0; k < kernels.size(); ++k)
      for (Access access : getKernelAccesses(graph, kernels[k])) {
        const Buffer &buffer = graph.buffers[access.root];
        int64_t from = writer[access.root];
        int64_t to = devicesOf[k];
        // Inputs are loaded by every device; state was checked. A kernel
        // on every device reads the gradients on its own device, and what
        // it writes is on every device.
        if (buffer.kind == BufferKind::input || isState(buffer) || from < 0 ||
            to == kEveryDevice || from == to ||
            !sent.insert({access.root, to}).second)
          continue;
        if (writes[access.root] > 1)
          return getKernelOp(step, k)->emitError()
                 << "internal error: '" << buffer.name
                 << "' crosses from device " << from << " to device " << to
                 << " but is written more than once";
        transfers[index(step)].push_back(
            {static_cast<int>(k), access.root, from, to});
      }
  }
  return success();
}

/// Erases the buffers and views of `block` nothing uses, but with
/// `keep` for the persistent buffers no device uses (kept on device 0).
void eraseUnused(Block &block, llvm::function_ref<bool(BufferOp)> keep) {
  for (bool erased = true; erased;) {
    erased = false;
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
      if (!isa<BufferOp, ViewOp>(op) || !op.use_empty())
        continue;
      if (auto buffer = dyn_cast<BufferOp>(op); buffer && keep(buffer))
        continue;
      op.erase();
      erased = true;
    }
  }
}

void Partitioner::writeDevice(ProgramOp program, int64_t device) {
  ProgramGraph copy = readProgram(program);
  OpBuilder b(program.getContext());
  for (StepKind step : kAllSteps) {
    StepOp stepOp = program.getStep(step);
    if (!stepOp)
      continue;
    const std::vector<Transfer> &crossing = transfers[index(step)];
    const std::vector<Operation *> &kernels =
        copy.kernels[static_cast<unsigned>(step)];
    SmallVector<Operation *> order, others;
    // The roots this device's kernels read: where the loss scale is needed.
    std::set<int> readHere;
    for (auto [k, kernel] : llvm::enumerate(graph.getStep(step).kernels))
      if (placed[index(step)][k] == device)
        for (Access access : getKernelAccesses(graph, kernel))
          if (!access.writes)
            readHere.insert(access.root);
    size_t next = 0;
    for (size_t k = 0; k < kernels.size(); ++k) {
      for (; next < crossing.size() && crossing[next].position == int(k);
           ++next) {
        const Transfer &transfer = crossing[next];
        if (transfer.from != device && transfer.to != device)
          continue;
        b.setInsertionPoint(kernels[k]);
        Value value = copy.values[transfer.root];
        IntegerAttr tag = b.getI64IntegerAttr(next);
        Location loc = kernels[k]->getLoc();
        if (transfer.from == device)
          order.push_back(SendKernelOp::create(
              b, loc, value, b.getI64IntegerAttr(transfer.to), tag));
        else
          order.push_back(ReceiveKernelOp::create(
              b, loc, value, b.getI64IntegerAttr(transfer.from), tag));
      }
      bool here = placed[index(step)][k] == device;
      if (placed[index(step)][k] == kEveryDevice) {
        if (auto scale = dyn_cast<LossScaleKernelOp>(kernels[k])) {
          here = readHere.count(
              graph.getAliasRoot(copy.ids.lookup(scale.getResult())));
        } else {
          restrictToDevice(kernels[k], copy, device);
          here = true;
        }
      }
      (here ? order : others).push_back(kernels[k]);
    }
    for (Operation *op : others)
      op->erase();
    reorderStep(stepOp, order);
    eraseUnused(stepOp.getBody().front(), [](BufferOp) { return false; });
  }
  // A persistent buffer no device touches stays on device 0.
  // The runtime computes the test loss and accuracy from the forward
  // output and the loss's target, on the output's device: the target is
  // an input there even where the loss runs on another device.
  eraseUnused(program.getBody().front(), [&](BufferOp buffer) {
    int id = copy.ids.lookup(buffer.getResult());
    if (buffer.getKind() == BufferKind::input &&
        graph.loss.kind != runtime::LossKind::Unknown &&
        buffer.getName() == graph.loss.target && device == outputDevice)
      return true;
    return device == 0 && !touched[id];
  });
  program.setDeviceAttr(b.getI64IntegerAttr(device));
  program.setDevicesAttr(b.getI64IntegerAttr(devices));
  dropPlan(program);
}

/// Makes `op`, a reduction over every gradient, device `device`'s share of
/// it: its own gradients (those its kernels write), summed over the devices.
void Partitioner::restrictToDevice(Operation *op, const ProgramGraph &copy,
                                   int64_t device) {
  auto isHere = [&](Value grad) {
    // A gradient no kernel writes is counted on device 0.
    int64_t writer = trainWriter[graph.getAliasRoot(copy.ids.lookup(grad))];
    return writer == device || (writer < 0 && device == 0);
  };
  if (auto found = dyn_cast<FoundInfKernelOp>(op)) {
    SmallVector<Value> mine(llvm::make_filter_range(found.getGrads(), isHere));
    found.getGradsMutable().assign(mine);
    found.setAcrossDevices(true);
    return;
  }
  auto clip = cast<ClipCoefficientKernelOp>(op);
  // Every gradient's first partial in the one-device kernel's order.
  SmallVector<Value> mine;
  SmallVector<int64_t> chunks;
  int64_t first = 0;
  for (Value grad : clip.getGrads()) {
    int64_t n = cast<MemRefType>(grad.getType()).getNumElements();
    if (isHere(grad)) {
      mine.push_back(grad);
      chunks.push_back(first);
    }
    first += kernels::clipCoefficientWorkspaceElements(&n, 1);
  }
  chunks.push_back(first);
  clip.getGradsMutable().assign(mine);
  clip.setDeviceChunks(chunks);
}

void Partitioner::write() {
  ProgramOp original = read.getProgram();
  OpBuilder b(original);
  for (int64_t device = 0; device < devices; ++device)
    writeDevice(cast<ProgramOp>(b.clone(*original)), device);
  original.erase();
}

struct PartitionDevicesPass
    : public cairn::impl::PartitionDevicesPassBase<PartitionDevicesPass> {
  void runOnOperation() override {
    FailureOr<ProgramGraph> read =
        readProgramFor(getOperation(), getArgument());
    if (failed(read))
      return signalPassFailure();
    Partitioner partitioner(std::move(*read));
    FailureOr<int64_t> devices = partitioner.place();
    if (failed(devices))
      return signalPassFailure();
    if (*devices < 2)
      return;
    if (failed(partitioner.findTransfers()))
      return signalPassFailure();
    partitioner.write();
  }
};

} // namespace
