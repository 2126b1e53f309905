//===- KernelScheduleTest.cpp - Reordering kernels for memory -------------===//
//
// The dependence rules on hand-built steps (an update after every reader of
// the old value, a reader after its writer, through views too), then random
// programs: every reordered step is a topological order of the dependences
// as an independent pairwise check reads them, computes the same values (a
// symbolic run), plans and verifies, and never raises the lower bound.
//
//===----------------------------------------------------------------------===//

#include "RandomPrograms.h"

#include "passes/ArenaPlan.h"
#include "passes/ArenaVerifier.h"
#include "passes/KernelSchedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>

using namespace cairn;
using namespace cairn::testing;

namespace {

std::vector<int> identityOrder(const KernelGraph &program, StepKind step) {
  std::vector<int> order(program.getStep(step).kernels.size());
  for (size_t k = 0; k < order.size(); ++k)
    order[k] = k;
  return order;
}

/// The position of the kernel tagged `tag` (Kernel::opName) in the step.
int positionOf(const KernelGraph &program, const std::string &tag,
               StepKind step = StepKind::train_step) {
  const std::vector<Kernel> &kernels = program.getStep(step).kernels;
  for (size_t k = 0; k < kernels.size(); ++k)
    if (kernels[k].opName == tag)
      return k;
  ADD_FAILURE() << "no kernel tagged " << tag;
  return -1;
}

std::vector<std::string> getTags(const KernelGraph &program, StepKind step) {
  std::vector<std::string> tags;
  for (const Kernel &kernel : program.getStep(step).kernels)
    tags.push_back(kernel.opName);
  return tags;
}

//===----------------------------------------------------------------------===//
// An independent reading of the dependences and of the values
//===----------------------------------------------------------------------===//

/// The roots a kernel reads and writes, from the kernel alone: outputs, the
/// workspace and the inputs tied to an output are written.
struct Footprint {
  std::set<int> reads, writes;
};

int rootOf(const KernelGraph &program, int id) {
  while (program.buffers[id].aliasOf != kNoBuffer)
    id = program.buffers[id].aliasOf;
  return id;
}

Footprint getFootprint(const KernelGraph &program, const Kernel &kernel) {
  Footprint footprint;
  for (int id : kernel.inputs)
    if (id != kNoBuffer)
      footprint.reads.insert(rootOf(program, id));
  for (int id : kernel.outputs)
    if (id != kNoBuffer)
      footprint.writes.insert(rootOf(program, id));
  for (int tied : kernel.tiedInputs)
    if (tied >= 0 && kernel.inputs[tied] != kNoBuffer)
      footprint.writes.insert(rootOf(program, kernel.inputs[tied]));
  if (kernel.workspace != kNoBuffer)
    footprint.writes.insert(kernel.workspace);
  return footprint;
}

bool intersects(const std::set<int> &a, const std::set<int> &b) {
  for (int x : a)
    if (b.count(x))
      return true;
  return false;
}

/// Every pair of kernels that touch one buffer, one of them writing it,
/// runs in the list's order; and `order` is a permutation.
::testing::AssertionResult isValidOrder(const KernelGraph &program, StepKind step,
                                        const std::vector<int> &order) {
  const std::vector<Kernel> &kernels = program.getStep(step).kernels;
  size_t n = kernels.size();
  if (order.size() != n)
    return ::testing::AssertionFailure()
           << "order has " << order.size() << " kernels, the step " << n;
  std::vector<int> position(n, -1);
  for (size_t p = 0; p < n; ++p) {
    if (order[p] < 0 || size_t(order[p]) >= n || position[order[p]] >= 0)
      return ::testing::AssertionFailure() << "order is not a permutation";
    position[order[p]] = p;
  }
  std::vector<Footprint> footprints;
  for (const Kernel &kernel : kernels)
    footprints.push_back(getFootprint(program, kernel));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const Footprint &a = footprints[i], &b = footprints[j];
      bool conflict = intersects(a.writes, b.reads) ||
                      intersects(a.writes, b.writes) ||
                      intersects(a.reads, b.writes);
      if (conflict && position[i] > position[j])
        return ::testing::AssertionFailure()
               << "kernel " << j << " runs before kernel " << i
               << ", which touches one of its buffers";
    }
  }
  return ::testing::AssertionSuccess();
}

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

