//===- MpiTransport.cpp - The devices of one model as MPI ranks -----------===//
#include "runtime/MpiTransport.h"

#include "runtime/SumChunks.h"

#include "absl/strings/str_format.h"

// MPI's C API only: without these, mpi.h compiled as C++ pulls in the C++
// bindings, which need a library (libmpi_cxx) nothing else would link.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace cairn::runtime {

namespace {

/// MPI counts are ints: longer messages go in pieces of this many bytes.
constexpr size_t kChunkBytes = size_t(1) << 30;

/// The tag of gather's point-to-point messages on the control communicator.
constexpr int kGatherTag = 1;

std::string mpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return absl::StrFormat("MPI error %d", code);
  return std::string(text, static_cast<size_t>(length));
}

absl::Status mpiError(const std::string &what, int code) {
  return absl::UnavailableError(absl::StrFormat("%s: %s", what, mpiErrorText(code)));
}

/// Whether an MPI launcher started this process: Open MPI's mpirun, MPICH's
/// Hydra (mpiexec) and PMIx or PMI launchers (srun) set these.
bool launchedByMpi() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"})
    if (std::getenv(name))
      return true;
  return false;
}

/// Adds the time from its construction to its end to `total`.
class Waiting {
public:
  explicit Waiting(double &total) : total(total), start(std::chrono::steady_clock::now()) {}
  ~Waiting() {
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  Waiting(const Waiting &) = delete;
  Waiting &operator=(const Waiting &) = delete;

private:
  double &total;
  std::chrono::steady_clock::time_point start;
};

class MpiTransport : public Transport {
public:
  MpiTransport(MPI_Comm steps, MPI_Comm control, MPI_Comm exchanges, MPI_Comm gathers,
               MPI_Comm statistics, int rank, int size, int localRank, int tagUpperBound)
      : steps(steps), control(control), exchanges(exchanges), gathers(gathers),
        statistics(statistics), myRank(rank), mySize(size), myLocalRank(localRank),
        tagUpperBound(tagUpperBound) {}

  ~MpiTransport() override {
    for (BucketSum &sum : sums)
      if (sum.request != MPI_REQUEST_NULL)
        MPI_Wait(&sum.request, MPI_STATUS_IGNORE);
    for (MPI_Comm *comm : {&steps, &control, &exchanges, &gathers, &statistics})
      MPI_Comm_free(comm);
    MPI_Finalize();
  }

  int rank() const override { return myRank; }
  int size() const override { return mySize; }
  int localRank() const override { return myLocalRank; }

  absl::Status send(const void *data, size_t bytes, int peer, int tag) override {
    if (absl::Status status = checkPeer(peer, tag); !status.ok())
      return status;
    Waiting waiting(waited);
    return sendOn(steps, data, bytes, peer, tag);
  }

  absl::Status receive(void *data, size_t bytes, int peer, int tag) override {
    if (absl::Status status = checkPeer(peer, tag); !status.ok())
      return status;
    Waiting waiting(waited);
    return receiveOn(steps, data, bytes, peer, tag);
  }

