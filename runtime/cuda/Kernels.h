//===- Kernels.h - CUDA kernels Cairn writes itself ---------------*- C++ -*-===//
//
// The GPU twins of runtime/kernels/: the same names and arguments, with the
// Context first; every pointer is a device pointer into the arena (or, for
// `constants`, a __device__ array of the generated code). All launch on
// cx.stream, allocate nothing and never synchronise, so a step made of them
// can be captured as a CUDA graph. Element-wise bodies are those of
// runtime/kernels/ScalarOps.h, compiled for both host and device, so the CPU
// and the GPU compute the same function; reductions sum in a fixed order (no
// atomics), so a run gives the same bits every time.
//
// Instantiated for float and double (indices: int32_t and int64_t).
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CUDA_KERNELS_H
#define CAIRN_RUNTIME_CUDA_KERNELS_H

#include "runtime/cuda/Context.h"
#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Convert.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/Pool.h"
#include "runtime/kernels/RankSum.h"

#include <cstddef>
#include <cstdint>

namespace cairn::cuda {

// Data.
template <typename T> void fill(Context &cx, int64_t n, T value, T *out); // also int32_t, int64_t
/// Device-to-device copy of `bytes` (cudaMemcpyAsync: a graph node).
void copyBytes(Context &cx, size_t bytes, const void *in, void *out);
/// out = 0 bytes.
void zeroBytes(Context &cx, size_t bytes, void *out);
/// --poison: `bytes` at `data` become 0xFF.
void poisonBytes(Context &cx, unsigned char *data, size_t bytes);

// Half precision and the loss scaler (runtime/kernels/Convert.h, Optimizer.h).
/// As kernels::castElements: float32 to or from f16 or bf16, the same bits.
void castElements(Context &cx, const void *in, kernels::CastType from, void *out,
                  kernels::CastType to, int64_t n);
/// out[0] = the step's loss scale (cx.scalars->lossScale) or its inverse.
void lossScale(Context &cx, bool inverse, float *out);
/// *found = 1 when an element of a gradient is infinite or NaN, else 0
/// (`grads` the device addresses, a host array).
template <typename T>
void foundInf(Context &cx, int count, const T *const *grads, const int64_t *sizes, T *found);
/// Sets *found (device) to 1 where an element of the `count` half gradients
/// grads[t], stored as Tag (kernels::F16 or kernels::Bf16), is infinite or
/// NaN; never clears it: after foundInf of the step's other gradients.
template <typename Tag>
void markNotFinite(Context &cx, int count, const uint16_t *const *grads, const int64_t *sizes,
                   float *found);
/// Copies `bytes` of `updated` over `old` unless *found (device) is nonzero.
void skipSelect(Context &cx, size_t bytes, const void *updated, const float *found, void *old);

// Element-wise (runtime/kernels/Elementwise.h).
using kernels::Activation;
using kernels::BinaryOp;
/// T is float or double, or kernels::F16 or Bf16 (Convert.h) for the
/// activations, the arithmetic and dropout: half tensors read widened to
/// float and written rounded, as on the CPU (Elementwise.h).
using kernels::StoredAs;
/// Relu included: y = max(x, 0), NaN kept.
template <typename T>
void activationForward(Context &cx, Activation kind, int64_t n, const StoredAs<T> *x,
                       StoredAs<T> *y);
/// Relu included: `saved` is relu's result (dx = saved > 0 ? dy : 0); the
/// others as on the CPU.
template <typename T>
void activationBackward(Context &cx, Activation kind, int64_t n, const StoredAs<T> *dy,
                        const StoredAs<T> *saved, StoredAs<T> *dx);
/// As on the CPU (Elementwise.h): torch.clamp, nn.Hardtanh, nn.ReLU6.
template <typename T>
void clampForward(Context &cx, int64_t n, bool hasMin, double min, bool hasMax, double max,
                  const T *x, T *y);
template <typename T>
void clampBackward(Context &cx, int64_t n, bool hasMin, double min, bool hasMax, double max,
                   const T *dy, const T *x, T *dx);
/// nn.LeakyReLU, as on the CPU.
template <typename T>
void leakyReluForward(Context &cx, int64_t n, double slope, const T *x, T *y);
template <typename T>
void leakyReluBackward(Context &cx, int64_t n, double slope, const T *dy, const T *x, T *dx);
template <typename T>
void binarySameShape(Context &cx, BinaryOp op, int64_t n, const StoredAs<T> *a,
                     const StoredAs<T> *b, StoredAs<T> *out);
/// One operand is a single element: out[i] = a[i] op b[0] (scalarLhs false)
/// or a[0] op b[i] (scalarLhs true).
template <typename T>
void binaryScalar(Context &cx, BinaryOp op, int64_t n, bool scalarLhs, const StoredAs<T> *a,
                  const StoredAs<T> *b, StoredAs<T> *out);
template <typename T>
void binaryBroadcast(Context &cx, BinaryOp op, int rank, const int64_t *outShape,
                     const StoredAs<T> *a, const int64_t *aStrides, const StoredAs<T> *b,
                     const int64_t *bStrides, StoredAs<T> *out);

/// A fused chain of element-wise kernels (the emitter's fusion of kernels
/// whose intermediates nobody else reads): up to kMaxChainInputs same-size
/// inputs, a program of up to kMaxChainOps ops on registers, one output.
constexpr int kMaxChainInputs = 4;
constexpr int kMaxChainOps = 8;
enum class ChainOpKind : int32_t {
  Add, Sub, Mul, Div,         // r[dst] = r[a] op r[b]
  Relu, Sigmoid, Tanh, GeluExact, GeluTanh, // r[dst] = f(r[a])
  ReluGrad,                   // r[dst] = r[b] > 0 ? r[a] : 0  (a: dy, b: relu's result)
  SigmoidGrad, TanhGrad, GeluExactGrad, GeluTanhGrad, // r[dst] = f'(dy = r[a], saved = r[b])
  Silu, Hardswish,            // r[dst] = f(r[a])
  SiluGrad, HardswishGrad,    // r[dst] = f'(dy = r[a], x = r[b])
};
struct ChainOp {
  ChainOpKind kind;
  int32_t dst, a, b; // registers: 0..inputs-1 hold the inputs
};
struct Chain {
  int32_t numInputs = 0, numOps = 0;
  int32_t result = 0; // the register written to `out`
  /// Inputs of one element (broadcast) rather than n.
  bool scalarInput[kMaxChainInputs] = {};
  ChainOp ops[kMaxChainOps];
};
template <typename T>
void elementwiseChain(Context &cx, const Chain &chain, int64_t n,
                      const T *const *inputs /* numInputs */, T *out);

// Reductions (runtime/kernels/Reduction.h).
template <typename T>
void reduceSum(Context &cx, int rank, const int64_t *inShape, const bool *reduced, T alpha,
               const T *in, T *out);
template <typename T>
void broadcastTo(Context &cx, int rank, const int64_t *outShape, const int64_t *inStrides,
                 T alpha, const T *in, T *out);

// Convolution (runtime/kernels/Conv.h; the forward and the input gradient
// are cuDNN's, Library.h).
/// dw = the weight gradient, without cuDNN: the fallback of
/// conv2dBackwardWeight where no cuDNN algorithm fits the planned workspace
/// (under --deterministic, most 3x3 layers). Deterministic; uses the
/// workspace, when it holds several copies of dw, to spread the sum over
/// more blocks.
template <typename T>
void conv2dBackwardWeightDirect(Context &cx, const kernels::Conv2dShape &s,
                                const T *dy, const T *x, T *dw, void *workspace,
                                size_t workspaceBytes);

// Softmax and losses (Softmax.h, Loss.h).
template <typename T>
void softmaxForward(Context &cx, bool log, int64_t outer, int64_t dim, int64_t inner, const T *x,
                    T *y);
template <typename T>
void softmaxBackward(Context &cx, bool log, int64_t outer, int64_t dim, int64_t inner,
                     const T *dy, const T *y, T *dx);
template <typename T, typename I>
void crossEntropyForward(Context &cx, int64_t rows, int64_t classes, const T *logits,
                         const I *labels, double labelSmoothing, T *loss);
template <typename T, typename I>
void crossEntropyBackward(Context &cx, int64_t rows, int64_t classes, const T *dloss,
                          const T *logits, const I *labels, double labelSmoothing, T *dlogits);
template <typename T> void mseForward(Context &cx, int64_t n, const T *x, const T *t, T *loss);
template <typename T>
void mseBackward(Context &cx, int64_t n, const T *dloss, const T *x, const T *t, T *dx);

/// The same mask as kernels::dropout for the same (seed, step, stream): the
/// seed and step come from cx.scalars.
template <typename T>
void dropout(Context &cx, int64_t n, double p, uint64_t stream, const StoredAs<T> *x,
             StoredAs<T> *y);

// Normalization kernels cuDNN does not cover as we need them.
/// Running mean and (unbiased) variance, as kernels::batchNormUpdateRunningStats;
/// `workspace` and `replicas` as batchNormTrainingForward's (Library.h); x
/// may be f16 or bf16 storage (T kernels::F16 or Bf16) beside float32
/// statistics.
template <typename T>
void batchNormUpdateRunningStats(Context &cx, int64_t n, int64_t c, int64_t spatial,
                                 const StoredAs<T> *x, double momentum,
                                 kernels::ComputedIn<T> *runningMean,
                                 kernels::ComputedIn<T> *runningVar, int64_t *numBatchesTracked,
                                 double *workspace = nullptr,
                                 const kernels::RankSum &replicas = kernels::RankSum());
template <typename T>
void layerNormForward(Context &cx, int64_t rows, int64_t cols, const T *x, const T *gamma,
                      const T *beta, double eps, T *y);
template <typename T>
void layerNormBackward(Context &cx, int64_t rows, int64_t cols, const T *dy, const T *x,
                       const T *gamma, double eps, T *dx, T *dgamma, T *dbeta);

// Embedding and data movement (Movement.h).
template <typename T, typename I>
void embeddingForward(Context &cx, int64_t numIndices, int64_t dim, int64_t numEmbeddings,
                      const I *indices, const T *weight, T *out);
/// Deterministic: each row of dweight sums its indices in order.
template <typename T, typename I>
void embeddingBackward(Context &cx, int64_t numIndices, int64_t dim, int64_t numEmbeddings,
                       const I *indices, const T *dy, int64_t paddingIdx, T *dweight);
void permute(Context &cx, int rank, const int64_t *inShape, const int64_t *perm,
             size_t elemBytes, const void *in, void *out);
void extractSlice(Context &cx, int rank, const int64_t *inShape, const int64_t *start,
                  const int64_t *step, const int64_t *outShape, size_t elemBytes,
                  const void *in, void *out);
void insertSlice(Context &cx, int rank, const int64_t *fullShape, const int64_t *start,
                 const int64_t *step, const int64_t *partShape, size_t elemBytes,
                 const void *part, void *full);

// Pooling (Pool.h). The forward of max and average pooling goes through
// cuDNN (Library.h); these direct forms serve the shapes cuDNN cannot take
// (dilation, ceil_mode) and the backward, which recomputes the argmax from
// x exactly as the CPU does (the plan keeps no pooling output for it).
// Max pooling also takes f16 and bf16 storage (T kernels::F16 or Bf16).
template <typename T>
void maxPool2dForwardDirect(Context &cx, const kernels::Pool2dShape &s, const StoredAs<T> *x,
                            StoredAs<T> *y);
template <typename T>
void avgPool2dForwardDirect(Context &cx, const kernels::Pool2dShape &s, bool countIncludePad,
                            const T *x, T *y);
template <typename T>
void maxPool2dBackward(Context &cx, const kernels::Pool2dShape &s, const StoredAs<T> *dy,
                       const StoredAs<T> *x, StoredAs<T> *dx);
template <typename T>
void avgPool2dBackward(Context &cx, const kernels::Pool2dShape &s, bool countIncludePad,
                       const T *dy, T *dx);
template <typename T>
void adaptiveAvgPool2dForward(Context &cx, int64_t n, int64_t c, int64_t h, int64_t w,
                              int64_t oh, int64_t ow, const T *x, T *y);
template <typename T>
void adaptiveAvgPool2dBackward(Context &cx, int64_t n, int64_t c, int64_t h, int64_t w,
                               int64_t oh, int64_t ow, const T *dy, T *dx);

// Optimizer updates, fused: one launch updates every tensor of `tensors`
// (in chunks of kMaxUpdateTensorsPerLaunch, the kernel's argument limit).
constexpr int kMaxUpdateTensorsPerLaunch = 48;
struct UpdateTensor {
  void *param;
  const void *grad;
  void *state0; // SGD: momentum buffer (null without momentum); Adam: exp_avg
  void *state1; // Adam: exp_avg_sq
  int64_t n;
};
/// As kernels::clipCoefficient, `grads` the device addresses of the
/// gradients (a host array); `workspace` (device) holds
/// kernels::clipCoefficientWorkspaceElements doubles. A device of a split
/// model passes its own gradients, `deviceChunks` (host) and `devices`
/// (sumOverRanks, DeviceCollectives.h) as on the CPU: its partials go at
/// their places among every device's, the others 0, and the sum over the
/// devices gives each partial its one device's value exactly (x + 0 is x,
/// in any order), so every device gets the one-GPU coefficient's bits.
template <typename T>
void clipCoefficient(Context &cx, int count, const T *const *grads, const int64_t *sizes,
                     double maxNorm, double normType, double *workspace, T *coefficient,
                     const int64_t *deviceChunks = nullptr,
                     const kernels::RankSum &devices = kernels::RankSum());
/// As kernels::sgdUpdate; the first step (momentum from the gradient) is
/// cx.scalars->step == 0. With `skip` (device, the loss scaler's found-inf
/// flag), nothing is written when *skip is nonzero.
template <typename T>
void sgdUpdate(Context &cx, int count, const UpdateTensor *tensors, double lr, double momentum,
               double dampening, double weightDecay, bool nesterov, const T *skip = nullptr);
/// As kernels::adamUpdate (AdamW with decoupledWeightDecay) with step =
/// cx.scalars->step + 1; `skip` as for sgdUpdate.
template <typename T>
void adamUpdate(Context &cx, int count, const UpdateTensor *tensors, double lr, double beta1,
                double beta2, double eps, double weightDecay, bool decoupledWeightDecay,
                const T *skip = nullptr);

} // namespace cairn::cuda

#endif // CAIRN_RUNTIME_CUDA_KERNELS_H
