//===- ElementwiseKernelsTest.cu - Data and element-wise GPU kernels ------===//
//
// Each kernel of DataKernels.cu and ElementwiseKernels.cu against its CPU
// twin in runtime/kernels on the same inputs, at sizes that leave partial
// blocks and warps (1, 7) and one past a million (grid-stride loops). Both
// sides share ScalarOps.h, so arithmetic in T must match bit for bit, and
// activations (double libm, rounded once) to one rounding.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/Kernels.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/KernelError.h"

#include "TestContext.h"

#include <algorithm>
#include <iterator>
#include <limits>

using namespace cairn;
using namespace cairn::cuda::testing;
using cairn::kernels::Activation;
using cairn::kernels::BinaryOp;

namespace {

/// Random values with the special ones first: NaN, infinities, signed zeros.
template <typename T> std::vector<T> inputsWithSpecials(size_t n, uint64_t seed) {
  std::vector<T> v = randomVector<T>(n, -6, 6, seed);
  const T specials[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity(), T(0), -T(0)};
  for (size_t i = 0; i < n && i < std::size(specials); ++i)
    v[i] = specials[i];
  return v;
}

template <typename T> class ElementwiseKernels : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ElementwiseKernels, FloatTypes);

//===----------------------------------------------------------------------===//
// Data.
//===----------------------------------------------------------------------===//

template <typename T> void checkFill(T value) {
  TestContext tc;
  for (size_t n : kSizes) {
    DeviceBuffer<T> out(n);
    cuda::fill<T>(tc.cx, n, value, out.get());
    EXPECT_TRUE(allEqual(out.download(), std::vector<T>(n, value))) << "n = " << n;
  }
}

TEST(DataKernels, FillEveryType) {
  checkFill<float>(-1.5f);
  checkFill<double>(3.25);
  checkFill<int32_t>(-123456789);
  checkFill<int64_t>(int64_t(1) << 40);
}

TEST(DataKernels, FillNothingWritesNothing) {
  TestContext tc;
  DeviceBuffer<float> out(std::vector<float>{7.0f});
  cuda::fill<float>(tc.cx, 0, 1.0f, out.get());
  EXPECT_TRUE(allEqual(out.download(), std::vector<float>{7.0f}));
}

TEST(DataKernels, CopyZeroPoison) {
  TestContext tc;
  for (size_t n : kSizes) {
    std::vector<int32_t> host = randomInts<int32_t>(n, -1000, 1000, n);
    DeviceBuffer<int32_t> in(host), out(n);
    cuda::copyBytes(tc.cx, n * sizeof(int32_t), in.get(), out.get());
    EXPECT_TRUE(allEqual(out.download(), host)) << "copy, n = " << n;
    // Zero all but the first element, then poison all but the last.
    cuda::zeroBytes(tc.cx, (n - 1) * sizeof(int32_t), out.get() + 1);
    std::vector<int32_t> expected(n, 0);
    expected[0] = host[0];
    EXPECT_TRUE(allEqual(out.download(), expected)) << "zero, n = " << n;
    cuda::poisonBytes(tc.cx, reinterpret_cast<unsigned char *>(out.get()),
                      (n - 1) * sizeof(int32_t));
    std::vector<int32_t> poisoned(n, -1);
    poisoned[n - 1] = expected[n - 1];
    EXPECT_TRUE(allEqual(out.download(), poisoned)) << "poison, n = " << n;
  }
}

//===----------------------------------------------------------------------===//
// Activations.
//===----------------------------------------------------------------------===//

TYPED_TEST(ElementwiseKernels, ActivationForward) {
  using T = TypeParam;
  const Tolerance tol = elementwiseTolerance<T>();
  TestContext tc;
  for (size_t n : kSizes)
    for (Activation kind : kActivations) {
      std::vector<T> x = inputsWithSpecials<T>(n, 10 + n);
      std::vector<T> expected(n);
      kernels::activationForward<T>(kind, n, x.data(), expected.data());
      DeviceBuffer<T> dx(x), dy(n);
      cuda::activationForward<T>(tc.cx, kind, n, dx.get(), dy.get());
      EXPECT_TRUE(allClose(dy.download(), expected, tol.rtol, tol.atol))
          << "activation " << int(kind) << ", n = " << n;
    }
}

