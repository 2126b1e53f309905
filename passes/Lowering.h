//===- Lowering.h - From the cairn dialect to kernel lists ------*- C++ -*-===//
//
// Lowers `@train_step` (after autodiff) and `@forward` of a module to one
// KernelGraph: buffers in one arena and a kernel list per step. Target-neutral
// except for what the target says it supports.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_LOWERING_H
#define CAIRN_PASSES_LOWERING_H

#include "passes/KernelGraph.h"
#include "runtime/kernels/Conv.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>

namespace cairn {

/// Which ops a target's kernels run on half tensors themselves, each element
/// widened to float32 as it is read and rounded as it is written: none;
/// those whose tensors have one half type (isOneHalfTypeStorageOp: CUDA);
/// or every op of isHalfStorageOp (the CPU: also the products that round
/// float32 operands or results as they read or write them, and the sums
/// and softmaxes that read half into float32).
enum class HalfStorageKernels { None, OneType, All };

/// "none", "one-type", "all": cairn-compute-half-in-float32's option.
llvm::StringRef getHalfStorageKernelsName(HalfStorageKernels kernels);
std::optional<HalfStorageKernels> parseHalfStorageKernels(llvm::StringRef name);

/// What a target's kernels take and need: the lowering asks it, so that
/// every byte of scratch a library or kernel uses is a buffer of the plan.
struct LoweringTarget {
  /// For messages: "cannot lower 'cairn.xyz' to the CPU backend".
  llvm::StringRef name = "CPU";
  /// Whether the target's kernels take f16 and bf16 tensors.
  bool halfPrecision = false;
  /// Its kernels store f16 and bf16 tensors but compute in float32: only
  /// casts and reshapes take half tensors (the CPU).
  bool halfStorage = false;
  /// With halfStorage, its GEMMs also take half operands and results,
  /// accumulating in float32 (isHalfProduct; CUDA's tensor cores).
  bool halfProducts = false;
  /// With halfStorage, the ops whose kernels read and write half tensors
  /// themselves, computing in float32 between (HalfStorageKernels).
  HalfStorageKernels halfStorageKernels = HalfStorageKernels::None;
  /// Whether its kernels scale the loss and skip a step with a non-finite
  /// gradient (cairn.loss_scale, cairn.found_inf, cairn.skip_select, and the
  /// updates' found_inf).
  bool lossScaling = false;
  /// Whether its element-wise chains take dropouts, drawing each element's
  /// mask in the chain's loop (cairn-fuse-elementwise's `dropout`).
  bool chainDropout = false;
  /// Whether loss scaling checks the gradients scaled, in half where the
  /// backward computes them in half, and unscales each right before its
  /// update (cairn-check-scaled-gradients). Not on CUDA yet: there the
  /// updates of adjacent parameters are one launch (cairn-group-updates),
  /// which a widening and an unscaling before each update would split.
  bool checkScaledGradients = false;
  /// Bytes of scratch `batch` m x n x k GEMMs (Linear and its gradients:
  /// one; Matmul) writing `outputBytes` get (0: none; an even number),
  /// `half` when they compute in f16 or bf16.
  int64_t (*gemmWorkspaceBytes)(int64_t batch, int64_t m, int64_t n, int64_t k,
                                int64_t outputBytes, bool half) = nullptr;
  /// Elements (of the convolution's type) of scratch a Conv2d kernel or one
  /// of its gradients (`pass`) gets, given Conv2dKernelOp's `shape`: n, c, h,
  /// w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups, ho, wo; `half` when it
  /// computes in f16 or bf16, `float32Result` when it writes its result in
  /// float32 (rounded: ir/ProductTypes.h).
  int64_t (*convWorkspaceElements)(llvm::ArrayRef<int64_t> shape,
                                   kernels::ConvPass pass, bool half,
                                   bool float32Result) = nullptr;
  /// The most bytes of workspace the target's convolution library can use
  /// for a float32 convolution (null: no more than convWorkspaceElements),
  /// which cairn-grow-workspaces gives it where they are free.
  int64_t (*convLibraryWorkspaceBytes)(llvm::ArrayRef<int64_t> shape,
                                       kernels::ConvPass pass) = nullptr;
};

/// The most bytes of cuBLASLt workspace one GEMM gets in a CUDA plan.
constexpr int64_t kCudaGemmWorkspaceBytes = int64_t(4) << 20;

/// What the CPU backend takes: f32 and f64; float GEMMs need no scratch,
/// half ones (isHalfStorageOp's linears) halfGemm's float32 panels and
/// tiles (runtime/kernels/HalfGemm.h's rule); a convolution is im2col + GEMM
/// over one image's column matrix for one group ((c / groups) kh kw x ho wo
/// elements: what runtime/kernels/Conv.cpp walks), a half one that and one
/// group of images and the weights in float32 (HalfConv.h's rule);
/// test/unit/plan/WorkspaceRuleTest.cpp holds the rules to the kernels'.
LoweringTarget getCpuTarget();
/// What the CUDA backend takes: named "CUDA" in messages, f32 and f64, f16
/// and bf16 stored and computed in float32 as on the CPU but for the GEMMs
/// and convolutions (not their weight gradients), which take half operands
/// on the tensor cores (halfProducts), loss
/// scaling; a GEMM whose K is longer than both sides of its output gets
/// cuBLASLt's split-K scratch (the output's float32 partial sums, at most
/// kCudaGemmWorkspaceBytes), the others none; a convolution gives cuDNN the
/// CPU's im2col size as its budget, and cuDNN's algorithms are chosen among
/// those that fit it.
LoweringTarget getCudaTarget();
/// The target named `name` ("cpu" or "cuda"), or nullopt.
std::optional<LoweringTarget> getLoweringTarget(llvm::StringRef name);

/// A GEMM or convolution (cairn.matmul, cairn.linear, cairn.linear_grad_input,
/// cairn.linear_grad_weight, cairn.conv2d or cairn.conv2d_grad_input) all
/// of whose tensors have one half type, f16 or bf16: what a target with
/// halfProducts computes from half operands.
bool isHalfProduct(mlir::Operation *op);

/// An op whose kernel reads its half tensors widened to float32 and writes
/// them rounded, computing in float32 between, so that it gives the float32
/// op's arithmetic between casts without their float32 copies: a linear
/// and its two gradients in one half type (some of their tensors may be
/// float32, rounded to it: ir/ProductTypes.h; halfGemm: float32 sums of the
/// widened operands, rounded once, in tiles and slices of K whose order of
/// summing is its own, not the BLAS's on the whole product); a convolution
/// and its two gradients on one half type (HalfConv.h: the float im2col
/// kernels a group of images at a time); a sum or a mean of a half input
/// into float32; a
/// cairn.max_pool2d all of whose tensors have one half type (its result is
/// one of its inputs), and a cairn.max_pool2d_grad likewise whose windows do
/// not overlap (each gradient lands alone: no sum to round); a matmul
/// (batchedHalfGemm, HalfGemm.h: each product halfGemm's); dropout, the
/// element-wise add, sub, mul and div, the activations (relu, sigmoid,
/// tanh, gelu, silu, hardswish) and their gradients on one half type;
/// batch norm, its gradient and its running update on half data, beside
/// their float32 parameters and statistics. What a target with
/// HalfStorageKernels::All runs on half tensors.
bool isHalfStorageOp(mlir::Operation *op);

/// Of isHalfStorageOp, the ops whose tensors all have one half type, but
/// for batch norm's float32 parameters and statistics: dropout, the
/// element-wise add, sub, mul and div, the activations and their gradients,
/// max pooling (its result is one of its inputs) and its gradient where
/// windows do not overlap (each gradient lands alone), batch norm, its
/// gradient and its running update. What a target with
/// HalfStorageKernels::OneType runs on half tensors.
bool isOneHalfTypeStorageOp(mlir::Operation *op);

/// Whether a target that stores half tensors runs `op` on them as they are:
/// a cast, a reshape or a found_inf, and with `halfProducts` an op of
/// isHalfProduct, and an op `halfStorageKernels` names.
/// cairn-compute-half-in-float32 leaves these half; the lowering takes their
/// half tensors.
bool runsOnHalf(mlir::Operation *op, bool halfProducts,
                HalfStorageKernels halfStorageKernels);

/// Lowers both steps and computes liveness; planArena (ArenaPlan.h) lays
/// out the arena. Errors are
/// reported at the offending op's location; returns nullopt then.
std::optional<KernelGraph> lowerToKernels(mlir::ModuleOp module,
                                      const LoweringTarget &target);

} // namespace cairn

#endif // CAIRN_PASSES_LOWERING_H
