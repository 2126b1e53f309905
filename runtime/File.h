//===- File.h - Whole-file reads and atomic writes ---------------*- C++ -*-===//
#ifndef CAIRN_RUNTIME_FILE_H
#define CAIRN_RUNTIME_FILE_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <string>
#include <vector>

namespace cairn::runtime {

/// The whole file; errors name the file and say why (missing, unreadable).
absl::StatusOr<std::string> readWholeFile(const std::string &path);

/// Writes the concatenation of `pieces` to `path + ".tmp.<pid>"`, fsyncs it
/// and renames it over `path`, so readers see the old file or the whole new
/// one, never a partial one. The temporary is removed on failure.
absl::Status writeFileAtomically(const std::string &path,
                                 const std::vector<absl::string_view> &pieces);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_FILE_H
