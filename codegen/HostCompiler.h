//===- HostCompiler.h - Generated C++ to an executable ----------*- C++ -*-===//
//
// Compiles the CPU emitter's output with the host C++ compiler and links it
// with the runtime (paths from BuildConfig.h, generated at configure time).
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_CODEGEN_HOSTCOMPILER_H
#define CAIRN_CODEGEN_HOSTCOMPILER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <string>

namespace cairn::codegen {

struct HostCompileOptions {
  /// The compiler to run: a path, or a name looked up on PATH. Empty: the
  /// compiler CMake built Cairn with.
  std::string compiler;
  /// Keep the temporary directory (the .cpp and the compiler's log).
  bool keepTemps = false;
};

/// Writes `source` to a temporary directory, compiles and links it into
/// `outputPath`, which appears (by rename) only when everything succeeded.
/// Errors go to stderr; a compiler failure keeps the .cpp and says where.
llvm::LogicalResult compileExecutable(llvm::StringRef source,
                                      llvm::StringRef outputPath,
                                      const HostCompileOptions &options);

} // namespace cairn::codegen

#endif // CAIRN_CODEGEN_HOSTCOMPILER_H