/// A symbolic run of `step` in `order`: every buffer holds a hash, a kernel
/// writes hashes of (the kernel: its kind and buffers; the slot; every
/// value it read). What each kernel read, and the persistent buffers' final
/// values.
struct SymbolicRun {
  std::vector<std::vector<uint64_t>> read;
  std::map<int, uint64_t> persistent;
  bool operator==(const SymbolicRun &other) const {
    return read == other.read && persistent == other.persistent;
  }
};

SymbolicRun runSymbolically(const KernelGraph &program, StepKind step,
                            const std::vector<int> &order) {
  const std::vector<Kernel> &kernels = program.getStep(step).kernels;
  // Per-step buffers start as garbage (0), persistent ones as their id.
  std::vector<uint64_t> value(program.buffers.size(), 0);
  for (const Buffer &buffer : program.buffers)
    if (isPersistent(buffer.kind))
      value[buffer.id] = 1000 + buffer.id;
  SymbolicRun run;
  run.read.resize(kernels.size());
  for (int k : order) {
    const Kernel &kernel = kernels[k];
    uint64_t h = mix(0, std::hash<std::string>()(kernel.kind));
    for (int id : kernel.inputs)
      h = mix(h, id);
    for (int id : kernel.outputs)
      h = mix(h, id);
    for (int id : kernel.inputs) {
      uint64_t v = id == kNoBuffer ? 7 : value[rootOf(program, id)];
      run.read[k].push_back(v);
      h = mix(h, v);
    }
    for (size_t i = 0; i < kernel.outputs.size(); ++i) {
      uint64_t out = mix(h, i);
      if (kernel.outputs[i] != kNoBuffer)
        value[rootOf(program, kernel.outputs[i])] = out;
      int tied = i < kernel.tiedInputs.size() ? kernel.tiedInputs[i] : -1;
      if (tied >= 0 && kernel.inputs[tied] != kNoBuffer)
        value[rootOf(program, kernel.inputs[tied])] = out;
    }
  }
  for (const Buffer &buffer : program.buffers)
    if (isPersistent(buffer.kind))
      run.persistent[buffer.id] = value[buffer.id];
  return run;
}

//===----------------------------------------------------------------------===//
// Hand-built steps
//===----------------------------------------------------------------------===//

/// Two linear layers as the lowering emits them: forward, loss, backward,
/// then both updates. Gradients are 100x the activations: holding both at
/// once is the peak.
ProgramMaker makeTwoLayers() {
  ProgramMaker m;
  int x = m.add("x", BufferKind::input, 1000);
  int label = m.add("label", BufferKind::input, 10);
  int w1 = m.add("w1", BufferKind::param, 100000);
  int w2 = m.add("w2", BufferKind::param, 100000);
  int m1 = m.add("w1.momentum", BufferKind::optimizer, 100000);
  int m2 = m.add("w2.momentum", BufferKind::optimizer, 100000);
  int loss = m.add("loss", BufferKind::output, 1);
  int h = m.add("h", BufferKind::saved, 1000);
  int y = m.add("y", BufferKind::saved, 1000);
  int dy = m.add("dy", BufferKind::temp, 1000);
  int g2 = m.add("grad.w2", BufferKind::grad, 100000);
  int dh = m.add("dh", BufferKind::temp, 1000);
  int g1 = m.add("grad.w1", BufferKind::grad, 100000);
  m.kernel(MatmulKernelOp::getOperationName(), {x, w1}, {h}).opName = "fc1";
  m.kernel(MatmulKernelOp::getOperationName(), {h, w2}, {y}).opName = "fc2";
  m.kernel(CrossEntropyKernelOp::getOperationName(), {y, label}, {loss})
      .opName = "loss";
  m.kernel(CrossEntropyGradKernelOp::getOperationName(), {loss, y, label}, {dy})
      .opName = "dloss";
  m.kernel(LinearGradWeightKernelOp::getOperationName(), {dy, h}, {g2}).opName =
      "grad2";
  m.kernel(LinearGradInputKernelOp::getOperationName(), {dy, w2}, {dh}).opName =
      "readW2";
  m.kernel(LinearGradWeightKernelOp::getOperationName(), {dh, x}, {g1}).opName =
      "grad1";
  Kernel &u1 =
      m.kernel(SgdUpdateKernelOp::getOperationName(), {w1, g1, m1}, {w1, m1});
  u1.opName = "update1";
  Kernel &u2 =
      m.kernel(SgdUpdateKernelOp::getOperationName(), {w2, g2, m2}, {w2, m2});
  u2.opName = "update2";
  return m;
}

