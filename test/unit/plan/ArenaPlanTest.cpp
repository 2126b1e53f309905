//===- ArenaPlanTest.cpp - Arena plans of kernel lists, and their check ---===//
//
// Programs are built by hand here (no MLIR): a builder appends buffers and
// kernels the way the lowering does, computeLiveness runs, then planArena
// and the independent verifyArena.
//
//===----------------------------------------------------------------------===//

#include "RandomPrograms.h"

#include "passes/ArenaPlan.h"
#include "passes/ArenaVerifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

using namespace cairn;
using namespace cairn::testing;

namespace {

/// A chain: x -> matmul -> a -> relu -> b -> matmul -> c, a dies at relu.
ProgramMaker makeChain() {
  ProgramMaker m;
  int x = m.add("x", BufferKind::input, 1000);
  int w = m.add("w", BufferKind::param, 1000);
  int a = m.add("a", BufferKind::activation, 1000);
  int b = m.add("b", BufferKind::activation, 1000);
  int c = m.add("c", BufferKind::activation, 1000);
  int out = m.add("loss", BufferKind::output, 1);
  m.kernel(MatmulKernelOp::getOperationName(), {x, w}, {a});
  m.kernel(ReluKernelOp::getOperationName(), {a}, {b});
  m.kernel(MatmulKernelOp::getOperationName(), {b, w}, {c});
  m.kernel(ReduceSumKernelOp::getOperationName(), {c}, {out});
  return m;
}

TEST(ArenaPlanTest, ElementwiseKernelWritesOverItsDyingInput) {
  ProgramMaker m = makeChain();
  KernelGraph &program = m.finish();
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
  int a = 2, grad = m.add("grad", BufferKind::temp, 1000);
  m.kernel(ReluGradKernelOp::getOperationName(), {4, a}, {grad});
  KernelGraph &program = m.finish();
  planArena(program);
  EXPECT_TRUE(verifyArena(program).ok) << verifyArena(program).message;
  EXPECT_EQ(program.buffers[3].inPlaceOf, kNoBuffer);
  EXPECT_NE(program.buffers[3].offset, program.buffers[a].offset);
}

TEST(ArenaPlanTest, NoInPlaceWhenAViewOfTheInputLivesOn) {
  ProgramMaker m = makeChain();
  int a = 2;
  int aView = m.view("a.view", a);
  int later = m.add("later", BufferKind::temp, 1000);
  m.kernel(CopyKernelOp::getOperationName(), {aView}, {later});
  KernelGraph &program = m.finish();
  planArena(program);
  EXPECT_TRUE(verifyArena(program).ok) << verifyArena(program).message;
  EXPECT_EQ(program.buffers[3].inPlaceOf, kNoBuffer);
  EXPECT_EQ(program.buffers[aView].offset, program.buffers[a].offset);
}

TEST(ArenaPlanTest, NoReuseGivesEveryBufferItsOwnBytes) {
  ProgramMaker m = makeChain();
  KernelGraph &program = m.finish();
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
  int f1 = m.add("f1", BufferKind::activation, 1000, StepKind::forward);
  int f2 = m.add("output", BufferKind::output, 1000);
  m.kernel(MatmulKernelOp::getOperationName(), {x, w}, {f1}, StepKind::forward);
  m.kernel(MatmulKernelOp::getOperationName(), {f1, w}, {f2},
           StepKind::forward);
  KernelGraph &program = m.finish();
  ArenaPlan plan = planArena(program);
  EXPECT_TRUE(verifyArena(program).ok) << verifyArena(program).message;
  EXPECT_EQ(plan.schedule.size(), 6u);
  // The forward step's activation takes bytes of the training step's.
  EXPECT_EQ(plan.arenaBytes, plan.lowerBoundBytes);
  // The forward step alone, as cairn-extract-step leaves it: its kernels and
  // the persistent buffers they touch.
  ProgramMaker alone;
  int ax = alone.add("x", BufferKind::input, 1000);
  int aw = alone.add("w", BufferKind::param, 1000);
  int af1 = alone.add("f1", BufferKind::activation, 1000, StepKind::forward);
  int aout = alone.add("output", BufferKind::output, 1000);
  alone.kernel(MatmulKernelOp::getOperationName(), {ax, aw}, {af1},
               StepKind::forward);
  alone.kernel(MatmulKernelOp::getOperationName(), {af1, aw}, {aout},
               StepKind::forward);
  KernelGraph &forwardProgram = alone.finish();
  ArenaPlan forward = planArena(forwardProgram);
  EXPECT_TRUE(verifyArena(forwardProgram).ok);
  EXPECT_EQ(forward.schedule.size(), 2u);
  // x, w, output and f1; no loss.
  EXPECT_EQ(forward.arenaBytes, 4 * 4096);
}

//===----------------------------------------------------------------------===//
// The verifier catches broken plans
//===----------------------------------------------------------------------===//

TEST(ArenaVerifierTest, CatchesTwoLiveBuffersSharingBytes) {
  ProgramMaker m = makeChain();
  KernelGraph &program = m.finish();
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

TEST(ArenaVerifierTest, NamesBuffersWhoseIdsShareDigits) {
  // Twelve params; p11 put on p1: the message names both by name, not p11
  // and "buffer 1".
  ProgramMaker m;
  std::vector<int> params;
  for (int i = 0; i < 12; ++i)
    params.push_back(m.add("p" + std::to_string(i), BufferKind::param, 64));
  int loss = m.add("loss", BufferKind::output, 1);
  m.kernel(AddKernelOp::getOperationName(), {params[1], params[11]}, {loss});
  KernelGraph &program = m.finish();
  planArena(program);
  ASSERT_TRUE(verifyArena(program).ok);
  program.buffers[11].offset = program.buffers[1].offset;
  ArenaVerdict verdict = verifyArena(program);
  ASSERT_FALSE(verdict.ok);
  EXPECT_NE(verdict.message.find("'p11'"), std::string::npos) << verdict.message;
  EXPECT_NE(verdict.message.find("'p1'"), std::string::npos) << verdict.message;
  EXPECT_EQ(verdict.message.find("buffer 1"), std::string::npos)
      << verdict.message;
}

TEST(ArenaVerifierTest, CatchesMisalignmentAndOverflow) {
  ProgramMaker m = makeChain();
  KernelGraph &program = m.finish();
  planArena(program);
  program.buffers[4].offset += 4;
  ArenaVerdict misaligned = verifyArena(program);
  EXPECT_FALSE(misaligned.ok);
  EXPECT_NE(misaligned.message.find("-byte aligned"), std::string::npos)
      << misaligned.message;
  program.buffers[4].offset -= 4;
  ASSERT_TRUE(verifyArena(program).ok);
  program.arenaBytes -= 256;
  ArenaVerdict overflow = verifyArena(program);
  EXPECT_FALSE(overflow.ok);
  EXPECT_NE(overflow.message.find("ends past the"), std::string::npos)
      << overflow.message;
}

TEST(ArenaVerifierTest, CatchesInPlaceClaimsOfNonElementwiseKernels) {
  ProgramMaker m = makeChain();
  KernelGraph &program = m.finish();
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
  int later = m.add("later", BufferKind::temp, 1000);
  m.kernel(CopyKernelOp::getOperationName(), {aView}, {later});
  KernelGraph &program = m.finish();
  planArena(program);
  ASSERT_TRUE(verifyArena(program).ok);
  program.buffers[aView].offset += 256;
  ArenaVerdict verdict = verifyArena(program);
  EXPECT_FALSE(verdict.ok);
  EXPECT_NE(verdict.message.find("is not at the offset of 'a'"),
            std::string::npos)
      << verdict.message;
}

//===----------------------------------------------------------------------===//
// Random training-step-like programs
//===----------------------------------------------------------------------===//

TEST(ArenaPlanPropertyTest, RandomTrainingStepsPlanSoundAndNearTheLowerBound) {
  std::mt19937_64 rng(20261122);
  double worst = 0;
  int worstCase = -1;
  for (int trial = 0; trial < 1000; ++trial) {
    KernelGraph program = makeRandomStep(rng);
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
    // A plan that shares nothing must pass too (the mutations the verifier
    // must catch are in TheVerifierCatchesEveryCollisionItIsShown).
    if (trial % 50 == 0) {
      ArenaPlanOptions noReuse;
      noReuse.reuse = false;
      KernelGraph copy = program;
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
    KernelGraph program = makeRandomStep(rng);
    ArenaPlanOptions options;
    options.timeLimitSeconds = 0;
    planArena(program, options);
    ASSERT_TRUE(verifyArena(program).ok);
    // Pick a kernel with a non-persistent input and output of bytes; put
    // the output onto the input: they are live together there.
    for (const Kernel &k : program.trainStep.kernels) {
      if (k.kind != MatmulKernelOp::getOperationName() || k.outputs.empty())
        continue;
      int in = k.inputs[0], out = k.outputs[0];
      if (isPersistent(program.buffers[in].kind) ||
          isPersistent(program.buffers[out].kind))
        continue;
      KernelGraph broken = program;
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
