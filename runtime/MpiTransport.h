//===- MpiTransport.h - The devices of one model as MPI ranks ----*- C++ -*-===//
//
// A partitioned executable runs under mpirun, one process per device: rank r
// of MPI_COMM_WORLD runs device r; a replicated one, one process per
// replica. Step messages, the runtime's collectives and the two exchanges
// of the replicas' gradient sums (SumChunks.h: each an MPI_Ialltoallw
// straight from and into the gradients) travel on four duplicates of the
// world communicator, so that none can match another's. Built into its own
// library (CairnMpi): executables of a model on one device link no MPI. This header includes no
// MPI header, so that generated code compiles without MPI's include path.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_MPITRANSPORT_H
#define CAIRN_RUNTIME_MPITRANSPORT_H

#include "runtime/Transport.h"

namespace cairn::runtime {

/// An OpenTransport (Transport.h): initialises MPI when an MPI launcher
/// (mpirun, mpiexec, srun) started the process, and returns a LocalTransport
/// without touching MPI otherwise. MPI is finalised when the transport is
/// destroyed; Transport::abortAll is MPI_Abort.
absl::StatusOr<std::unique_ptr<Transport>> openMpiTransport(int *argc, char ***argv);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_MPITRANSPORT_H
