#include "src/report/summary/summary_report.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "src/model/trace_builder.h"
#include "src/render/renderers.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

// Hand-made: two steps on one thread, a kernel on a GPU stream nested
// nowhere, a hostile op name.
constexpr std::string_view kSummaryTrace = R"({"traceEvents":[
 {"ph":"X","name":"ProfilerStep#1","cat":"user_annotation","pid":1,"tid":1,"ts":1000,"dur":100},
 {"ph":"X","name":"<script>alert(1)</script>|*x*\u001b[31m","cat":"cpu_op","pid":1,"tid":1,"ts":1010,"dur":40},
 {"ph":"X","name":"ProfilerStep#2","cat":"user_annotation","pid":1,"tid":1,"ts":1100,"dur":50},
 {"ph":"X","name":"gemm","cat":"kernel","pid":0,"tid":7,"ts":1020,"dur":30,"args":{"device":0,"stream":7}}
]})";

TEST(SummaryReportTest, DocumentTablesAndJsonForm) {
  std::unique_ptr<Trace> trace = testing::ImportJsonText(kSummaryTrace);
  ASSERT_TRUE(trace);
  Summary s = ComputeSummary(*trace);
  render::Document doc = SummaryToDocument(*trace, s, SummaryReportOptions{});
  // JSON is the published schema, exact microseconds.
  YAML::Node j = YAML::Load(render::RenderJson(doc));
  EXPECT_EQ(j["schema"].as<std::string>(), "aiprof.summary/1");
  EXPECT_EQ(j["totals"]["slices"].as<int>(), 4);
  EXPECT_EQ(j["steps"].size(), 2u);
  std::string text = render::RenderText(doc);
  // Steps: 100 us and 50 us; the op table ranks by self time (ProfilerStep
  // wrappers left out: 40 us op, 30 us kernel).
  EXPECT_NE(text.find("Top 2 ops by self time (of 2; profiler wrappers left out)"), std::string::npos) << text;
  EXPECT_NE(text.find("ProfilerStep#1"), std::string::npos) << text;
  EXPECT_NE(text.find("100.0 µs"), std::string::npos) << text;
  EXPECT_NE(text.find(" 40.0 µs"), std::string::npos) << text;
  EXPECT_NE(text.find("Import diagnostics\n------------------\nnone\n"), std::string::npos) << text;
  // The hostile name is escaped for the terminal, Markdown and HTML.
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(render::RenderMarkdown(doc).find("<script>"), std::string::npos);
  EXPECT_EQ(render::RenderHtmlPage(doc).find("<script>alert"), std::string::npos);
  // --top limits the people's table, not what it says it left out.
  SummaryReportOptions top1;
  top1.top_n = 1;
  EXPECT_NE(render::RenderText(SummaryToDocument(*trace, s, top1)).find("Top 1 ops by self time (of 2;"),
            std::string::npos);
}

