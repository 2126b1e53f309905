//===- CairnDialect.td - The cairn dialect -----------------*- tablegen -*-===//
//
// The dialect of Cairn's tensor-level neural network IR, and the base class of
// its ops.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_IR_CAIRNDIALECT_TD
#define CAIRN_IR_CAIRNDIALECT_TD

include "mlir/IR/OpBase.td"
include "ir/CairnInterfaces.td"

def Cairn_Dialect : Dialect {
  let name = "cairn";
  let cppNamespace = "::cairn";
  let summary = "Tensor-level neural network ops for ahead-of-time training";
  let description = [{
    The `cairn` dialect holds a PyTorch model as one function over ranked,
    statically shaped tensors: parameters and inputs are function arguments
    (tagged with `cairn.name`, `cairn.role` and `cairn.init`), and every layer
    is an op with the shape rules of its PyTorch counterpart.

    Discardable attributes:
    - on ops: `cairn.checkpoint` (i64 >= 0, a checkpoint region id; kept on
      the kernels lowered from them, which cairn-recompute-checkpoints reads),
      `cairn.device` (i64 >= 0), `cairn.precision` (`#cairn.precision<..>`);
    - on function arguments: `cairn.name` (non-empty string, the state_dict
      key or input name), `cairn.role` (`#cairn.role<..>`), `cairn.init`
      (`#cairn.init<..>`); on function results: `cairn.name`, `cairn.role`
      and `cairn.updates` (i64, the index of the argument of the same type
      that the result replaces: an in-place update, as in @train_step);
    - on the builtin module: `cairn.model` (string), `cairn.batch` (integer
      > 0), `cairn.optimizer` (`#cairn.sgd<..>` or `#cairn.adam<..>`);
    - on kernels (the buffer-level form): `cairn.before_first_use` (unit), a
      kernel the scheduler runs right before the first kernel that reads
      what it writes, never earlier (a recomputation); `cairn.recompute`
      (unit), a forward kernel whose per-step outputs the backward computes
      again rather than keeps (cairn-choose-recomputation's choice);
      `cairn.recompute_per_use` (unit, with `cairn.recompute`): where the
      backward computes another value again from this kernel's outputs, it
      computes them again for that alone too, rather than sharing the copy
      its own backward readers read later (which would live from then on);
    - on the cairn.program: `cairn.memory_budget` (i64 > 0), the arena's
      budget in bytes the recomputation was chosen for.
  }];

  let dependentDialects = ["::mlir::func::FuncDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;

  let extraClassDeclaration = [{
    /// Names of the discardable attributes.
    static constexpr ::llvm::StringLiteral kCheckpointAttrName = "cairn.checkpoint";
    static constexpr ::llvm::StringLiteral kDeviceAttrName = "cairn.device";
    static constexpr ::llvm::StringLiteral kPrecisionAttrName = "cairn.precision";
    static constexpr ::llvm::StringLiteral kNameAttrName = "cairn.name";
    static constexpr ::llvm::StringLiteral kRoleAttrName = "cairn.role";
    static constexpr ::llvm::StringLiteral kInitAttrName = "cairn.init";
    static constexpr ::llvm::StringLiteral kUpdatesAttrName = "cairn.updates";
    static constexpr ::llvm::StringLiteral kModelAttrName = "cairn.model";
    static constexpr ::llvm::StringLiteral kBatchAttrName = "cairn.batch";
    static constexpr ::llvm::StringLiteral kOptimizerAttrName = "cairn.optimizer";
    static constexpr ::llvm::StringLiteral kLrScheduleAttrName = "cairn.lr_schedule";
    static constexpr ::llvm::StringLiteral kClipGradNormAttrName = "cairn.clip_grad_norm";
    static constexpr ::llvm::StringLiteral kEvalLossAttrName = "cairn.eval_loss";
    static constexpr ::llvm::StringLiteral kLossScalingAttrName = "cairn.loss_scaling";
    static constexpr ::llvm::StringLiteral kBeforeFirstUseAttrName = "cairn.before_first_use";
    static constexpr ::llvm::StringLiteral kUpdateGroupAttrName = "cairn.update_group";
    static constexpr ::llvm::StringLiteral kRecomputeAttrName = "cairn.recompute";
    static constexpr ::llvm::StringLiteral kRecomputePerUseAttrName = "cairn.recompute_per_use";
    static constexpr ::llvm::StringLiteral kMemoryBudgetAttrName = "cairn.memory_budget";
    static constexpr ::llvm::StringLiteral kBackwardSeedAttrName = "cairn.backward_seed";
    static constexpr ::llvm::StringLiteral kReplicasAttrName = "cairn.replicas";
    /// A replica's program whose batch norms use every replica's statistics
    /// (cairn-sync-batch-norm).
    static constexpr ::llvm::StringLiteral kSyncBatchNormAttrName =
        "cairn.sync_batchnorm";

  private:
    void registerAttributes();
  public:
  }];
}

/// A buffer of the planned step's arena (CairnProgramOps.td): a statically
/// shaped memref of an element type the kernels take.
def Cairn_MemRef : StaticShapeMemRefOf<[F16, BF16, F32, F64, I32, I64]>;

/// Checks that every operand and result is a tensor of static shape with
/// dimensions >= 1 and at most 2^48 elements (C++ in CairnOps.h).
def Cairn_ValidShapes : NativeOpTrait<"ValidShapes"> {
  let cppNamespace = "::cairn::OpTrait";
}

/// Every cairn op checks its shapes and reports its cost.
class Cairn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Cairn_Dialect, mnemonic,
         !listconcat(traits, [Cairn_ValidShapes,
                              DeclareOpInterfaceMethods<CostOpInterface>])>;

#endif // CAIRN_IR_CAIRNDIALECT_TD
