// Analyses run side by side (RunAnalyses); the report must not depend on how
// many threads ran them. Real traces: a CPU torch.profiler trace and a GPU
// Kineto trace with kernels, launches and NCCL collectives.
#include <gtest/gtest.h>

#include <string>

#include "src/analysis/analyze.h"
#include "src/base/threads.h"
#include "src/render/renderers.h"
#include "src/report/analysis/analyze_report.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

std::string AnalyzeJson(const Trace& trace) {
  AnalysisResults results(trace, AnalyzeOptions{});
  return render::RenderJson(AnalyzeToDocument(RunAnalyses(results), results));
}

TEST(AnalyzeThreadsTest, SameReportForAnyThreadCount) {
  for (const char* file : {"torch-cpu/resnet18_bs1_full.kineto.json",
                           "kineto/HolisticTraceAnalysis__tests__data__nccl_parser_config__nccl_data.json.gz"}) {
    auto trace = testing::ImportPath(std::string(AIPROF_FIXTURES_DIR) + "/" + file);
    ASSERT_TRUE(trace.ok()) << trace.status().message();
    SetWorkerThreads(1);
    const std::string serial = AnalyzeJson(*trace.value());
    for (size_t threads : {2, 4, 11}) {
      SetWorkerThreads(threads);
      EXPECT_TRUE(AnalyzeJson(*trace.value()) == serial) << file << " " << threads;
    }
    SetWorkerThreads(0);
    EXPECT_GT(serial.size(), 1000u);
  }
}

}  // namespace
}  // namespace aiprof