// Hand-made: three 100 us steps, each with a kernel it launched, then a
// 5 us ProfilerStep#4 the profiler stopped in (no work), then the profiler's
// closing sync. The summary lists all four; the last is marked truncated in
// JSON (the key only there) and named under the text's Steps table, as the
// steady-state figures leave it out (src/analysis/window/analysis_window.h).
TEST(SummaryReportTest, TruncatedLastStepIsMarked) {
  std::string ev;
  for (int k = 0; k < 3; ++k) {
    const std::string ts = std::to_string(1000 + 100 * k), corr = std::to_string(k + 1);
    ev += R"({"ph":"X","name":"ProfilerStep#)" + std::to_string(k + 1) +
          R"(","cat":"user_annotation","pid":1,"tid":1,"ts":)" + ts + R"(,"dur":100},)";
    ev += R"({"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","pid":1,"tid":1,"ts":)" + ts +
          R"(,"dur":2,"args":{"correlation":)" + corr + "}},";
    ev += R"({"ph":"X","name":"gemm","cat":"kernel","pid":0,"tid":7,"ts":)" + ts +
          R"(,"dur":30,"args":{"device":0,"stream":7,"correlation":)" + corr + "}},";
  }
  const std::string three_steps = ev;
  ev += R"({"ph":"X","name":"ProfilerStep#4","cat":"user_annotation","pid":1,"tid":1,"ts":1300,"dur":5},)";
  ev += R"({"ph":"X","name":"cudaDeviceSynchronize","cat":"cuda_runtime","pid":1,"tid":1,"ts":1400,"dur":10})";
  std::unique_ptr<Trace> trace = testing::ImportJsonText(R"({"traceEvents":[)" + ev + "]}");
  ASSERT_TRUE(trace);
  Summary s = ComputeSummary(*trace);
  ASSERT_EQ(s.steps.size(), 4u);
  EXPECT_FALSE(s.steps[2].truncated);
  EXPECT_TRUE(s.steps[3].truncated);
  YAML::Node j = YAML::Load(SummaryToJson(*trace, s, SummaryReportOptions{}));
  ASSERT_EQ(j["steps"].size(), 4u);
  EXPECT_FALSE(j["steps"][2]["truncated"]);
  EXPECT_TRUE(j["steps"][3]["truncated"].as<bool>());
  std::string text = render::RenderText(SummaryToDocument(*trace, s, SummaryReportOptions{}));
  EXPECT_NE(text.find("1 truncated last step (ProfilerStep#4): cut short where the recording stopped"),
            std::string::npos)
      << text;
  // Without the fragment (a 1 us op in its place) nothing is said.
  std::unique_ptr<Trace> whole =
      testing::ImportJsonText(R"({"traceEvents":[)" + three_steps +
                              R"({"ph":"X","name":"x","cat":"cpu_op","pid":1,"tid":1,"ts":1300,"dur":1}]})");
  ASSERT_TRUE(whole);
  std::string whole_text =
      render::RenderText(SummaryToDocument(*whole, ComputeSummary(*whole), SummaryReportOptions{}));
  EXPECT_EQ(whole_text.find("truncated"), std::string::npos) << whole_text;
}

// One "top N" for every format (audit 9: JSON and CSV --top 3 listed
// "PyTorch Profiler (0)" and ProfilerStep#8 by total time where the text
// table leaves wrappers out and ranks by self time): the ops --top keeps and
// their order are the text table's; without --top the machine forms add the
// wrappers after them. CSV has the JSON's self_us and profiler_wrapper.
TEST(SummaryReportTest, EveryFormatListsTheSameTopOps) {
  std::unique_ptr<Trace> trace = testing::ImportJsonText(kSummaryTrace);
  ASSERT_TRUE(trace);
  const Summary s = ComputeSummary(*trace);
  const std::string hostile = "<script>alert(1)</script>|*x*\x1b[31m";
  SummaryReportOptions top2;
  top2.top_n = 2;
  YAML::Node j = YAML::Load(SummaryToJson(*trace, s, top2));
  ASSERT_EQ(j["ops"].size(), 2u);
  EXPECT_EQ(j["ops"][0]["name"].as<std::string>(), hostile);  // self 40 us (total 40)
  EXPECT_EQ(j["ops"][1]["name"].as<std::string>(), "gemm");   // self 30 us; ProfilerStep#1 has 100 us total
  EXPECT_EQ(j["ops_limited_by_top"].as<int>(), 2);
  const std::string csv = SummaryToCsv(*trace, s, top2);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "name,category,count,total_us,self_us,profiler_wrapper,device_record,mean_us,p50_us,p99_us,max_us");
  EXPECT_NE(csv.find("\ngemm,kernel,1,30,30,false,false,30,30,30,30\n"), std::string::npos) << csv;
  EXPECT_EQ(csv.find("ProfilerStep"), std::string::npos) << csv;
  const std::string text = render::RenderText(SummaryToDocument(*trace, s, top2));
  EXPECT_LT(text.find("alert(1)"), text.find("gemm")) << text;
  EXPECT_NE(text.find("Top 2 ops by self time"), std::string::npos) << text;

  // Every op: the ranked ones, then the wrappers (largest total first).
  YAML::Node all = YAML::Load(SummaryToJson(*trace, s, SummaryReportOptions{}));
  ASSERT_EQ(all["ops"].size(), 4u);
  EXPECT_TRUE(all["ops_limited_by_top"].IsNull());
  EXPECT_EQ(all["ops"][1]["name"].as<std::string>(), "gemm");
  EXPECT_EQ(all["ops"][2]["name"].as<std::string>(), "ProfilerStep#1");
  EXPECT_TRUE(all["ops"][2]["profiler_wrapper"].as<bool>());
  EXPECT_EQ(all["ops"][3]["name"].as<std::string>(), "ProfilerStep#2");
  const std::string all_csv = SummaryToCsv(*trace, s, SummaryReportOptions{});
  EXPECT_NE(all_csv.find("\nProfilerStep#1,user_annotation,1,100,60,true,"), std::string::npos) << all_csv;
}

