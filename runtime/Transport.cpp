//===- Transport.cpp - Bytes between the devices of one model -------------===//
#include "runtime/Transport.h"

#include "runtime/Program.h"
#include "runtime/SumChunks.h"
#include "runtime/kernels/KernelError.h"

#include "absl/strings/str_format.h"

#include <cstdio>
#include <cstdlib>

namespace cairn::runtime {

namespace {

absl::Status noPeer(const char *what, int peer) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s device %d: this process runs the model's only device", what, peer));
}

} // namespace

absl::Status LocalTransport::send(const void *, size_t, int peer, int) {
  return noPeer("send to", peer);
}

absl::Status LocalTransport::receive(void *, size_t, int peer, int) {
  return noPeer("receive from", peer);
}

void LocalTransport::abortAll(int exitCode) {
  std::fflush(nullptr);
  std::_Exit(exitCode);
}

void sendBytes(const StepContext &ctx, const unsigned char *data, size_t bytes, int peer,
               int tag) {
  if (!ctx.transport)
    throw kernels::KernelError(
        absl::StrFormat("send of %d bytes to device %d (tag %d): the step was run without a "
                        "transport",
                        bytes, peer, tag));
  if (absl::Status status = ctx.transport->send(data, bytes, peer, tag); !status.ok())
    throw kernels::KernelError(absl::StrFormat("send of %d bytes to device %d (tag %d): %s",
                                               bytes, peer, tag, status.message()));
}

void receiveBytes(const StepContext &ctx, unsigned char *data, size_t bytes, int peer, int tag) {
  if (!ctx.transport)
    throw kernels::KernelError(
        absl::StrFormat("receive of %d bytes from device %d (tag %d): the step was run without "
                        "a transport",
                        bytes, peer, tag));
  if (absl::Status status = ctx.transport->receive(data, bytes, peer, tag); !status.ok())
    throw kernels::KernelError(absl::StrFormat("receive of %d bytes from device %d (tag %d): %s",
                                               bytes, peer, tag, status.message()));
}

void allReduceStart(const StepContext &ctx, int64_t index, float *bucket, size_t bucketCount,
                    std::initializer_list<GradientSpan> grads) {
  size_t count = 0;
  for (const GradientSpan &grad : grads)
    count += grad.count;
  if (!ctx.transport)
    throw kernels::KernelError(absl::StrFormat(
        "sum of gradient bucket %d: the step was run without a transport", index));
  const auto workspace = static_cast<size_t>(
      getSumWorkspaceElements(static_cast<int64_t>(count), ctx.transport->size()));
  if (workspace > bucketCount)
    throw kernels::KernelError(absl::StrFormat(
        "sum of gradient bucket %d: its workspace of %d floats is not the %d that %d replicas "
        "need; the executable was built for another number of replicas",
        index, bucketCount, workspace, ctx.transport->size()));
  if (absl::Status status =
          ctx.transport->startSum(grads, bucket, bucketCount, static_cast<int>(index));
      !status.ok())
    throw kernels::KernelError(absl::StrFormat("sum of gradient bucket %d (%d floats): %s",
                                               index, count, status.message()));
}

void allReduceWait(const StepContext &ctx, int64_t index) {
  if (!ctx.transport)
    throw kernels::KernelError(absl::StrFormat(
        "sum of gradient bucket %d: the step was run without a transport", index));
  if (absl::Status status = ctx.transport->finishSum(static_cast<int>(index)); !status.ok())
    throw kernels::KernelError(
        absl::StrFormat("sum of gradient bucket %d: %s", index, status.message()));
}

namespace {

/// ctx.transport's sumInRankOrder as a kernel calls it; "`what` over the
/// `ranks`" names the numbers in an error. Both are string literals: a
/// kernel makes one of these every step, and only an error formats them.
kernels::RankSum rankSum(const StepContext &ctx, const char *what, const char *ranks) {
  return [&ctx, what, ranks](double *values, int64_t count) {
    if (!ctx.transport)
      throw kernels::KernelError(absl::StrFormat(
          "%s over the %s: the step was run without a transport", what, ranks));
    if (absl::Status status = ctx.transport->sumInRankOrder(values, static_cast<size_t>(count));
        !status.ok())
      throw kernels::KernelError(absl::StrFormat("%s over the %s (%d values): %s", what, ranks,
                                                 count, status.message()));
  };
}

} // namespace

kernels::RankSum replicaSum(const StepContext &ctx) {
  return rankSum(ctx, "batch norm's statistics", "replicas");
}

kernels::RankSum devicesSum(const StepContext &ctx, const char *what) {
  return rankSum(ctx, what, "devices");
}

} // namespace cairn::runtime
