//===- CairnFolds.cpp - Folders of the cairn ops --------------------------===//

#include "ir/CairnOps.h"

using namespace mlir;
using namespace cairn;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// A cast to the type the value has already is the value.
OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  return {};
}