  absl::Status startSum(std::vector<GradientSpan> grads, float *workspace,
                        size_t workspaceCount, int bucket) override {
    size_t count = 0;
    for (const GradientSpan &grad : grads)
      count += grad.count;
    if (count > static_cast<size_t>(INT32_MAX))
      return absl::InvalidArgumentError(absl::StrFormat(
          "%d floats are more than MPI's counts take; build with a smaller --bucket", count));
    if (workspaceCount < static_cast<size_t>(getSumWorkspaceElements(
                             static_cast<int64_t>(count), mySize)))
      return absl::InvalidArgumentError(
          absl::StrFormat("bucket %d has too small a workspace", bucket));
    if (std::any_of(sums.begin(), sums.end(),
                    [&](const BucketSum &sum) { return sum.bucket == bucket; }))
      return absl::FailedPreconditionError(
          absl::StrFormat("bucket %d was started twice", bucket));
    // Open MPI moves a non-blocking collective on only inside MPI calls: each
    // start moves the earlier buckets on.
    if (absl::Status status = advanceSums(/*upTo=*/-1, /*block=*/false); !status.ok())
      return status;
    BucketSum &sum = sums.emplace_back();
    sum.bucket = bucket;
    sum.grads = std::move(grads);
    sum.workspace = workspace;
    sum.count = static_cast<int64_t>(count);
    // Every other rank's chunk to it, straight from the gradients; its copy
    // of this rank's chunk into a slot of the workspace (rank order, this
    // rank left out).
    const int64_t mine = getSumChunkSize(sum.count, mySize, myRank);
    sum.exchange = std::make_unique<Exchange>(mySize);
    Exchange &exchange = *sum.exchange;
    for (int rank = 0, slot = 0; rank < mySize; ++rank) {
      if (rank == myRank)
        continue;
      if (absl::Status status = exchange.sendChunk(sum, rank, rank); !status.ok()) {
        sums.pop_back();
        return status;
      }
      exchange.receiveCounts[rank] = static_cast<int>(mine);
      exchange.receiveAt[rank] = static_cast<int>(mine * slot++ * sizeof(float));
    }
    if (int code = MPI_Ialltoallw(
            MPI_BOTTOM, exchange.sendCounts.data(), exchange.sendAt.data(),
            exchange.sendTypes.data(), workspace, exchange.receiveCounts.data(),
            exchange.receiveAt.data(), exchange.receiveTypes.data(), exchanges, &sum.request);
        code != MPI_SUCCESS) {
      sums.pop_back();
      return mpiError("MPI_Ialltoallw of a gradient bucket", code);
    }
    return absl::OkStatus();
  }

  absl::Status finishSum(int bucket) override {
    auto it = std::find_if(sums.begin(), sums.end(),
                           [&](const BucketSum &sum) { return sum.bucket == bucket; });
    if (it == sums.end())
      return absl::FailedPreconditionError(
          absl::StrFormat("bucket %d was never started", bucket));
    Waiting waiting(waited);
    // Every bucket started before this one reaches its gather first, so
    // that each communicator sees the buckets in the same order on every
    // rank.
    if (absl::Status status = advanceSums(static_cast<int>(it - sums.begin()), /*block=*/true);
        !status.ok())
      return status;
    it = std::find_if(sums.begin(), sums.end(),
                      [&](const BucketSum &sum) { return sum.bucket == bucket; });
    int code = MPI_Wait(&it->request, MPI_STATUS_IGNORE);
    sums.erase(it);
    if (code != MPI_SUCCESS)
      return mpiError("MPI_Wait for the gather of a gradient bucket", code);
    return absl::OkStatus();
  }

  absl::Status sumInRankOrder(double *values, size_t count) override {
    if (count * static_cast<size_t>(mySize) > static_cast<size_t>(INT32_MAX))
      return absl::InvalidArgumentError(
          absl::StrFormat("%d values from %d ranks are more than MPI's counts take", count,
                          mySize));
    Waiting waiting(waited);
    // Every rank's values to every rank, then the sums in rank order: the
    // same bits everywhere, which MPI_Allreduce does not promise. A
    // communicator of its own, so that it never matches the buckets'
    // exchanges in flight (which it moves on).
    gathered.resize(count * static_cast<size_t>(mySize));
    if (int code = MPI_Allgather(values, static_cast<int>(count), MPI_DOUBLE, gathered.data(),
                                 static_cast<int>(count), MPI_DOUBLE, statistics);
        code != MPI_SUCCESS)
      return mpiError("MPI_Allgather of batch norm's statistics", code);
    for (size_t i = 0; i < count; ++i) {
      double sum = gathered[i];
      for (int rank = 1; rank < mySize; ++rank)
        sum += gathered[static_cast<size_t>(rank) * count + i];
      values[i] = sum;
    }
    return absl::OkStatus();
  }

  double waitSeconds() const override { return waited; }

