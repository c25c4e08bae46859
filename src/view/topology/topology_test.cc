#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "src/analysis/communication/communication.h"
#include "src/analysis/pipeline/pipeline_stages.h"
#include "src/model/trace_builder.h"
#include "src/view/topology/topology_graph.h"
#include "src/view/topology/topology_render.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportJsonText;

Topology TopologyOf(const Trace& t) {
  return BuildTopology(t, ComputeCommunication(t), ComputePipelineStages(t));
}

const TopoNode* FindNode(const Topology& g, TopoNodeKind kind, const std::string& label) {
  for (const TopoNode& n : g.nodes) {
    if (n.kind == kind && n.label == label) return &n;
  }
  return nullptr;
}

// Hand-made: a host thread launches two kernels on stream 7 (correlation 1
// and 2: 4 µs and 6 µs of device time, 1 µs + 2 µs of launch calls), and runs
// stages "load" (2 instances, working 1 µs each) then "infer" (1 instance,
// working 8 µs): infer limits throughput.
constexpr char kTopologyTrace[] = R"({"traceEvents":[
  {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},
  {"ph":"X","name":"stage:load","cat":"user_annotation","ts":0,"dur":2,"pid":1,"tid":1},
  {"ph":"X","name":"read","cat":"cpu_op","ts":0,"dur":1,"pid":1,"tid":1},
  {"ph":"X","name":"stage:infer","cat":"user_annotation","ts":3,"dur":10,"pid":1,"tid":1},
  {"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","ts":3,"dur":1,"pid":1,"tid":1,"args":{"correlation":1}},
  {"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","ts":5,"dur":2,"pid":1,"tid":1,"args":{"correlation":2}},
  {"ph":"X","name":"mm","cat":"cpu_op","ts":8,"dur":3,"pid":1,"tid":1},
  {"ph":"X","name":"stage:load","cat":"user_annotation","ts":14,"dur":2,"pid":1,"tid":1},
  {"ph":"X","name":"read","cat":"cpu_op","ts":14,"dur":1,"pid":1,"tid":1},
  {"ph":"X","name":"k1","cat":"kernel","ts":10,"dur":4,"pid":0,"tid":7,"args":{"correlation":1}},
  {"ph":"X","name":"k2","cat":"kernel","ts":20,"dur":6,"pid":0,"tid":7,"args":{"correlation":2}}
]})";

// Hand-made: one thread more than kMaxTopoTracks, each busier than the next,
// with a flow from the least busy (aggregated) to the busiest (drawn).
std::unique_ptr<Trace> ManyThreads(size_t threads) {
  auto trace = std::make_unique<Trace>();
  TraceBuilder b(trace.get());
  StringId name = b.Intern("work"), cat = b.Intern("cpu_op");
  for (size_t i = 0; i < threads; ++i) {
    uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(static_cast<int64_t>(i + 1)));
    b.AddSlice(track, 0, static_cast<int64_t>(1000 + i), name, cat, kNoCorrelation, 0, 0);
    if (i == 0) b.AddFlowEvent(9, 's', track, 0, true, cat);
    if (i + 1 == threads) b.AddFlowEvent(9, 'f', track, 0, true, cat);
  }
  EXPECT_TRUE(b.Finalize().ok());
  return trace;
}

size_t CountKind(const Topology& g, TopoNodeKind kind) {
  size_t n = 0;
  for (const TopoNode& node : g.nodes) n += node.kind == kind && !node.cluster;
  return n;
}

TEST(TopologyTest, ThreadsPastTheLimitAreAggregatedAndSaidSo) {
  auto at_limit = ManyThreads(kMaxTopoTracks);
  Topology g = TopologyOf(*at_limit);
  EXPECT_EQ(CountKind(g, TopoNodeKind::kThread), kMaxTopoTracks);
  EXPECT_TRUE(g.limit_note.empty());

  auto over = ManyThreads(kMaxTopoTracks + 44);
  Topology h = TopologyOf(*over);
  EXPECT_EQ(CountKind(h, TopoNodeKind::kThread), kMaxTopoTracks + 1);  // the drawn + one aggregate
  const TopoNode* agg = FindNode(h, TopoNodeKind::kThread, "44 more threads and streams (aggregated)");
  ASSERT_NE(agg, nullptr);
  int64_t agg_busy = 0;
  for (int64_t i = 0; i < 44; ++i) agg_busy += 1000 + i;  // the 44 least busy
  EXPECT_EQ(agg->time_ns, agg_busy);
  EXPECT_NE(h.limit_note.find("256 of 300 threads and streams drawn"), std::string::npos) << h.limit_note;
  size_t flows = 0;
  for (const TopoEdge& e : h.edges) flows += e.kind == TopoEdgeKind::kFlow && &h.nodes[e.from] == agg;
  EXPECT_EQ(flows, 1u);  // the aggregated thread's flow starts at the aggregate
  EXPECT_NE(TopologyToDot(h, "t").find("256 of 300"), std::string::npos);
}