// Clamp (both bounds, one, an empty range) and LeakyReLU: compares and
// products in T, so the GPU matches the CPU bit for bit, NaN included.
TYPED_TEST(ElementwiseKernels, ClampAndLeakyReluAsOnTheCpu) {
  using T = TypeParam;
  TestContext tc;
  struct Bounds {
    bool hasMin;
    double min;
    bool hasMax;
    double max;
  };
  const Bounds bounds[] = {{true, -1, true, 1}, {true, 0, true, 6}, {true, 0, false, 0},
                           {false, 0, true, 0.5}, {true, 1, true, -1}};
  for (size_t n : kSizes) {
    std::vector<T> x = inputsWithSpecials<T>(n, 50 + n);
    std::vector<T> dy = randomVector<T>(n, -2, 2, 60 + n);
    DeviceBuffer<T> dX(x), dDy(dy), dOut(n);
    std::vector<T> want(n);
    for (const Bounds &b : bounds) {
      kernels::clampForward(n, b.hasMin, b.min, b.hasMax, b.max, x.data(), want.data());
      cuda::clampForward(tc.cx, n, b.hasMin, b.min, b.hasMax, b.max, dX.get(), dOut.get());
      EXPECT_TRUE(allEqual(dOut.download(), want)) << "clamp, n = " << n;
      kernels::clampBackward(n, b.hasMin, b.min, b.hasMax, b.max, dy.data(), x.data(),
                             want.data());
      cuda::clampBackward(tc.cx, n, b.hasMin, b.min, b.hasMax, b.max, dDy.get(), dX.get(),
                          dOut.get());
      EXPECT_TRUE(allEqual(dOut.download(), want)) << "clamp_grad, n = " << n;
    }
    kernels::leakyReluForward(n, 0.2, x.data(), want.data());
    cuda::leakyReluForward(tc.cx, n, 0.2, dX.get(), dOut.get());
    EXPECT_TRUE(allEqual(dOut.download(), want)) << "leaky_relu, n = " << n;
    kernels::leakyReluBackward(n, 0.2, dy.data(), x.data(), want.data());
    cuda::leakyReluBackward(tc.cx, n, 0.2, dDy.get(), dX.get(), dOut.get());
    EXPECT_TRUE(allEqual(dOut.download(), want)) << "leaky_relu_grad, n = " << n;
  }
}

TYPED_TEST(ElementwiseKernels, ReluKeepsNaNAndSignedZero) {
  using T = TypeParam;
  TestContext tc;
  std::vector<T> x = inputsWithSpecials<T>(7, 1);
  std::vector<T> expected(7);
  // What the CPU emitter writes for a Relu kernel.
  for (size_t i = 0; i < x.size(); ++i)
    expected[i] = std::max(x[i], T(0));
  DeviceBuffer<T> dx(x), dy(7);
  cuda::activationForward<T>(tc.cx, Activation::Relu, 7, dx.get(), dy.get());
  EXPECT_TRUE(allEqual(dy.download(), expected));
}

TYPED_TEST(ElementwiseKernels, ActivationBackward) {
  using T = TypeParam;
  const Tolerance tol = elementwiseTolerance<T>();
  TestContext tc;
  for (size_t n : kSizes)
    for (Activation kind : kActivations) {
      std::vector<T> x = inputsWithSpecials<T>(n, 20 + n);
      std::vector<T> dy = randomVector<T>(n, -2, 2, 30 + n);
      // What each backward keeps: the output for Sigmoid and Tanh, the input
      // for the Gelus, Silu and Hardswish. The CPU's Relu takes x and the
      // GPU's relu's result; both give the same gradient.
      std::vector<T> y(n);
      kernels::activationForward<T>(kind, n, x.data(), y.data());
      const bool savesOutput = kind == Activation::Relu || kind == Activation::Sigmoid ||
                               kind == Activation::Tanh;
      const std::vector<T> &gpuSaved = savesOutput ? y : x;
      const std::vector<T> &cpuSaved = kind == Activation::Relu ? x : gpuSaved;
      std::vector<T> expected(n);
      kernels::activationBackward<T>(kind, n, dy.data(), cpuSaved.data(),
                                     expected.data());
      DeviceBuffer<T> ddy(dy), dsaved(gpuSaved), ddx(n);
      cuda::activationBackward<T>(tc.cx, kind, n, ddy.get(), dsaved.get(), ddx.get());
      // The CPU's float GELU gradients (FastMath.h) round each term of
      // f'(x) = cdf + x pdf to a few ulps; where the terms cancel (the slope
      // crosses 0 near x = -0.75) that is a few ulps of dy, not of dx.
      std::vector<double> allowance(n);
      for (size_t i = 0; i < n; ++i)
        allowance[i] = (sizeof(T) == 4 ? 1e-6 : 0.0) * std::fabs(double(dy[i]));
      EXPECT_TRUE(allCloseWithin(ddx.download(), expected, tol.rtol, tol.atol, allowance))
          << "activation " << int(kind) << ", n = " << n;
    }
}

