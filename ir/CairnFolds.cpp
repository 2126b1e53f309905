//===- CairnFolds.cpp - Folders of the cairn ops --------------------------===//

#include "ir/CairnOps.h"

using namespace mlir;
using namespace cairn;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }
