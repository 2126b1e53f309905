//===- HostCompiler.cpp - Generated C++ or CUDA C++ to an executable ------===//
//
// One compiler run compiles and links: the host C++ compiler for the CPU
// emitter's C++, nvcc for the CUDA emitter's .cu. The executable is linked
// to a unique temporary name next to the output and renamed over it, so a
// failed or interrupted build never leaves a partial file at the output
// path.
//
//===----------------------------------------------------------------------===//

#include "codegen/HostCompiler.h"

#include "codegen/BuildConfig.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

/// Lines of the compiler's output shown when it fails.
constexpr unsigned kShownCompilerLines = 20;

raw_ostream &error() { return WithColor::error(errs(), "cairn"); }
raw_ostream &note() { return WithColor::note(errs(), "cairn"); }

/// Prints the first lines of the compiler's log, indented.
void printLogHead(StringRef logPath) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> log = MemoryBuffer::getFile(logPath);
  if (!log)
    return;
  StringRef rest = (*log)->getBuffer();
  for (unsigned i = 0; i < kShownCompilerLines && !rest.empty(); ++i) {
    auto [line, tail] = rest.split('\n');
    errs() << "  " << line << "\n";
    rest = tail;
  }
  if (!rest.empty())
    errs() << "  ...\n";
}

/// Checks that `outputPath` can be written by a rename into its directory.
LogicalResult checkOutputPath(StringRef outputPath) {
  // The output's directory must exist: the executable is renamed into it.
  SmallString<256> outputDir(sys::path::parent_path(outputPath));
  if (outputDir.empty())
    outputDir = ".";
  if (!sys::fs::is_directory(outputDir)) {
    error() << "cannot write '" << outputPath << "': '" << outputDir
            << "' is not a directory\n";
    return failure();
  }
  // Else the linker would fail, and that would read as a bug in Cairn.
  if (sys::fs::access(outputDir, sys::fs::AccessMode::Write)) {
    error() << "cannot write '" << outputPath << "': '" << outputDir
            << "' is not writable\n";
    return failure();
  }
  if (sys::fs::is_directory(outputPath)) {
    error() << "cannot write '" << outputPath << "': it is a directory\n";
    return failure();
  }
  return success();
}

/// `program` as a path: looked up on PATH when it names no directory.
/// `what` names it in errors ("the host compiler", "nvcc"), `hint` says
/// how to choose another.
std::optional<std::string> findCompiler(std::string program, StringRef what,
                                        StringRef hint) {
  if (!StringRef(program).contains('/')) {
    ErrorOr<std::string> found = sys::findProgramByName(program);
    if (!found) {
      error() << "cannot find " << what << " '" << program << "' on PATH ("
              << hint << ")\n";
      return std::nullopt;
    }
    program = *found;
  }
  if (!sys::fs::can_execute(program)) {
    error() << "cannot run " << what << " '" << program << "' (" << hint
            << ")\n";
    return std::nullopt;
  }
  return program;
}

/// One compiler run that compiles `source` (written to a temporary
/// directory as `<output stem><extension>`) and links it: `arguments(path
/// of the source, path of the executable)` is its command line after the
/// compiler. The executable is linked to a temporary name next to
/// `outputPath` and renamed over it.
LogicalResult compileAndLink(
    StringRef source, StringRef outputPath, StringRef extension,
    StringRef compiler, StringRef compilerName, bool keepTemps,
    function_ref<SmallVector<std::string>(StringRef, StringRef)> arguments) {
  SmallString<256> tempDir;
  if (std::error_code ec =
          sys::fs::createUniqueDirectory("cairn-build", tempDir)) {
    error() << "cannot create a temporary directory: " << ec.message() << "\n";
    return failure();
  }
  // Removes the temporary directory unless told to keep it.
  auto cleanUp = [&](bool keep) {
    if (keep)
      note() << "kept the temporary files in '" << tempDir << "'\n";
    else
      sys::fs::remove_directories(tempDir);
  };

  SmallString<256> sourcePath(tempDir), logPath(tempDir);
  sys::path::append(sourcePath, sys::path::stem(outputPath) + extension);
  sys::path::append(logPath, "compiler.log");
  {
    std::error_code ec;
    raw_fd_ostream file(sourcePath, ec);
    if (!ec) {
      file << source;
      file.close();
      ec = file.error();
    }
    if (ec) {
      error() << "cannot write '" << sourcePath << "': " << ec.message()
              << "\n";
      cleanUp(keepTemps);
      return failure();
    }
  }

  SmallString<256> tempOutput;
  sys::fs::createUniquePath(outputPath + ".tmp-%%%%%%", tempOutput,
                            /*MakeAbsolute=*/false);
  FileRemover removeTempOutput(tempOutput);
  // Also on Ctrl-C: no partial executable next to the output.
  sys::RemoveFileOnSignal(tempOutput);

  SmallVector<std::string> argStrings = arguments(sourcePath, tempOutput);
  SmallVector<StringRef> args = {compiler};
  for (const std::string &arg : argStrings)
    args.push_back(arg);
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(logPath),
                                          StringRef(logPath)};
  std::string message;
  int status = sys::ExecuteAndWait(compiler, args, /*Env=*/std::nullopt,
                                   redirects, /*SecondsToWait=*/0,
                                   /*MemoryLimit=*/0, &message);
  if (status != 0) {
    // Cairn emitted code for a model it accepted: any failure is Cairn's.
    error() << "internal error: " << compilerName
            << " failed on generated code (this is a bug in Cairn)\n";
    note() << "the generated code is kept in '" << sourcePath << "'\n";
    note() << "'" << compiler << "' "
           << (message.empty() ? "exited with status " + std::to_string(status)
                               : message)
           << "; the start of its output:\n";
    printLogHead(logPath);
    return failure();
  }

  if (std::error_code ec = sys::fs::rename(tempOutput, outputPath)) {
    error() << "cannot write '" << outputPath << "': " << ec.message() << "\n";
    cleanUp(keepTemps);
    return failure();
  }
  removeTempOutput.releaseFile();
  sys::DontRemoveFileOnSignal(tempOutput);
  cleanUp(keepTemps);
  return success();
}

