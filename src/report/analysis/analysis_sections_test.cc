#include "src/report/analysis/analysis_sections.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>
#include <utility>

#include "src/render/renderers.h"
#include "src/report/analysis/analyze_report.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

// Hand-made: on device 0, two 100 us kernels 200 us apart (span 400 us,
// busy 50%, one gap of 200 us in the 0.1-1 ms bucket) and a 50 us
// host-to-device copy of 1 MiB after them; the second kernel has a hostile name.
constexpr std::string_view kTrace = R"j({"traceEvents":[
 {"ph":"X","name":"gemm","cat":"kernel","pid":0,"tid":7,"ts":1000,"dur":100,"args":{"device":0,"stream":7}},
 {"ph":"X","name":"<script>x</script>\u001b[31m","cat":"kernel","pid":0,"tid":7,"ts":1300,"dur":100,"args":{"device":0,"stream":7}},
 {"ph":"X","name":"Memcpy HtoD (Pageable -> Device)","cat":"gpu_memcpy","pid":0,"tid":7,"ts":1400,"dur":50,
  "args":{"device":0,"stream":7,"bytes":1048576}}
]})j";

YAML::Node Block(const YAML::Node& section, const std::string& key) {
  for (const auto& b : section["blocks"]) {
    if (b["key"] && b["key"].as<std::string>() == key) return b;
  }
  return YAML::Node();
}