TEST(MemoryAwareScheduleTest,
     AnUpdateRunsOnceItsGradientIsCompleteAndTheOldValueRead) {
  ProgramMaker m = makeTwoLayers();
  KernelGraph &program = m.finish();
  KernelGraph lowered = program;
  StepScheduleResult result = scheduleStepForMemory(program, StepKind::train_step);
  EXPECT_TRUE(result.reordered);
  // Before, both gradients and dh are live at grad1; after, grad.w2 dies
  // at update2, and the peak is grad.w2 with dy and h (or dh) at grad2.
  int64_t gradient = alignToArena(400000), activation = alignToArena(4000);
  EXPECT_EQ(result.peakBefore, 2 * gradient + activation);
  EXPECT_EQ(result.peakAfter, gradient + 2 * activation);
  int update2 = positionOf(program, "update2");
  EXPECT_GT(update2, positionOf(program, "grad2"));
  EXPECT_GT(update2, positionOf(program, "readW2"));
  EXPECT_GT(update2, positionOf(program, "fc2"));
  EXPECT_LT(update2, positionOf(program, "grad1"));
  // The dependences say the same, in the lowered list's indices.
  KernelDependences deps = computeKernelDependences(lowered, StepKind::train_step);
  EXPECT_EQ(deps.predecessors[8], (std::vector<int>{1, 4, 5}));
  EXPECT_EQ(deps.predecessors[7], (std::vector<int>{0, 6}));
  // Liveness follows the new order; kinds stay.
  const Buffer &g2 = program.buffers[10];
  EXPECT_EQ(g2.definedBy, positionOf(program, "grad2"));
  EXPECT_EQ(g2.lastUse, update2);
  for (const Buffer &buffer : program.buffers)
    EXPECT_EQ(buffer.kind, lowered.buffers[buffer.id].kind) << buffer.name;
  // The same params, momentum buffers and loss at the end.
  EXPECT_EQ(runSymbolically(program, StepKind::train_step,
                            identityOrder(program, StepKind::train_step))
                .persistent,
            runSymbolically(lowered, StepKind::train_step,
                            identityOrder(lowered, StepKind::train_step))
                .persistent);
}

TEST(MemoryAwareScheduleTest, AnUpdateNeverMovesBeforeAReaderOfTheOldValue) {
  // The reader of w2 (through a view) comes after a kernel that allocates
  // much: running the update before both would free grad.w2 early, but the
  // reader needs the old w2.
  ProgramMaker m;
  int x = m.add("x", BufferKind::input, 1000);
  int w2 = m.add("w2", BufferKind::param, 100000);
  int m2 = m.add("w2.momentum", BufferKind::optimizer, 100000);
  int out = m.add("loss", BufferKind::output, 1);
  int w2View = m.view("w2.view", w2);
  int dy = m.add("dy", BufferKind::temp, 1000);
  int g2 = m.add("grad.w2", BufferKind::grad, 100000);
  int big = m.add("big", BufferKind::temp, 200000);
  int dx = m.add("dx", BufferKind::temp, 1000);
  m.kernel(MatmulKernelOp::getOperationName(), {x}, {dy}).opName = "dy";
  m.kernel(LinearGradWeightKernelOp::getOperationName(), {dy, x}, {g2}).opName =
      "grad2";
  m.kernel(MatmulKernelOp::getOperationName(), {dy, x}, {big}).opName = "big";
  m.kernel(LinearGradInputKernelOp::getOperationName(), {big, w2View}, {dx})
      .opName = "reader";
  Kernel &u2 =
      m.kernel(SgdUpdateKernelOp::getOperationName(), {w2, g2, m2}, {w2, m2});
  u2.opName = "update2";
  m.kernel(ReduceSumKernelOp::getOperationName(), {dx}, {out}).opName = "sum";
  KernelGraph &program = m.finish();
  KernelDependences deps = computeKernelDependences(program, StepKind::train_step);
  EXPECT_TRUE(
      std::count(deps.predecessors[4].begin(), deps.predecessors[4].end(), 3))
      << "the update must follow the reader of the view";
  std::vector<int> order = computeMemoryAwareOrder(program, StepKind::train_step);
  EXPECT_TRUE(isValidOrder(program, StepKind::train_step, order));
  scheduleStepForMemory(program, StepKind::train_step);
  EXPECT_GT(positionOf(program, "update2"), positionOf(program, "reader"));
}