TYPED_TEST(ElementwiseKernels, ReluBackwardAsEmitted) {
  using T = TypeParam;
  TestContext tc;
  const size_t n = 1000003;
  std::vector<T> x = inputsWithSpecials<T>(n, 3), dy = randomVector<T>(n, -2, 2, 4);
  std::vector<T> y(n), expected(n);
  for (size_t i = 0; i < n; ++i) {
    y[i] = std::max(x[i], T(0));
    expected[i] = y[i] > T(0) ? dy[i] : T(0); // the CPU emitter's ReluGrad
  }
  DeviceBuffer<T> ddy(dy), dyv(y), ddx(n);
  cuda::activationBackward<T>(tc.cx, Activation::Relu, n, ddy.get(), dyv.get(), ddx.get());
  EXPECT_TRUE(allEqual(ddx.download(), expected));
}

TYPED_TEST(ElementwiseKernels, ActivationInPlace) {
  using T = TypeParam;
  const Tolerance tol = elementwiseTolerance<T>();
  TestContext tc;
  const size_t n = 1000003;
  std::vector<T> x = randomVector<T>(n, -4, 4, 5), expected(n);
  kernels::activationForward<T>(Activation::GeluTanh, n, x.data(),
                                expected.data());
  DeviceBuffer<T> buf(x);
  cuda::activationForward<T>(tc.cx, Activation::GeluTanh, n, buf.get(), buf.get());
  EXPECT_TRUE(allClose(buf.download(), expected, tol.rtol, tol.atol));
}

//===----------------------------------------------------------------------===//
// Binary arithmetic: IEEE operations in T, so bit for bit.
//===----------------------------------------------------------------------===//

TYPED_TEST(ElementwiseKernels, BinarySameShape) {
  using T = TypeParam;
  TestContext tc;
  for (size_t n : kSizes)
    for (BinaryOp op : kBinaryOps) {
      std::vector<T> a = inputsWithSpecials<T>(n, 40 + n), b = randomVector<T>(n, -3, 3, 50 + n);
      std::vector<T> expected(n);
      kernels::binarySameShape(op, n, a.data(), b.data(), expected.data());
      DeviceBuffer<T> da(a), db(b), dout(n);
      cuda::binarySameShape<T>(tc.cx, op, n, da.get(), db.get(), dout.get());
      EXPECT_TRUE(allEqual(dout.download(), expected)) << "op " << int(op) << ", n = " << n;
    }
}

TYPED_TEST(ElementwiseKernels, BinaryScalar) {
  using T = TypeParam;
  TestContext tc;
  for (size_t n : kSizes)
    for (BinaryOp op : kBinaryOps)
      for (bool scalarLhs : {false, true}) {
        std::vector<T> full = randomVector<T>(n, -3, 3, 60 + n), one = {T(0.7)};
        const std::vector<T> &a = scalarLhs ? one : full, &b = scalarLhs ? full : one;
        // The CPU twin: a broadcast whose scalar operand has stride 0.
        const int64_t shape[] = {int64_t(n)}, unit[] = {1}, zero[] = {0};
        std::vector<T> expected(n);
        kernels::binaryBroadcast<T>(op, 1, shape, a.data(),
                                    scalarLhs ? zero : unit, b.data(),
                                    scalarLhs ? unit : zero, expected.data());
        DeviceBuffer<T> da(a), db(b), dout(n);
        cuda::binaryScalar<T>(tc.cx, op, n, scalarLhs, da.get(), db.get(), dout.get());
        EXPECT_TRUE(allEqual(dout.download(), expected))
            << "op " << int(op) << ", n = " << n << ", scalarLhs " << scalarLhs;
      }
}

