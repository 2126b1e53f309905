//===- PartitionedMlp.cpp - A model on two devices, written by hand -------===//
//
// What the compiler generates for a model with `on device` regions, written
// out for a two-layer MLP without biases on Fashion-MNIST:
//   h = image . W0^T   (device 0: fc0.weight [32, 784], and a step counter)
//   output = h . W1^T  (device 1: fc1.weight [10, 32], the loss, the label)
//   loss = cross_entropy(output, label); SGD(lr=0.1, momentum=0.9)
// Device 0 sends h to device 1 (tag 0), which sends dloss/dh back (tag 1).
// The same model as one spec runs the same kernels on the same shapes, so
// both train to the same bits (run.sh checks it).
//
//   cairn-partitioned-mlp two COMMAND ...   the two devices (mpirun -np 2)
//   cairn-partitioned-mlp one COMMAND ...   the model as one spec (runMain)
//   cairn-partitioned-mlp one-mpi COMMAND ... the one spec as device 0 of 1,
//                                              through MPI (mpirun -np 1)
// CAIRN_TEST_FAIL_STEP=N makes device 1's N-th training step fail, as a
// kernel meeting bad data does.
//
//===----------------------------------------------------------------------===//
#include "runtime/BlasSetup.h"
#include "runtime/CpuBackend.h"
#include "runtime/MpiTransport.h"
#include "runtime/Program.h"
#include "runtime/kernels/Gemm.h"
#include "runtime/kernels/KernelError.h"
#include "runtime/kernels/Loss.h"
#include "runtime/kernels/Optimizer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace cairn::runtime;
namespace kernels = cairn::kernels;

