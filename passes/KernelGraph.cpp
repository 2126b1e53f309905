//===- KernelGraph.cpp - Names and liveness of a kernel graph --------------===//

#include "passes/KernelGraph.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace cairn;

int64_t cairn::getDTypeBytes(DType dtype) { return runtime::dtypeSize(dtype); }

llvm::StringRef cairn::getDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::U8:
    return "u8";
  }
  llvm_unreachable("unknown dtype");
}

bool cairn::isFloat(DType dtype) { return runtime::isFloatDType(dtype); }


int64_t Buffer::getNumElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string cairn::getKernelKindName(llvm::StringRef opName) {
  // "cairn.kernel.conv2d_grad_input" -> "Conv2dGradInput".
  llvm::StringRef snake = opName.rsplit('.').second;
  std::string name;
  bool upper = true;
  for (char c : snake) {
    if (c == '_') {
      upper = true;
      continue;
    }
    name += upper ? llvm::toUpper(c) : c;
    upper = false;
  }
  return name;
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

const KernelAttrs::Value *KernelAttrs::find(llvm::StringRef name) const {
  for (const auto &entry : entries)
    if (entry.first == name)
      return &entry.second;
  return nullptr;
}

template <typename T> const T &KernelAttrs::get(llvm::StringRef name) const {
  const Value *value = find(name);
  if (!value || !std::holds_alternative<T>(*value))
    llvm::report_fatal_error(("internal error: kernel attribute '" +
                              name.str() + "' is missing or has the wrong type")
                                 .c_str());
  return std::get<T>(*value);
}

bool KernelAttrs::getBool(llvm::StringRef name) const {
  return get<bool>(name);
}
int64_t KernelAttrs::getInt(llvm::StringRef name) const {
  return get<int64_t>(name);
}
double KernelAttrs::getDouble(llvm::StringRef name) const {
  return get<double>(name);
}
const std::string &KernelAttrs::getString(llvm::StringRef name) const {
  return get<std::string>(name);
}
const std::vector<int64_t> &KernelAttrs::getInts(llvm::StringRef name) const {
  return get<std::vector<int64_t>>(name);
}
const std::vector<double> &KernelAttrs::getDoubles(llvm::StringRef name) const {
  return get<std::vector<double>>(name);
}
const std::vector<bool> &KernelAttrs::getBools(llvm::StringRef name) const {
  return get<std::vector<bool>>(name);
}
const std::vector<std::string> &
KernelAttrs::getStrings(llvm::StringRef name) const {
  return get<std::vector<std::string>>(name);
}

//===----------------------------------------------------------------------===//
// Liveness and offsets
//===----------------------------------------------------------------------===//

int KernelGraph::getAliasRoot(int id) const {
  while (buffers[id].isAlias())
    id = buffers[id].aliasOf;
  return id;
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
  for (const StepKernels *step : {&program.trainStep, &program.forward}) {
    for (int index = 0, e = step->kernels.size(); index < e; ++index) {
      const Kernel &kernel = step->kernels[index];
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

