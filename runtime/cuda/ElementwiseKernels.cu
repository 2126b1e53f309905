//===- ElementwiseKernels.cu - Activations, arithmetic, fused chains ------===//
//
// The GPU twins of runtime/kernels/Elementwise.h. Every per-element body is
// one of ScalarOps.h, the very functions the CPU kernels loop over; a
// kernel is compiled per activation or operator (no switch per element),
// and every loop is a grid-stride loop, so any n runs with a grid that
// depends on n alone. Outputs may alias a same-size input: each element is
// read and written by the same thread.
//
// Broadcasts coalesce their dimensions as the CPU does (size-1 dimensions
// dropped, neighbours contiguous in every operand merged), then each thread
// turns its output index into the two operand offsets.
//
// Activations, arithmetic and dropout (LossKernels.cu) also take f16 and
// bf16 tensors (T = kernels::F16 or Bf16, stored as uint16_t): each element
// is widened to float as it is read and rounded as it is written, with
// Convert.h's rounding, so the bits are the CPU's half kernels' (and the
// float kernel's between two casts).
//
// A chain (Kernels.h) is a small register program run per element by one
// kernel, replacing a run of element-wise kernels whose intermediates
// nobody else reads. Registers hold T, so every op rounds to T as the
// separate kernels would when storing their results.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"

#include "runtime/cuda/Launch.h"
#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/ScalarOps.h"
#include "runtime/kernels/StridedWalk.h"

#include <string>

