//===- KernelGraph.h - A planned program as plain data ----------*- C++ -*-===//
//
// The buffers of a `cairn.program` and the kernels of its two steps as plain
// C++ data, what the algorithms of the middle end work on (the memory-aware
// schedule, in-place decisions, the arena plan, its independent verifier,
// the reports): every tensor is a Buffer, and the training step and the
// forward pass are each a list of Kernels that read and write buffers.
// KernelGraphIR.h reads it from the IR and writes decisions back.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_KERNELGRAPH_H
#define CAIRN_PASSES_KERNELGRAPH_H

#include "ir/CairnEnums.h"
#include "runtime/DType.h"
#include "runtime/LossForm.h"
#include "runtime/LrSchedule.h"

#include "mlir/IR/Location.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace cairn {

/// Element types: the runtime's (runtime/DType.h), one enum for all of Cairn.
using DType = runtime::DType;
/// runtime::dtypeSize, signed like every byte count of the plan.
inline int64_t getDTypeBytes(DType dtype) {
  return static_cast<int64_t>(runtime::dtypeSize(dtype));
}

constexpr int kNoBuffer = -1;

struct Buffer {
  int id = kNoBuffer;
  /// The state_dict name of persistent tensors ("fc1.weight",
  /// "grad.fc1.weight", "loss"); "<layer>.<op>" for the others, with a
  /// ".N" suffix when that is taken.
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Bytes it takes in the arena; 0 for a view (it has none of its own).
  int64_t bytes = 0;
  BufferKind kind = BufferKind::temp;
  /// "file:line:col" in the model file.
  std::string loc;
  /// Its location in the IR (null in graphs made by hand).
  mlir::LocationAttr irLoc;
  /// PyTorch's default initialiser of a param, buffer or optimizer state
  /// (#cairn.init): uniform draws from U(-scale, scale), normal from
  /// N(0, scale^2).
  std::optional<InitKind> init;
  double initScale = 0;
  /// A row (along the first dimension) zeroed after the draw, as
  /// nn.Embedding's padding_idx; -1: none.
  int64_t initZeroRow = -1;
  /// The step whose kernels use a per-step buffer, and the indices of the
  /// kernels in that step's list that define it and use it last (a buffer
  /// no kernel reads has lastUse == definedBy). Persistent buffers live for
  /// the whole run: no step, -1 and -1.
  std::optional<StepKind> step;
  int definedBy = -1;
  int lastUse = -1;
  /// A view of another buffer (reshape, eval-mode dropout): the same bytes
  /// at the same offset, never written. The planner must keep `aliasOf` live
  /// as long as its views; definedBy/lastUse of the view are its own uses.
  int aliasOf = kNoBuffer;
  /// Set by the memory planner: this buffer is written in place over the
  /// bytes of `inPlaceOf`, an input of its defining kernel whose lifetime
  /// ends at that kernel (an elementwise kernel reads element i before it
  /// writes element i). Same offset; `inPlaceOf` keeps no bytes of its own
  /// after that kernel.
  int inPlaceOf = kNoBuffer;
  /// Bytes from the arena's start.
  int64_t offset = -1;
  /// A workspace's bytes after its own that its kernel may use too, free in
  /// the plan while it runs (cairn-grow-workspaces); the plan counts `bytes`.
  int64_t spareBytes = 0;

  int64_t getNumElements() const;
  bool isAlias() const { return aliasOf != kNoBuffer; }
  /// The bytes its kernels may touch: its own and, for a workspace, the
  /// spare ones.
  int64_t getUsableBytes() const { return bytes + spareBytes; }
};

/// "LinearGradWeight" for the kernel op named "cairn.kernel.linear_grad_weight"
/// (the reports' name for a kernel kind).
std::string getKernelKindName(llvm::StringRef opName);

/// The attributes the lowering gives a kernel, by the names its op declares
/// (ir/CairnKernelOps.td): writeProgram turns them into the typed op's
/// attributes, and the op's verifier checks every name and type. Nothing
/// reads them back: passes and emitters read the typed op.
class KernelAttrs {
public:
  using Value =
      std::variant<bool, int64_t, double, std::string, std::vector<int64_t>,
                   std::vector<double>, std::vector<bool>,
                   std::vector<std::string>>;

  /// Sets `name`, replacing an earlier value.
  void set(llvm::StringRef name, Value value);
  /// Every attribute in the order it was first set.
  const std::vector<std::pair<std::string, Value>> &getEntries() const {
    return entries;
  }

private:
  std::vector<std::pair<std::string, Value>> entries;
};

