//===- RenderReport.cpp - Memory report JSON to HTML, for tests -----------===//
//
// cairn-render-report IN.json OUT.html: what `cairn plan --memory-report
// r.html` does after planning, on a JSON file, so the browser tests can
// render fixtures without compiling a model.
//
//===----------------------------------------------------------------------===//

#include "codegen/PlanReportHtml.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    llvm::errs() << "usage: cairn-render-report IN.json OUT.html\n";
    return 2;
  }
  auto input = llvm::MemoryBuffer::getFile(argv[1], /*IsText=*/true);
  if (!input) {
    llvm::errs() << "cairn-render-report: cannot read " << argv[1] << ": "
                 << input.getError().message() << "\n";
    return 1;
  }
  std::error_code error;
  llvm::raw_fd_ostream os(argv[2], error, llvm::sys::fs::OF_Text);
  if (error) {
    llvm::errs() << "cairn-render-report: cannot write " << argv[2] << ": "
                 << error.message() << "\n";
    return 1;
  }
  cairn::codegen::writePlanReportHtml((*input)->getBuffer(), os);
  os.close();
  if (os.has_error()) {
    llvm::errs() << "cairn-render-report: writing " << argv[2]
                 << " failed: " << os.error().message() << "\n";
    os.clear_error();
    return 1;
  }
  return 0;
}
