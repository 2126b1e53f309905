//===- ArenaPlanTest.cpp - Arena plans of kernel lists, and their check ---===//
//
// Programs are built by hand here (no MLIR): a builder appends buffers and
// kernels the way the lowering does, computeLiveness runs, then planArena
// and the independent verifyArena.
//
//===----------------------------------------------------------------------===//

#include "codegen/ArenaPlan.h"
#include "codegen/ArenaVerifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

using namespace cairn::codegen;

namespace {

class ProgramMaker {
public:
  int add(std::string name, BufferKind kind, int64_t elements,
          std::optional<Step> step = Step::TrainStep) {
    Buffer buffer;
    buffer.id = program.buffers.size();
    buffer.name = std::move(name);
    buffer.shape = {elements};
    buffer.bytes = elements * 4;
    buffer.kind = kind;
    if (!isPersistent(kind))
      buffer.step = step;
    program.buffers.push_back(buffer);
    return buffer.id;
  }
  int view(std::string name, int of) {
    int id = add(std::move(name), program.buffers[of].kind,
                 program.buffers[of].getNumElements(),
                 program.buffers[of].step);
    program.buffers[id].bytes = 0;
    program.buffers[id].aliasOf = of;
    return id;
  }
  Kernel &kernel(KernelKind kind, std::vector<int> inputs,
                 std::vector<int> outputs, Step step = Step::TrainStep) {
    Kernel k;
    k.kind = kind;
    k.inputs = std::move(inputs);
    k.outputs = std::move(outputs);
    k.tiedInputs.assign(k.outputs.size(), -1);
    std::vector<Kernel> &list = step == Step::TrainStep
                                    ? program.trainStep.kernels
                                    : program.forward.kernels;
    list.push_back(std::move(k));
    return list.back();
  }
  Program &finish() {
    computeLiveness(program);
    return program;
  }
  Program program;
};

/// A chain: x -> matmul -> a -> relu -> b -> matmul -> c, a dies at relu.
ProgramMaker makeChain() {
  ProgramMaker m;
  int x = m.add("x", BufferKind::Input, 1000);
  int w = m.add("w", BufferKind::Param, 1000);
  int a = m.add("a", BufferKind::Activation, 1000);
  int b = m.add("b", BufferKind::Activation, 1000);
  int c = m.add("c", BufferKind::Activation, 1000);
  int out = m.add("loss", BufferKind::Output, 1);
  m.kernel(KernelKind::Matmul, {x, w}, {a});
  m.kernel(KernelKind::Relu, {a}, {b});
  m.kernel(KernelKind::Matmul, {b, w}, {c});
  m.kernel(KernelKind::ReduceSum, {c}, {out});
  return m;
}

TEST(ArenaPlanTest, ElementwiseKernelWritesOverItsDyingInput) {
  ProgramMaker m = makeChain();
  Program &program = m.finish();
  ArenaPlan plan = planArena(program);
  EXPECT_TRUE(verifyArena(program).ok) << verifyArena(program).message;
  const Buffer &a = program.buffers[2], &b = program.buffers[3];
  EXPECT_EQ(b.inPlaceOf, a.id);
  EXPECT_EQ(b.offset, a.offset);
  EXPECT_EQ(plan.inPlaceBuffers, 1);
  // x, w, loss persistent; at the peak (matmul 2) b and c are live.
  EXPECT_EQ(plan.persistentBytes, 4096 + 4096 + 256);
  EXPECT_EQ(plan.lowerBoundBytes, plan.persistentBytes + 2 * 4096);
  EXPECT_EQ(plan.arenaBytes, plan.lowerBoundBytes);
  EXPECT_EQ(plan.noReuseBytes, plan.persistentBytes + 3 * 4096);
}

TEST(ArenaPlanTest, NoInPlaceWhenTheInputIsReadLater) {
  ProgramMaker m = makeChain();
  // The backward part reads `a` again: relu must not overwrite it.
  int a = 2, grad = m.add("grad", BufferKind::Temp, 1000);
  m.kernel(KernelKind::ReluGrad, {4, a}, {grad});
  Program &program = m.finish();
  planArena(program);
  EXPECT_TRUE(verifyArena(program).ok) << verifyArena(program).message;
  EXPECT_EQ(program.buffers[3].inPlaceOf, kNoBuffer);
  EXPECT_NE(program.buffers[3].offset, program.buffers[a].offset);
}

TEST(ArenaPlanTest, NoInPlaceWhenAViewOfTheInputLivesOn) {
  ProgramMaker m = makeChain();
  int a = 2;
  int aView = m.view("a.view", a);
  int later = m.add("later", BufferKind::Temp, 1000);
  m.kernel(KernelKind::Copy, {aView}, {later});
  Program &program = m.finish();
  planArena(program);
  EXPECT_TRUE(verifyArena(program).ok) << verifyArena(program).message;
  EXPECT_EQ(program.buffers[3].inPlaceOf, kNoBuffer);
  EXPECT_EQ(program.buffers[aView].offset, program.buffers[a].offset);
}

TEST(ArenaPlanTest, NoReuseGivesEveryBufferItsOwnBytes) {
  ProgramMaker m = makeChain();
  Program &program = m.finish();
  ArenaPlanOptions options;
  options.reuse = false;
  ArenaPlan plan = planArena(program, options);
  EXPECT_TRUE(verifyArena(program).ok);
  EXPECT_EQ(plan.arenaBytes, plan.noReuseBytes);
  std::vector<int64_t> offsets;
  for (const Buffer &b : program.buffers)
    offsets.push_back(b.offset);
  std::sort(offsets.begin(), offsets.end());
  EXPECT_EQ(std::adjacent_find(offsets.begin(), offsets.end()), offsets.end());
}

TEST(ArenaPlanTest, TheTwoStepsShareTheirPerStepBytes) {
  ProgramMaker m = makeChain();
  int x = 0, w = 1;
  int f1 = m.add("f1", BufferKind::Activation, 1000, Step::Forward);
  int f2 = m.add("output", BufferKind::Output, 1000);
  m.kernel(KernelKind::Matmul, {x, w}, {f1}, Step::Forward);
  m.kernel(KernelKind::Matmul, {f1, w}, {f2}, Step::Forward);
  Program &program = m.finish();
  ArenaPlan plan = planArena(program);
  EXPECT_TRUE(verifyArena(program).ok) << verifyArena(program).message;
  EXPECT_EQ(plan.schedule.size(), 6u);
  // The forward step's activation takes bytes of the training step's.
  EXPECT_EQ(plan.arenaBytes, plan.lowerBoundBytes);
  ArenaPlanOptions forwardOnly;
  forwardOnly.onlyStep = Step::Forward;
  ArenaPlan forward = planArena(program, forwardOnly);
  EXPECT_TRUE(verifyArena(program, Step::Forward).ok);
  EXPECT_EQ(forward.schedule.size(), 2u);
  // x, w, output and f1; no loss.
  EXPECT_EQ(forward.arenaBytes, 4 * 4096);
}

//===----------------------------------------------------------------------===//
// The verifier catches broken plans
//===----------------------------------------------------------------------===//

TEST(ArenaVerifierTest, CatchesTwoLiveBuffersSharingBytes) {
  ProgramMaker m = makeChain();
  Program &program = m.finish();
  planArena(program);
  ASSERT_TRUE(verifyArena(program).ok);
  // c is live with b (matmul 2 reads b, writes c): put c on b.
  program.buffers[4].offset = program.buffers[3].offset;
  ArenaVerdict verdict = verifyArena(program);
  EXPECT_FALSE(verdict.ok);
  EXPECT_NE(verdict.message.find("overlaps"), std::string::npos)
      << verdict.message;
  EXPECT_NE(verdict.message.find("'c'"), std::string::npos) << verdict.message;
}

TEST(ArenaVerifierTest, CatchesMisalignmentAndOverflow) {
  ProgramMaker m = makeChain();
  Program &program = m.finish();
  planArena(program);
  program.buffers[4].offset += 4;
  EXPECT_FALSE(verifyArena(program).ok);
  program.buffers[4].offset -= 4;
  ASSERT_TRUE(verifyArena(program).ok);
  program.arenaBytes -= 256;
  EXPECT_FALSE(verifyArena(program).ok);
}

TEST(ArenaVerifierTest, CatchesInPlaceClaimsOfNonElementwiseKernels) {
  ProgramMaker m = makeChain();
  Program &program = m.finish();
  planArena(program);
  // c = matmul(b, w) may not overwrite b, even though b dies there.
  Buffer &b = program.buffers[3], &c = program.buffers[4];
  c.inPlaceOf = b.id;
  c.offset = b.offset;
  ArenaVerdict verdict = verifyArena(program);
  EXPECT_FALSE(verdict.ok);
  EXPECT_NE(verdict.message.find("not an elementwise"), std::string::npos)
      << verdict.message;
}

TEST(ArenaVerifierTest, CatchesAViewAwayFromItsRoot) {
  ProgramMaker m = makeChain();
  int aView = m.view("a.view", 2);
  int later = m.add("later", BufferKind::Temp, 1000);
  m.kernel(KernelKind::Copy, {aView}, {later});
  Program &program = m.finish();
  planArena(program);
  ASSERT_TRUE(verifyArena(program).ok);
  program.buffers[aView].offset += 256;
  EXPECT_FALSE(verifyArena(program).ok);
}

//===----------------------------------------------------------------------===//
// Random training-step-like programs
//===----------------------------------------------------------------------===//

/// A random MLP/CNN-like training step: a forward chain of layers (matmul
/// with a workspace, optional elementwise activation and residual add), a
/// loss, the backward chain in reverse reading saved activations, gradients
/// and in-place optimizer updates; plus a forward step.
Program makeRandomStep(std::mt19937_64 &rng) {
  ProgramMaker m;
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int layers = pick(2, 40);
  int64_t batch = 64 * pick(1, 8);
  int x = m.add("x", BufferKind::Input, batch * pick(16, 1024));
  int label = m.add("label", BufferKind::Input, batch);
  int loss = m.add("loss", BufferKind::Output, 1);
  struct Layer {
    int param, momentum, in, pre, out;
    bool activation;
  };
  std::vector<Layer> saved;
  int current = x;
  for (int l = 0; l < layers; ++l) {
    int64_t width = batch * pick(8, 4096);
    Layer layer;
    layer.param = m.add("w" + std::to_string(l), BufferKind::Param,
                        pick(64, 1 << 18));
    layer.momentum = m.add("w" + std::to_string(l) + ".momentum",
                           BufferKind::Optimizer,
                           m.program.buffers[layer.param].getNumElements());
    layer.in = current;
    layer.pre = m.add("pre" + std::to_string(l), BufferKind::Saved, width);
    Kernel &k = m.kernel(KernelKind::Matmul, {current, layer.param}, {layer.pre});
    if (pick(0, 2) == 0) {
      k.workspace = m.add("ws" + std::to_string(l), BufferKind::Workspace,
                          pick(16, 1 << 16));
    }
    layer.activation = pick(0, 3) != 0;
    layer.out = layer.pre;
    if (layer.activation) {
      layer.out = m.add("act" + std::to_string(l), BufferKind::Saved, width);
      m.kernel(KernelKind::Relu, {layer.pre}, {layer.out});
    }
    saved.push_back(layer);
    current = layer.out;
  }
  m.kernel(KernelKind::CrossEntropy, {current, label}, {loss});
  int64_t lastWidth = m.program.buffers[current].getNumElements();
  int dy = m.add("dlogits", BufferKind::Temp, lastWidth);
  m.kernel(KernelKind::CrossEntropyGrad, {loss, current, label}, {dy});
  for (int l = layers - 1; l >= 0; --l) {
    const Layer &layer = saved[l];
    int64_t width = m.program.buffers[layer.pre].getNumElements();
    if (layer.activation) {
      int dpre = m.add("dpre" + std::to_string(l), BufferKind::Temp, width);
      m.kernel(KernelKind::ReluGrad, {dy, layer.out}, {dpre});
      dy = dpre;
    }
    int grad = m.add("grad.w" + std::to_string(l), BufferKind::Grad,
                     m.program.buffers[layer.param].getNumElements());
    m.kernel(KernelKind::LinearGradWeight, {dy, layer.in}, {grad});
    if (l > 0) {
      int dx = m.add("dx" + std::to_string(l), BufferKind::Temp,
                     m.program.buffers[layer.in].getNumElements());
      m.kernel(KernelKind::LinearGradInput, {dy, layer.param}, {dx});
      dy = dx;
    }
    Kernel &update = m.kernel(KernelKind::SgdUpdate,
                              {layer.param, grad, layer.momentum},
                              {layer.param, layer.momentum});
    update.tiedInputs = {0, 2};
  }
  // The forward step: the same layers, activations not saved.
  int output = m.add("output", BufferKind::Output,
                     m.program.buffers[current].getNumElements());
  current = x;
  for (int l = 0; l < layers; ++l) {
    const Layer &layer = saved[l];
    int64_t width = m.program.buffers[layer.pre].getNumElements();
    int pre = l == layers - 1 && !layer.activation
                  ? output
                  : m.add("f.pre" + std::to_string(l), BufferKind::Activation,
                          width, Step::Forward);
    m.kernel(KernelKind::Matmul, {current, layer.param}, {pre}, Step::Forward);
    current = pre;
    if (layer.activation) {
      int act = l == layers - 1 ? output
                                : m.add("f.act" + std::to_string(l),
                                        BufferKind::Activation, width,
                                        Step::Forward);
      m.kernel(KernelKind::Relu, {pre}, {act}, Step::Forward);
      current = act;
    }
  }
  return m.finish();
}

TEST(ArenaPlanPropertyTest, RandomTrainingStepsPlanSoundAndNearTheLowerBound) {
  std::mt19937_64 rng(20261122);
  double worst = 0;
  int worstCase = -1;
  for (int trial = 0; trial < 1000; ++trial) {
    Program program = makeRandomStep(rng);
    ArenaPlanOptions options;
    options.timeLimitSeconds = 0.05;
    ArenaPlan plan = planArena(program, options);
    ArenaVerdict verdict = verifyArena(program);
    ASSERT_TRUE(verdict.ok) << "trial " << trial << ": " << verdict.message;
    ASSERT_GE(plan.arenaBytes, plan.lowerBoundBytes) << "trial " << trial;
    ASSERT_LE(plan.arenaBytes, plan.noReuseBytes) << "trial " << trial;
    double ratio = double(plan.arenaBytes) / plan.lowerBoundBytes;
    if (ratio > worst) {
      worst = ratio;
      worstCase = trial;
    }
    // A plan that shares nothing must pass too, and so must the mutation
    // of a shared one: moving the largest per-step buffer onto another
    // per-step buffer live with it.
    if (trial % 50 == 0) {
      ArenaPlanOptions noReuse;
      noReuse.reuse = false;
      Program copy = program;
      planArena(copy, noReuse);
      ASSERT_TRUE(verifyArena(copy).ok) << "trial " << trial;
    }
  }
  std::printf("worst arena / lower bound over 1000 random training steps: "
              "%.4f (trial %d)\n",
              worst, worstCase);
  EXPECT_LE(worst, 1.02);
}

TEST(ArenaPlanPropertyTest, TheVerifierCatchesEveryCollisionItIsShown) {
  std::mt19937_64 rng(7);
  int caught = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Program program = makeRandomStep(rng);
    ArenaPlanOptions options;
    options.timeLimitSeconds = 0;
    planArena(program, options);
    ASSERT_TRUE(verifyArena(program).ok);
    // Pick a kernel with a non-persistent input and output of bytes; put
    // the output onto the input: they are live together there.
    for (const Kernel &k : program.trainStep.kernels) {
      if (k.kind != KernelKind::Matmul || k.outputs.empty())
        continue;
      int in = k.inputs[0], out = k.outputs[0];
      if (isPersistent(program.buffers[in].kind) ||
          isPersistent(program.buffers[out].kind))
        continue;
      Program broken = program;
      broken.buffers[out].offset = broken.buffers[in].offset;
      broken.arenaBytes = std::max(
          broken.arenaBytes,
          broken.buffers[out].offset + alignToArena(broken.buffers[out].bytes));
      ArenaVerdict verdict = verifyArena(broken);
      ASSERT_FALSE(verdict.ok) << "trial " << trial;
      ++caught;
      break;
    }
  }
  EXPECT_GT(caught, 100);
}

} // namespace
