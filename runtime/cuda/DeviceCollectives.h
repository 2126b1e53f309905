//===- DeviceCollectives.h - NCCL between the GPUs of one step ---*- C++ -*-===//
//
// A CUDA program of several processes (`cairn build --target cuda` with
// --devices N or --replicas R, launched by mpirun, one process per GPU) names
// kCudaCollectiveBackend. Its executor takes the GPU of the process's rank
// among the ranks on its host, and opens one NCCL communicator over all the
// ranks, whose unique id rank 0 broadcasts through the run's MPI transport
// (Transport.h): NCCL bootstrapped over MPI. The runtime around the steps
// (the loss, evaluations, checkpoints) keeps speaking MPI between the hosts'
// CPUs; the steps' own traffic goes between the GPUs through NCCL:
//  - a value that crosses devices: ncclSend / ncclRecv on the step's stream,
//    in the order the schedule gives every device (cairn-schedule-kernels
//    keeps the transfers in the order of their tags, which is what NCCL's
//    in-order matching of one peer's operations needs);
//  - a replica's bucket of gradients: summed in place by ncclAllReduce on a
//    stream of its own, after an event that says the backward completed
//    them, and waited for by the step's stream just before the first kernel
//    that reads one of them (DDP's overlap);
//  - the loss scaler's overflow flag of a model split across devices: its
//    maximum over the devices, so that every device skips the same steps.
//
// Numerics: NCCL adds a bucket's values in an order of its own (ring or
// tree), and gives every rank the same bits, so the replicas stay identical;
// they agree with one process training the whole batch to rounding. (The CPU
// transport's rank-order sum gives one process's bits; NCCL's order need
// not.) NCCL sums in place in buffers of its own, which the run report
// counts with the libraries' device memory; the plan's bucket workspace is
// the CPU transport's.
//
// A step with collectives runs eagerly, not replayed as a CUDA graph: its
// NCCL calls then never meet a capture.
//
// Nothing here has run on more than one GPU yet: the device machines this
// project borrows have one, and NCCL refuses two ranks on one GPU. The
// GPU suite runs every call below on a communicator of one rank.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_CUDA_DEVICECOLLECTIVES_H
#define CAIRN_RUNTIME_CUDA_DEVICECOLLECTIVES_H

#include "runtime/Executor.h"
#include "runtime/kernels/RankSum.h"

#include "absl/status/status.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace cairn::cuda {

class Context;

/// The backend of programs of several processes: kCudaBackend's executor
/// with an NCCL communicator (it is kept apart so that one-GPU executables
/// do not need libnccl).
extern const runtime::Backend kCudaCollectiveBackend;

/// Opens cx.collectives: NCCL over the transport's ranks, on the current
/// CUDA device (the executor has set it), and the stream of the gradient
/// sums. Every rank calls it at the same point of the run.
absl::Status openCollectives(Context &cx, runtime::Transport &transport);
/// Ends cx.collectives' communicator and frees its stream and events.
void closeCollectives(Context &cx);

/// A step's transfers: `bytes` bytes at `data` (device memory) to or from
/// rank `peer`, on the step's stream. Failures throw kernels::KernelError.
void sendToPeer(Context &cx, const void *data, size_t bytes, int peer);
void receiveFromPeer(Context &cx, void *data, size_t bytes, int peer);

/// `count` floats of one gradient, in device memory.
struct DeviceGradient {
  float *data;
  size_t count;
};

/// A replica's bucket `bucket` (cairn-all-reduce-gradients): allReduceStart
/// starts summing `grads` over every rank, in place, once the step's stream
/// has computed them; allReduceWait makes the step's stream wait for the
/// sums. Every rank starts the same buckets in the same order.
void allReduceStart(Context &cx, int64_t bucket, std::initializer_list<DeviceGradient> grads);
void allReduceWait(Context &cx, int64_t bucket);

/// `count` values at `values` (device memory) replaced by their maximum
/// over every rank, on the step's stream: the overflow flag of a split
/// model's loss scaler.
template <typename T> void maxOverRanks(Context &cx, T *values, size_t count);

/// The kernels' sum over the processes (kernels::RankSum) on a GPU: `count`
/// doubles in device memory summed in place over every rank by one
/// ncclAllReduce on the step's stream. NCCL chooses the order of the
/// terms, the same for every element on every rank (each sum is reduced
/// once and copied), so the ranks keep equal bits. Synchronised batch
/// norm's statistics (the sums differ from one process's by rounding) and
/// a split model's gradient norm (one nonzero term per element: exact)
/// take it.
kernels::RankSum sumOverRanks(Context &cx);

} // namespace cairn::cuda

#endif // CAIRN_RUNTIME_CUDA_DEVICECOLLECTIVES_H
