//===- Idx.h - IDX files (MNIST, Fashion-MNIST) ------------------*- C++ -*-===//
#ifndef CAIRN_RUNTIME_IDX_H
#define CAIRN_RUNTIME_IDX_H

#include "runtime/Tensor.h"

#include "absl/status/statusor.h"

#include <string>

namespace cairn::runtime {

/// Reads an IDX file, plain or gzip-compressed (detected by its magic bytes,
/// not its name). Element types u8, i32, f32 and f64 map to U8, I32, F32, F64
/// (converted from big-endian); i8 and i16 are reported as unsupported. The
/// body must be exactly as long as the dimensions say.
absl::StatusOr<HostTensor> readIdx(const std::string &path);

/// Images [N, 28, 28] U8 and labels [N] U8, every label below 10.
struct Dataset {
  HostTensor images;
  HostTensor labels;
};

/// Loads Fashion-MNIST's train or t10k split from `dir`, preferring
/// `<name>.gz` over `<name>` when both exist.
absl::StatusOr<Dataset> loadFashionMnist(const std::string &dir, bool train);

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_IDX_H
