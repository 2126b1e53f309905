//===- Collective.h - What the ranks of one model agree on -------*- C++ -*-===//
//
// The runtime's exchanges between the ranks of a partitioned model, over the
// collectives of a Transport: agreeing on whether a phase that each rank runs
// alone (loading data, a checkpoint) went well, and gathering the ranks'
// tensors (a checkpoint holds every device's). With one rank they cost
// nothing.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_COLLECTIVE_H
#define CAIRN_RUNTIME_COLLECTIVE_H

#include "runtime/Safetensors.h"
#include "runtime/Transport.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cairn::runtime {

/// After a phase every rank ran without talking to the others: OK when
/// every rank's `local` is. Otherwise rank 0 prints each failure once on
/// stderr ("error: device 1: ..."; "error: devices 0, 1: ..." when they
/// failed alike; "error: ..." when all did) and every rank gets a peer
/// failure (isPeerFailure), which
/// ends it with exit code 1 and nothing more said. With one rank: `local`.
absl::Status agree(Transport &transport, absl::Status local);

/// Whether `status` is agree's failure, already reported.
bool isPeerFailure(const absl::Status &status);

/// Every rank's `mine` to rank `root`, merged there (tensor names are
/// unique across ranks); empty elsewhere.
absl::StatusOr<TensorMap> gatherTensors(Transport &transport, TensorMap mine, int root);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_COLLECTIVE_H
