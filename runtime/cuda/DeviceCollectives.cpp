//===- DeviceCollectives.cpp - NCCL between the GPUs of one step ----------===//
//
// See DeviceCollectives.h.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/DeviceCollectives.h"

#include "runtime/Transport.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/Context.h"
#include "runtime/cuda/CudaBackend.h"

#include "absl/strings/str_format.h"

#include <nccl.h>

#include <cstring>
#include <vector>

namespace cairn::cuda {

/// cx.collectives: the communicator, and the gradient sums' stream and
/// events (one pair per bucket, made on the bucket's first start: the
/// steps with collectives run eagerly, never under a capture).
class Collectives {
public:
  ncclComm_t comm = nullptr;
  int rank = 0;
  int ranks = 1;
  cudaStream_t sumStream = nullptr;
  struct Bucket {
    cudaEvent_t complete = nullptr; // on the step's stream: the backward is done with it
    cudaEvent_t summed = nullptr;   // on sumStream: the sums are in place
    bool inFlight = false;
  };
  std::vector<Bucket> buckets;
};

namespace {

[[noreturn]] void throwNcclError(ncclResult_t result, ncclComm_t comm, const char *call,
                                 const char *file, int line) {
  const char *detail = comm ? ncclGetLastError(comm) : nullptr;
  throw kernels::KernelError(absl::StrFormat(
      "NCCL error %d (%s%s%s) in %s at %s:%d", static_cast<int>(result), ncclGetErrorString(result),
      detail && *detail ? ": " : "", detail ? detail : "", call, file, line));
}

#define CAIRN_NCCL_CHECK(comm, call)                                                         \
  do {                                                                                       \
    ncclResult_t cairnResult = (call);                                                       \
    if (cairnResult != ncclSuccess)                                                          \
      throwNcclError(cairnResult, comm, #call, __FILE__, __LINE__);                          \
  } while (false)

Collectives &collectivesOf(Context &cx, const char *what) {
  if (!cx.collectives)
    throw kernels::KernelError(absl::StrFormat(
        "%s needs the NCCL communicator of a run of several processes, and this run has none",
        what));
  return *cx.collectives;
}

void checkPeer(const Collectives &c, int peer) {
  if (peer < 0 || peer >= c.ranks || peer == c.rank)
    throw kernels::KernelError(
        absl::StrFormat("rank %d cannot exchange a value with rank %d of %d", c.rank, peer,
                        c.ranks));
}

template <typename T> constexpr ncclDataType_t ncclTypeOf();
template <> constexpr ncclDataType_t ncclTypeOf<float>() { return ncclFloat32; }
template <> constexpr ncclDataType_t ncclTypeOf<double>() { return ncclFloat64; }

absl::StatusOr<std::unique_ptr<runtime::Executor>>
openWithCollectives(const runtime::ProgramSpec &spec, const runtime::ExecutorOptions &options) {
  static const CollectiveHooks kHooks = {openCollectives, closeCollectives};
  return openCudaExecutor(spec, options, &kHooks);
}

std::string describeCollectiveBuild() {
  int version = 0;
  ncclGetVersion(&version);
  return absl::StrFormat("%s, NCCL %d.%d.%d", describeCudaBuild(), version / 10000,
                         version / 100 % 100, version % 100);
}

} // namespace

const runtime::Backend kCudaCollectiveBackend = {"cuda", nullptr, describeCollectiveBuild,
                                                 openWithCollectives};

absl::Status openCollectives(Context &cx, runtime::Transport &transport) {
  auto collectives = std::make_unique<Collectives>();
  collectives->rank = transport.rank();
  collectives->ranks = transport.size();
  // Rank 0 makes the id; MPI carries it to the others.
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  if (collectives->rank == 0)
    if (ncclResult_t result = ncclGetUniqueId(&id); result != ncclSuccess)
      return absl::InternalError(
          absl::StrFormat("ncclGetUniqueId failed: %s", ncclGetErrorString(result)));
  if (absl::Status sent = transport.broadcast(&id, sizeof id, 0); !sent.ok())
    return sent;
  if (ncclResult_t result =
          ncclCommInitRank(&collectives->comm, collectives->ranks, id, collectives->rank);
      result != ncclSuccess)
    return absl::InternalError(absl::StrFormat(
        "cannot open the NCCL communicator of %d ranks as rank %d: %s (ncclCommInitRank; "
        "NCCL_DEBUG=WARN says more)",
        collectives->ranks, collectives->rank, ncclGetErrorString(result)));
  if (cudaStreamCreateWithFlags(&collectives->sumStream, cudaStreamNonBlocking) != cudaSuccess) {
    ncclCommDestroy(collectives->comm);
    return absl::InternalError(absl::StrFormat("cannot create the gradient sums' stream: %s",
                                               cudaGetErrorString(cudaGetLastError())));
  }
  cx.collectives = collectives.release();
  return absl::OkStatus();
}

void closeCollectives(Context &cx) {
  std::unique_ptr<Collectives> collectives(cx.collectives);
  cx.collectives = nullptr;
  if (!collectives)
    return;
  // Errors are ignored: the process is ending, and a failure has been
  // reported already.
  if (collectives->sumStream)
    cudaStreamSynchronize(collectives->sumStream);
  for (Collectives::Bucket &bucket : collectives->buckets) {
    if (bucket.complete)
      cudaEventDestroy(bucket.complete);
    if (bucket.summed)
      cudaEventDestroy(bucket.summed);
  }
  if (collectives->sumStream)
    cudaStreamDestroy(collectives->sumStream);
  if (collectives->comm)
    ncclCommDestroy(collectives->comm);
}

void sendToPeer(Context &cx, const void *data, size_t bytes, int peer) {
  Collectives &c = collectivesOf(cx, "a value sent to another device");
  checkPeer(c, peer);
  CAIRN_NCCL_CHECK(c.comm, ncclSend(data, bytes, ncclUint8, peer, c.comm, cx.stream));
}

void receiveFromPeer(Context &cx, void *data, size_t bytes, int peer) {
  Collectives &c = collectivesOf(cx, "a value received from another device");
  checkPeer(c, peer);
  CAIRN_NCCL_CHECK(c.comm, ncclRecv(data, bytes, ncclUint8, peer, c.comm, cx.stream));
}

void allReduceStart(Context &cx, int64_t bucket, std::initializer_list<DeviceGradient> grads) {
  Collectives &c = collectivesOf(cx, "the replicas' gradient sum");
  if (bucket < 0)
    throw kernels::KernelError(absl::StrFormat("gradient bucket %d", bucket));
  if (static_cast<size_t>(bucket) >= c.buckets.size())
    c.buckets.resize(bucket + 1);
  Collectives::Bucket &b = c.buckets[bucket];
  if (b.inFlight)
    throw kernels::KernelError(absl::StrFormat("gradient bucket %d was started twice", bucket));
  if (!b.complete) {
    CAIRN_CUDA_CHECK(cudaEventCreateWithFlags(&b.complete, cudaEventDisableTiming));
    CAIRN_CUDA_CHECK(cudaEventCreateWithFlags(&b.summed, cudaEventDisableTiming));
  }
  // The sums start once the step's stream has computed the gradients, and
  // run beside the rest of the backward.
  CAIRN_CUDA_CHECK(cudaEventRecord(b.complete, cx.stream));
  CAIRN_CUDA_CHECK(cudaStreamWaitEvent(c.sumStream, b.complete, 0));
  CAIRN_NCCL_CHECK(c.comm, ncclGroupStart());
  for (const DeviceGradient &grad : grads)
    if (grad.count > 0)
      if (ncclResult_t result = ncclAllReduce(grad.data, grad.data, grad.count, ncclFloat32,
                                              ncclSum, c.comm, c.sumStream);
          result != ncclSuccess) {
        ncclGroupEnd();
        throwNcclError(result, c.comm, "ncclAllReduce", __FILE__, __LINE__);
      }
  CAIRN_NCCL_CHECK(c.comm, ncclGroupEnd());
  CAIRN_CUDA_CHECK(cudaEventRecord(b.summed, c.sumStream));
  b.inFlight = true;
}

void allReduceWait(Context &cx, int64_t bucket) {
  Collectives &c = collectivesOf(cx, "the replicas' gradient sum");
  if (bucket < 0 || static_cast<size_t>(bucket) >= c.buckets.size() ||
      !c.buckets[bucket].inFlight)
    throw kernels::KernelError(
        absl::StrFormat("gradient bucket %d is waited for but was not started", bucket));
  Collectives::Bucket &b = c.buckets[bucket];
  CAIRN_CUDA_CHECK(cudaStreamWaitEvent(cx.stream, b.summed, 0));
  b.inFlight = false;
}

template <typename T> void maxOverRanks(Context &cx, T *values, size_t count) {
  Collectives &c = collectivesOf(cx, "the overflow check over the devices");
  if (count == 0)
    return;
  CAIRN_NCCL_CHECK(c.comm,
                   ncclAllReduce(values, values, count, ncclTypeOf<T>(), ncclMax, c.comm, cx.stream));
}

template void maxOverRanks<float>(Context &, float *, size_t);
template void maxOverRanks<double>(Context &, double *, size_t);

kernels::RankSum sumOverRanks(Context &cx) {
  return [&cx](double *values, int64_t count) {
    Collectives &c = collectivesOf(cx, "a sum over the processes");
    if (count < 0)
      throw kernels::KernelError(absl::StrFormat("a sum over the processes of %d values", count));
    if (count == 0)
      return;
    CAIRN_NCCL_CHECK(c.comm, ncclAllReduce(values, values, static_cast<size_t>(count), ncclFloat64,
                                           ncclSum, c.comm, cx.stream));
  };
}

} // namespace cairn::cuda
