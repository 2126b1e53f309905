//===- KernelError.h - Errors raised inside a step ---------------*- C++ -*-===//
//
// A kernel that meets bad data (a label out of range, an index past the
// embedding table) cannot go on; it throws KernelError, which the executable's
// main catches and reports with exit code 1. Kernels never abort().
//
//===----------------------------------------------------------------------===//
#ifndef CAIRN_RUNTIME_KERNELS_KERNELERROR_H
#define CAIRN_RUNTIME_KERNELS_KERNELERROR_H

#include <stdexcept>
#include <string>

namespace cairn::kernels {

class KernelError : public std::runtime_error {
public:
  explicit KernelError(const std::string &message)
      : std::runtime_error(message) {}
};

} // namespace cairn::kernels

#endif // CAIRN_RUNTIME_KERNELS_KERNELERROR_H
