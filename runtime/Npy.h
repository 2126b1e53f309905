//===- Npy.h - NumPy .npy files ----------------------------------*- C++ -*-===//
#ifndef CAIRN_RUNTIME_NPY_H
#define CAIRN_RUNTIME_NPY_H

#include "runtime/Tensor.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <string>

namespace cairn::runtime {

/// Reads a .npy file (format versions 1.0, 2.0 and 3.0) holding a C-order,
/// little-endian array of '<f2' '<f4' '<f8' '<i4' '<i8' or '|u1'. The data
/// must be exactly as long as the shape says.
absl::StatusOr<HostTensor> readNpy(const std::string &path);

/// Writes `tensor` (a dtype readNpy reads) as a version 1.0 .npy file,
/// atomically.
absl::Status writeNpy(const std::string &path, const HostTensor &tensor);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_NPY_H