TEST(TopologyTest, LaunchEdgesAndStages) {
  auto t = ImportJsonText(kTopologyTrace);
  ASSERT_NE(t, nullptr);
  Topology g = TopologyOf(*t);
  const TopoNode* main = FindNode(g, TopoNodeKind::kThread, "main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->time_ns, 2000 + 10000 + 2000);  // top-level slices: the three stage spans
  const TopoEdge* launch = nullptr;
  for (const TopoEdge& e : g.edges) {
    if (e.kind == TopoEdgeKind::kLaunch) launch = &e;
  }
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ(launch->count, 2u);
  EXPECT_EQ(launch->time_ns, 10000);
  EXPECT_EQ(launch->host_time_ns, 3000);
  EXPECT_EQ(g.nodes[launch->to].kind, TopoNodeKind::kStream);
  EXPECT_EQ(g.nodes[launch->to].time_ns, 10000);
  const TopoNode* infer = FindNode(g, TopoNodeKind::kStage, "stage infer");
  const TopoNode* load = FindNode(g, TopoNodeKind::kStage, "stage load");
  ASSERT_NE(infer, nullptr);
  ASSERT_NE(load, nullptr);
  EXPECT_TRUE(infer->highlight);
  EXPECT_FALSE(load->highlight);
  EXPECT_EQ(load->time_ns, 4000);
  bool then_edge = false;
  for (const TopoEdge& e : g.edges) {
    then_edge |= e.kind == TopoEdgeKind::kStage && e.label == "then" && &g.nodes[e.from] == load &&
                 &g.nodes[e.to] == infer;
  }
  EXPECT_TRUE(then_edge);
  EXPECT_NE(g.highlight_summary.find("stage infer"), std::string::npos);
}

// Hand-made: request spans on the SDK's "requests" track, each linked by a
// flow to a worker thread's span (3 µs and 5 µs after it starts), and one
// other flow between two worker threads.
TEST(TopologyTest, RequestPathsAndFlows) {
  auto t = ImportJsonText(R"({"traceEvents":[
    {"ph":"M","name":"thread_name","pid":1,"tid":9,"args":{"name":"requests"}},
    {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"worker"}},
    {"ph":"M","name":"thread_name","pid":1,"tid":3,"args":{"name":"other"}},
    {"ph":"X","name":"request","ts":0,"dur":20,"pid":1,"tid":9},
    {"ph":"X","name":"request","ts":30,"dur":20,"pid":1,"tid":9},
    {"ph":"X","name":"handle","ts":3,"dur":5,"pid":1,"tid":2},
    {"ph":"X","name":"handle","ts":35,"dur":5,"pid":1,"tid":2},
    {"ph":"X","name":"post","ts":60,"dur":1,"pid":1,"tid":3},
    {"ph":"s","id":1,"name":"r","cat":"request","ts":0,"pid":1,"tid":9},
    {"ph":"f","id":1,"bp":"e","name":"r","cat":"request","ts":3,"pid":1,"tid":2},
    {"ph":"s","id":2,"name":"r","cat":"request","ts":30,"pid":1,"tid":9},
    {"ph":"f","id":2,"bp":"e","name":"r","cat":"request","ts":35,"pid":1,"tid":2},
    {"ph":"s","id":3,"name":"q","cat":"queue","ts":36,"pid":1,"tid":2},
    {"ph":"f","id":3,"bp":"e","name":"q","cat":"queue","ts":60,"pid":1,"tid":3}
  ]})");
  ASSERT_NE(t, nullptr);
  Topology g = TopologyOf(*t);
  const TopoEdge* request = nullptr;
  const TopoEdge* flow = nullptr;
  for (const TopoEdge& e : g.edges) {
    if (e.kind == TopoEdgeKind::kRequest) request = &e;
    if (e.kind == TopoEdgeKind::kFlow) flow = &e;
  }
  ASSERT_NE(request, nullptr);
  EXPECT_EQ(g.nodes[request->from].label, "requests");
  EXPECT_EQ(g.nodes[request->to].label, "worker");
  EXPECT_EQ(request->count, 2u);
  EXPECT_EQ(request->time_ns, 3000 + 5000);  // Σ start-to-start
  ASSERT_NE(flow, nullptr);
  EXPECT_EQ(flow->label, "queue");
  EXPECT_EQ(flow->count, 1u);
  EXPECT_EQ(g.nodes[flow->to].label, "other");
}