TEST(MemoryAwareScheduleTest, AReaderNeverMovesBeforeItsWriter) {
  // `reader` frees `a`, so it would like to run right after `a` is
  // defined; it reads `b` through a view, written after `c` in the list.
  ProgramMaker m;
  int x = m.add("x", BufferKind::input, 1000);
  int w = m.add("w", BufferKind::param, 1000);
  int out = m.add("loss", BufferKind::output, 1);
  int a = m.add("a", BufferKind::temp, 100000);
  int c = m.add("c", BufferKind::temp, 50000);
  int b = m.add("b", BufferKind::temp, 10);
  int bView = m.view("b.view", b);
  int r = m.add("r", BufferKind::temp, 10);
  int s = m.add("s", BufferKind::temp, 10);
  m.kernel(MatmulKernelOp::getOperationName(), {x, w}, {a}).opName = "a";
  m.kernel(MatmulKernelOp::getOperationName(), {x, w}, {c}).opName = "c";
  m.kernel(MatmulKernelOp::getOperationName(), {x, w}, {b}).opName = "writer";
  m.kernel(MatmulKernelOp::getOperationName(), {a, bView}, {r}).opName =
      "reader";
  m.kernel(MatmulKernelOp::getOperationName(), {c, r}, {s}).opName = "s";
  m.kernel(ReduceSumKernelOp::getOperationName(), {s}, {out}).opName = "sum";
  KernelGraph &program = m.finish();
  std::vector<int> order = computeMemoryAwareOrder(program, StepKind::train_step);
  EXPECT_TRUE(isValidOrder(program, StepKind::train_step, order));
  scheduleStepForMemory(program, StepKind::train_step);
  EXPECT_GT(positionOf(program, "reader"), positionOf(program, "writer"));
}

TEST(MemoryAwareScheduleTest, WritesOfOneBufferKeepTheirOrderAndTheirReaders) {
  // `loss` is written twice and read in between; the second writer frees a
  // large buffer and would like to run early.
  ProgramMaker m;
  int x = m.add("x", BufferKind::input, 1000);
  int loss = m.add("loss", BufferKind::output, 1);
  int t = m.add("t", BufferKind::temp, 100000);
  int c = m.add("c", BufferKind::temp, 1);
  int d = m.add("d", BufferKind::temp, 50000);
  m.kernel(MatmulKernelOp::getOperationName(), {x}, {t}).opName = "t";
  m.kernel(MatmulKernelOp::getOperationName(), {x}, {d}).opName = "d";
  m.kernel(CrossEntropyKernelOp::getOperationName(), {d}, {loss}).opName =
      "write1";
  m.kernel(CopyKernelOp::getOperationName(), {loss}, {c}).opName = "read";
  m.kernel(CrossEntropyKernelOp::getOperationName(), {t}, {loss}).opName =
      "write2";
  KernelGraph &program = m.finish();
  scheduleStepForMemory(program, StepKind::train_step);
  EXPECT_LT(positionOf(program, "write1"), positionOf(program, "read"));
  EXPECT_LT(positionOf(program, "read"), positionOf(program, "write2"));
}

TEST(MemoryAwareScheduleTest, DistinctWorkspacesOrderNothing) {
  ProgramMaker m;
  int x = m.add("x", BufferKind::input, 1000);
  int a = m.add("a", BufferKind::temp, 1000);
  int b = m.add("b", BufferKind::temp, 1000);
  m.kernel(Conv2dKernelOp::getOperationName(), {x}, {a}).workspace =
      m.add("ws.a", BufferKind::workspace, 5000);
  m.kernel(Conv2dKernelOp::getOperationName(), {x}, {b}).workspace =
      m.add("ws.b", BufferKind::workspace, 5000);
  KernelGraph &program = m.finish();
  KernelDependences deps = computeKernelDependences(program, StepKind::train_step);
  EXPECT_TRUE(deps.predecessors[1].empty());
}

TEST(MemoryAwareScheduleTest, ASharedWorkspaceOrdersItsKernels) {
  // A workspace counts as a write: two kernels that shared one (the
  // lowering gives each its own) could not overlap.
  ProgramMaker m;
  int x = m.add("x", BufferKind::input, 1000);
  int a = m.add("a", BufferKind::temp, 1000);
  int b = m.add("b", BufferKind::temp, 1000);
  int ws = m.add("ws", BufferKind::workspace, 5000);
  m.kernel(Conv2dKernelOp::getOperationName(), {x}, {a}).workspace = ws;
  m.kernel(Conv2dKernelOp::getOperationName(), {x}, {b}).workspace = ws;
  KernelGraph &program = m.finish();
  KernelDependences deps =
      computeKernelDependences(program, StepKind::train_step);
  EXPECT_EQ(deps.predecessors[1], std::vector<int>{0});
}

