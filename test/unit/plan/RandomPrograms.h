//===- RandomPrograms.h - Programs for the arena tests ----------*- C++ -*-===//
//
// Shared by the arena tests: a builder that appends buffers and kernels the
// way the lowering does (no MLIR), and a random training-step generator.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_TEST_UNIT_PLAN_RANDOMPROGRAMS_H
#define CAIRN_TEST_UNIT_PLAN_RANDOMPROGRAMS_H

#include "ir/CairnDialect.h"
#include "ir/CairnKernelOps.h"
#include "passes/KernelGraph.h"

#include "mlir/IR/MLIRContext.h"

#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace cairn::testing {

/// Whether the kernel op named `kind` carries the ElementwiseKernel trait
/// (the IR sets Kernel::elementwise from the op; hand-made graphs ask the
/// registered op here).
inline bool isElementwiseKind(llvm::StringRef kind) {
  static mlir::MLIRContext *context = [] {
    auto *c = new mlir::MLIRContext;
    c->loadDialect<CairnDialect>();
    return c;
  }();
  std::optional<mlir::RegisteredOperationName> op =
      mlir::RegisteredOperationName::lookup(kind, context);
  if (!op)
    throw std::invalid_argument("no kernel op named " + kind.str());
  return op->hasTrait<OpTrait::ElementwiseKernel>();
}

/// Appends buffers (of f32 elements) and kernels to a KernelGraph; finish()
/// computes liveness.
class ProgramMaker {
public:
  int add(std::string name, BufferKind kind, int64_t elements,
          std::optional<StepKind> step = StepKind::train_step) {
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
    int id =
        add(std::move(name), program.buffers[of].kind,
            program.buffers[of].getNumElements(), program.buffers[of].step);
    program.buffers[id].bytes = 0;
    program.buffers[id].aliasOf = of;
    return id;
  }
  Kernel &kernel(llvm::StringRef kind, std::vector<int> inputs,
                 std::vector<int> outputs,
                 StepKind step = StepKind::train_step) {
    Kernel k;
    k.kind = kind;
    k.inputs = std::move(inputs);
    k.outputs = std::move(outputs);
    // An output that names an input is written in place over it.
    k.tiedInputs = findTiedInputs(k);
    k.elementwise = isElementwiseKind(kind);
    std::vector<Kernel> &list = step == StepKind::train_step
                                    ? program.trainStep.kernels
                                    : program.forward.kernels;
    list.push_back(std::move(k));
    return list.back();
  }
  KernelGraph &finish() {
    computeLiveness(program);
    return program;
  }
  KernelGraph program;
};

/// A random MLP/CNN-like training step: a forward chain of layers (matmul
/// with a workspace, optional elementwise activation and residual add), a
/// loss, the backward chain in reverse reading saved activations, gradients
/// and in-place optimizer updates; plus a forward step. Each update follows
/// its layer's backward kernels, or with `updatesAtEnd` all of them come
/// after the backward part, in layer order, as the lowering emits them (the
/// same draws from `rng` either way).
inline KernelGraph makeRandomStep(std::mt19937_64 &rng, bool updatesAtEnd = false) {
  ProgramMaker m;
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  int layers = pick(2, 40);
  int64_t batch = 64 * pick(1, 8);
  int x = m.add("x", BufferKind::input, batch * pick(16, 1024));
  int label = m.add("label", BufferKind::input, batch);
  int loss = m.add("loss", BufferKind::output, 1);
  struct Layer {
    int param, momentum, in, pre, out;
    bool activation;
  };
  std::vector<Layer> saved;
  std::vector<int> grads(layers, kNoBuffer);
  auto addUpdate = [&](int l) {
    m.kernel(SgdUpdateKernelOp::getOperationName(),
             {saved[l].param, grads[l], saved[l].momentum},
             {saved[l].param, saved[l].momentum});
  };
  int current = x;
  for (int l = 0; l < layers; ++l) {
    int64_t width = batch * pick(8, 4096);
    Layer layer;
    layer.param =
        m.add("w" + std::to_string(l), BufferKind::param, pick(64, 1 << 18));
    layer.momentum =
        m.add("w" + std::to_string(l) + ".momentum", BufferKind::optimizer,
              m.program.buffers[layer.param].getNumElements());
    layer.in = current;
    layer.pre = m.add("pre" + std::to_string(l), BufferKind::saved, width);
    Kernel &k = m.kernel(MatmulKernelOp::getOperationName(),
                         {current, layer.param}, {layer.pre});
    if (pick(0, 2) == 0) {
      k.workspace = m.add("ws" + std::to_string(l), BufferKind::workspace,
                          pick(16, 1 << 16));
    }
    layer.activation = pick(0, 3) != 0;
    layer.out = layer.pre;
    if (layer.activation) {
      layer.out = m.add("act" + std::to_string(l), BufferKind::saved, width);
      m.kernel(ReluKernelOp::getOperationName(), {layer.pre}, {layer.out});
    }
    saved.push_back(layer);
    current = layer.out;
  }
  m.kernel(CrossEntropyKernelOp::getOperationName(), {current, label}, {loss});
  int64_t lastWidth = m.program.buffers[current].getNumElements();
  int dy = m.add("dlogits", BufferKind::temp, lastWidth);
  m.kernel(CrossEntropyGradKernelOp::getOperationName(), {loss, current, label},
           {dy});
  for (int l = layers - 1; l >= 0; --l) {
    const Layer &layer = saved[l];
    int64_t width = m.program.buffers[layer.pre].getNumElements();
    if (layer.activation) {
      int dpre = m.add("dpre" + std::to_string(l), BufferKind::temp, width);
      m.kernel(ReluGradKernelOp::getOperationName(), {dy, layer.out}, {dpre});
      dy = dpre;
    }
    int grad = m.add("grad.w" + std::to_string(l), BufferKind::grad,
                     m.program.buffers[layer.param].getNumElements());
    m.kernel(LinearGradWeightKernelOp::getOperationName(), {dy, layer.in},
             {grad});
    if (l > 0) {
      int dx = m.add("dx" + std::to_string(l), BufferKind::temp,
                     m.program.buffers[layer.in].getNumElements());
      m.kernel(LinearGradInputKernelOp::getOperationName(), {dy, layer.param},
               {dx});
      dy = dx;
    }
    grads[l] = grad;
    if (!updatesAtEnd)
      addUpdate(l);
  }
  if (updatesAtEnd)
    for (int l = 0; l < layers; ++l)
      addUpdate(l);
  // The forward step: the same layers, activations not saved.
  int output = m.add("output", BufferKind::output,
                     m.program.buffers[current].getNumElements());
  current = x;
  for (int l = 0; l < layers; ++l) {
    const Layer &layer = saved[l];
    int64_t width = m.program.buffers[layer.pre].getNumElements();
    int pre = l == layers - 1 && !layer.activation
                  ? output
                  : m.add("f.pre" + std::to_string(l), BufferKind::activation,
                          width, StepKind::forward);
    m.kernel(MatmulKernelOp::getOperationName(), {current, layer.param}, {pre},
             StepKind::forward);
    current = pre;
    if (layer.activation) {
      int act = l == layers - 1
                    ? output
                    : m.add("f.act" + std::to_string(l), BufferKind::activation,
                            width, StepKind::forward);
      m.kernel(ReluKernelOp::getOperationName(), {pre}, {act},
               StepKind::forward);
      current = act;
    }
  }
  return m.finish();
}

} // namespace cairn::testing

#endif // CAIRN_TEST_UNIT_PLAN_RANDOMPROGRAMS_H
