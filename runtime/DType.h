//===- DType.h - The element types of tensors -------------------*- C++ -*-===//
//
// One enum of element types for the whole of Cairn: the runtime's tensors
// and files, the generated code's ProgramSpec, and the compiler's kernel
// graph (passes/KernelGraph.h) all use it. No dependencies, so the compiler
// includes it without the runtime's libraries.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_RUNTIME_DTYPE_H
#define CAIRN_RUNTIME_DTYPE_H

#include <cstddef>

namespace cairn::runtime {

enum class DType { F32, F64, F16, BF16, I32, I64, U8 };

/// The dtype as safetensors (and DType's enumerators) spell it: "F32",
/// "BF16", "U8".
constexpr const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  case DType::U8:
    return "U8";
  }
  return "?";
}

/// Bytes per element.
constexpr size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::U8:
    return 1;
  }
  return 0;
}

/// F32, F64, F16 and BF16.
constexpr bool isFloatDType(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

} // namespace cairn::runtime

#endif // CAIRN_RUNTIME_DTYPE_H
