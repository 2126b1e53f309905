//===- CairnInterfaces.h - Op interfaces of cairn ---------------*- C++ -*-===//

#ifndef CAIRN_IR_CAIRNINTERFACES_H
#define CAIRN_IR_CAIRNINTERFACES_H

#include "mlir/IR/OpDefinition.h"

#include <cstdint>

namespace cairn {

/// a + b for non-negative costs, saturating at INT64_MAX.
int64_t saturatingAdd(int64_t a, int64_t b);
/// a * b for non-negative costs, saturating at INT64_MAX.
int64_t saturatingMul(int64_t a, int64_t b);

} // namespace cairn

#include "ir/CairnInterfaces.h.inc"

#endif // CAIRN_IR_CAIRNINTERFACES_H
