//===- PlanReportFileTest.cpp - --memory-report FILE ---------------------===//
//
// The report's format comes from the file's extension, and a file is written
// whole or not at all.
//
//===----------------------------------------------------------------------===//

#include "codegen/PlanReport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

using namespace cairn;
using namespace cairn::codegen;

namespace {

/// A graph of one persistent buffer and one kernel-less step, planned.
KernelGraph makeGraph(ArenaPlan &plan) {
  KernelGraph graph;
  graph.model = "Tiny";
  graph.sourceFile = "tiny.cairn";
  graph.batch = 2;
  Buffer weight;
  weight.id = 0;
  weight.name = "w";
  weight.shape = {4};
  weight.bytes = 16;
  weight.kind = BufferKind::param;
  graph.buffers.push_back(weight);
  ArenaPlanOptions options;
  options.reorder = false;
  plan = planArena(graph, options);
  return graph;
}

std::string readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : "<unreadable>";
}

TEST(PlanReportFile, FormatsByExtension) {
  EXPECT_EQ(getReportFormat("a.json"), ReportFormat::Json);
  EXPECT_EQ(getReportFormat("A.JSON"), ReportFormat::Json);
  EXPECT_EQ(getReportFormat("plan.txt"), ReportFormat::Text);
  EXPECT_EQ(getReportFormat("x/y.html"), ReportFormat::Html);
  EXPECT_EQ(getReportFormat("y.htm"), ReportFormat::Html);
  EXPECT_FALSE(getReportFormat("plan.csv"));
  EXPECT_FALSE(getReportFormat("json"));
}

TEST(PlanReportFile, WritesEachFormat) {
  ArenaPlan plan;
  KernelGraph graph = makeGraph(plan);
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("cairn-report", dir));
  std::string error;
  std::string json = (dir + "/plan.json").str();
  ASSERT_TRUE(succeeded(writePlanReportFile(graph, plan, json, error))) << error;
  EXPECT_EQ(readFile(json), formatPlanReportJson(graph, plan));
  std::string text = (dir + "/plan.txt").str();
  ASSERT_TRUE(succeeded(writePlanReportFile(graph, plan, text, error))) << error;
  EXPECT_NE(readFile(text).find("Tiny"), std::string::npos);
  std::string html = (dir + "/plan.html").str();
  ASSERT_TRUE(succeeded(writePlanReportFile(graph, plan, html, error))) << error;
  EXPECT_NE(readFile(html).find("<html"), std::string::npos);
  llvm::sys::fs::remove_directories(dir);
}

TEST(PlanReportFile, FailsWithoutLeavingAFile) {
  ArenaPlan plan;
  KernelGraph graph = makeGraph(plan);
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("cairn-report", dir));
  std::string error;
  std::string csv = (dir + "/plan.csv").str();
  EXPECT_TRUE(failed(writePlanReportFile(graph, plan, csv, error)));
  EXPECT_EQ(error, "--memory-report '" + csv +
                       "': expected a file ending in .json, .txt or .html");
  EXPECT_FALSE(llvm::sys::fs::exists(csv));
  error.clear();
  EXPECT_TRUE(failed(writePlanReportFile(
      graph, plan, "/nonexistent-dir/plan.json", error)));
  EXPECT_FALSE(error.empty());
  llvm::sys::fs::remove_directories(dir);
}

TEST(PlanReportFile, FailsMidWriteWithoutLeavingAFile) {
  // The disk is full: /dev/full behind a link takes the open and refuses
  // the bytes.
  if (!llvm::sys::fs::exists("/dev/full"))
    GTEST_SKIP() << "no /dev/full on this machine";
  ArenaPlan plan;
  KernelGraph graph = makeGraph(plan);
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("cairn-report", dir));
  std::string full = (dir + "/full.json").str();
  ASSERT_FALSE(llvm::sys::fs::create_link("/dev/full", full));
  std::string error;
  EXPECT_TRUE(failed(writePlanReportFile(graph, plan, full, error)));
  EXPECT_NE(error.find("cannot write '" + full + "'"), std::string::npos)
      << error;
  EXPECT_FALSE(llvm::sys::fs::exists(full));
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
