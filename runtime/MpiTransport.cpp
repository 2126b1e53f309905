//===- MpiTransport.cpp - The devices of one model as MPI ranks -----------===//
#include "runtime/MpiTransport.h"

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
  MpiTransport(MPI_Comm steps, MPI_Comm control, int rank, int size, int tagUpperBound)
      : steps(steps), control(control), myRank(rank), mySize(size),
        tagUpperBound(tagUpperBound) {}

  ~MpiTransport() override {
    MPI_Comm_free(&steps);
    MPI_Comm_free(&control);
    MPI_Finalize();
  }

  int rank() const override { return myRank; }
  int size() const override { return mySize; }

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

  MPI_Comm steps, control;
  int myRank, mySize;
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
  MPI_Comm steps = MPI_COMM_NULL, control = MPI_COMM_NULL;
  int code = MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (code == MPI_SUCCESS)
    code = MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (code == MPI_SUCCESS)
    code = MPI_Comm_dup(MPI_COMM_WORLD, &steps);
  if (code == MPI_SUCCESS)
    code = MPI_Comm_dup(MPI_COMM_WORLD, &control);
  if (code != MPI_SUCCESS) {
    absl::Status status = mpiError("setting up MPI_COMM_WORLD", code);
    MPI_Finalize();
    return status;
  }
  int *upperBound = nullptr, found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upperBound, &found);
  int tagUpperBound = found && upperBound ? *upperBound : 32767; // the standard's least
  return std::unique_ptr<Transport>(new MpiTransport(steps, control, rank, size, tagUpperBound));
}

} // namespace cairn::runtime
