//===- ArenaVerifier.cpp - Independent check of a program's arena ---------===//
//
// Time runs in half-kernels: kernel k of the schedule reads and writes
// during [2k, 2k+1). A buffer written first by kernel d and touched last by
// kernel l is live over [2d, 2l+1), so the inputs and outputs of one kernel
// overlap, and a workspace is live over [2k, 2k+1). A legal in-place output
// starts at 2d+1 instead: its bytes become its own only once the kernel that
// wrote it element by element over its input is done.
//
//===----------------------------------------------------------------------===//

#include "passes/ArenaVerifier.h"

#include "ir/CairnKernelOps.h"
#include "passes/PlanVerifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cctype>

using namespace cairn;

namespace {

/// The kernels whose every same-size operand is read at element i just
/// before element i of the output is written (this file's own list).
bool isElementwise(const std::string &kind) {
  static const llvm::StringRef kinds[] = {
      AddKernelOp::getOperationName(),
      SubKernelOp::getOperationName(),
      MulKernelOp::getOperationName(),
      DivKernelOp::getOperationName(),
      ReluKernelOp::getOperationName(),
      SigmoidKernelOp::getOperationName(),
      TanhKernelOp::getOperationName(),
      GeluKernelOp::getOperationName(),
      SiluKernelOp::getOperationName(),
      HardswishKernelOp::getOperationName(),
      ClampKernelOp::getOperationName(),
      LeakyReluKernelOp::getOperationName(),
      ReluGradKernelOp::getOperationName(),
      SigmoidGradKernelOp::getOperationName(),
      TanhGradKernelOp::getOperationName(),
      GeluGradKernelOp::getOperationName(),
      SiluGradKernelOp::getOperationName(),
      HardswishGradKernelOp::getOperationName(),
      ClampGradKernelOp::getOperationName(),
      LeakyReluGradKernelOp::getOperationName(),
      DropoutKernelOp::getOperationName(),
      ElementwiseChainKernelOp::getOperationName(),
  };
  return llvm::is_contained(kinds, kind);
}

} // namespace

ArenaVerdict cairn::verifyArena(const KernelGraph &program) {
  ArenaVerdict verdict;
  auto fail = [&](std::string message) {
    verdict.ok = false;
    verdict.message = std::move(message);
    return verdict;
  };
  const std::vector<Buffer> &buffers = program.buffers;
  size_t n = buffers.size();
  auto root = [&](int id) {
    // A cycle of views would be a lowering bug; bound the walk.
    for (size_t hops = 0; buffers[id].aliasOf != kNoBuffer && hops <= n; ++hops)
      id = buffers[id].aliasOf;
    return id;
  };

  // First write and last touch of each root, in half-kernels.
  std::vector<int64_t> first(n, -1), last(n, -1);
  std::vector<std::optional<StepKind>> stepOf(n);
  int64_t clock = 0;
  std::vector<std::pair<StepKind, int64_t>> stepBase;
  for (StepKind step : kAllSteps) {
    const std::vector<Kernel> &kernels = program.getStep(step).kernels;
    stepBase.push_back({step, clock});
    for (size_t k = 0; k < kernels.size(); ++k, clock += 2) {
      const Kernel &kernel = kernels[k];
      auto touch = [&](int id, bool writes) -> bool {
        if (id == kNoBuffer)
          return true;
        if (id < 0 || size_t(id) >= n)
          return false;
        int r = root(id);
        if (stepOf[r] && *stepOf[r] != step && !isPersistent(buffers[r].kind))
          return false;
        stepOf[r] = step;
        if (first[r] < 0 && writes)
          first[r] = clock;
        if (first[r] < 0) // read before any write: live from the step's start
          first[r] = stepBase.back().second;
        last[r] = std::max(last[r], clock + 1);
        return true;
      };
      bool ok = true;
      for (int id : kernel.outputs)
        ok &= touch(id, true);
      for (int id : kernel.inputs)
        ok &= touch(id, false);
      ok &= touch(kernel.workspace, true);
      if (!ok)
        return fail("kernel " + std::to_string(k) + " of " +
                    stringifyStepKind(step).str() +
                    " names a buffer that does not exist or belongs to "
                    "another step");
    }
  }
  int64_t endOfTime = std::max<int64_t>(clock, 1);

  // In-place outputs: check the claim, then start them half a kernel late.
  for (const Buffer &buffer : buffers) {
    if (buffer.inPlaceOf == kNoBuffer || first[buffer.id] < 0)
      continue;
    int over = buffer.inPlaceOf;
    if (over < 0 || size_t(over) >= n)
      return fail("buffer '" + buffer.name + "' is in place of a buffer that "
                  "does not exist");
    const Buffer &input = buffers[over];
    std::string pair = "'" + buffer.name + "' in place of '" + input.name + "'";
    if (buffer.offset != input.offset)
      return fail(pair + ": the two are at different offsets");
    if (buffer.isAlias() || input.isAlias() || isPersistent(buffer.kind) ||
        isPersistent(input.kind) || buffer.dtype != input.dtype ||
        buffer.getNumElements() != input.getNumElements() || buffer.bytes > input.bytes)
      return fail(pair + ": only a per-step buffer of the same type and size "
                  "can take over another's bytes");
    // The kernel that writes the buffer first must read the input last.
    int64_t at = first[buffer.id];
    if (last[over] != at + 1)
      return fail(pair + ": the input is still live after the kernel that "
                  "writes over it");
    const Kernel *writer = nullptr;
    for (auto [step, base] : stepBase) {
      const std::vector<Kernel> &kernels = program.getStep(step).kernels;
      if (at >= base && at < base + 2 * int64_t(kernels.size()))
        writer = &kernels[(at - base) / 2];
    }
    if (!writer || !isElementwise(writer->kind) ||
        writer->outputs.size() != 1 || writer->outputs[0] != buffer.id ||
        std::find(writer->inputs.begin(), writer->inputs.end(), over) ==
            writer->inputs.end())
      return fail(pair + ": the kernel writing it is not an elementwise one "
                  "reading that input");
  }

  std::vector<PlacedBuffer> placed;
  for (const Buffer &buffer : buffers) {
    if (buffer.isAlias()) {
      int r = root(buffer.id);
      if (buffers[r].isAlias())
        return fail("view '" + buffer.name + "' has a cycle of views");
      if ((first[r] >= 0 || isPersistent(buffers[r].kind)) &&
          buffer.offset != buffers[r].offset)
        return fail("view '" + buffer.name + "' is not at the offset of '" +
                    buffers[r].name + "'");
      continue;
    }
    if (buffer.bytes == 0)
      continue;
    bool persistent = isPersistent(buffer.kind);
    if (!persistent && first[buffer.id] < 0)
      continue; // never touched: its bytes are never used
    if (buffer.offset < 0 || buffer.offset % kArenaAlignment != 0)
      return fail("buffer '" + buffer.name + "' at offset " +
                  std::to_string(buffer.offset) + " is not " +
                  std::to_string(kArenaAlignment) + "-byte aligned");
    // A workspace's spare bytes are its kernel's too.
    const int64_t bytes = buffer.getUsableBytes();
    if (buffer.offset > program.arenaBytes ||
        bytes > program.arenaBytes - buffer.offset)
      return fail("buffer '" + buffer.name + "' (" + std::to_string(bytes) +
                  " bytes at offset " + std::to_string(buffer.offset) +
                  ") ends past the " + std::to_string(program.arenaBytes) +
                  "-byte arena");
    PlacedBuffer p;
    p.id = buffer.id;
    p.lower = persistent ? 0 : first[buffer.id];
    p.upper = persistent ? endOfTime : last[buffer.id];
    if (!persistent && buffer.inPlaceOf != kNoBuffer)
      ++p.lower;
    p.size = bytes;
    p.offset = buffer.offset;
    p.alignment = kArenaAlignment;
    if (p.lower < p.upper)
      placed.push_back(p);
    ++verdict.buffers;
  }
  cairn::PlanVerdict intervals = cairn::verifyPlan(placed, program.arenaBytes);
  if (!intervals.ok) {
    // Name the buffers: the interval verifier speaks of ids ("buffer 11").
    const std::string &raw = intervals.message;
    std::string message;
    static constexpr llvm::StringLiteral kPrefix = "buffer ";
    for (size_t at = 0; at < raw.size();) {
      size_t digits = at + kPrefix.size();
      size_t end = digits;
      while (end < raw.size() &&
             std::isdigit(static_cast<unsigned char>(raw[end])))
        ++end;
      if (raw.compare(at, kPrefix.size(), kPrefix.data()) == 0 &&
          end > digits && end - digits < 10) {
        size_t id = std::stoul(raw.substr(digits, end - digits));
        if (id < buffers.size()) {
          message += "buffer '" + buffers[id].name + "'";
          at = end;
          continue;
        }
      }
      message += raw[at++];
    }
    return fail(message);
  }
  return verdict;
}
