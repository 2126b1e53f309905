//===- Main.cpp - runMain: one process of a training executable ----------===//
//
// Parses the command line (Cli.h), answers --help and --version, opens the
// transport to the other processes of a partitioned or replicated model
// (one process per device or replica under mpirun; LocalTransport for a
// model on one device), opens this rank's Session (Session.h) and runs the
// command (Commands.h). Every failure -- an absl::Status from the readers,
// a KernelError thrown inside a step, running out of memory -- ends as one
// "error: ..." line on stderr and exit code 1. A failure in a phase every
// rank runs alone is agreed on (Collective.h): every rank exits 1, rank 0
// says why. Any later failure may leave the other ranks waiting on the
// failed one, so it ends every rank at once (Transport::abortAll).
//
//===----------------------------------------------------------------------===//
#include "runtime/Cli.h"
#include "runtime/Collective.h"
#include "runtime/Commands.h"
#include "runtime/Partition.h"
#include "runtime/Program.h"
#include "runtime/Session.h"
#include "runtime/Transport.h"
#include "runtime/kernels/KernelError.h"

#include "absl/strings/str_format.h"

#include <cstdio>
#include <memory>
#include <new>
#include <optional>
#include <unistd.h>

namespace cairn::runtime {

namespace {

std::string programName(const char *argv0) {
  std::string path = argv0 ? argv0 : "cairn-model";
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Fails before any work when `path`'s directory cannot take a new file, so
/// a long run does not end in an unwritable --save.
absl::Status checkWritable(const char *flag, const std::string &path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, std::max<size_t>(slash, 1));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return absl::PermissionDeniedError(absl::StrFormat(
        "%s: cannot write %s: directory %s does not exist or is not writable", path, flag, dir));
  return absl::OkStatus();
}


absl::Status runCommand(const ProgramSpec *const *specs, int devices, Transport &transport,
                        const Options &options) {
  std::optional<PartitionLayout> partition; // outlives the session, which points into it
  std::optional<Session> session;
  absl::Status ready = [&]() -> absl::Status {
    // The run's files are rank 0's to write.
    if (transport.rank() == 0)
      for (auto [flag, path] : {std::pair{"--save", &options.save},
                                std::pair{"--metrics", &options.metrics},
                                std::pair{"--out", &options.out}})
        if (!path->empty())
          if (absl::Status status = checkWritable(flag, *path); !status.ok())
            return status;
    absl::StatusOr<PartitionLayout> described = describePartition(specs, devices);
    if (!described.ok())
      return described.status();
    partition.emplace(std::move(*described));
    if (specs[0]->replicas > 1 && options.command == Command::Step)
      return absl::UnimplementedError(absl::StrFormat(
          "step: model %s trains as %d replicas, and step cannot yet gather their gradients; "
          "train, eval, init and predict can",
          specs[0]->model, specs[0]->replicas));
    if (partition->size() > 1 && options.command == Command::Step)
      return absl::UnimplementedError(absl::StrFormat(
          "step: model %s runs on %d devices, and step cannot yet gather every device's "
          "gradients; train, eval, init and predict can",
          specs[0]->model, devices));
    absl::StatusOr<Session> opened = openSession(*partition, transport, options);
    if (!opened.ok())
      return opened.status();
    session.emplace(std::move(*opened));
    return absl::OkStatus();
  }();
  if (absl::Status status = agree(transport, ready); !status.ok())
    return status;
  switch (options.command) {
  case Command::Train:
    return runTrain(*session);
  case Command::Eval:
    return runEval(*session);
  case Command::Init:
    return runInit(*session);
  case Command::Step:
    return runStep(*session);
  case Command::Predict:
    return runPredict(*session);
  case Command::Help:
  case Command::Version:
    break;
  }
  return absl::OkStatus();
}

/// runMain, runPartitionedMain and runReplicatedMain: `open` is null for a
/// model on one device, which runs alone (LocalTransport); otherwise the
/// run takes a process per device, or per replica.
int runProgram(const ProgramSpec *const *specs, int devices, OpenTransport open, int argc,
               char **argv) {
  if (!specs || devices < 1 || !specs[0]) {
    absl::FPrintF(stderr, "error: model spec: %d devices without specs\n", devices);
    return 1;
  }
  const ProgramSpec &spec = *specs[0];
  if (spec.backend && spec.backend->prepareProcess)
    spec.backend->prepareProcess(argc, argv);
  std::string exe = programName(argc > 0 ? argv[0] : nullptr);
  const bool partitioned = open != nullptr && devices > 1;
  const bool replicated = open != nullptr && spec.replicas > 1;
  const int processes = replicated ? spec.replicas : devices;
  absl::StatusOr<Options> options = parseCommandLine(argc, argv);
  if (options.ok() && options->command == Command::Help) {
    std::string text =
        usageText(exe, spec, spec.backend && std::string(spec.backend->name) == "cuda");
    if (partitioned)
      text += absl::StrFormat(
          "\nThe model runs on %1$d devices, one process each: launch every command but\n"
          "--help and --version as `mpirun -np %1$d %2$s COMMAND ...`. Rank 0 prints and\n"
          "writes the files; any rank's error ends every rank with a non-zero exit code.\n",
          devices, exe);
    if (replicated)
      text += absl::StrFormat(
          "\nThe model trains as %1$d data-parallel replicas, one process each, each on\n"
          "%2$d examples of every batch of %3$d: launch every command but --help and\n"
          "--version as `mpirun -np %1$d %4$s COMMAND ...`. Rank 0 prints and writes the\n"
          "files; any rank's error ends every rank with a non-zero exit code. %5$s\n",
          spec.replicas, spec.batch, spec.batch * spec.replicas, exe,
          spec.syncBatchNorm
              ? "Batch norm\nnormalises by the statistics of the whole batch (--sync-batchnorm)."
              : "Batch norm\nnormalises by each replica's own examples' statistics.");
    absl::FPrintF(stdout, "%s", text);
    return 0;
  }
  if (options.ok() && options->command == Command::Version) {
    absl::FPrintF(stdout, "%s: model %s from %s%s, Cairn %s, %s\n", exe, spec.model,
                  spec.sourceFile,
                  partitioned  ? absl::StrFormat(" on %d devices", devices)
                  : replicated ? absl::StrFormat(" as %d replicas", spec.replicas)
                               : std::string(),
                  CAIRN_VERSION,
                  spec.backend && spec.backend->describeBuild ? spec.backend->describeBuild()
                                                              : std::string("CPU"));
    return 0;
  }

  std::unique_ptr<Transport> transport;
  if (open) {
    absl::StatusOr<std::unique_ptr<Transport>> opened = open(&argc, &argv);
    if (!opened.ok()) {
      absl::FPrintF(stderr, "error: %s\n", opened.status().message());
      return 1;
    }
    transport = std::move(*opened);
  } else {
    transport = std::make_unique<LocalTransport>();
  }
  // Said once, by rank 0.
  const bool speaks = transport->rank() == 0;
  if (!options.ok()) {
    if (speaks)
      absl::FPrintF(stderr, "error: %s (run '%s --help' for usage)\n",
                    options.status().message(), exe);
    return 1;
  }
  if (transport->size() != processes) {
    if (speaks)
      absl::FPrintF(stderr,
                    "error: this executable runs model %s %s, one process each%s: "
                    "launch it as `mpirun -np %d %s ...`\n",
                    spec.model,
                    replicated ? absl::StrFormat("as %d replicas", processes)
                               : absl::StrFormat("on %d devices", processes),
                    transport->size() > 1
                        ? absl::StrFormat(" (not %d)", transport->size())
                        : std::string(),
                    processes, exe);
    return 1;
  }

  absl::Status status;
  try {
    status = runCommand(specs, devices, *transport, *options);
  } catch (const kernels::KernelError &e) {
    status = absl::InternalError(e.what());
  } catch (const std::bad_alloc &) {
    status = absl::ResourceExhaustedError("out of memory");
  } catch (const std::exception &e) {
    status = absl::InternalError(absl::StrFormat("unexpected failure: %s", e.what()));
  }
  std::fflush(stdout);
  if (status.ok())
    return 0;
  if (isPeerFailure(status))
    return 1; // rank 0 said what failed
  if (transport->size() == 1) {
    absl::FPrintF(stderr, "error: %s\n", status.message());
    return 1;
  }
  // The other ranks may be waiting for this one, in a step or a collective.
  absl::FPrintF(stderr, "error: %s %d: %s\n", replicated ? "replica" : "device",
                transport->rank(), status.message());
  std::fflush(stderr);
  transport->abortAll(1);
  return 1; // not reached
}

} // namespace

int runMain(const ProgramSpec &spec, int argc, char **argv) {
  const ProgramSpec *const specs[] = {&spec};
  return runProgram(specs, 1, /*open=*/nullptr, argc, argv);
}

int runPartitionedMain(const ProgramSpec *const *specs, int devices, OpenTransport open,
                       int argc, char **argv) {
  if (!open) {
    absl::FPrintF(stderr, "error: model spec: a partitioned model without a transport\n");
    return 1;
  }
  return runProgram(specs, devices, open, argc, argv);
}

int runReplicatedMain(const ProgramSpec &spec, OpenTransport open, int argc, char **argv) {
  if (!open || spec.replicas < 2) {
    absl::FPrintF(stderr, "error: model spec: replicas without a transport\n");
    return 1;
  }
  const ProgramSpec *const specs[] = {&spec};
  return runProgram(specs, 1, open, argc, argv);
}

} // namespace cairn::runtime