  absl::Status broadcast(void *data, size_t bytes, int root) override {
    Waiting waiting(waited);
    auto *at = static_cast<unsigned char *>(data);
    for (size_t done = 0; done < bytes; done += kChunkBytes) {
      int count = static_cast<int>(std::min(kChunkBytes, bytes - done));
      if (int code = MPI_Bcast(at + done, count, MPI_BYTE, root, control); code != MPI_SUCCESS)
        return mpiError(absl::StrFormat("broadcast from device %d", root), code);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<std::string>> gather(std::string_view mine, int root) override {
    // The sizes first, then each rank's bytes to the root in rank order.
    uint64_t size = mine.size();
    std::vector<uint64_t> sizes(myRank == root ? static_cast<size_t>(mySize) : 0);
    if (int code = MPI_Gather(&size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, root,
                              control);
        code != MPI_SUCCESS)
      return mpiError(absl::StrFormat("gather to device %d", root), code);
    if (myRank != root) {
      if (absl::Status status = sendOn(control, mine.data(), mine.size(), root, kGatherTag);
          !status.ok())
        return status;
      return std::vector<std::string>();
    }
    std::vector<std::string> parts(static_cast<size_t>(mySize));
    for (int rank = 0; rank < mySize; ++rank) {
      if (rank == root) {
        parts[rank] = std::string(mine);
        continue;
      }
      parts[rank].resize(sizes[rank]);
      if (absl::Status status =
              receiveOn(control, parts[rank].data(), sizes[rank], rank, kGatherTag);
          !status.ok())
        return status;
    }
    return parts;
  }

  [[noreturn]] void abortAll(int exitCode) override {
    std::fflush(nullptr);
    MPI_Abort(MPI_COMM_WORLD, exitCode);
    std::_Exit(exitCode); // MPI_Abort should not return
  }

private:
  absl::Status checkPeer(int peer, int tag) const {
    if (peer < 0 || peer >= mySize || peer == myRank)
      return absl::InvalidArgumentError(absl::StrFormat(
          "device %d is not another device of this run (devices 0 to %d, this one %d)", peer,
          mySize - 1, myRank));
    if (tag < 0 || tag > tagUpperBound)
      return absl::InvalidArgumentError(
          absl::StrFormat("tag %d is outside MPI's 0 to %d", tag, tagUpperBound));
    return absl::OkStatus();
  }

  absl::Status sendOn(MPI_Comm comm, const void *data, size_t bytes, int peer, int tag) {
    const auto *at = static_cast<const unsigned char *>(data);
    // One message even for no bytes, so that the receiver's count matches.
    size_t done = 0;
    do {
      int count = static_cast<int>(std::min(kChunkBytes, bytes - done));
      if (int code = MPI_Send(at + done, count, MPI_BYTE, peer, tag, comm); code != MPI_SUCCESS)
        return mpiError(absl::StrFormat("MPI_Send to device %d", peer), code);
      done += static_cast<size_t>(count);
    } while (done < bytes);
    return absl::OkStatus();
  }

  absl::Status receiveOn(MPI_Comm comm, void *data, size_t bytes, int peer, int tag) {
    auto *at = static_cast<unsigned char *>(data);
    size_t done = 0;
    do {
      int count = static_cast<int>(std::min(kChunkBytes, bytes - done));
      MPI_Status status;
      if (int code = MPI_Recv(at + done, count, MPI_BYTE, peer, tag, comm, &status);
          code != MPI_SUCCESS)
        return mpiError(absl::StrFormat("MPI_Recv from device %d", peer), code);
      int received = 0;
      MPI_Get_count(&status, MPI_BYTE, &received);
      if (received != count)
        return absl::DataLossError(absl::StrFormat(
            "device %d sent %d bytes where %d were expected (tag %d)", peer, received, count,
            tag));
      done += static_cast<size_t>(count);
    } while (done < bytes);
    return absl::OkStatus();
  }

  /// A gradient bucket being summed: its chunks exchanged (on `exchanges`),
  /// then, once this rank has added its chunk's values, every chunk gathered
  /// (on `gathers`), both MPI_Ialltoallw straight from and into the
  /// gradients.
  struct Exchange;
  struct BucketSum {
    int bucket = 0;
    std::vector<GradientSpan> grads;
    float *workspace = nullptr;
    int64_t count = 0;
    bool gathering = false;
    MPI_Request request = MPI_REQUEST_NULL;
    /// The arguments of the exchange under way, which MPI reads until it
    /// completes (a non-blocking collective's arrays and types must live
    /// that long).
    std::unique_ptr<Exchange> exchange;
  };

  /// The elements [begin, end) of a bucket's gradients, read as one run.
  template <typename Visit>
  static void forEachPart(const BucketSum &sum, int64_t begin, int64_t end, Visit visit) {
    int64_t at = 0;
    for (const GradientSpan &grad : sum.grads) {
      const int64_t first = std::max(begin, at);
      const int64_t last = std::min(end, at + static_cast<int64_t>(grad.count));
      if (first < last)
        visit(grad.data + (first - at), last - first, first - begin);
      at += static_cast<int64_t>(grad.count);
    }
  }

  /// The arguments of one MPI_Ialltoallw: counts, byte displacements and
  /// datatypes per rank, none by default. A chunk of the gradients is one
  /// element of an hindexed type over its parts (absolute addresses, from
  /// MPI_BOTTOM), freed with the exchange once it is complete.
  struct Exchange {
    explicit Exchange(int size)
        : sendCounts(size), sendAt(size), receiveCounts(size), receiveAt(size),
          sendTypes(size, MPI_FLOAT), receiveTypes(size, MPI_FLOAT) {}
    ~Exchange() {
      for (MPI_Datatype &type : made)
        MPI_Type_free(&type);
    }
    Exchange(const Exchange &) = delete;
    Exchange &operator=(const Exchange &) = delete;

    /// Chunk `chunk` of `sum`'s gradients as what goes to `rank`.
    absl::Status sendChunk(const BucketSum &sum, int chunk, int rank) {
      return chunkType(sum, chunk, sendCounts[rank], sendTypes[rank]);
    }
    /// Chunk `chunk` of `sum`'s gradients as what comes from `rank`.
    absl::Status receiveChunk(const BucketSum &sum, int chunk, int rank) {
      return chunkType(sum, chunk, receiveCounts[rank], receiveTypes[rank]);
    }

    std::vector<int> sendCounts, sendAt, receiveCounts, receiveAt;
    std::vector<MPI_Datatype> sendTypes, receiveTypes;

  private:
    absl::Status chunkType(const BucketSum &sum, int chunk, int &count, MPI_Datatype &type) {
      const int ranks = static_cast<int>(sendCounts.size());
      std::vector<int> lengths;
      std::vector<MPI_Aint> addresses;
      forEachPart(sum, getSumChunkBegin(sum.count, ranks, chunk),
                  getSumChunkBegin(sum.count, ranks, chunk + 1),
                  [&](float *part, int64_t length, int64_t) {
                    MPI_Aint address = 0;
                    MPI_Get_address(part, &address);
                    addresses.push_back(address);
                    lengths.push_back(static_cast<int>(length));
                  });
      count = 0;
      if (lengths.empty())
        return absl::OkStatus();
      if (int code = MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(),
                                              addresses.data(), MPI_FLOAT, &type);
          code != MPI_SUCCESS)
        return mpiError("MPI_Type_create_hindexed for a gradient bucket", code);
      made.push_back(type);
      if (int code = MPI_Type_commit(&type); code != MPI_SUCCESS)
        return mpiError("MPI_Type_commit for a gradient bucket", code);
      count = 1;
      return absl::OkStatus();
    }

    std::vector<MPI_Datatype> made;
  };

  /// Moves the buckets started first on, in order: each whose exchange is
  /// done is added up and its gather started. With `block`, waits for the
  /// exchanges of buckets 0 to `upTo` (indices in `sums`); otherwise stops
  /// at the first exchange still under way.
  absl::Status advanceSums(int upTo, bool block) {
    for (int i = 0; i < static_cast<int>(sums.size()); ++i) {
      BucketSum &sum = sums[i];
      if (sum.gathering)
        continue;
      if (block && i <= upTo) {
        if (int code = MPI_Wait(&sum.request, MPI_STATUS_IGNORE); code != MPI_SUCCESS)
          return mpiError("MPI_Wait for the exchange of a gradient bucket", code);
      } else {
        int done = 0;
        if (int code = MPI_Test(&sum.request, &done, MPI_STATUS_IGNORE); code != MPI_SUCCESS)
          return mpiError("MPI_Test of the exchange of a gradient bucket", code);
        if (!done)
          return absl::OkStatus();
      }
      if (absl::Status status = addAndGather(sum); !status.ok())
        return status;
    }
    return absl::OkStatus();
  }

  /// Sums this rank's chunk, each element's values in rank order, then
  /// starts gathering every rank's chunk into the gradients.
  absl::Status addAndGather(BucketSum &sum) {
    const int64_t size = getSumChunkSize(sum.count, mySize, myRank);
    forEachPart(sum, getSumChunkBegin(sum.count, mySize, myRank),
                getSumChunkBegin(sum.count, mySize, myRank + 1),
                [&](float *part, int64_t length, int64_t offset) {
                  for (int64_t i = 0; i < length; ++i) {
                    float total = 0;
                    for (int rank = 0, slot = 0; rank < mySize; ++rank) {
                      float value = rank == myRank
                                        ? part[i]
                                        : sum.workspace[size * slot++ + offset + i];
                      total = rank == 0 ? value : total + value;
                    }
                    part[i] = total;
                  }
                });
    // The exchange before this one is complete: its arguments go.
    sum.exchange = std::make_unique<Exchange>(mySize);
    Exchange &exchange = *sum.exchange;
    for (int rank = 0; rank < mySize; ++rank) {
      if (rank == myRank)
        continue;
      if (absl::Status status = exchange.sendChunk(sum, myRank, rank); !status.ok())
        return status;
      if (absl::Status status = exchange.receiveChunk(sum, rank, rank); !status.ok())
        return status;
    }
    sum.gathering = true;
    if (int code = MPI_Ialltoallw(MPI_BOTTOM, exchange.sendCounts.data(), exchange.sendAt.data(),
                                  exchange.sendTypes.data(), MPI_BOTTOM,
                                  exchange.receiveCounts.data(), exchange.receiveAt.data(),
                                  exchange.receiveTypes.data(), gathers, &sum.request);
        code != MPI_SUCCESS)
      return mpiError("MPI_Ialltoallw gathering a gradient bucket", code);
    return absl::OkStatus();
  }

  MPI_Comm steps, control, exchanges, gathers, statistics;
  /// sumInRankOrder's every rank's values, kept between calls.
  std::vector<double> gathered;
  /// The gradient buckets being summed (startSum to finishSum), in the
  /// order they were started.
  std::vector<BucketSum> sums;
  int myRank, mySize, myLocalRank;
  double waited = 0; // waitSeconds()
  int tagUpperBound;
};

} // namespace

absl::StatusOr<std::unique_ptr<Transport>> openMpiTransport(int *argc, char ***argv) {
  if (!launchedByMpi())
    return std::unique_ptr<Transport>(new LocalTransport());
  // OpenMP's threads never call MPI: only this one does.
  int provided = 0;
  if (int code = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
      code != MPI_SUCCESS)
    return mpiError("MPI_Init_thread", code);
  // Errors come back to be reported, rather than ending the process.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm steps = MPI_COMM_NULL, control = MPI_COMM_NULL, exchanges = MPI_COMM_NULL,
           gathers = MPI_COMM_NULL, statistics = MPI_COMM_NULL;
  int code = MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (code == MPI_SUCCESS)
    code = MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (code == MPI_SUCCESS)
    code = MPI_Comm_dup(MPI_COMM_WORLD, &steps);
  if (code == MPI_SUCCESS)
    code = MPI_Comm_dup(MPI_COMM_WORLD, &control);
  if (code == MPI_SUCCESS)
    code = MPI_Comm_dup(MPI_COMM_WORLD, &exchanges);
  if (code == MPI_SUCCESS)
    code = MPI_Comm_dup(MPI_COMM_WORLD, &gathers);
  if (code == MPI_SUCCESS)
    code = MPI_Comm_dup(MPI_COMM_WORLD, &statistics);
  if (code != MPI_SUCCESS) {
    absl::Status status = mpiError("setting up MPI_COMM_WORLD", code);
    MPI_Finalize();
    return status;
  }
  // The ranks that share this host's memory (and its GPUs), in rank order.
  int localRank = rank;
  MPI_Comm host = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host) ==
      MPI_SUCCESS) {
    MPI_Comm_rank(host, &localRank);
    MPI_Comm_free(&host);
  }
  int *upperBound = nullptr, found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upperBound, &found);
  int tagUpperBound = found && upperBound ? *upperBound : 32767; // the standard's least
  return std::unique_ptr<Transport>(
      new MpiTransport(steps, control, exchanges, gathers, statistics, rank, size, localRank,
                       tagUpperBound));
}

} // namespace cairn::runtime