TEST(AnalysisSectionsTest, TypedTablesFromTheResults) {
  std::unique_ptr<Trace> trace = testing::ImportJsonText(kTrace);
  ASSERT_TRUE(trace);
  AnalysisResults results(*trace, AnalyzeOptions{});
  render::Document doc = AnalyzeToDocument(RunAnalyses(results), results);
  YAML::Node j = YAML::Load(render::RenderJson(doc));
  // The metrics keep their published fields.
  EXPECT_TRUE(j["metrics"]["device_util"]["value"].IsScalar());
  EXPECT_EQ(j["metrics"]["device_util"]["unit"].as<std::string>(), "ratio");
  // Breakdown: shares of the 450 us span (kernels 200 us, copy 50 us, idle 200 us).
  YAML::Node timelines = Block(j["sections"]["breakdown"], "timelines");
  ASSERT_TRUE(timelines) << render::RenderJson(doc);
  EXPECT_EQ(timelines["rows"][0]["timeline"].as<std::string>(), "device 0");
  EXPECT_EQ(timelines["rows"][0]["span_ns"].as<int64_t>(), 450000);
  EXPECT_NEAR(timelines["rows"][0]["idle"].as<double>(), 200.0 / 450, 1e-9);
  YAML::Node hist = Block(j["sections"]["breakdown"], "gap_histogram");
  ASSERT_TRUE(hist);
  EXPECT_EQ(hist["rows"][3]["bucket"].as<std::string>(), "0.1-1ms");
  EXPECT_EQ(hist["rows"][3]["gaps"].as<int>(), 1);
  EXPECT_EQ(hist["rows"][3]["time_ns"].as<int64_t>(), 200000);
  // Memcpy: one host-to-device copy of 1 MiB in 50 us.
  YAML::Node copies = Block(j["sections"]["memcpy"], "directions");
  ASSERT_TRUE(copies);
  EXPECT_EQ(copies["rows"][0]["copies"].as<int>(), 1);
  EXPECT_EQ(copies["rows"][0]["time_ns"].as<int64_t>(), 50000);
  EXPECT_EQ(copies["rows"][0]["bytes"].as<double>(), 1048576);
  // For people: units formatted, the hostile name escaped.
  std::string text = render::RenderText(doc);
  EXPECT_NE(text.find("1.0 MiB"), std::string::npos) << text;
  // A metric's unit once: "200.0 µs", not "200.0 µs ns" (audit 13a).
  EXPECT_EQ(text.find("µs ns"), std::string::npos) << text;
  EXPECT_EQ(text.find("% ratio"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(render::RenderHtmlPage(doc).find("<script>x"), std::string::npos);
  // Every analysis has a section function; an unknown name has none.
  for (std::string_view name : AnalysisNames()) {
    render::Section s;
    EXPECT_TRUE(AddAnalysisSection(name, results, &s)) << name;
  }
  render::Section none;
  EXPECT_FALSE(AddAnalysisSection("nope", results, &none));
}

// Hand-made: one step (0-50 us) holds a cudaGraphLaunch replaying kernels A,
// B, C and a cudaLaunchKernel launching D; a cudaLaunchKernel after the step
// launches E. Beside "Kernels" (5) the launches section counts kernels
// launched inside steps (A-D: 4), and separately the launch calls starting
// inside steps (2, a graph launch once), which launches_per_step divides.
// Before, "Launched inside steps" showed the 2 calls among kernel counts.
TEST(AnalysisSectionsTest, LaunchedInsideStepsCountsKernels) {
  std::unique_ptr<Trace> trace = testing::ImportJsonText(R"({"traceEvents":[
    {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":50},
    {"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":1,"tid":1,"ts":0,"dur":10,"args":{"correlation":1}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":12,"dur":4,"args":{"correlation":2}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":60,"dur":4,"args":{"correlation":3}},
    {"ph":"X","cat":"kernel","name":"A","pid":0,"tid":7,"ts":20,"dur":2,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"B","pid":0,"tid":7,"ts":27,"dur":3,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"C","pid":0,"tid":7,"ts":32,"dur":1,"args":{"device":0,"stream":7,"correlation":1}},
    {"ph":"X","cat":"kernel","name":"D","pid":0,"tid":7,"ts":40,"dur":3,"args":{"device":0,"stream":7,"correlation":2}},
    {"ph":"X","cat":"kernel","name":"E","pid":0,"tid":7,"ts":70,"dur":3,"args":{"device":0,"stream":7,"correlation":3}}
  ]})");
  ASSERT_TRUE(trace);
  AnalysisResults results(*trace, AnalyzeOptions{});
  render::Document doc = AnalyzeToDocument(RunAnalyses(results), results);
  YAML::Node j = YAML::Load(render::RenderJson(doc));
  YAML::Node kv;
  for (const auto& b : j["sections"]["launches"]["blocks"]) {
    if (b["values"] && b["values"]["kernels"]) kv = b["values"];
  }
  ASSERT_TRUE(kv) << render::RenderJson(doc);
  EXPECT_EQ(kv["kernels"]["value"].as<int>(), 5);
  EXPECT_EQ(kv["linked"]["value"].as<int>(), 5);
  EXPECT_EQ(kv["launched_in_steps"]["value"].as<int>(), 4);
  EXPECT_EQ(kv["launch_calls"]["value"].as<int>(), 3);
  EXPECT_EQ(kv["launch_calls_in_steps"]["value"].as<int>(), 2);
  EXPECT_EQ(j["metrics"]["launches_per_step"]["value"].as<double>(), 2);
  // No host op (cpu_op) to attribute device time to: no op coverage figure
  // (it printed 0.0% on Nsight exports: trial_workloads S5).
  EXPECT_TRUE(kv["op_coverage"]["value"].IsNull()) << render::RenderJson(doc);
  EXPECT_EQ(kv["op_coverage"]["label"].as<std::string>(),
            "Op coverage (no host ops in the trace to attribute device time to)");
}

// vLLM's decode steps (TraceLens's graph_execution): beside the wall per
// token (the phase's inverse throughput: 32 requests a step) the table gives
// the wall per step, each running request's time per token (trial_workloads S4).
TEST(AnalysisSectionsTest, LlmPhasesGiveTheWallPerStep) {
  auto trace = testing::ImportFixture("tracelens/inference__vllm_decode_full__graph_execution.json.gz");
  ASSERT_TRUE(trace);
  AnalysisResults results(*trace, AnalyzeOptions{});
  render::Document doc = AnalyzeToDocument(RunAnalyses(results), results);
  YAML::Node j = YAML::Load(render::RenderJson(doc));
  YAML::Node phases = Block(j["sections"]["llm"], "phases");
  ASSERT_TRUE(phases) << render::RenderJson(doc);
  ASSERT_EQ(phases["rows"].size(), 1u);
  const YAML::Node row = phases["rows"][0];
  EXPECT_EQ(row["phase"].as<std::string>(), "decode");
  const double wall = row["wall_ns"].as<double>(), steps = row["steps"].as<double>();
  EXPECT_DOUBLE_EQ(row["wall_per_step_ns"].as<double>(), wall / steps);
  EXPECT_NEAR(row["wall_per_step_ns"].as<double>(), 19.11e6, 0.01e6);  // trial_workloads' script: 19,114,059 ns
}

// Hand-made two-rank folder: rank 0 runs one all-reduce of 100 us; rank 1 an
// all-reduce of 60 us and a broadcast of 20 us. The collective-type table has
// a row per rank and type; each share is of that rank's collective time:
// rank 0 all_reduce 100/100 = 1, rank 1 all_reduce 60/80 = 0.75, broadcast
// 20/80 = 0.25. Before, shares were of both ranks' 180 us (0.556, 0.333,
// 0.111) in a per-rank table.
TEST(AnalysisSectionsTest, CollectiveShareIsOfTheRanksOwnTime) {
  auto rank = [](int r, const std::string& kernels) {
    return R"({"distributedInfo":{"backend":"nccl","rank":)" + std::to_string(r) + R"(},"traceEvents":[)" + kernels +
           "]}";
  };
  auto kernel = [](const char* name, int ts, int dur) {
    return std::string(R"({"ph":"X","cat":"kernel","name":")") + name + R"(","pid":0,"tid":7,"ts":)" +
           std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + R"(,"args":{"device":0,"stream":7}})";
  };
  std::unique_ptr<Trace> trace = testing::ImportJsonFolder(
      {{"rank0.json", rank(0, kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 100, 100))},
       {"rank1.json", rank(1, kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 100, 60) + "," +
                                  kernel("ncclKernel_Broadcast_RING_LL_Sum_float", 300, 20))}});
  ASSERT_TRUE(trace);
  AnalysisResults results(*trace, AnalyzeOptions{});
  render::Document doc = AnalyzeToDocument(RunAnalyses(results), results);
  YAML::Node j = YAML::Load(render::RenderJson(doc));
  YAML::Node types = Block(j["sections"]["communication"], "types");
  ASSERT_TRUE(types) << render::RenderJson(doc);
  std::map<std::pair<int, std::string>, double> share;
  for (const auto& row : types["rows"]) {
    share[{row["rank"].as<int>(), row["type"].as<std::string>()}] = row["share"].as<double>();
  }
  ASSERT_EQ(share.size(), 3u) << render::RenderJson(doc);
  EXPECT_NEAR((share[{0, "all_reduce"}]), 1.0, 1e-12);
  EXPECT_NEAR((share[{1, "all_reduce"}]), 0.75, 1e-12);
  EXPECT_NEAR((share[{1, "broadcast"}]), 0.25, 1e-12);
}

// Hand-made: [memory] events with Bytes only (2021 Kineto). The memory
// section says what they lack; before it said "No [memory] events.".
TEST(AnalysisSectionsTest, MemorySectionNamesBytesOnlyEvents) {
  std::unique_ptr<Trace> trace = testing::ImportJsonText(R"({"traceEvents":[
    {"ph":"i","s":"t","cat":"cpu_instant_event","name":"[memory]","pid":1,"tid":1,"ts":5,
     "args":{"Device Type":1,"Device Id":0,"Bytes":300}}]})");
  ASSERT_TRUE(trace);
  AnalysisResults results(*trace, AnalyzeOptions{});
  render::Section s;
  ASSERT_TRUE(AddAnalysisSection("memory", results, &s));
  render::Document doc;
  doc.sections.push_back(std::move(s));
  std::string text = render::RenderText(doc);
  EXPECT_NE(text.find("The trace's 1 [memory] events carry each allocation's Bytes only"), std::string::npos) << text;
  EXPECT_EQ(text.find("No [memory] events"), std::string::npos) << text;
}

}  // namespace
}  // namespace aiprof
