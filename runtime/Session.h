//===- Session.h - What every command of an executable works on -*- C++ -*-===//
//
// A Session is one rank's run of a command: the checked spec of its device
// and its executor, whose host arena the runtime reads and writes, the whole
// model's devices and the transport to them, and the loss scaler. The
// helpers here are what the commands (Commands.h) share: the step context,
// the data, replicas' buffers, the report.
//
// A partitioned model runs the same commands on every rank, each with its
// device's spec and executor; the rank holding a result hands it to the
// others or to rank 0, which alone prints and writes files. Data-parallel
// replicas run one spec on every rank, each on its share of every batch;
// rank 0's buffers go to every rank before each step and evaluation, as
// PyTorch DDP's broadcast_buffers does.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_SESSION_H
#define CAIRN_RUNTIME_SESSION_H

#include "runtime/Checkpoint.h"
#include "runtime/Cli.h"
#include "runtime/Dataset.h"
#include "runtime/Executor.h"
#include "runtime/LossScaler.h"
#include "runtime/Metrics.h"
#include "runtime/Model.h"
#include "runtime/Partition.h"
#include "runtime/Program.h"
#include "runtime/Scalar.h"
#include "runtime/Transport.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cairn::runtime {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start);

/// What every command works on: the checked spec of this rank's device and
/// its executor, whose host arena the runtime reads and writes; the whole
/// model's devices and the transport to them.
struct Session {
  const ProgramSpec &spec;
  const Options &options;
  const PartitionLayout &partition;
  Transport &transport;
  const ModelLayout &layout;
  std::unique_ptr<Executor> executor;

  unsigned char *arena() { return executor->hostArena(); }
  unsigned char *at(const TensorInfo &tensor) { return arena() + tensor.offset; }

  int rank() const { return transport.rank(); }
  bool partitioned() const { return partition.size() > 1; }
  /// Data-parallel replicas: every rank runs this spec.
  bool replicated() const { return spec.replicas > 1; }
  int replicas() const { return spec.replicas; }
  /// The examples of one step, over every replica.
  int64_t globalBatch() const { return spec.batch * spec.replicas; }
  /// Whether this rank prints and writes the run's files.
  bool reports() const { return transport.rank() == 0; }

  /// Optimizer steps the --load checkpoint had taken (0 without one).
  int64_t resumedSteps = 0;
  /// The loss scaler of a training step that scales its loss
  /// (layout.foundInf), else none.
  std::optional<LossScaler> scaler;

  /// Fills the persistent state from --seed or --load and hands it to the
  /// executor.
  absl::Status initializeOrLoad();

  /// Steps taken so far, skipped ones included: where the lr schedule is (a
  /// scheduler steps on every iteration in PyTorch, skipped or not).
  int64_t scheduledSteps(const StepContext &context) const {
    return context.step + (scaler ? scaler->state().skippedSteps : 0);
  }

  /// Whether the training step that just ran skipped its updates.
  bool stepSkipped() {
    return layout.foundInf && loadScalar(DType::F32, at(*layout.foundInf)) != 0;
  }

  /// The checkpoint's record of the run so far.
  TrainingProgress progress(const StepContext &context) const {
    TrainingProgress progress;
    progress.optimizerSteps = context.step;
    if (scaler)
      progress.lossScale = scaler->state();
    return progress;
  }

  /// The training step's loss, from the rank that has it, on every rank; of
  /// replicas, their mean on rank 0, summed in rank order in float32 as one
  /// process summing R micro-batches' does.
  absl::StatusOr<double> sharedLoss();

  /// Writes every device's state (checkpointTensors) in the host arenas to
  /// `path`, from rank 0.
  absl::Status saveState(const std::string &path, bool optimizerState,
                         const TrainingProgress &progress = {});
};

/// Opens this rank's session: its device's spec (every replica's is the
/// one spec), its executor, the loss scaler of a step that scales its loss.
absl::StatusOr<Session> openSession(const PartitionLayout &partition, Transport &transport,
                                    const Options &options);

/// Replicas: rank 0's buffers (batch norm's running statistics, which each
/// replica updates from its own examples) to every rank, before a training
/// step and an evaluation, as DDP's broadcast_buffers does. The host arena
/// is the arena on the CPU, where replicas run.
absl::Status shareBuffers(Session &session);

/// Sets the context's lr factor and loss scale for its next step.
void prepareStep(const Session &session, StepContext &context);

/// The context of the run's first step: --seed, --poison, and the
/// optimizer steps the run resumes from.
StepContext firstStepContext(const Session &session);

/// Where fillBatch writes each of `inputs` (the model's): null for those
/// on another device.
std::vector<unsigned char *> inputDestinations(Session &session,
                                               const std::vector<const TensorInfo *> &inputs);

/// The split of --data the model's inputs read, or nullopt where --data has
/// none; noSplitError says what was expected.
absl::StatusOr<std::optional<Examples>> loadData(const Session &session, Split split);
absl::Status noSplitError(const Session &session, Split split);

/// A command's report, started with what the spec says.
RunReport startReport(const Session &session, const char *command);
/// Fills the executor's part of the report; on a partitioned model, rank 0's
/// with the largest arena and resident set of all devices. Rank 0 prints it
/// and writes --metrics.
absl::Status finishReport(const Session &session, RunReport &report);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_SESSION_H