struct Kernel {
  /// Its kind: the name of its op ("cairn.kernel.linear"). The op
  /// definitions (ir/CairnKernelOps.td) are the one list of kernel kinds.
  std::string kind;
  /// Buffer ids in the kernel kind's order; kNoBuffer for an absent
  /// optional operand (a bias, an affine weight) or an output nobody reads.
  std::vector<int> inputs;
  std::vector<int> outputs;
  /// Set by the lowering only (KernelAttrs).
  KernelAttrs attrs;
  int workspace = kNoBuffer;
  /// In-place kernels (optimizer updates, running statistics) write an
  /// output into one of their inputs: tiedInputs[i] is the index in
  /// `inputs` that output i overwrites, -1 when output i is separate.
  std::vector<int> tiedInputs;
  /// "file:line:col" in the model file, the layer ("fc1", empty outside a
  /// layer) and the op it comes from ("cairn.linear").
  std::string loc;
  std::string layer;
  std::string opName;
  /// Its name in kernel profiles (getKernelProfileName; empty in graphs
  /// made by hand).
  std::string name;
  /// Its location in the IR (null in graphs made by hand).
  mlir::LocationAttr irLoc;
  /// Element i of its output depends on element i of its inputs alone,
  /// read before element i is written (the op's ElementwiseKernel trait):
  /// its output may be written over a same-size input that dies here.
  bool elementwise = false;
  /// Runs right before the first kernel that reads what it writes, never
  /// earlier (`cairn.before_first_use`: a recomputation is not hoisted back
  /// into the forward part).
  bool beforeFirstUse = false;
  /// The `checkpoint { }` region of the op it comes from (-1: none): the
  /// kernel's `cairn.checkpoint`, which cairn-recompute-checkpoints reads.
  int64_t checkpoint = -1;
  /// Autodiff's seed of the backward, d(loss) = 1 (`cairn.backward_seed`).
  bool backwardSeed = false;
  /// The device of its op (`on device K`, the op's `cairn.device`; -1:
  /// none), which cairn-partition-devices places it by.
  int64_t device = -1;
  /// A reduction over every device of a partitioned model (found_inf's
  /// `across_devices`, clip_coefficient's `device_chunks`): every device
  /// runs it, in the same place among its transfers.
  bool acrossDevices = false;
  /// A send's or a receive's other device and its tag (-1 for other kinds).
  int64_t peer = -1;
  int64_t tag = -1;
  /// Floating-point operations of one run (KernelOpInterface::getKernelFlops;
  /// 0 in graphs made by hand).
  int64_t flops = 0;
};

/// For each output of `kernel`, the index of the input that is the same
/// buffer (the output is written in place over it), or -1: the tiedInputs
/// of a kernel whose in-place outputs name their inputs' buffers.
std::vector<int> findTiedInputs(const Kernel &kernel);

/// The kernels of one step, in execution order.
struct StepKernels {
  StepKind step = StepKind::train_step;
  std::vector<Kernel> kernels;
};

struct KernelGraph {
  std::string model;      // the model's name
  std::string sourceFile; // the .cairn file
  int64_t batch = 0;
  std::string optimizer; // "SGD(lr=0.1, momentum=0.9)", for humans
  /// The optimizer's lr schedule (empty: constant) and the declared lr it
  /// scales.
  std::vector<runtime::LrScheduler> lrSchedule;
  double baseLr = 0;
  /// The loss as a function of the forward step's output, where the
  /// frontend recognised it (kind Unknown otherwise).
  runtime::LossForm loss;
  /// The name of the LoweringTarget the kernels are for ("CPU", "CUDA"):
  /// it decides what the plan holds (the CUDA program's GEMM workspaces).
  std::string target = "CPU";
  /// Indexed by Buffer::id.
  std::vector<Buffer> buffers;
  StepKernels trainStep{StepKind::train_step, {}};
  StepKernels forward{StepKind::forward, {}};
  /// Empty unless the frontend made one (see kAllSteps).
  StepKernels evalLoss{StepKind::eval_loss, {}};
  int64_t arenaBytes = 0;
  /// The arena's budget the recomputation was chosen for
  /// (`cairn.memory_budget` on the program; 0: none).
  int64_t memoryBudget = 0;
  /// A model partitioned across devices (cairn-partition-devices) is one
  /// program per device: this one's index and how many there are (0 of 1
  /// for a model on one device).
  int64_t device = 0;
  int64_t devices = 1;
  /// Data-parallel replicas that run this program, each on `batch` examples
  /// of every batch, summing their gradients (`cairn.replicas`; 1: none).
  int64_t replicas = 1;
  /// Batch norm on every replica's statistics (`cairn.sync_batchnorm`).
  bool syncBatchNorm = false;

  const StepKernels &getStep(StepKind step) const {
    switch (step) {
    case StepKind::train_step:
      return trainStep;
    case StepKind::forward:
      return forward;
    case StepKind::eval_loss:
      break;
    }
    return evalLoss;
  }
  StepKernels &getStep(StepKind step) {
    return const_cast<StepKernels &>(
        static_cast<const KernelGraph &>(*this).getStep(step));
  }
  /// The buffer `id` is a view of, or `id` itself.
  int getAliasRoot(int id) const;
  /// The names of the input buffers `step` reads (through their views), in
  /// buffer order.
  std::vector<std::string> getStepInputs(StepKind step) const;
};

/// A buffer a kernel touches, as its alias root; `writes` when the kernel
/// writes it (an output, a workspace, a tied input), else it only reads it.
struct Access {
  int root;
  bool writes;
};

/// The distinct roots `kernel` touches, a write winning over a read.
std::vector<Access> getKernelAccesses(const KernelGraph &program,
                                      const Kernel &kernel);

/// A cairn.kernel.send or cairn.kernel.receive: the transfers of a
/// partitioned step, which run in their tags' order on every device.
bool isTransferKernel(const Kernel &kernel);

/// A transfer, or a reduction across the devices (Kernel::acrossDevices),
/// which runs in its place among them.
bool isDeviceCommunication(const Kernel &kernel);

/// Sets Buffer::definedBy and lastUse from the kernel lists, extending every
/// buffer's lastUse over the uses of its views.
void computeLiveness(KernelGraph &program);

} // namespace cairn

#endif // CAIRN_PASSES_KERNELGRAPH_H
