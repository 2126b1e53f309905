//===- cairn-opt.cpp - Run Cairn passes on textual IR ---------------------===//
//
// mlir-opt with the cairn dialect, func, and every Cairn pass: each pass can
// be run alone on a .mlir file, which is how the lit tests exercise them.
//
//===----------------------------------------------------------------------===//

#include "ir/CairnDialect.h"
#include "passes/Passes.h"
#include "passes/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<cairn::CairnDialect, mlir::func::FuncDialect>();
  cairn::registerCairnPasses();
  cairn::registerTrainingPipeline();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Cairn optimizer driver\n", registry));
}
