//===- ArenaVerifier.h - Independent check of a program's arena -*- C++ -*-===//
//
// Proves the offsets of a KernelGraph sound from its kernel lists alone, with
// code of its own: it recomputes every buffer's lifetime from the kernels
// that touch it (and its views), not from Buffer::definedBy/lastUse or the
// planner's intervals, and hands the result to the interval verifier
// (passes/PlanVerifier.h). It checks that
//   - every buffer with bytes lies inside the arena, 256-byte aligned;
//   - a view sits at its root's offset;
//   - no two buffers live at the same time share a byte, where kernel k's
//     inputs and outputs are live together, except an in-place output
//     (Buffer::inPlaceOf) of an elementwise kernel over a same-size input
//     that the kernel reads last.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_PASSES_ARENAVERIFIER_H
#define CAIRN_PASSES_ARENAVERIFIER_H

#include "passes/KernelGraph.h"

#include <optional>
#include <string>

namespace cairn {

struct ArenaVerdict {
  bool ok = true;
  /// The first violation, naming the buffers; empty when ok.
  std::string message;
  /// Buffers checked (views and empty buffers not counted).
  int buffers = 0;
};

/// Checks `program`'s offsets and arenaBytes.
ArenaVerdict verifyArena(const KernelGraph &program);

} // namespace cairn

#endif // CAIRN_PASSES_ARENAVERIFIER_H
