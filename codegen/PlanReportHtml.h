//===- PlanReportHtml.h - The memory report as one HTML page --*- C++ -*-===//
//
// Renders the memory report (the JSON that `cairn plan --memory-report`
// writes) as a self-contained HTML page: the JSON embedded as data, inline
// CSS and JavaScript that draw it on canvases. The page needs no network and
// no other file, so it can be mailed or attached to a CI run.
//
//===----------------------------------------------------------------------===//

#ifndef CAIRN_CODEGEN_PLANREPORTHTML_H
#define CAIRN_CODEGEN_PLANREPORTHTML_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace cairn::codegen {

/// Writes a complete HTML page for `reportJson`, the report's JSON text. The
/// text is embedded as is, except that every '<' becomes "\u003c" so that no
/// "</script" or "<!--" in a name can end or confuse the script element; it is
/// not parsed here. The page's script parses and checks it, draws it, and
/// records the outcome on <body>: data-render-status ("done" or "error"),
/// data-rendered-buffers (buffers with bytes > 0 drawn, all devices) and
/// data-render-errors (empty when none), for headless-browser tests.
void writePlanReportHtml(llvm::StringRef reportJson, llvm::raw_ostream &os);

} // namespace cairn::codegen

#endif // CAIRN_CODEGEN_PLANREPORTHTML_H