TEST(MemoryAwareScheduleTest, AChainKeepsItsOrder) {
  ProgramMaker m;
  int x = m.add("x", BufferKind::input, 1000);
  int w = m.add("w", BufferKind::param, 1000);
  int a = m.add("a", BufferKind::activation, 1000);
  int b = m.add("b", BufferKind::activation, 1000);
  int out = m.add("loss", BufferKind::output, 1);
  m.kernel(MatmulKernelOp::getOperationName(), {x, w}, {a}).opName = "0";
  m.kernel(ReluKernelOp::getOperationName(), {a}, {b}).opName = "1";
  m.kernel(ReduceSumKernelOp::getOperationName(), {b}, {out}).opName = "2";
  KernelGraph &program = m.finish();
  ArenaPlan plan = planArena(program);
  EXPECT_TRUE(plan.scheduleTried);
  EXPECT_FALSE(plan.scheduleReordered);
  EXPECT_EQ(plan.scheduleLowerBoundBefore, plan.scheduleLowerBoundAfter);
  EXPECT_EQ(plan.scheduleMovedKernels, 0);
  EXPECT_EQ(getTags(program, StepKind::train_step),
            (std::vector<std::string>{"0", "1", "2"}));
}

//===----------------------------------------------------------------------===//
// Glued kernels (Kernel::beforeFirstUse): a recomputation runs right before
// the first kernel that reads what it writes, never earlier
//===----------------------------------------------------------------------===//

/// x -> a (matmul); r = relu(a) (glued, listed early); b = a w (large);
/// c = r + b; loss = sum(c).
ProgramMaker makeGluedRecompute() {
  ProgramMaker m;
  int x = m.add("x", BufferKind::input, 1000);
  int w = m.add("w", BufferKind::param, 1000);
  int a = m.add("a", BufferKind::activation, 1000);
  int r = m.add("r", BufferKind::activation, 1000);
  int b = m.add("b", BufferKind::activation, 1000);
  int c = m.add("c", BufferKind::activation, 1000);
  int loss = m.add("loss", BufferKind::output, 1);
  m.kernel(MatmulKernelOp::getOperationName(), {x, w}, {a}).opName = "a";
  Kernel &recompute = m.kernel(ReluKernelOp::getOperationName(), {a}, {r});
  recompute.opName = "r";
  recompute.beforeFirstUse = true;
  m.kernel(MatmulKernelOp::getOperationName(), {a, w}, {b}).opName = "b";
  m.kernel(AddKernelOp::getOperationName(), {r, b}, {c}).opName = "c";
  m.kernel(ReduceSumKernelOp::getOperationName(), {c}, {loss}).opName = "loss";
  return m;
}

TEST(GluedScheduleTest, AGluedKernelRunsRightBeforeItsFirstReader) {
  ProgramMaker m = makeGluedRecompute();
  KernelGraph &program = m.finish();
  EXPECT_EQ(getScheduleAnchors(program, StepKind::train_step),
            (std::vector<int>{0, 3, 2, 3, 4}));
  EXPECT_EQ(computeConstrainedListOrder(program, StepKind::train_step),
            (std::vector<int>{0, 2, 1, 3, 4}));
  std::vector<int> order = computeMemoryAwareOrder(program, StepKind::train_step);
  EXPECT_TRUE(isValidOrder(program, StepKind::train_step, order));
  auto at = std::find(order.begin(), order.end(), 1);
  ASSERT_NE(at + 1, order.end());
  EXPECT_EQ(*(at + 1), 3) << "the recomputation is not right before its reader";

  // Scheduling applies the constrained order even where no order lowers the
  // peak: the list's own order would run the recomputation too early.
  KernelGraph lowered = program;
  StepScheduleResult result = scheduleStepForMemory(program, StepKind::train_step);
  EXPECT_TRUE(result.reordered);
  EXPECT_EQ(positionOf(program, "r") + 1, positionOf(program, "c"));
  EXPECT_EQ(runSymbolically(program, StepKind::train_step,
                            identityOrder(program, StepKind::train_step))
                .persistent,
            runSymbolically(lowered, StepKind::train_step,
                            identityOrder(lowered, StepKind::train_step))
                .persistent);
}

