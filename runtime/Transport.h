//===- Transport.h - Bytes between the devices of one model ------*- C++ -*-===//
//
// A model partitioned across N devices runs as N processes, one per device
// (rank r runs device r's ProgramSpec). They talk through one Transport each:
// the step functions send activations and gradients point to point
// (sendBytes, receiveBytes: blocking, matched by peer and tag, in the same
// order on both sides, so they cannot deadlock), and the runtime around the
// steps broadcasts and gathers (the loss, evaluations, checkpoints) on a
// channel of its own that step messages never match.
//
// MpiTransport.h is the one used across processes; LocalTransport is the
// single rank of a model on one device, where nothing is ever sent.
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_TRANSPORT_H
#define CAIRN_RUNTIME_TRANSPORT_H

#include "runtime/kernels/RankSum.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::runtime {

struct StepContext; // Program.h

/// A gradient of a bucket the replicas sum: `count` floats at `data`.
struct GradientSpan {
  float *data;
  size_t count;
};

class Transport {
public:
  virtual ~Transport() = default;

  /// This process's rank, which is the device whose spec it runs.
  virtual int rank() const = 0;
  /// The number of ranks.
  virtual int size() const = 0;
  /// This process's rank among the ranks on its host: the GPU it takes
  /// (runtime/cuda/DeviceCollectives.h).
  virtual int localRank() const { return rank(); }

  /// Step messages: `bytes` bytes to or from rank `peer`, matched by `tag`
  /// (>= 0). Both block until the bytes are sent or received.
  virtual absl::Status send(const void *data, size_t bytes, int peer, int tag) = 0;
  virtual absl::Status receive(void *data, size_t bytes, int peer, int tag) = 0;

  /// Collectives of the runtime; every rank calls them in the same order.
  /// `bytes` at `data` on rank `root` to every rank's `data`.
  virtual absl::Status broadcast(void *data, size_t bytes, int root) = 0;
  /// Every rank's `mine` to `root`, where result[r] is rank r's; empty
  /// elsewhere.
  virtual absl::StatusOr<std::vector<std::string>> gather(std::string_view mine, int root) = 0;

  /// Data parallelism (allReduceStart, allReduceWait): starts summing the
  /// gradients `grads` (read as one run of floats) over every rank, in
  /// place, as bucket `bucket`, with the `workspaceCount` floats at
  /// `workspace` (SumChunks.h's getSumWorkspaceElements); finishSum(bucket)
  /// blocks until the sums are in `grads`, which nothing may touch before.
  /// Every rank starts the same buckets in the same order; the sum is the
  /// same on every rank, each element's values added in rank order.
  virtual absl::Status startSum(std::vector<GradientSpan> grads, float *workspace,
                                size_t workspaceCount, int bucket) = 0;
  virtual absl::Status finishSum(int bucket) = 0;

  /// Synchronized batch norm (replicaSum) and the reductions of a
  /// partitioned step over its devices (devicesSum): sums `count` doubles
  /// over every rank, in place, blocking; each element's values added in rank order, so
  /// the sums are the same on every rank. Every rank sums the same counts in
  /// the same order; the gradient sums in flight go on meanwhile.
  virtual absl::Status sumInRankOrder(double *values, size_t count) = 0;

  /// Seconds this rank has spent so far blocked in send, receive and
  /// broadcast: on a pipeline, the time a device waits for another (its
  /// bubble) plus the copies themselves; with replicas, in finishSum and
  /// sumInRankOrder.
  virtual double waitSeconds() const { return 0; }

  /// Ends every rank's process with `exitCode` at once: for a failure
  /// after which the other ranks may wait forever on this one.
  [[noreturn]] virtual void abortAll(int exitCode) = 0;
};

/// The only rank of a one-device run: collectives return what they were
/// given, and there is no peer to send to.
class LocalTransport : public Transport {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  absl::Status send(const void *data, size_t bytes, int peer, int tag) override;
  absl::Status receive(void *data, size_t bytes, int peer, int tag) override;
  absl::Status broadcast(void *, size_t, int) override { return absl::OkStatus(); }
  /// The sum over one rank is its own.
  absl::Status startSum(std::vector<GradientSpan>, float *, size_t, int) override {
    return absl::OkStatus();
  }
  absl::Status finishSum(int) override { return absl::OkStatus(); }
  absl::Status sumInRankOrder(double *, size_t) override { return absl::OkStatus(); }
  absl::StatusOr<std::vector<std::string>> gather(std::string_view mine, int) override {
    return std::vector<std::string>{std::string(mine)};
  }
  [[noreturn]] void abortAll(int exitCode) override;
};

/// What a partitioned executable's main passes to runPartitionedMain
/// (Program.h): opens this process's transport, given main's argc and argv
/// (MPI may take its own arguments out of them). A process that was not
/// started by the transport's launcher gets a LocalTransport, whose single
/// rank runPartitionedMain refuses with a message saying how to launch it.
using OpenTransport = absl::StatusOr<std::unique_ptr<Transport>> (*)(int *argc, char ***argv);

/// What the generated step functions call for a value that crosses devices:
/// ctx.transport's send or receive. A failure throws kernels::KernelError,
/// so it ends the step as a kernel's error does.
void sendBytes(const StepContext &ctx, const unsigned char *data, size_t bytes, int peer,
               int tag);
void receiveBytes(const StepContext &ctx, unsigned char *data, size_t bytes, int peer, int tag);

/// What a replica's training step calls for bucket `index`
/// (cairn-all-reduce-gradients), whose buffer of `bucketCount` floats is
/// the sum's workspace: allReduceStart starts summing `grads` over the
/// replicas, in place (ctx.transport's startSum); allReduceWait waits for
/// the sums. A failure throws kernels::KernelError.
void allReduceStart(const StepContext &ctx, int64_t index, float *bucket, size_t bucketCount,
                    std::initializer_list<GradientSpan> grads);
void allReduceWait(const StepContext &ctx, int64_t index);

/// What a replica's batch norm kernels take with --sync-batchnorm: their
/// statistics summed over every replica by ctx.transport's sumInRankOrder.
/// A failure throws kernels::KernelError.
kernels::RankSum replicaSum(const StepContext &ctx);

/// What a device's found_inf and clip_coefficient kernels take in a model
/// split across devices (cairn-partition-devices): their partial results
/// summed over every device by ctx.transport's sumInRankOrder. `what` (a
/// string literal: it is kept, not copied) names them in an error, which
/// throws kernels::KernelError.
kernels::RankSum devicesSum(const StepContext &ctx, const char *what);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_TRANSPORT_H
