//===- ByteSize.h - Sizes in bytes, read and written by people --*- C++ -*-===//

#ifndef CAIRN_PASSES_BYTESIZE_H
#define CAIRN_PASSES_BYTESIZE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace cairn {

/// "16GiB", "512 MiB", "8GB", "1.5 kib", "1000000" as bytes: binary units
/// KiB..TiB, decimal units kB..TB (case-insensitive), B or none for bytes.
/// nullopt for anything else, for zero, negative or beyond 2^63 bytes.
std::optional<int64_t> parseByteSize(llvm::StringRef text);

/// "1.50 MiB"; plain bytes ("200 B") below 1 KiB.
std::string formatByteSize(int64_t bytes);

} // namespace cairn

#endif // CAIRN_PASSES_BYTESIZE_H