TEST(GluedScheduleTest, GluedChainsStayTogether) {
  // r2 = relu(r1), both recomputations: both glued to the add that reads r2,
  // in their order.
  ProgramMaker m;
  int x = m.add("x", BufferKind::input, 1000);
  int w = m.add("w", BufferKind::param, 1000);
  int a = m.add("a", BufferKind::activation, 1000);
  int r1 = m.add("r1", BufferKind::activation, 1000);
  int r2 = m.add("r2", BufferKind::activation, 1000);
  int b = m.add("b", BufferKind::activation, 1000);
  int c = m.add("c", BufferKind::activation, 1000);
  int loss = m.add("loss", BufferKind::output, 1);
  m.kernel(MatmulKernelOp::getOperationName(), {x, w}, {a}).opName = "a";
  Kernel &first = m.kernel(ReluKernelOp::getOperationName(), {a}, {r1});
  first.opName = "r1";
  first.beforeFirstUse = true;
  Kernel &second = m.kernel(SigmoidKernelOp::getOperationName(), {r1}, {r2});
  second.opName = "r2";
  second.beforeFirstUse = true;
  m.kernel(MatmulKernelOp::getOperationName(), {a, w}, {b}).opName = "b";
  m.kernel(AddKernelOp::getOperationName(), {r2, b}, {c}).opName = "c";
  m.kernel(ReduceSumKernelOp::getOperationName(), {c}, {loss}).opName = "loss";
  KernelGraph &program = m.finish();
  EXPECT_EQ(getScheduleAnchors(program, StepKind::train_step),
            (std::vector<int>{0, 4, 4, 3, 4, 5}));
  scheduleStepForMemory(program, StepKind::train_step);
  EXPECT_EQ(getTags(program, StepKind::train_step),
            (std::vector<std::string>{"a", "b", "r1", "r2", "c", "loss"}));
}

TEST(GluedScheduleTest, AGlueThatWouldBreakADependenceIsDropped) {
  // g reads the old w; update writes w in place (after g: a write after
  // read); the first reader of g's result reads the new w. g cannot run
  // right before that reader, so it runs where the dependences let it.
  ProgramMaker m;
  int x = m.add("x", BufferKind::input, 1000);
  int w = m.add("w", BufferKind::param, 1000);
  int mom = m.add("w.momentum", BufferKind::optimizer, 1000);
  int dw = m.add("grad.w", BufferKind::grad, 1000);
  int gr = m.add("g", BufferKind::temp, 1000);
  int out = m.add("loss", BufferKind::output, 1);
  m.kernel(MatmulKernelOp::getOperationName(), {x, x}, {dw}).opName = "grad";
  Kernel &glued = m.kernel(ReluKernelOp::getOperationName(), {w}, {gr});
  glued.opName = "g";
  glued.beforeFirstUse = true;
  Kernel &update =
      m.kernel(SgdUpdateKernelOp::getOperationName(), {w, dw, mom}, {w, mom});
  update.opName = "update";
  m.kernel(AddKernelOp::getOperationName(), {gr, w}, {out}).opName = "use";
  KernelGraph &program = m.finish();
  std::vector<int> order = computeMemoryAwareOrder(program, StepKind::train_step);
  EXPECT_TRUE(isValidOrder(program, StepKind::train_step, order));
  std::vector<int> constrained =
      computeConstrainedListOrder(program, StepKind::train_step);
  EXPECT_TRUE(isValidOrder(program, StepKind::train_step, constrained));
  EXPECT_EQ(constrained, (std::vector<int>{0, 1, 2, 3}));
}

