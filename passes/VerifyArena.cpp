//===- VerifyArena.cpp - The plan checked by code of its own --------------===//

#include "passes/ArenaVerifier.h"
#include "passes/KernelGraphIR.h"
#include "passes/Passes.h"

namespace cairn {
#define GEN_PASS_DEF_VERIFYARENAPASS
#include "passes/Passes.h.inc"
} // namespace cairn

using namespace mlir;
using namespace cairn;

namespace {

struct VerifyArenaPass : cairn::impl::VerifyArenaPassBase<VerifyArenaPass> {
  void runOnOperation() override {
    SmallVector<ProgramOp> programs =
        getProgramsFor(getOperation(), getArgument());
    if (programs.empty())
      return signalPassFailure();
    for (ProgramOp program : programs)
      if (failed(verifyProgram(program)))
        return signalPassFailure();
    markAllAnalysesPreserved();
  }

  LogicalResult verifyProgram(ProgramOp program) {
    if (!program.getArenaBytes()) {
      program.emitError() << "cairn-verify-arena expected a planned "
                             "program (cairn-plan-arena gives it its arena)";
      return failure();
    }
    ArenaVerdict verdict = verifyArena(readProgram(program).graph);
    if (verdict.ok)
      return success();
    program.emitError() << "internal error: the memory plan of model '"
                        << program.getModel()
                        << "' failed verification: " << verdict.message
                        << "\nThis is a bug in Cairn; please report it with "
                           "the model file.";
    return failure();
  }
};

} // namespace