namespace cairn::cuda {

namespace ops = kernels::ops;

namespace {

//===----------------------------------------------------------------------===//
// Activations and same-shape arithmetic.
//===----------------------------------------------------------------------===//

using kernels::ComputedIn;
using kernels::Storage;

template <typename T, typename Act>
__global__ void activationForwardKernel(int64_t n, const StoredAs<T> *x, StoredAs<T> *y) {
  using S = Storage<T>;
  CAIRN_GRID_STRIDE_LOOP(i, n)
  y[i] = S::store(Act::forward(S::load(x[i])));
}

template <typename T, typename Act>
__global__ void activationBackwardKernel(int64_t n, const StoredAs<T> *dy, const StoredAs<T> *saved,
                                         StoredAs<T> *dx) {
  using S = Storage<T>;
  CAIRN_GRID_STRIDE_LOOP(i, n)
  dx[i] = S::store(Act::backward(S::load(dy[i]), S::load(saved[i])));
}

/// A functor with parameters (ops::Clamp, ops::LeakyRelu), passed by value.
template <typename T, typename F>
__global__ void parameterizedForwardKernel(int64_t n, F f, const T *x, T *y) {
  CAIRN_GRID_STRIDE_LOOP(i, n)
  y[i] = f.forward(x[i]);
}

template <typename T, typename F>
__global__ void parameterizedBackwardKernel(int64_t n, F f, const T *dy, const T *x, T *dx) {
  CAIRN_GRID_STRIDE_LOOP(i, n)
  dx[i] = f.backward(dy[i], x[i]);
}

template <typename T, typename Op>
__global__ void binarySameShapeKernel(int64_t n, const StoredAs<T> *a, const StoredAs<T> *b,
                                      StoredAs<T> *out) {
  using S = Storage<T>;
  CAIRN_GRID_STRIDE_LOOP(i, n)
  out[i] = S::store(Op()(S::load(a[i]), S::load(b[i])));
}

/// One operand is the single element at a (ScalarLhs) or b.
template <typename T, typename Op, bool ScalarLhs>
__global__ void binaryScalarKernel(int64_t n, const StoredAs<T> *a, const StoredAs<T> *b,
                                   StoredAs<T> *out) {
  using S = Storage<T>;
  const ComputedIn<T> s = S::load(ScalarLhs ? a[0] : b[0]);
  CAIRN_GRID_STRIDE_LOOP(i, n)
  out[i] = S::store(ScalarLhs ? Op()(s, S::load(b[i])) : Op()(S::load(a[i]), s));
}

//===----------------------------------------------------------------------===//
// Broadcasts.
//===----------------------------------------------------------------------===//

constexpr int kMaxRank = kernels::kMaxWalkRank;

/// The coalesced output shape (row-major, outermost first) with each
/// operand's strides in elements; passed to the kernel by value.
struct BroadcastDims {
  int rank = 0;
  int64_t size[kMaxRank];
  int64_t aStride[kMaxRank];
  int64_t bStride[kMaxRank];
};

/// Coalesces the output dimensions, outermost first, exactly as
/// kernels::binaryBroadcast: out is contiguous, so a dimension merges into
/// the previous one when a and b are also contiguous across the pair.
/// Returns the number of output elements.
int64_t coalesce(int rank, const int64_t *outShape, const int64_t *aStrides,
                 const int64_t *bStrides, BroadcastDims &dims) {
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    if (outShape[d] == 0)
      return 0;
    n *= outShape[d];
    if (outShape[d] == 1)
      continue;
    int m = dims.rank;
    if (m > 0 && dims.aStride[m - 1] == aStrides[d] * outShape[d] &&
        dims.bStride[m - 1] == bStrides[d] * outShape[d]) {
      dims.size[m - 1] *= outShape[d];
      dims.aStride[m - 1] = aStrides[d];
      dims.bStride[m - 1] = bStrides[d];
      continue;
    }
    if (m == kMaxRank)
      throw kernels::KernelError("binary broadcast needs more than " + std::to_string(kMaxRank) +
                                 " dimensions");
    dims.size[m] = outShape[d];
    dims.aStride[m] = aStrides[d];
    dims.bStride[m] = bStrides[d];
    ++dims.rank;
  }
  return n;
}

/// The offsets in a and b of output element i.
__host__ __device__ __forceinline__ void broadcastOffsets(const BroadcastDims &dims, int64_t i,
                                                          int64_t &aOff, int64_t &bOff) {
  int64_t rest = i;
  aOff = 0;
  bOff = 0;
  for (int d = dims.rank - 1; d > 0; --d) {
    int64_t idx;
    rest = divMod(rest, dims.size[d], idx);
    aOff += idx * dims.aStride[d];
    bOff += idx * dims.bStride[d];
  }
  // The outermost index is what is left: no division.
  if (dims.rank > 0) {
    aOff += rest * dims.aStride[0];
    bOff += rest * dims.bStride[0];
  }
}

template <typename T, typename Op>
__global__ void binaryBroadcastKernel(int64_t n, BroadcastDims dims, const StoredAs<T> *a,
                                      const StoredAs<T> *b, StoredAs<T> *out) {
  using S = Storage<T>;
  CAIRN_GRID_STRIDE_LOOP(i, n) {
    int64_t aOff, bOff;
    broadcastOffsets(dims, i, aOff, bOff);
    out[i] = S::store(Op()(S::load(a[aOff]), S::load(b[bOff])));
  }
}

//===----------------------------------------------------------------------===//
// Chains.
//===----------------------------------------------------------------------===//

/// Inputs, then one register per op at most.
constexpr int kChainRegisters = kMaxChainInputs + kMaxChainOps;

/// Ops that read register a only.
__host__ __device__ constexpr bool isUnary(ChainOpKind kind) {
  return kind == ChainOpKind::Relu || kind == ChainOpKind::Sigmoid || kind == ChainOpKind::Tanh ||
         kind == ChainOpKind::GeluExact || kind == ChainOpKind::GeluTanh ||
         kind == ChainOpKind::Silu || kind == ChainOpKind::Hardswish;
}

template <typename T> struct ChainArgs {
  Chain chain;
  const T *inputs[kMaxChainInputs];
};

template <typename T>
__host__ __device__ __forceinline__ T runChainOp(const ChainOp &op, T a, T b) {
  switch (op.kind) {
  case ChainOpKind::Add:
    return ops::Add()(a, b);
  case ChainOpKind::Sub:
    return ops::Sub()(a, b);
  case ChainOpKind::Mul:
    return ops::Mul()(a, b);
  case ChainOpKind::Div:
    return ops::Div()(a, b);
  case ChainOpKind::Relu:
    return ops::Relu::forward(a);
  case ChainOpKind::Sigmoid:
    return ops::Sigmoid::forward(a);
  case ChainOpKind::Tanh:
    return ops::Tanh::forward(a);
  case ChainOpKind::GeluExact:
    return ops::GeluExact::forward(a);
  case ChainOpKind::GeluTanh:
    return ops::GeluTanh::forward(a);
  case ChainOpKind::ReluGrad:
    return ops::Relu::backward(a, b);
  case ChainOpKind::SigmoidGrad:
    return ops::Sigmoid::backward(a, b);
  case ChainOpKind::TanhGrad:
    return ops::Tanh::backward(a, b);
  case ChainOpKind::GeluExactGrad:
    return ops::GeluExact::backward(a, b);
  case ChainOpKind::GeluTanhGrad:
    return ops::GeluTanh::backward(a, b);
  case ChainOpKind::Silu:
    return ops::Silu::forward(a);
  case ChainOpKind::Hardswish:
    return ops::Hardswish::forward(a);
  case ChainOpKind::SiluGrad:
    return ops::Silu::backward(a, b);
  case ChainOpKind::HardswishGrad:
    return ops::Hardswish::backward(a, b);
  }
  return a; // unreachable: the host checked every kind
}

/// Throws KernelError unless `chain` is a program the kernel can run.
void checkChain(const Chain &chain) {
  auto fail = [](const std::string &what) {
    throw kernels::KernelError("element-wise chain: " + what);
  };
  if (chain.numInputs < 1 || chain.numInputs > kMaxChainInputs)
    fail("has " + std::to_string(chain.numInputs) + " inputs, not 1 to " +
         std::to_string(kMaxChainInputs));
  if (chain.numOps < 0 || chain.numOps > kMaxChainOps)
    fail("has " + std::to_string(chain.numOps) + " ops, not 0 to " + std::to_string(kMaxChainOps));
  // Every register read must have been written: by an input or an earlier
  // op. This also keeps every index inside the register file.
  bool written[kChainRegisters] = {};
  for (int k = 0; k < chain.numInputs; ++k)
    written[k] = true;
  auto readable = [&](int32_t reg) { return reg >= 0 && reg < kChainRegisters && written[reg]; };
  for (int k = 0; k < chain.numOps; ++k) {
    const ChainOp &op = chain.ops[k];
    if (op.kind < ChainOpKind::Add || op.kind > ChainOpKind::HardswishGrad)
      fail("op " + std::to_string(k) + " has an unknown kind");
    if (!readable(op.a) || (!isUnary(op.kind) && !readable(op.b)))
      fail("op " + std::to_string(k) + " reads a register nothing wrote");
    if (op.dst < 0 || op.dst >= kChainRegisters)
      fail("op " + std::to_string(k) + " writes register " + std::to_string(op.dst) +
           ", outside 0.." + std::to_string(kChainRegisters - 1));
    written[op.dst] = true;
  }
  if (!readable(chain.result))
    fail("its result register " + std::to_string(chain.result) + " is never written");
}

/// Element i of the chain's result.
template <typename T>
__host__ __device__ __forceinline__ T runChain(const ChainArgs<T> &args, int64_t i) {
  const Chain &chain = args.chain;
  T r[kChainRegisters];
  for (int k = 0; k < chain.numInputs; ++k)
    r[k] = args.inputs[k][chain.scalarInput[k] ? 0 : i];
  for (int k = 0; k < chain.numOps; ++k) {
    const ChainOp &op = chain.ops[k];
    // Unary ops ignore b; read a in its place so no register is read
    // before it is written.
    r[op.dst] = runChainOp(op, r[op.a], r[isUnary(op.kind) ? op.a : op.b]);
  }
  return r[chain.result];
}

/// The program is read from the kernel's parameters, the same for every
/// thread, so the switch never diverges.
template <typename T> __global__ void elementwiseChainKernel(int64_t n, ChainArgs<T> args, T *out) {
  CAIRN_GRID_STRIDE_LOOP(i, n)
  out[i] = runChain(args, i);
}

} // namespace

