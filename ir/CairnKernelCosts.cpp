//===- CairnKernelCosts.cpp - What a kernel of the planned step costs -----===//
//
// The cost model recomputation chooses by. getKernelFlops: floating-point
// operations of one run; products count 2 m n k, every other kernel one
// operation per element of its largest operand. getKernelCost: a roofline
// time in FLOP-equivalents, max(FLOPs, kFlopsPerByte x the bytes of its
// operands), since an element-wise, normalisation or softmax kernel is bound
// by memory, not arithmetic: ranked by FLOPs alone, recomputing the
// transformer to a third of its arena cost +13% FLOPs but +35% CPU step
// time. A measured time per kernel can replace it here.
//
//===----------------------------------------------------------------------===//

#include "ir/CairnKernelOps.h"
#include "ir/CairnProgramOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace cairn::detail {

namespace {

int64_t getInt(Operation *op, StringRef name) {
  auto attr = op->getAttrOfType<IntegerAttr>(name);
  return attr ? attr.getInt() : 0;
}

int64_t product(std::initializer_list<int64_t> factors) {
  int64_t result = 1;
  for (int64_t factor : factors)
    result = saturatingMul(result, factor);
  return result;
}

} // namespace

int64_t getKernelFlops(Operation *op) {
  StringRef kind = op->getName().getStringRef();
  if (kind == LinearKernelOp::getOperationName() ||
      kind == LinearGradInputKernelOp::getOperationName() ||
      kind == LinearGradWeightKernelOp::getOperationName())
    return product({2, getInt(op, "rows"), getInt(op, "in"), getInt(op, "out")});
  if (kind == MatmulKernelOp::getOperationName())
    return product({2, getInt(op, "batch"), getInt(op, "m"), getInt(op, "n"),
                    getInt(op, "k")});
  if (kind == Conv2dKernelOp::getOperationName() ||
      kind == Conv2dGradInputKernelOp::getOperationName() ||
      kind == Conv2dGradWeightKernelOp::getOperationName()) {
    // n, c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups, ho, wo
    auto shape = op->getAttrOfType<DenseI64ArrayAttr>("shape");
    if (!shape || shape.size() != 16 || shape[13] <= 0)
      return 0;
    return product({2, shape[0], shape[4], shape[14], shape[15],
                    shape[1] / shape[13], shape[5], shape[6]});
  }
  int64_t largest = 0;
  for (Value operand : op->getOperands())
    if (auto type = dyn_cast<MemRefType>(operand.getType()))
      largest = std::max(largest, type.getNumElements());
  return largest;
}

/// The machine balance: FLOPs a core does in the time it moves one byte
/// (a CPU core: tens of GFLOP/s over several GB/s; an H100: 67 TFLOP/s fp32
/// over 3 TB/s, about 20).
constexpr int64_t kFlopsPerByte = 8;

int64_t getKernelCost(Operation *op) {
  int64_t bytes = 0;
  for (Value operand : op->getOperands())
    if (auto type = dyn_cast<MemRefType>(operand.getType()))
      bytes = saturatingAdd(bytes, getMemRefBytes(type));
  return std::max(getKernelFlops(op), saturatingMul(bytes, kFlopsPerByte));
}

} // namespace cairn::detail