// The LLM-serving figures (SDK requests with tokens) as their own table, in
// their units; a trace without them has no such section.
// Host samples: a section and a JSON key only when the trace has samples;
// a hostile frame name is escaped in every format.
TEST(SummaryReportTest, HostSamplesOnlyWithSamples) {
  std::unique_ptr<Trace> plain = testing::ImportJsonText(kSummaryTrace);
  ASSERT_TRUE(plain);
  render::Document none = SummaryToDocument(*plain, ComputeSummary(*plain), SummaryReportOptions{});
  EXPECT_EQ(render::RenderJson(none).find("host_samples"), std::string::npos);
  EXPECT_EQ(render::RenderText(none).find("Host samples"), std::string::npos);

  Trace t;
  TraceBuilder b(&t);
  uint32_t th = b.ThreadTrack(IdValue::Num(5), IdValue::Num(6));
  StringId mod = b.Intern("/usr/lib/libtorch_cpu.so");
  uint32_t root = b.InternCallsite(kNoCallsite, b.Intern("main"), mod, FrameKind::kNative);
  uint32_t leaf = b.InternCallsite(root, b.Intern("<script>x</script>\x1b[31m"), mod, FrameKind::kNative);
  b.AddStackSample(th, 10, leaf, 1000);
  b.AddStackSample(th, 20, leaf, 1000);
  b.AddStackSample(th, 30, root, 1000);
  ASSERT_TRUE(b.Finalize().ok());
  SummaryReportOptions o;
  o.top_n = 1;
  render::Document doc = SummaryToDocument(t, ComputeSummary(t), o);
  YAML::Node j = YAML::Load(render::RenderJson(doc));
  YAML::Node h = j["host_samples"];
  ASSERT_TRUE(h.IsMap());
  EXPECT_EQ(h["samples"].as<int>(), 3);
  EXPECT_EQ(h["with_python"].as<int>(), 0);
  EXPECT_TRUE(h["truncated"].IsNull());
  ASSERT_EQ(h["top_self"].size(), 1u);  // --top 1
  EXPECT_EQ(h["top_self"][0]["function"].as<std::string>(), "<script>x</script>\x1b[31m");
  EXPECT_EQ(h["top_self"][0]["self_samples"].as<int>(), 2);
  EXPECT_EQ(h["top_total"][0]["function"].as<std::string>(), "main");
  EXPECT_EQ(h["top_total"][0]["total_samples"].as<int>(), 3);
  EXPECT_EQ(h["threads"][0]["tid"].as<int>(), 6);
  EXPECT_EQ(h["threads"][0]["top_function_samples"].as<int>(), 2);
  const std::string text = render::RenderText(doc);
  EXPECT_NE(text.find("Host samples (3, 1 threads)"), std::string::npos) << text;
  EXPECT_NE(text.find("Stack samples"), std::string::npos) << text;
  EXPECT_NE(text.find("No ops in this trace (no slices)"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(render::RenderHtmlBody(doc).find("<script>x"), std::string::npos);
}

TEST(SummaryReportTest, RequestTokenFiguresInTheirUnits) {
  std::unique_ptr<Trace> trace = testing::ImportJsonText(kSummaryTrace);
  ASSERT_TRUE(trace);
  Summary s = ComputeSummary(*trace);
  EXPECT_EQ(render::RenderText(SummaryToDocument(*trace, s, SummaryReportOptions{})).find("Requests with tokens"),
            std::string::npos);
  s.requests.requests.resize(2);
  s.requests.output_tokens = 40;
  s.requests.prompt_tokens = 100;
  s.requests.ttft_ns = {2, 15'000'000, 15'000'000, 20'000'000, 20'000'000, 20'000'000};
  s.requests.tokens_per_s = {2, 50, 50, 60, 60, 60};
  std::string text = render::RenderText(SummaryToDocument(*trace, s, SummaryReportOptions{}));
  EXPECT_NE(text.find("Requests with tokens (2; 40 output, 100 prompt tokens)"), std::string::npos) << text;
  EXPECT_NE(text.find("time to first token"), std::string::npos) << text;
  EXPECT_NE(text.find("15.00 ms"), std::string::npos) << text;
  EXPECT_EQ(text.find("time per output token"), std::string::npos) << text;  // no TPOT figures: no row
}

}  // namespace
}  // namespace aiprof