struct BroadcastCase {
  const char *name;
  std::vector<int64_t> shape, aStrides, bStrides;
  size_t aSize, bSize; // elements each operand spans
};

std::vector<BroadcastCase> broadcastCases() {
  return {
      {"bias add [1000, 37] + [37]", {1000, 37}, {37, 1}, {0, 1}, 37000, 37},
      {"per-channel NCHW [8, 16, 9, 11] * [1, 16, 1, 1]",
       {8, 16, 9, 11},
       {1584, 99, 11, 1},
       {0, 1, 0, 0},
       12672,
       16},
      {"outer product [7, 1] - [1, 13] over [7, 13]", {7, 13}, {1, 0}, {0, 1}, 7, 13},
      {"both broadcast [7, 13, 1099]", {7, 13, 1099}, {1099, 0, 1}, {13, 1, 0}, 7693, 91},
      {"size-1 dims [1, 5, 1, 3]", {1, 5, 1, 3}, {0, 3, 0, 1}, {0, 0, 0, 1}, 15, 3},
      {"transposed lhs [33, 17]", {33, 17}, {1, 33}, {17, 1}, 561, 561},
      {"scalars, rank 0", {}, {}, {}, 1, 1},
      {"one million and three [1000003] / [1]", {1000003}, {1}, {0}, 1000003, 1},
  };
}

TYPED_TEST(ElementwiseKernels, BinaryBroadcast) {
  using T = TypeParam;
  TestContext tc;
  for (const BroadcastCase &c : broadcastCases())
    for (BinaryOp op : kBinaryOps) {
      size_t n = 1;
      for (int64_t d : c.shape)
        n *= d;
      std::vector<T> a = randomVector<T>(c.aSize, -3, 3, 70),
                     b = randomVector<T>(c.bSize, 0.5, 3, 71);
      const int rank = static_cast<int>(c.shape.size());
      std::vector<T> expected(n);
      kernels::binaryBroadcast<T>(op, rank, c.shape.data(), a.data(),
                                  c.aStrides.data(), b.data(),
                                  c.bStrides.data(), expected.data());
      DeviceBuffer<T> da(a), db(b), dout(n);
      cuda::binaryBroadcast<T>(tc.cx, op, rank, c.shape.data(), da.get(), c.aStrides.data(),
                               db.get(), c.bStrides.data(), dout.get());
      EXPECT_TRUE(allEqual(dout.download(), expected)) << c.name << ", op " << int(op);
    }
}

TEST(ElementwiseKernelsErrors, BroadcastOfTooManyDimensions) {
  TestContext tc;
  // Ten dimensions of 2 where a and b alternate between broadcast and not:
  // no neighbours merge, one more than a walk can take.
  const int rank = 10;
  std::vector<int64_t> shape(rank, 2), as(rank), bs(rank);
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    as[d] = d % 2 ? stride : 0;
    bs[d] = d % 2 ? 0 : stride;
    stride *= 2;
  }
  DeviceBuffer<float> a(1 << rank), b(1 << rank), out(1 << rank);
  EXPECT_THROW(cuda::binaryBroadcast<float>(tc.cx, BinaryOp::Add, rank, shape.data(), a.get(),
                                            as.data(), b.get(), bs.data(), out.get()),
               kernels::KernelError);
}

//===----------------------------------------------------------------------===//
// Chains: the GPU runs the program in one kernel; the CPU runs the kernels
// it fuses one after the other, storing every intermediate in T.
//===----------------------------------------------------------------------===//

using cuda::Chain;
using cuda::ChainOp;
using cuda::ChainOpKind;

