//===- KernelGraph.cpp - Names and liveness of a kernel graph --------------===//

#include "passes/KernelGraph.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace cairn;

int64_t Buffer::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string cairn::getKernelKindName(llvm::StringRef opName) {
  // "cairn.kernel.conv2d_grad_input" -> "Conv2dGradInput".
  return llvm::convertToCamelFromSnakeCase(opName.rsplit('.').second,
                                           /*capitalizeFirst=*/true);
}

//===----------------------------------------------------------------------===//
// KernelAttrs
//===----------------------------------------------------------------------===//

void KernelAttrs::set(llvm::StringRef name, Value value) {
  for (auto &entry : entries) {
    if (entry.first == name) {
      entry.second = std::move(value);
      return;
    }
  }
  entries.emplace_back(name.str(), std::move(value));
}

std::vector<int> cairn::findTiedInputs(const Kernel &kernel) {
  std::vector<int> tied;
  for (int output : kernel.outputs) {
    auto it = std::find(kernel.inputs.begin(), kernel.inputs.end(), output);
    tied.push_back(output == kNoBuffer || it == kernel.inputs.end()
                       ? -1
                       : int(it - kernel.inputs.begin()));
  }
  return tied;
}

//===----------------------------------------------------------------------===//
// Liveness and offsets
//===----------------------------------------------------------------------===//

int KernelGraph::getAliasRoot(int id) const {
  while (buffers[id].isAlias())
    id = buffers[id].aliasOf;
  return id;
}

std::vector<std::string> KernelGraph::getStepInputs(StepKind step) const {
  std::vector<bool> read(buffers.size(), false);
  for (const Kernel &kernel : getStep(step).kernels)
    for (int id : kernel.inputs)
      if (id != kNoBuffer)
        read[getAliasRoot(id)] = true;
  std::vector<std::string> names;
  for (const Buffer &buffer : buffers)
    if (buffer.kind == BufferKind::input && read[buffer.id])
      names.push_back(buffer.name);
  return names;
}

void cairn::computeLiveness(KernelGraph &program) {
  for (Buffer &buffer : program.buffers) {
    buffer.definedBy = -1;
    buffer.lastUse = -1;
  }
  auto touch = [&](int id, int index, bool defines) {
    if (id == kNoBuffer)
      return;
    Buffer &buffer = program.buffers[id];
    if (isPersistent(buffer.kind))
      return;
    if (defines && buffer.definedBy < 0)
      buffer.definedBy = index;
    buffer.lastUse = std::max(buffer.lastUse, index);
  };
  for (StepKind step : kAllSteps) {
    const std::vector<Kernel> &kernels = program.getStep(step).kernels;
    for (int index = 0, e = kernels.size(); index < e; ++index) {
      const Kernel &kernel = kernels[index];
      for (int id : kernel.outputs)
        touch(id, index, /*defines=*/true);
      for (int id : kernel.inputs)
        touch(id, index, /*defines=*/false);
      touch(kernel.workspace, index, /*defines=*/true);
    }
  }
  // A view is defined where its root is; the root lives as long as its views.
  for (Buffer &buffer : program.buffers) {
    if (!buffer.isAlias())
      continue;
    Buffer &root = program.buffers[program.getAliasRoot(buffer.id)];
    if (buffer.definedBy < 0)
      buffer.definedBy = root.definedBy;
    if (!isPersistent(root.kind))
      root.lastUse = std::max(root.lastUse, buffer.lastUse);
  }
}

std::vector<Access> cairn::getKernelAccesses(const KernelGraph &program,
                                             const Kernel &kernel) {
  std::vector<Access> accesses;
  auto add = [&](int id, bool writes) {
    if (id == kNoBuffer)
      return;
    int root = program.getAliasRoot(id);
    for (Access &access : accesses) {
      if (access.root == root) {
        access.writes |= writes;
        return;
      }
    }
    accesses.push_back({root, writes});
  };
  for (int id : kernel.inputs)
    add(id, /*writes=*/false);
  for (int id : kernel.outputs)
    add(id, /*writes=*/true);
  // An in-place kernel overwrites the input an output is tied to, whatever
  // id that output has (even none: the kernel writes through the input).
  for (int tied : kernel.tiedInputs)
    if (tied >= 0 && size_t(tied) < kernel.inputs.size())
      add(kernel.inputs[tied], /*writes=*/true);
  // Private to its kernel; counted as a write all the same, so a workspace
  // a second kernel touched would order the two.
  add(kernel.workspace, /*writes=*/true);
  return accesses;
}

bool cairn::isTransferKernel(const Kernel &kernel) {
  return kernel.kind == "cairn.kernel.send" ||
         kernel.kind == "cairn.kernel.receive";
}

bool cairn::isDeviceCommunication(const Kernel &kernel) {
  return isTransferKernel(kernel) || kernel.acrossDevices;
}