TEST(MemoryAwareScheduleTest, PlanArenaReordersUnlessToldNotTo) {
  ProgramMaker m = makeTwoLayers();
  KernelGraph lowered = m.finish();
  std::vector<std::string> tags = getTags(lowered, StepKind::train_step);

  KernelGraph program = lowered;
  ArenaPlan plan = planArena(program);
  EXPECT_TRUE(verifyArena(program).ok) << verifyArena(program).message;
  EXPECT_TRUE(plan.scheduleReordered);
  EXPECT_LT(plan.scheduleLowerBoundAfter, plan.scheduleLowerBoundBefore);
  EXPECT_LE(plan.lowerBoundBytes, plan.scheduleLowerBoundAfter);
  EXPECT_NE(getTags(program, StepKind::train_step), tags);

  // --no-reorder, and --no-reuse alone (the reference layout).
  ArenaPlanOptions noReorder, noReuse;
  noReorder.reorder = false;
  noReuse.reuse = false;
  for (const ArenaPlanOptions &options : {noReorder, noReuse}) {
    KernelGraph copy = lowered;
    ArenaPlan kept = planArena(copy, options);
    EXPECT_TRUE(verifyArena(copy).ok);
    EXPECT_FALSE(kept.scheduleTried);
    EXPECT_FALSE(kept.scheduleReordered);
    EXPECT_EQ(getTags(copy, StepKind::train_step), tags);
    EXPECT_EQ(kept.scheduleLowerBoundBefore, plan.scheduleLowerBoundBefore);
    EXPECT_EQ(kept.scheduleLowerBoundAfter, plan.scheduleLowerBoundBefore);
  }
}

//===----------------------------------------------------------------------===//
// Random programs
//===----------------------------------------------------------------------===//

/// A step of no particular shape: kernels read a few buffers already
/// written (some through views, some persistent), write new ones (some
/// with a workspace), and now and then update a persistent buffer or a
/// live temp in place, or write the loss again. Plus a short forward step.
KernelGraph makeRandomKernels(std::mt19937_64 &rng) {
  ProgramMaker m;
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int x = m.add("x", BufferKind::input, pick(1, 1 << 14));
  int loss = m.add("loss", BufferKind::output, 1);
  std::vector<int> params, states;
  for (int i = 0, e = pick(1, 4); i < e; ++i) {
    int64_t elements = pick(1, 1 << 16);
    params.push_back(
        m.add("p" + std::to_string(i), BufferKind::param, elements));
    states.push_back(m.add("p" + std::to_string(i) + ".state",
                           BufferKind::optimizer, elements));
  }
  // What kernels may read: the input, params, the loss, written temps.
  std::vector<int> readable = {x, loss};
  readable.insert(readable.end(), params.begin(), params.end());
  std::vector<int> temps;
  auto anyOf = [&](const std::vector<int> &ids) {
    return ids[pick(0, ids.size() - 1)];
  };
  int kernels = pick(2, 60);
  for (int k = 0; k < kernels; ++k) {
    std::string tag = std::to_string(k);
    int choice = pick(0, 9);
    if (choice == 0 && !temps.empty()) {
      int p = pick(0, params.size() - 1);
      Kernel &update = m.kernel(SgdUpdateKernelOp::getOperationName(),
                                {params[p], anyOf(temps), states[p]},
                                {params[p], states[p]});
      update.opName = tag;
      continue;
    }
    if (choice == 1 && !temps.empty()) {
      int t = anyOf(temps);
      Kernel &update = m.kernel(SgdUpdateKernelOp::getOperationName(),
                                {t, anyOf(readable)}, {t});
      update.opName = tag;
      continue;
    }
    if (choice == 2) {
      m.kernel(CrossEntropyKernelOp::getOperationName(), {anyOf(readable)},
               {loss})
          .opName = tag;
      continue;
    }
    std::vector<int> inputs;
    for (int i = 0, e = pick(1, 3); i < e; ++i) {
      int id = anyOf(readable);
      if (!isPersistent(m.program.buffers[id].kind) && pick(0, 3) == 0)
        id = m.view("v" + tag + "." + std::to_string(i), id);
      inputs.push_back(id);
    }
    // Elementwise kernels over a same-size input may be planned in place.
    bool elementwise = choice == 3;
    std::vector<int> outputs;
    for (int i = 0, e = elementwise ? 1 : pick(1, 2); i < e; ++i) {
      int64_t elements =
          elementwise
              ? m.program.buffers[rootOf(m.program, inputs[0])].getNumElements()
              : pick(1, 1 << 16);
      int id = m.add("t" + tag + "." + std::to_string(i), BufferKind::temp,
                     elements);
      outputs.push_back(id);
      temps.push_back(id);
    }
    Kernel &kernel = m.kernel(elementwise ? ReluKernelOp::getOperationName()
                                          : MatmulKernelOp::getOperationName(),
                              std::move(inputs), outputs);
    kernel.opName = tag;
    if (!elementwise && pick(0, 3) == 0)
      kernel.workspace =
          m.add("ws" + tag, BufferKind::workspace, pick(1, 1 << 14));
    readable.insert(readable.end(), outputs.begin(), outputs.end());
  }
  int output = m.add("output", BufferKind::output, 10);
  int f = m.add("f", BufferKind::activation, pick(1, 1 << 14), StepKind::forward);
  m.kernel(MatmulKernelOp::getOperationName(), {x, anyOf(params)}, {f},
           StepKind::forward);
  m.kernel(MatmulKernelOp::getOperationName(), {f, anyOf(params)}, {output},
           StepKind::forward);
  return m.finish();
}