template <typename T>
void activationForward(Context &cx, Activation kind, int64_t n, const StoredAs<T> *x,
                       StoredAs<T> *y) {
  if (n <= 0)
    return;
  ops::withActivation(kind, [&](auto act) {
    activationForwardKernel<T, decltype(act)>
        <<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(n, x, y);
  });
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void activationBackward(Context &cx, Activation kind, int64_t n, const StoredAs<T> *dy,
                        const StoredAs<T> *saved, StoredAs<T> *dx) {
  if (n <= 0)
    return;
  ops::withActivation(kind, [&](auto act) {
    activationBackwardKernel<T, decltype(act)>
        <<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(n, dy, saved, dx);
  });
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void clampForward(Context &cx, int64_t n, bool hasMin, double min, bool hasMax, double max,
                  const T *x, T *y) {
  if (n <= 0)
    return;
  parameterizedForwardKernel<T><<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(
      n, ops::Clamp<T>(hasMin, min, hasMax, max), x, y);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void clampBackward(Context &cx, int64_t n, bool hasMin, double min, bool hasMax, double max,
                   const T *dy, const T *x, T *dx) {
  if (n <= 0)
    return;
  parameterizedBackwardKernel<T><<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(
      n, ops::Clamp<T>(hasMin, min, hasMax, max), dy, x, dx);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void leakyReluForward(Context &cx, int64_t n, double slope, const T *x, T *y) {
  if (n <= 0)
    return;
  parameterizedForwardKernel<T><<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(
      n, ops::LeakyRelu<T>(slope), x, y);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void leakyReluBackward(Context &cx, int64_t n, double slope, const T *dy, const T *x, T *dx) {
  if (n <= 0)
    return;
  parameterizedBackwardKernel<T><<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(
      n, ops::LeakyRelu<T>(slope), dy, x, dx);
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void binarySameShape(Context &cx, BinaryOp op, int64_t n, const StoredAs<T> *a,
                     const StoredAs<T> *b, StoredAs<T> *out) {
  if (n <= 0)
    return;
  ops::withBinaryOp(op, [&](auto f) {
    binarySameShapeKernel<T, decltype(f)>
        <<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(n, a, b, out);
  });
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void binaryScalar(Context &cx, BinaryOp op, int64_t n, bool scalarLhs, const StoredAs<T> *a,
                  const StoredAs<T> *b, StoredAs<T> *out) {
  if (n <= 0)
    return;
  ops::withBinaryOp(op, [&](auto f) {
    if (scalarLhs)
      binaryScalarKernel<T, decltype(f), true>
          <<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(n, a, b, out);
    else
      binaryScalarKernel<T, decltype(f), false>
          <<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(n, a, b, out);
  });
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void binaryBroadcast(Context &cx, BinaryOp op, int rank, const int64_t *outShape,
                     const StoredAs<T> *a, const int64_t *aStrides, const StoredAs<T> *b,
                     const int64_t *bStrides, StoredAs<T> *out) {
  BroadcastDims dims;
  const int64_t n = coalesce(rank, outShape, aStrides, bStrides, dims);
  if (n == 0)
    return;
  ops::withBinaryOp(op, [&](auto f) {
    binaryBroadcastKernel<T, decltype(f)>
        <<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(n, dims, a, b, out);
  });
  CAIRN_CUDA_CHECK_LAUNCH();
}

template <typename T>
void elementwiseChain(Context &cx, const Chain &chain, int64_t n, const T *const *inputs, T *out) {
  checkChain(chain);
  if (n <= 0)
    return;
  ChainArgs<T> args;
  args.chain = chain;
  for (int k = 0; k < kMaxChainInputs; ++k)
    args.inputs[k] = k < chain.numInputs ? inputs[k] : nullptr;
  elementwiseChainKernel<T><<<blocksFor(n), kThreadsPerBlock, 0, cx.stream>>>(n, args, out);
  CAIRN_CUDA_CHECK_LAUNCH();
}

/// What half storage takes too (T a tag, B its storage): the activations and
/// the arithmetic.
#define CAIRN_INSTANTIATE_STORED(T, B)                                                             \
  template void activationForward<T>(Context &, Activation, int64_t, const B *, B *);              \
  template void activationBackward<T>(Context &, Activation, int64_t, const B *, const B *, B *);  \
  template void binarySameShape<T>(Context &, BinaryOp, int64_t, const B *, const B *, B *);       \
  template void binaryScalar<T>(Context &, BinaryOp, int64_t, bool, const B *, const B *, B *);    \
  template void binaryBroadcast<T>(Context &, BinaryOp, int, const int64_t *, const B *,           \
                                   const int64_t *, const B *, const int64_t *, B *);
#define CAIRN_INSTANTIATE(T)                                                                       \
  CAIRN_INSTANTIATE_STORED(T, T)                                                                   \
  template void clampForward<T>(Context &, int64_t, bool, double, bool, double, const T *, T *);   \
  template void clampBackward<T>(Context &, int64_t, bool, double, bool, double, const T *,        \
                                 const T *, T *);                                                  \
  template void leakyReluForward<T>(Context &, int64_t, double, const T *, T *);                   \
  template void leakyReluBackward<T>(Context &, int64_t, double, const T *, const T *, T *);       \
  template void elementwiseChain<T>(Context &, const Chain &, int64_t, const T *const *, T *);
CAIRN_INSTANTIATE(float)
CAIRN_INSTANTIATE(double)
CAIRN_INSTANTIATE_STORED(kernels::F16, uint16_t)
CAIRN_INSTANTIATE_STORED(kernels::Bf16, uint16_t)
#undef CAIRN_INSTANTIATE
#undef CAIRN_INSTANTIATE_STORED

} // namespace cairn::cuda
