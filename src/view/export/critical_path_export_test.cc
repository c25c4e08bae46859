// The critical path in the exports: hand-made trace (µs) with a copy hidden
// under a kernel and a copy the host waits for; only the second is on the
// path (critical_path_test.cc works the path out by hand).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "src/analysis/critical_path/critical_path.h"
#include "src/view/export/chrome_json_export.h"
#include "src/view/export/perfetto_export.h"
#include "src/view/export/perfetto_trace_subset.pb.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

namespace pb = perfetto::protos;
using testing::ImportJsonText;

constexpr char kCopies[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":105},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":4,"dur":2,"args":{"correlation":1}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":11,"dur":2,"args":{"correlation":2}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":25,"dur":2,"args":{"correlation":4}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":30,"dur":72},
  {"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":10,"dur":60,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"gpu_memcpy","name":"hidden","pid":0,"tid":8,"ts":15,"dur":30,"args":{"device":0,"stream":8,"correlation":2}},
  {"ph":"X","cat":"gpu_memcpy","name":"stalling","pid":0,"tid":7,"ts":80,"dur":20,"args":{"device":0,"stream":7,"correlation":4}}
]})json";

TEST(CriticalPathExportTest, ChromeJsonFlagsPathSlicesAndAddsFlows) {
  auto t = ImportJsonText(kCopies);
  ASSERT_NE(t, nullptr);
  CriticalPathResult path = ComputeCriticalPath(*t);
  StringViewSink sink;
  ChromeJsonExportStats stats;
  ASSERT_TRUE(ExportChromeJson(*t, &sink, &stats, &path).ok());
  // Re-imported: the flag survives as an arg of exactly the path's slices.
  auto back = ImportJsonText(sink.str());
  ASSERT_NE(back, nullptr);
  const std::optional<StringId> key = back->strings.Find("critical_path");
  ASSERT_TRUE(key.has_value());
  auto flagged = [&](std::string_view name) {
    for (uint32_t i = 0; i < back->slices.size(); ++i) {
      if (back->Str(back->slices.name[i]) == name) return back->FindSliceArg(i, *key) != nullptr;
    }
    ADD_FAILURE() << name;
    return false;
  };
  EXPECT_TRUE(flagged("stalling"));
  EXPECT_TRUE(flagged("K1"));
  EXPECT_TRUE(flagged("cudaStreamSynchronize"));
  EXPECT_FALSE(flagged("hidden"));
  EXPECT_EQ(stats.critical_flows, path.edges.size());
  EXPECT_GT(stats.critical_flows, 0u);
  EXPECT_NE(sink.str().find("\"name\":\"sync\",\"cat\":\"critical_path\""), std::string::npos);
  // Without a path the output has neither.
  StringViewSink plain;
  ASSERT_TRUE(ExportChromeJson(*t, &plain).ok());
  EXPECT_EQ(plain.str().find("critical_path"), std::string::npos);
}

TEST(CriticalPathExportTest, PerfettoAnnotatesPathSlicesAndAddsFlows) {
  auto t = ImportJsonText(kCopies);
  ASSERT_NE(t, nullptr);
  CriticalPathResult path = ComputeCriticalPath(*t);
  StringViewSink sink;
  PerfettoExportStats stats;
  ASSERT_TRUE(ExportPerfetto(*t, &sink, &stats, &path).ok());
  pb::Trace parsed;
  ASSERT_TRUE(parsed.ParseFromString(sink.str()));
  uint64_t annotated = 0;
  size_t flagged_on_path = 0;
  for (uint32_t i = 0; i < t->slices.size(); ++i) flagged_on_path += path.on_path[i] ? 1 : 0;
  for (const pb::TracePacket& p : parsed.packet()) {
    if (!p.has_track_event()) continue;
    for (const pb::DebugAnnotation& d : p.track_event().debug_annotations()) {
      annotated += d.has_bool_value() && d.bool_value() ? 1 : 0;
    }
  }
  EXPECT_EQ(annotated, flagged_on_path);
  EXPECT_EQ(stats.critical_slices, flagged_on_path);
  EXPECT_EQ(stats.critical_flows, path.edges.size());
}

// Each critical-path flow goes where its dependency is, forward in time. On
// kCopies, worked by hand (µs): the sync flow runs from the stalling copy's
// end (100, drawn 1 µs inside: 99) to cudaStreamSynchronize's end (102: 101);
// the old export drew it from the copy's start (80) to the call's start (30),
// back in time. Stream order: K1's end (70: 69) to the copy's start (80);
// the launch: cudaLaunchKernel's start (4) to K1's start (10). Re-imported,
// each flow binds to the slices of its edge (a launch's pair is the one the
// correlation ids already linked: the import keeps one flow per pair).
TEST(CriticalPathExportTest, ChromeJsonFlowsRunFromTheDependencyForward) {
  auto t = ImportJsonText(kCopies);
  ASSERT_NE(t, nullptr);
  CriticalPathResult path = ComputeCriticalPath(*t);
  StringViewSink sink;
  ASSERT_TRUE(ExportChromeJson(*t, &sink, nullptr, &path).ok());
  const std::string out(sink.str());
  const std::regex flow(
      R"re(\{"ph":"([sf])",(?:"bp":"e",)?"id":(\d+),"name":"(\w+)","cat":"critical_path",[^}]*"ts":([0-9.]+)\})re");
  std::map<std::string, std::map<std::string, std::pair<std::string, double>>> by_id;  // id -> ph -> (name, ts)
  for (auto it = std::sregex_iterator(out.begin(), out.end(), flow); it != std::sregex_iterator(); ++it) {
    by_id[(*it)[2]][(*it)[1]] = {(*it)[3], std::stod((*it)[4])};
  }
  ASSERT_EQ(by_id.size(), path.edges.size());
  std::map<std::string, std::vector<std::pair<double, double>>> by_kind;
  for (const auto& [id, ends] : by_id) {
    ASSERT_EQ(ends.size(), 2u) << id;
    const auto& [name, s_ts] = ends.at("s");
    const double f_ts = ends.at("f").second;
    EXPECT_GE(f_ts, s_ts) << name << " flow " << id << " goes back in time";
    by_kind[name].push_back({s_ts, f_ts});
  }
  ASSERT_EQ(by_kind["sync"].size(), 1u);
  EXPECT_DOUBLE_EQ(by_kind["sync"][0].first, 99.0);
  EXPECT_DOUBLE_EQ(by_kind["sync"][0].second, 101.0);
  auto has = [&](const char* kind, double s_ts, double f_ts) {
    for (auto [a, b] : by_kind[kind]) {
      if (a == s_ts && b == f_ts) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("stream_order", 69.0, 80.0));
  EXPECT_TRUE(has("launch", 4.0, 10.0));
  // Re-imported: every edge's two slices are joined by a flow.
  auto back = ImportJsonText(out);
  ASSERT_NE(back, nullptr);
  std::set<std::pair<std::string, std::string>> linked;
  for (size_t i = 0; i < back->flows.size(); ++i) {
    linked.insert({std::string(back->Str(back->slices.name[back->flows.from_slice[i]])),
                   std::string(back->Str(back->slices.name[back->flows.to_slice[i]]))});
  }
  for (const PathEdge& e : path.edges) {
    EXPECT_TRUE(linked.count(
        {std::string(t->Str(t->slices.name[e.from_slice])), std::string(t->Str(t->slices.name[e.to_slice]))}))
        << DepKindName(e.kind) << ": " << t->Str(t->slices.name[e.from_slice]) << " -> "
        << t->Str(t->slices.name[e.to_slice]);
  }
}

}  // namespace
}  // namespace aiprof