/// Reorders and plans `lowered` and checks it on every count; returns
/// whether the plan reordered a step.
bool checkRandomProgram(const KernelGraph &lowered, int trial) {
  SCOPED_TRACE("trial " + std::to_string(trial));
  for (StepKind step : {StepKind::train_step, StepKind::forward}) {
    std::vector<int> order = computeMemoryAwareOrder(lowered, step);
    EXPECT_TRUE(isValidOrder(lowered, step, order));
    EXPECT_TRUE(runSymbolically(lowered, step, order) ==
                runSymbolically(lowered, step, identityOrder(lowered, step)))
        << "the reordered step computes other values";
    EXPECT_EQ(order, computeMemoryAwareOrder(lowered, step))
        << "not deterministic";
  }

  KernelGraph program = lowered;
  ArenaPlanOptions options;
  options.timeLimitSeconds = 0;
  ArenaPlan plan = planArena(program, options);
  ArenaVerdict verdict = verifyArena(program);
  EXPECT_TRUE(verdict.ok) << verdict.message;
  EXPECT_LE(plan.scheduleLowerBoundAfter, plan.scheduleLowerBoundBefore);
  if (plan.scheduleReordered)
    EXPECT_LT(plan.scheduleLowerBoundAfter, plan.scheduleLowerBoundBefore);
  else
    EXPECT_EQ(plan.scheduleLowerBoundAfter, plan.scheduleLowerBoundBefore);
  EXPECT_LE(plan.lowerBoundBytes, plan.scheduleLowerBoundAfter);
  EXPECT_GE(plan.arenaBytes, plan.lowerBoundBytes);
  for (const Buffer &buffer : program.buffers)
    EXPECT_EQ(buffer.kind, lowered.buffers[buffer.id].kind);

  // The schedule's lower bounds are planArena's own, without in-place, of
  // the lowered and of the reordered program (inPlace = false keeps a
  // graph's decisions: there are none).
  ArenaPlanOptions plain;
  plain.inPlace = false;
  plain.reorder = false;
  plain.timeLimitSeconds = 0;
  KernelGraph before = lowered, after = program;
  for (Buffer &buffer : after.buffers)
    buffer.inPlaceOf = kNoBuffer;
  EXPECT_EQ(planArena(before, plain).lowerBoundBytes,
            plan.scheduleLowerBoundBefore);
  EXPECT_EQ(planArena(after, plain).lowerBoundBytes,
            plan.scheduleLowerBoundAfter);
  return plan.scheduleReordered;
}

TEST(MemoryAwareSchedulePropertyTest, RandomTrainingStepsReorderSoundly) {
  std::mt19937_64 rng(20261123);
  int reordered[2] = {0, 0}, trials = 300;
  for (int trial = 0; trial < trials; ++trial) {
    bool updatesAtEnd = trial % 2 == 0;
    KernelGraph program = makeRandomStep(rng, updatesAtEnd);
    reordered[updatesAtEnd] += checkRandomProgram(program, trial);
    if (::testing::Test::HasFailure())
      return;
  }
  std::printf("reordered %d of %d random training steps with the updates at "
              "the end, %d of %d with each after its layer\n",
              reordered[1], trials / 2, reordered[0], trials / 2);
  EXPECT_GT(reordered[1], 0);
}

TEST(MemoryAwareSchedulePropertyTest, RandomProgramsReorderSoundly) {
  std::mt19937_64 rng(11);
  int reordered = 0, trials = 1000;
  for (int trial = 0; trial < trials; ++trial) {
    KernelGraph program = makeRandomKernels(rng);
    reordered += checkRandomProgram(program, trial);
    if (::testing::Test::HasFailure())
      return;
  }
  std::printf("reordered %d of %d random programs\n", reordered, trials);
  EXPECT_GT(reordered, 0);
}

} // namespace
