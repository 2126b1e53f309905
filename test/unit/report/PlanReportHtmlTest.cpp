//===- PlanReportHtmlTest.cpp - The memory report's HTML page -----------===//
//
// What can be checked without a browser: the page is complete, the JSON is
// embedded so that no name can end the script element, and nothing is
// fetched. Drawing is checked in Chromium (test/report/check_html_report.py).
//
//===----------------------------------------------------------------------===//

#include "codegen/PlanReportHtml.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>

using namespace cairn;
using namespace cairn::codegen;

namespace {

constexpr llvm::StringLiteral kDataOpen =
    "<script type=\"application/json\" id=\"cairn-report\">\n";
constexpr llvm::StringLiteral kDataClose = "\n</script>";

std::string render(llvm::StringRef json) {
  std::string page;
  llvm::raw_string_ostream os(page);
  writePlanReportHtml(json, os);
  return page;
}

/// The text between the data script's tags, as the browser would see it.
std::string embedded(llvm::StringRef page) {
  size_t open = page.find(kDataOpen);
  EXPECT_NE(open, llvm::StringRef::npos);
  llvm::StringRef rest = page.drop_front(open + kDataOpen.size());
  size_t close = rest.find(kDataClose);
  EXPECT_NE(close, llvm::StringRef::npos);
  return rest.take_front(close).str();
}

size_t count(llvm::StringRef text, llvm::StringRef needle) {
  return text.count(needle);
}

/// Undoes the writer's only escape.
std::string unescape(llvm::StringRef text) {
  std::string out;
  while (!text.empty()) {
    if (text.consume_front("\\u003c")) {
      out += '<';
      continue;
    }
    out += text.front();
    text = text.drop_front();
  }
  return out;
}

constexpr llvm::StringLiteral kSmallReport =
    R"({"model":"mlp","batch":4,"devices":[{"device":0,"arena_bytes":64,)"
    R"("buffers":[{"name":"w","kind":"param","bytes":64,"offset":0}]}]})";

} // namespace

TEST(PlanReportHtml, WritesACompletePage) {
  std::string page = render(kSmallReport);
  llvm::StringRef text = page;
  EXPECT_TRUE(text.starts_with("<!DOCTYPE html>\n")) << text.take_front(80).str();
  EXPECT_TRUE(text.ends_with("</html>\n"));
  EXPECT_EQ(count(text, "<html"), 1u);
  EXPECT_EQ(count(text, "</body>"), 1u);
  // What the browser test reads back.
  EXPECT_NE(text.find("data-render-status=\"loading\""), llvm::StringRef::npos);
  EXPECT_NE(text.find("data-rendered-buffers=\"0\""), llvm::StringRef::npos);
  EXPECT_NE(text.find("data-render-errors=\"\""), llvm::StringRef::npos);
}

TEST(PlanReportHtml, EmbedsTheJsonUnchanged) {
  EXPECT_EQ(embedded(render(kSmallReport)), kSmallReport.str());
}

TEST(PlanReportHtml, NoNameCanEndTheScript) {
  std::string plainPage = render(kSmallReport);
  std::string json = R"({"model":"</script><script>alert(1)</script>",)"
                     R"("source":"<!--<script>","devices":[],)"
                     R"("note":"</SCRIPT >< /script"})";
  std::string page = render(json);
  // Only the page's own script tags, and no comment opener that could make
  // the parser skip the real "</script>".
  EXPECT_EQ(count(page, "</script"), count(plainPage, "</script"));
  EXPECT_EQ(llvm::StringRef(page).lower().find("</script><script>alert"),
            std::string::npos);
  EXPECT_EQ(count(page, "<!--"), 0u);
  std::string data = embedded(page);
  EXPECT_EQ(data.find('<'), std::string::npos) << data;
  EXPECT_EQ(unescape(data), json);
}

TEST(PlanReportHtml, EscapesOnlyLessThan) {
  // '>' and '&' are harmless in script data; UTF-8 and JSON escapes pass.
  std::string json = "{\"model\":\"a>b & c \\\"q\\\" \xc3\xa9 \xe2\x80\xa8\","
                     "\"x\":\"<\\/script\"}";
  EXPECT_EQ(embedded(render(json)),
            "{\"model\":\"a>b & c \\\"q\\\" \xc3\xa9 \xe2\x80\xa8\","
            "\"x\":\"\\u003c\\/script\"}");
}

TEST(PlanReportHtml, NeedsNothingFromTheNetwork) {
  std::string page = render(kSmallReport);
  for (llvm::StringRef needle :
       {"http://", "https://", "src=", "href=", "@import", "url(", "//cdn"})
    EXPECT_EQ(page.find(needle.str()), std::string::npos) << needle.str();
}

TEST(PlanReportHtml, WritesAPageForAnyText) {
  // Not JSON at all: the page is still complete, and its script reports it.
  for (llvm::StringRef json : {"", "not json", "{\"devices\":"}) {
    std::string page = render(json);
    EXPECT_TRUE(llvm::StringRef(page).ends_with("</html>\n"));
    EXPECT_EQ(embedded(page), json.str());
  }
}
