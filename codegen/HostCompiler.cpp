//===- HostCompiler.cpp - Generated C++ to an executable ------------------===//
//
// One compiler run compiles and links. The executable is linked to a unique
// temporary name next to the output and renamed over it, so a failed or
// interrupted build never leaves a partial file at the output path.
//
//===----------------------------------------------------------------------===//

#include "codegen/HostCompiler.h"

#include "codegen/BuildConfig.h"

#include "llvm/ADT/SmallString.h"
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

} // namespace

LogicalResult
cairn::codegen::compileExecutable(StringRef source, StringRef outputPath,
                                  const HostCompileOptions &options) {
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

  std::string compiler =
      options.compiler.empty() ? config::kHostCompiler : options.compiler;
  if (!StringRef(compiler).contains('/')) {
    ErrorOr<std::string> found = sys::findProgramByName(compiler);
    if (!found) {
      error() << "cannot find the host compiler '" << compiler
              << "' on PATH (set CAIRN_CXX to a C++17 compiler)\n";
      return failure();
    }
    compiler = *found;
  }
  if (!sys::fs::can_execute(compiler)) {
    error() << "cannot run the host compiler '" << compiler
            << "' (set CAIRN_CXX to a C++17 compiler)\n";
    return failure();
  }

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

  SmallString<256> cppPath(tempDir), logPath(tempDir);
  sys::path::append(cppPath, sys::path::stem(outputPath) + ".cpp");
  sys::path::append(logPath, "compiler.log");
  {
    std::error_code ec;
    raw_fd_ostream cpp(cppPath, ec);
    if (!ec) {
      cpp << source;
      cpp.close();
      ec = cpp.error();
    }
    if (ec) {
      error() << "cannot write '" << cppPath << "': " << ec.message() << "\n";
      cleanUp(options.keepTemps);
      return failure();
    }
  }

  SmallString<256> tempOutput;
  sys::fs::createUniquePath(outputPath + ".tmp-%%%%%%", tempOutput,
                            /*MakeAbsolute=*/false);
  FileRemover removeTempOutput(tempOutput);
  // Also on Ctrl-C: no partial executable next to the output.
  sys::RemoveFileOnSignal(tempOutput);

  std::string include = (Twine("-I") + config::kRuntimeIncludeDir).str();
  SmallVector<StringRef> args = {compiler, "-std=c++17", "-O3", "-march=native",
                                 include,  cppPath,      "-o",  tempOutput};
  for (const char *arg : config::kLinkArguments)
    args.push_back(arg);
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(logPath),
                                          StringRef(logPath)};
  std::string message;
  int status = sys::ExecuteAndWait(compiler, args, /*Env=*/std::nullopt,
                                   redirects, /*SecondsToWait=*/0,
                                   /*MemoryLimit=*/0, &message);
  if (status != 0) {
    // Cairn emitted code for a model it accepted: any failure is Cairn's.
    error() << "internal error: the host compiler failed on generated code "
               "(this is a bug in Cairn)\n";
    note() << "the generated code is kept in '" << cppPath << "'\n";
    note() << "'" << compiler << "' "
           << (message.empty() ? "exited with status " + std::to_string(status)
                               : message)
           << "; the start of its output:\n";
    printLogHead(logPath);
    return failure();
  }

  if (std::error_code ec = sys::fs::rename(tempOutput, outputPath)) {
    error() << "cannot write '" << outputPath << "': " << ec.message() << "\n";
    cleanUp(options.keepTemps);
    return failure();
  }
  removeTempOutput.releaseFile();
  sys::DontRemoveFileOnSignal(tempOutput);
  cleanUp(options.keepTemps);
  return success();
}