/// The chain's ops as separate CPU kernels over n elements.
template <typename T>
std::vector<T> runChainOnCpu(const Chain &chain, size_t n,
                             const std::vector<std::vector<T>> &inputs) {
  std::vector<std::vector<T>> r(cuda::kMaxChainInputs + cuda::kMaxChainOps);
  for (int k = 0; k < chain.numInputs; ++k) {
    r[k] = inputs[k];
    if (chain.scalarInput[k])
      r[k] = std::vector<T>(n, inputs[k][0]);
  }
  for (int k = 0; k < chain.numOps; ++k) {
    const ChainOp &op = chain.ops[k];
    std::vector<T> out(n);
    const T *a = r[op.a].data(), *b = op.b < int(r.size()) ? r[op.b].data() : nullptr;
    auto act = [&](Activation kind, bool grad) {
      if (grad)
        kernels::activationBackward<T>(kind, n, a, b, out.data());
      else
        kernels::activationForward<T>(kind, n, a, out.data());
    };
    switch (op.kind) {
    case ChainOpKind::Add:
      kernels::binarySameShape(BinaryOp::Add, n, a, b, out.data());
      break;
    case ChainOpKind::Sub:
      kernels::binarySameShape(BinaryOp::Sub, n, a, b, out.data());
      break;
    case ChainOpKind::Mul:
      kernels::binarySameShape(BinaryOp::Mul, n, a, b, out.data());
      break;
    case ChainOpKind::Div:
      kernels::binarySameShape(BinaryOp::Div, n, a, b, out.data());
      break;
    case ChainOpKind::Relu:
      act(Activation::Relu, false);
      break;
    case ChainOpKind::Sigmoid:
      act(Activation::Sigmoid, false);
      break;
    case ChainOpKind::Tanh:
      act(Activation::Tanh, false);
      break;
    case ChainOpKind::GeluExact:
      act(Activation::GeluExact, false);
      break;
    case ChainOpKind::GeluTanh:
      act(Activation::GeluTanh, false);
      break;
    case ChainOpKind::ReluGrad: // the emitter's: b > 0 ? a : 0
      for (size_t i = 0; i < n; ++i)
        out[i] = b[i] > T(0) ? a[i] : T(0);
      break;
    case ChainOpKind::SigmoidGrad:
      act(Activation::Sigmoid, true);
      break;
    case ChainOpKind::TanhGrad:
      act(Activation::Tanh, true);
      break;
    case ChainOpKind::GeluExactGrad:
      act(Activation::GeluExact, true);
      break;
    case ChainOpKind::GeluTanhGrad:
      act(Activation::GeluTanh, true);
      break;
    case ChainOpKind::Silu:
      act(Activation::Silu, false);
      break;
    case ChainOpKind::Hardswish:
      act(Activation::Hardswish, false);
      break;
    case ChainOpKind::SiluGrad:
      act(Activation::Silu, true);
      break;
    case ChainOpKind::HardswishGrad:
      act(Activation::Hardswish, true);
      break;
    }
    r[op.dst] = std::move(out);
  }
  return r[chain.result];
}

Chain makeChain(int numInputs, std::vector<ChainOp> ops, int32_t result,
                std::vector<int> scalarInputs = {}) {
  Chain c;
  c.numInputs = numInputs;
  c.numOps = static_cast<int32_t>(ops.size());
  c.result = result;
  for (size_t k = 0; k < ops.size(); ++k)
    c.ops[k] = ops[k];
  for (int s : scalarInputs)
    c.scalarInput[s] = true;
  return c;
}

struct ChainCase {
  const char *name;
  Chain chain;
};