constexpr StringRef kCxxHint = "set CAIRN_CXX to a C++17 compiler";

} // namespace

LogicalResult
cairn::codegen::compileExecutable(StringRef source, StringRef outputPath,
                                  const HostCompileOptions &options) {
  if (failed(checkOutputPath(outputPath)))
    return failure();
  std::optional<std::string> compiler = findCompiler(
      options.compiler.empty() ? config::kHostCompiler : options.compiler,
      "the host compiler", kCxxHint);
  if (!compiler)
    return failure();
  return compileAndLink(
      source, outputPath, ".cpp", *compiler, "the host compiler",
      options.keepTemps, [&](StringRef sourcePath, StringRef executable) {
        // No contraction of a * b + c into one rounding: a fused chain
        // computes every element as the separate kernels would, bit for bit.
        // OpenMP for runtime/kernels/Parallel.h's loops.
        SmallVector<std::string> args = {
            "-std=c++17",     "-O3",
            "-march=native",  "-ffp-contract=off",
            "-fopenmp",       (Twine("-I") + config::kRuntimeIncludeDir).str(),
            sourcePath.str(), "-o",
            executable.str()};
        // Before the runtime's archives: CairnMpi uses them.
        if (options.linkMpi)
          for (const char *arg : config::kMpiLinkArguments)
            args.push_back(arg);
        for (const char *arg : config::kLinkArguments)
          args.push_back(arg);
        return args;
      });
}

bool cairn::codegen::isCudaBackendBuilt() { return CAIRN_ENABLE_CUDA; }

LogicalResult
cairn::codegen::compileCudaExecutable(StringRef source, StringRef outputPath,
                                      const HostCompileOptions &options) {
#if CAIRN_ENABLE_CUDA
  if (failed(checkOutputPath(outputPath)))
    return failure();
  std::optional<std::string> nvcc =
      findCompiler(options.cudaCompiler.empty() ? config::kCudaCompiler
                                                : options.cudaCompiler,
                   "nvcc", "set CAIRN_NVCC to CUDA's nvcc");
  if (!nvcc)
    return failure();
  // nvcc compiles the host code with the C++ compiler the runtime was
  // built with (or CAIRN_CXX's).
  std::optional<std::string> hostCompiler = findCompiler(
      options.compiler.empty() ? config::kHostCompiler : options.compiler,
      "the host compiler", kCxxHint);
  if (!hostCompiler)
    return failure();
  return compileAndLink(
      source, outputPath, ".cu", *nvcc, "nvcc", options.keepTemps,
      [&](StringRef sourcePath, StringRef executable) {
        // SASS for sm_80 (A100) and sm_90 (H100, H200), and sm_90's PTX,
        // which the driver compiles for newer GPUs: the runtime's own
        // architectures.
        SmallVector<std::string> args = {
            "-std=c++17",
            "-O3",
            "-ccbin",
            *hostCompiler,
            "-gencode",
            "arch=compute_80,code=sm_80",
            "-gencode",
            "arch=compute_90,code=sm_90",
            "-gencode",
            "arch=compute_90,code=compute_90",
            (Twine("-I") + config::kRuntimeIncludeDir).str()};
        for (const char *dir : config::kCudaIncludeDirs)
          args.push_back((Twine("-I") + dir).str());
        args.append({sourcePath.str(), "-o", executable.str()});
        // Before the runtime's archives: CairnCudaCollectives uses them.
        if (options.linkMpi)
          for (const char *arg : config::kCudaCollectiveLinkArguments)
            args.push_back(arg);
        for (const char *arg : config::kCudaLinkArguments)
          args.push_back(arg);
        return args;
      });
#else
  (void)source;
  (void)outputPath;
  (void)options;
  error() << "this cairn was built without the CUDA backend "
             "(CAIRN_ENABLE_CUDA)\n";
  return failure();
#endif
}