namespace {

constexpr int64_t kBatch = 64, kPixels = 784, kHidden = 32, kClasses = 10;
constexpr double kLr = 0.1, kMomentum = 0.9;

/// Arena offsets of one spec's tensors and scratch buffers (0: absent).
struct Layout {
  size_t image, label, w0, w1, count, m0, m1, g0, g1, h, dh, dlogits, dloss,
      output, loss;
};
Layout one, dev0, dev1;

template <typename T> T *in(unsigned char *arena, size_t offset) {
  return reinterpret_cast<T *>(arena + offset);
}

// The pieces every spec puts together.

void hidden(unsigned char *a, const Layout &l) {
  kernels::gemm<float>(false, true, kBatch, kHidden, kPixels, 1,
                       in<float>(a, l.image), kPixels, in<float>(a, l.w0),
                       kPixels, 0, in<float>(a, l.h), kHidden);
}

void logits(unsigned char *a, const Layout &l) {
  kernels::gemm<float>(false, true, kBatch, kClasses, kHidden, 1,
                       in<float>(a, l.h), kHidden, in<float>(a, l.w1), kHidden,
                       0, in<float>(a, l.output), kClasses);
}

/// Loss, dlogits, fc1.weight's gradient and dh (before fc1's update).
void head(unsigned char *a, const Layout &l) {
  const float *out = in<float>(a, l.output);
  const int64_t *label = in<int64_t>(a, l.label);
  kernels::crossEntropyForward<float, int64_t>(kBatch, kClasses, out, label, 0,
                                               in<float>(a, l.loss));
  *in<float>(a, l.dloss) = 1;
  kernels::crossEntropyBackward<float, int64_t>(
      kBatch, kClasses, in<float>(a, l.dloss), out, label, 0,
      in<float>(a, l.dlogits));
  kernels::gemm<float>(true, false, kClasses, kHidden, kBatch, 1,
                       in<float>(a, l.dlogits), kClasses, in<float>(a, l.h),
                       kHidden, 0, in<float>(a, l.g1), kHidden);
  kernels::gemm<float>(false, false, kBatch, kHidden, kClasses, 1,
                       in<float>(a, l.dlogits), kClasses, in<float>(a, l.w1),
                       kHidden, 0, in<float>(a, l.dh), kHidden);
}

void updateW1(unsigned char *a, const Layout &l, const StepContext &ctx) {
  kernels::sgdUpdate<float>(kClasses * kHidden, kLr * ctx.lrFactor, kMomentum,
                            0, 0, false, ctx.step == 0, in<float>(a, l.w1),
                            in<float>(a, l.g1), in<float>(a, l.m1));
}

/// fc0.weight's gradient, its update and the step counter.
void tail(unsigned char *a, const Layout &l, const StepContext &ctx) {
  kernels::gemm<float>(true, false, kHidden, kPixels, kBatch, 1,
                       in<float>(a, l.dh), kHidden, in<float>(a, l.image),
                       kPixels, 0, in<float>(a, l.g0), kPixels);
  kernels::sgdUpdate<float>(kHidden * kPixels, kLr * ctx.lrFactor, kMomentum, 0,
                            0, false, ctx.step == 0, in<float>(a, l.w0),
                            in<float>(a, l.g0), in<float>(a, l.m0));
  ++*in<int64_t>(a, l.count);
}

constexpr size_t kHiddenBytes = kBatch * kHidden * sizeof(float);

void trainOne(unsigned char *a, const StepContext &ctx) {
  hidden(a, one);
  logits(a, one);
  head(a, one);
  updateW1(a, one, ctx);
  tail(a, one, ctx);
}

void forwardOne(unsigned char *a, const StepContext &) {
  hidden(a, one);
  logits(a, one);
}

void trainDevice0(unsigned char *a, const StepContext &ctx) {
  hidden(a, dev0);
  sendBytes(ctx, a + dev0.h, kHiddenBytes, /*peer=*/1, /*tag=*/0);
  receiveBytes(ctx, a + dev0.dh, kHiddenBytes, /*peer=*/1, /*tag=*/1);
  tail(a, dev0, ctx);
}

void trainDevice1(unsigned char *a, const StepContext &ctx) {
  receiveBytes(ctx, a + dev1.h, kHiddenBytes, /*peer=*/0, /*tag=*/0);
  static const char *failAt = std::getenv("CAIRN_TEST_FAIL_STEP");
  if (failAt && ctx.step + 1 == std::atoll(failAt))
    throw kernels::KernelError(
        "cross_entropy: label 12 at row 3 is out of range [0, 10)");
  logits(a, dev1);
  head(a, dev1);
  sendBytes(ctx, a + dev1.dh, kHiddenBytes, /*peer=*/0, /*tag=*/1);
  updateW1(a, dev1, ctx);
}

void forwardDevice0(unsigned char *a, const StepContext &ctx) {
  hidden(a, dev0);
  sendBytes(ctx, a + dev0.h, kHiddenBytes, /*peer=*/1, /*tag=*/0);
}

void forwardDevice1(unsigned char *a, const StepContext &ctx) {
  receiveBytes(ctx, a + dev1.h, kHiddenBytes, /*peer=*/0, /*tag=*/0);
  logits(a, dev1);
}

/// Builds a spec's tensors; `device` -1 is the whole model.
ProgramSpec makeSpec(int device, Layout &l) {
  ProgramSpec spec;
  spec.model = "PartitionedMlp";
  spec.sourceFile = "partitioned_mlp.cairn";
  spec.batch = kBatch;
  spec.optimizer = "SGD(lr=0.1, momentum=0.9)";
  spec.baseLr = kLr;
  spec.backend = &kCpuBackend;
  spec.device = device < 0 ? 0 : device;
  spec.devices = device < 0 ? 1 : 2;
  const bool has0 = device != 1, has1 = device != 0;
  size_t top = 0;
  auto scratch = [&](size_t bytes) {
    size_t offset = (top + 255) / 256 * 256;
    top = offset + bytes;
    return offset;
  };
  auto add = [&](const std::string &name, DType dtype,
                 std::vector<int64_t> shape, TensorRole role,
                 InitKind init = InitKind::None, double scale = 0) {
    TensorInfo info;
    info.name = name;
    info.dtype = dtype;
    info.shape = shape;
    info.role = role;
    info.init = init;
    info.initScale = scale;
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    info.offset = scratch(static_cast<size_t>(n) * dtypeSize(dtype));
    spec.tensors.push_back(info);
    return info.offset;
  };
  l = Layout{};
  if (has0) {
    l.image = add("image", DType::F32, {kBatch, 1, 28, 28}, TensorRole::Input);
    l.w0 = add("fc0.weight", DType::F32, {kHidden, kPixels}, TensorRole::Param,
               InitKind::Uniform, 1 / 28.0);
    l.count =
        add("fc0.steps", DType::I64, {}, TensorRole::Buffer, InitKind::Zeros);
    l.m0 = add("fc0.weight.momentum_buffer", DType::F32, {kHidden, kPixels},
               TensorRole::OptimizerState);
    l.g0 = add("grad.fc0.weight", DType::F32, {kHidden, kPixels},
               TensorRole::Gradient);
    spec.forwardInputs = {"image"};
  }
  if (has1) {
    l.label = add("label", DType::I64, {kBatch}, TensorRole::Input);
    l.w1 = add("fc1.weight", DType::F32, {kClasses, kHidden}, TensorRole::Param,
               InitKind::Uniform, 1 / std::sqrt(double(kHidden)));
    l.m1 = add("fc1.weight.momentum_buffer", DType::F32, {kClasses, kHidden},
               TensorRole::OptimizerState);
    l.g1 = add("grad.fc1.weight", DType::F32, {kClasses, kHidden},
               TensorRole::Gradient);
    l.output =
        add("output", DType::F32, {kBatch, kClasses}, TensorRole::Output);
    l.loss = add("loss", DType::F32, {}, TensorRole::Output);
    l.dlogits = scratch(kBatch * kClasses * sizeof(float));
    l.dloss = scratch(sizeof(float));
    spec.loss = {LossKind::CrossEntropy, "label", 0.0};
  }
  l.h = scratch(kHiddenBytes);
  l.dh = scratch(kHiddenBytes);
  spec.arenaBytes = (top + 255) / 256 * 256;
  spec.trainStep = device < 0    ? trainOne
                   : device == 0 ? trainDevice0
                                 : trainDevice1;
  spec.forward = device < 0    ? forwardOne
                 : device == 0 ? forwardDevice0
                               : forwardDevice1;
  return spec;
}

} // namespace

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "one" && mode != "two" && mode != "one-mpi") {
    std::fprintf(stderr, "usage: %s one|two|one-mpi COMMAND ...\n", argv[0]);
    return 2;
  }
  // The BLAS's restart (BlasSetup.h) with the mode; the executable's own
  // then finds it done.
  restartForFastBlas(argc, argv);
  // The mode is this test's; the rest is the executable's command line.
  argv[1] = argv[0];
  ++argv;
  --argc;
  static const ProgramSpec whole = makeSpec(-1, one);
  static const ProgramSpec spec0 = makeSpec(0, dev0);
  static const ProgramSpec spec1 = makeSpec(1, dev1);
  if (mode == "one")
    return runMain(whole, argc, argv);
  if (mode == "one-mpi") {
    static const ProgramSpec *const kDevice[] = {&whole};
    return runPartitionedMain(kDevice, 1, openMpiTransport, argc, argv);
  }
  static const ProgramSpec *const kDevices[] = {&spec0, &spec1};
  return runPartitionedMain(kDevices, 2, openMpiTransport, argc, argv);
}