std::vector<ChainCase> chainCases() {
  using K = ChainOpKind;
  return {
      // x + bias (a scalar), then GELU (tanh), times a gate: a forward block.
      {"bias, gelu, gate",
       makeChain(3, {{K::Add, 3, 0, 1}, {K::GeluTanh, 4, 3, 0}, {K::Mul, 5, 4, 2}}, 5, {1})},
      // relu's gradient, scaled and shifted: a backward block.
      {"relu grad, scale, sub",
       makeChain(3,
                 {{K::Relu, 3, 1, 0}, {K::ReluGrad, 4, 0, 3}, {K::Div, 5, 4, 2}, {K::Sub, 6, 5, 0}},
                 6)},
      // Every activation and its gradient, registers reused.
      {"all activations", makeChain(2,
                                    {{K::Sigmoid, 2, 0, 0},
                                     {K::SigmoidGrad, 3, 1, 2},
                                     {K::Tanh, 2, 0, 0},
                                     {K::TanhGrad, 4, 3, 2},
                                     {K::GeluExact, 5, 4, 0},
                                     {K::GeluExactGrad, 6, 1, 5},
                                     {K::GeluTanhGrad, 7, 6, 0},
                                     {K::Add, 8, 7, 3}},
                                    8)},
      // SiLU and Hardswish with their gradients (x saved), times 4 so that
      // hardswish sees its three pieces.
      {"silu, hardswish", makeChain(2,
                                    {{K::Silu, 2, 0, 0},
                                     {K::SiluGrad, 3, 1, 0},
                                     {K::Add, 4, 0, 0},
                                     {K::Add, 4, 4, 4},
                                     {K::Hardswish, 5, 4, 0},
                                     {K::HardswishGrad, 6, 3, 4},
                                     {K::Sub, 7, 6, 5},
                                     {K::Mul, 7, 7, 2}},
                                    7)},
      // A single input returned as is.
      {"identity", makeChain(1, {}, 0)},
      // Four inputs, two of them scalars.
      {"four inputs",
       makeChain(4, {{K::Mul, 4, 0, 1}, {K::Add, 5, 4, 2}, {K::Div, 6, 5, 3}}, 6, {1, 3})},
  };
}

TYPED_TEST(ElementwiseKernels, Chain) {
  using T = TypeParam;
  // A few ops in T each rounding; ulps may add up a little.
  const Tolerance tol = sizeof(T) == 4 ? Tolerance{1e-5, 1e-6} : Tolerance{1e-12, 1e-13};
  TestContext tc;
  for (size_t n : kSizes)
    for (const ChainCase &c : chainCases()) {
      std::vector<std::vector<T>> inputs;
      std::vector<DeviceBuffer<T>> device;
      std::vector<const T *> pointers;
      for (int k = 0; k < c.chain.numInputs; ++k) {
        const size_t count = c.chain.scalarInput[k] ? 1 : n;
        // Divisors (input 2 in the first cases, 3 in the last) stay away from 0.
        inputs.push_back(randomVector<T>(count, 0.5, 2, 80 + k));
        for (T &v : inputs.back())
          if (k == 0 || k == 1)
            v = v * T(4) - T(5); // some negative, for relu and the gelus
        device.emplace_back(inputs.back());
        pointers.push_back(device.back().get());
      }
      std::vector<T> expected = runChainOnCpu(c.chain, n, inputs);
      DeviceBuffer<T> out(n);
      cuda::elementwiseChain(tc.cx, c.chain, n, pointers.data(), out.get());
      EXPECT_TRUE(allClose(out.download(), expected, tol.rtol, tol.atol))
          << c.name << ", n = " << n;
    }
}

TEST(ElementwiseKernelsErrors, MalformedChains) {
  TestContext tc;
  using K = ChainOpKind;
  DeviceBuffer<float> in(4), out(4);
  const float *inputs[cuda::kMaxChainInputs] = {in.get(), in.get(), in.get(), in.get()};
  const Chain bad[] = {
      makeChain(0, {}, 0),                                // no input
      makeChain(cuda::kMaxChainInputs + 1, {}, 0),        // too many inputs
      makeChain(1, {{K::Add, 1, 0, 2}}, 1),               // reads an unwritten register
      makeChain(1, {{K::Relu, 99, 0, 0}}, 0),             // writes outside the registers
      makeChain(1, {{K::Relu, 1, 0, 0}}, 2),              // result never written
      makeChain(1, {{static_cast<K>(1000), 1, 0, 0}}, 1), // unknown kind
  };
  for (const Chain &c : bad)
    EXPECT_THROW(cuda::elementwiseChain(tc.cx, c, 4, inputs, out.get()), kernels::KernelError);
  Chain tooLong = makeChain(1, {}, 0);
  tooLong.numOps = cuda::kMaxChainOps + 1;
  EXPECT_THROW(cuda::elementwiseChain(tc.cx, tooLong, 4, inputs, out.get()), kernels::KernelError);
}

} // namespace