TEST(TopologyTest, DotTextCannotEndAStringOrEscape) {
  EXPECT_EQ(DotText("a\"b"), "a&quot;b");
  EXPECT_EQ(DotText("a\\N"), "a\\\\N");
  EXPECT_EQ(DotText("x&amp;y"), "x&amp;amp;y");
  EXPECT_EQ(DotText("<b>"), "&lt;b&gt;");
  EXPECT_EQ(DotText("line\nbreak"), "line break");
  EXPECT_EQ(DotText("bad \xff utf8"), "bad \xEF\xBF\xBD utf8");
}

TEST(TopologyTest, HostileNamesStayTextInSvgAndHtml) {
  const std::string hostile = "</script><img src=x onerror=alert(1)>\\\"";
  std::string json = R"({"traceEvents":[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":")" +
                     std::string("</script><img src=x onerror=alert(1)>\\\\\\\"") +
                     R"("}},{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]})";
  auto t = ImportJsonText(json);
  ASSERT_NE(t, nullptr);
  Topology g = TopologyOf(*t);
  ASSERT_NE(FindNode(g, TopoNodeKind::kThread, hostile), nullptr);
  std::string dot = TopologyToDot(g, hostile);
  auto svg = LayoutSvg(dot);
  ASSERT_TRUE(svg.ok()) << svg.status().message();
  EXPECT_EQ(svg->find("<img"), std::string::npos);
  EXPECT_EQ(svg->find("<script"), std::string::npos);
  EXPECT_NE(svg->find("&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  std::string html = TopologyToHtml(g, *svg, hostile);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  size_t scripts = 0;
  for (size_t at = html.find("<script"); at != std::string::npos; at = html.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 2u);  // the page's JSON data and its script, nothing from the trace
  EXPECT_EQ(html.find("</script><img"), std::string::npos);
}

// Hand-made: a thread named by 64 KiB launching on 200 streams. Each
// edge's two tooltips name both its ends: whole, the DOT held the name 400
// times (26 MB; a 1 MiB name, 420 MB that Graphviz did not lay out in
// 150 s). Cut, each tooltip holds its first 256 bytes.
TEST(TopologyTest, LongLabelsAreCutInEveryEdgesTooltips) {
  Topology g;
  TopoNode thread;
  thread.label = "<b>" + std::string(64 << 10, 'x');
  g.nodes.push_back(thread);
  for (uint32_t s = 0; s < 200; ++s) {
    TopoNode stream;
    stream.kind = TopoNodeKind::kStream;
    stream.label = "stream " + std::to_string(s);
    g.nodes.push_back(stream);
    TopoEdge e;
    e.from = 0;
    e.to = s + 1;
    e.kind = TopoEdgeKind::kLaunch;
    e.count = 1;
    g.edges.push_back(e);
  }
  const std::string dot = TopologyToDot(g, "t");
  EXPECT_LT(dot.size(), size_t{1} << 20);
  EXPECT_EQ(dot.find(std::string(1000, 'x')), std::string::npos);
  EXPECT_NE(dot.find("&lt;b&gt;xxx"), std::string::npos);
  EXPECT_NE(dot.find("bytes in all) -&gt; stream 199"), std::string::npos) << dot.substr(dot.size() - 2000);
}

TEST(TopologyTest, MalformedDotIsAnError) {
  auto svg = LayoutSvg("digraph { a -> ");
  ASSERT_FALSE(svg.ok());
  // Graphviz's own parse error, through the module (not a module that
  // failed to load).
  EXPECT_NE(svg.status().message().find("Graphviz could not read the topology graph: "), std::string::npos)
      << svg.status().message();
  EXPECT_NE(svg.status().message().find("syntax error"), std::string::npos) << svg.status().message();
  // The module keeps working after an error.
  EXPECT_TRUE(LayoutSvg("digraph { a -> b }").ok());
}

}  // namespace
}  // namespace aiprof
