// The graph-capture merge on TraceLens's own graph-replay fixtures
// (../shared/fixtures/tracelens, SOURCES.md), laid out as TraceLens lays
// them out (a replay trace beside capture_traces/execution_details.json).
//
// Expected counts are an independent reading of the JSON in Python (no
// aiprof code): the replay's device activities whose correlation is a
// hipGraphLaunch's, and the capture's hip*Launch*/Memcpy/Memset calls between
// hipStreamBeginCapture's end and hipStreamEndCapture's start:
//   vLLM decode: 1 graph launch, 421 replayed kernels, 421 captured launches,
//                the i-th launch's "kernel" arg == the i-th kernel's name;
//   xDiT Flux:   4 graph launches x 1,566 kernels = 6,264, 1,567 captured
//                launches (one more than replayed: paired greedily).
#include "src/importers/graph_capture/graph_capture_merge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "src/importers/common/importer_registry.h"
#include "src/model/graph_capture_tracks.h"
#include "src/model/native_file.h"
#include "src/model/op_stats.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

namespace fs = std::filesystem;
using testing::FixturesDir;
using testing::TempDir;

const char kVllmReplay[] = "inference__vllm_decode_full__graph_execution.json.gz";
const char kVllmCapture[] =
    "inference__vllm_decode_full__capture_traces__graph_capture_rank_0.1773709742341309550.pt.trace.json.gz";
const char kVllmDetails[] = "inference__vllm_decode_full__capture_traces__execution_details.json";
const char kFluxReplay[] = "inference__xdit_flux.1_aiter_sage__profile_trace_rank_0.json.gz";
const char kFluxCapture[] = "inference__xdit_flux.1_aiter_sage__capture_traces__capture_trace_rank_0.json.gz";

std::string Fixture(const char* name) { return FixturesDir() + "/tracelens/" + name; }

// The vLLM fixtures as TraceLens's folder: graph_execution.json.gz and
// capture_traces/{execution_details.json, graph_capture_rank_0...}.
std::string LayOutVllm(const TempDir& dir) {
  fs::create_directories(dir.Path("vllm/capture_traces"));
  fs::copy_file(Fixture(kVllmReplay), dir.Path("vllm/graph_execution.json.gz"));
  fs::copy_file(Fixture(kVllmCapture),
                dir.Path("vllm/capture_traces/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz"));
  fs::copy_file(Fixture(kVllmDetails), dir.Path("vllm/capture_traces/execution_details.json"));
  return dir.Path("vllm");
}

std::vector<uint32_t> CaptureFlowsInto(const Trace& t, std::vector<uint32_t>* from) {
  std::vector<uint32_t> to;
  StringId cat = t.strings.Find(kGraphCaptureFlowCategory).value_or(StringId{});
  for (size_t i = 0; i < t.flows.size(); ++i) {
    if (cat.empty() || t.flows.category[i] != cat) continue;
    to.push_back(t.flows.to_slice[i]);
    from->push_back(t.flows.from_slice[i]);
  }
  return to;
}

TEST(GraphCaptureMergeTest, VllmFolderPairsEveryReplayedKernelInOrder) {
  TempDir dir;
  auto r = ImportTrace(LayOutVllm(dir));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  EXPECT_EQ(t.metadata.at("graph_capture.graph_launches"), "1");
  EXPECT_EQ(t.metadata.at("graph_capture.merged_launches"), "1");
  EXPECT_EQ(t.metadata.at("graph_capture.replayed_activities"), "421");
  EXPECT_EQ(t.metadata.at("graph_capture.matched_activities"), "421");
  EXPECT_EQ(t.metadata.at("graph_capture.unverified_activities"), "0");
  EXPECT_EQ(t.metadata.at("graph_capture.pairs_by_method"), "node id 0, in order 421, greedy 0, by name 0");
  std::vector<uint32_t> from;
  std::vector<uint32_t> to = CaptureFlowsInto(t, &from);
  ASSERT_EQ(to.size(), 421u);
  StringId kernel = t.strings.Find("kernel").value();
  std::set<uint32_t> distinct(to.begin(), to.end());
  EXPECT_EQ(distinct.size(), 421u);
  for (size_t i = 0; i < to.size(); ++i) {
    // Each copied launch names the kernel it is paired with, sits on a
    // "graph capture" track and starts where its kernel starts.
    const Arg* a = t.FindSliceArg(from[i], kernel);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(t.Str(StringId{a->str}), t.Str(t.slices.name[to[i]]));
    EXPECT_TRUE(IsDeviceActivity(t.slices.kind[to[i]]));
    EXPECT_TRUE(t.Str(t.tracks.name[t.slices.track[from[i]]]).starts_with("graph capture"));
    EXPECT_EQ(t.slices.ts_ns[from[i]], t.slices.ts_ns[to[i]]);
  }
}

// The replay FILE given alone, its capture beside it (TraceLens's layout):
// read alone, and said, naming the folder and the flags that merge it
// (merged, the same file's graph kernels join their ops: the folder test
// above). Before, nothing said a capture was there. A trace without graph
// launches beside the same folder, and the merge asked for by flag, get no
// note.
TEST(GraphCaptureMergeTest, ReplayFileBesideItsCaptureIsSaidNotMerged) {
  TempDir dir;
  const std::string folder = LayOutVllm(dir);
  const std::string replay = folder + "/graph_execution.json.gz";
  const std::string capture = folder + "/capture_traces/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz";
  auto alone = ImportTrace(replay);
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  const Trace& t = **alone;
  EXPECT_EQ(t.metadata.count("graph_capture.files"), 0u) << "merged a capture the user did not name";
  std::vector<uint32_t> from;
  EXPECT_TRUE(CaptureFlowsInto(t, &from).empty());
  ASSERT_EQ(t.diagnostics.Count("graph_capture_not_merged"), 1u);
  const DiagnosticEntry& note = t.diagnostics.entries().at("graph_capture_not_merged");
  EXPECT_EQ(note.first_where, folder + "/capture_traces/execution_details.json");
  EXPECT_NE(note.description.find("this trace replays 1 CUDA/HIP graph launch and its folder holds a graph capture"),
            std::string::npos)
      << note.description;
  EXPECT_NE(note.description.find("(aiprof analyze " + folder + ") or name the capture (" + replay +
                                  " --capture-trace " + capture + ")"),
            std::string::npos)
      << note.description;

  // Merged by flag (what the note says): no note, the capture merged.
  auto merged = ImportWithGraphCaptures(replay, {capture});
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  EXPECT_EQ((*merged)->diagnostics.Count("graph_capture_not_merged"), 0u);
  EXPECT_EQ((*merged)->metadata.at("graph_capture.matched_activities"), "421");
  // Its .aiprof file, saved beside the capture, was merged: no note either.
  const std::string native = folder + "/merged.aiprof";
  ASSERT_TRUE(WriteNativeFile(**merged, native).ok());
  auto reread = ImportTrace(native);
  ASSERT_TRUE(reread.ok()) << reread.status().message();
  EXPECT_EQ((*reread)->diagnostics.Count("graph_capture_not_merged"), 0u);
  fs::remove(native);

  // A second replay in the folder: the folder is not one run, so only the flag is named.
  fs::copy_file(Fixture(kFluxReplay), folder + "/profile_trace_rank_0.json.gz");
  auto two = ImportTrace(replay);
  ASSERT_TRUE(two.ok()) << two.status().message();
  const std::string& text = (*two)->diagnostics.entries().at("graph_capture_not_merged").description;
  EXPECT_EQ(text.find("aiprof analyze"), std::string::npos) << text;
  EXPECT_NE(text.find("name the capture (" + replay + " --capture-trace " + capture + ")"), std::string::npos) << text;

  // A trace that replays no graph (torch.compile's, beside the same capture): nothing to say.
  fs::copy_file(FixturesDir() + "/tracelens/torch_compile_triton__trace.json.gz", folder + "/eager.json.gz");
  auto eager = ImportTrace(folder + "/eager.json.gz");
  ASSERT_TRUE(eager.ok()) << eager.status().message();
  EXPECT_EQ((*eager)->diagnostics.Count("graph_capture_not_merged"), 0u);
}

TEST(GraphCaptureMergeTest, CopiedSlicesKeepTrackOrderAndNesting) {
  TempDir dir;
  auto r = ImportTrace(LayOutVllm(dir));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  const SliceTable& s = t.slices;
  size_t copied = 0;
  std::vector<uint32_t> open;  // the enclosing chain on the current track
  for (uint32_t i = 1; i < s.size(); ++i) {
    ASSERT_TRUE(s.track[i - 1] < s.track[i] || (s.track[i - 1] == s.track[i] && s.ts_ns[i - 1] <= s.ts_ns[i])) << i;
    if (!t.Str(t.tracks.name[s.track[i]]).starts_with("graph capture")) continue;
    ++copied;
    if (i > 0 && s.track[i - 1] != s.track[i]) open.clear();
    while (!open.empty() && s.depth[open.back()] >= s.depth[i]) open.pop_back();
    if (!open.empty()) {  // its depth's parent encloses it
      EXPECT_LE(s.ts_ns[open.back()], s.ts_ns[i]);
      EXPECT_GE(s.ts_ns[open.back()] + s.dur_ns[open.back()], s.ts_ns[i] + s.dur_ns[i]);
    }
    open.push_back(i);
  }
  EXPECT_GT(copied, 421u);  // the launches, their ops and modules, and the replay's root
}

// The copies are not host work: the op statistics (summary's top ops) of
// the merged trace are those of the replay trace alone, row for row.
TEST(GraphCaptureMergeTest, CopiesAreLeftOutOfTheOpStatistics) {
  TempDir dir;
  auto merged = ImportTrace(LayOutVllm(dir));
  auto plain = ImportTrace(Fixture(kVllmReplay));
  ASSERT_TRUE(merged.ok()) << merged.status().message();
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  auto rows = [](const Trace& t) {
    OpStatTable st = ComputeOpStats(t);
    std::vector<std::tuple<std::string, std::string, uint64_t, int64_t>> out;
    for (size_t g = 0; g < st.size(); ++g) {
      out.emplace_back(std::string(t.Str(st.category[g])), std::string(t.Str(st.name[g])), st.count[g],
                       st.total_ns[g]);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  auto m = rows(**merged), p = rows(**plain);
  EXPECT_EQ(m, p);
  // The merge did add copies of captured ops (so the test can fail).
  size_t copies = 0;
  for (uint32_t i = 0; i < (*merged)->slices.size(); ++i) copies += IsGraphCaptureTrack(**merged, (*merged)->slices.track[i]);
  EXPECT_GT(copies, 421u);
}

TEST(GraphCaptureMergeTest, FluxExplicitCaptureFilePairsGreedily) {
  auto r = ImportWithGraphCaptures(Fixture(kFluxReplay), {Fixture(kFluxCapture)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  EXPECT_EQ(t.metadata.at("graph_capture.windows"), "1");
  EXPECT_EQ(t.metadata.at("graph_capture.graph_launches"), "4");
  EXPECT_EQ(t.metadata.at("graph_capture.merged_launches"), "4");
  EXPECT_EQ(t.metadata.at("graph_capture.replayed_activities"), "6264");
  EXPECT_EQ(t.metadata.at("graph_capture.matched_activities"), "6264");
  EXPECT_EQ(t.metadata.at("graph_capture.pairs_by_method"), "node id 0, in order 0, greedy 6264, by name 0");
}

TEST(GraphCaptureMergeTest, CaptureWithoutCaptureWindowIsAnError) {
  // The replay trace given as its own capture: no StreamBeginCapture in it.
  auto r = ImportWithGraphCaptures(Fixture(kVllmReplay), {Fixture(kVllmReplay)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no StreamBeginCapture"), std::string::npos) << r.status().message();
}

TEST(GraphCaptureMergeTest, MismatchedCaptureIsAnErrorNotAGuess) {
  // Flux's capture for vLLM's replay: no window pairs the kernels.
  auto r = ImportWithGraphCaptures(Fixture(kVllmReplay), {Fixture(kFluxCapture)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("does not match the replay"), std::string::npos) << r.status().message();
}

TEST(GraphCaptureMergeTest, ReplayWithoutGraphLaunchIsAnError) {
  auto r = ImportWithGraphCaptures(Fixture("h100__gaunernst_bert-small-uncased__1016001.json.gz"),
                                   {Fixture(kVllmCapture)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no graph launch"), std::string::npos) << r.status().message();
}

TEST(GraphCaptureMergeTest, LayoutErrorsNameTheProblem) {
  TempDir dir;
  fs::create_directories(dir.Path("f/capture_traces"));
  dir.Write("f/capture_traces/execution_details.json", R"([{"file": "missing.json.gz", "batch_size": 1, "mode": "FULL"}])");
  auto r = FindGraphCaptureLayout(dir.Path("f"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("missing"), std::string::npos);
  dir.Write("f/capture_traces/execution_details.json", R"({"file": 3})");
  r = FindGraphCaptureLayout(dir.Path("f"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a JSON list"), std::string::npos);
  // An entry whose status cannot be read (a symbolic link loop beside the
  // replay) threw std::filesystem_error: the process aborted (exit 134).
  // It is not a replay file; the one replay is still found.
  dir.Write("f/capture_traces/c.json", "{}");
  dir.Write("f/capture_traces/execution_details.json", R"([{"file": "c.json", "batch_size": 1, "mode": "FULL"}])");
  dir.Write("f/replay.json", R"({"traceEvents": []})");
  fs::create_symlink("loop", dir.Path("f/loop"));
  r = FindGraphCaptureLayout(dir.Path("f"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(fs::path((*r)->replay).filename(), "replay.json");
  // No capture_traces/: not this layout at all.
  auto none = FindGraphCaptureLayout(dir.path());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

// Hand-made Kineto traces for the pairing methods the fixtures do not reach.
// The capture: three ops, each launching one kernel.
std::string CaptureJson(const char* kernel_args[3]) {
  const char* ops[3] = {"aten::mm", "aten::add", "aten::relu"};
  std::string out = R"({"traceEvents":[
    {"ph":"X","cat":"cuda_runtime","name":"cudaStreamBeginCapture","pid":1,"tid":1,"ts":0,"dur":1,"args":{}})";
  for (int i = 0; i < 3; ++i) {
    const int ts = 10 + 30 * i;
    out += R"(,{"ph":"X","cat":"cpu_op","name":")" + std::string(ops[i]) + R"(","pid":1,"tid":1,"ts":)" +
           std::to_string(ts) + R"(,"dur":20,"args":{}})";
    out += R"(,{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":)" + std::to_string(ts + 2) +
           R"(,"dur":2,"args":{"correlation":)" + std::to_string(i + 1) + kernel_args[i] + "}}";
  }
  out += R"(,{"ph":"X","cat":"cuda_runtime","name":"cudaStreamEndCapture","pid":1,"tid":1,"ts":100,"dur":1,"args":{}}]})";
  return out;
}

// The replay: graph launches (correlation 7, 8, ...) each running `kernels`
// ({name, extra args}) in this order, 6 µs apart.
std::string ReplayJson(const std::vector<std::vector<std::pair<std::string, std::string>>>& launches) {
  std::string out = R"({"traceEvents":[)";
  int ts = 100;
  for (size_t l = 0; l < launches.size(); ++l) {
    const std::string corr = std::to_string(7 + l);
    if (l) out += ",";
    out += R"({"ph":"X","cat":"cuda_runtime","name":"cudaGraphLaunch","pid":1,"tid":1,"ts":)" + std::to_string(ts) +
           R"(,"dur":10,"args":{"correlation":)" + corr + "}}";
    ts += 20;
    for (const auto& [name, args] : launches[l]) {
      out += R"(,{"ph":"X","cat":"kernel","name":")" + name + R"(","pid":0,"tid":7,"ts":)" + std::to_string(ts) +
             R"(,"dur":5,"args":{"correlation":)" + corr + R"(,"stream":7,"device":0)" + args + "}}";
      ts += 6;
    }
    ts += 100;
  }
  return out + "]}";
}

// The op each replayed kernel (by start time) is attributed to through its
// copied launch (whose enclosing slice is the previous one on its track).
std::vector<std::string> OpsOfReplayedKernels(const Trace& t) {
  std::vector<uint32_t> from;
  std::vector<uint32_t> to = CaptureFlowsInto(t, &from);
  std::vector<std::pair<int64_t, std::string>> by_ts;
  for (size_t i = 0; i < to.size(); ++i) {
    uint32_t f = from[i];
    EXPECT_GT(f, 0u);
    EXPECT_EQ(t.slices.depth[f - 1] + 1, t.slices.depth[f]);
    by_ts.emplace_back(t.slices.ts_ns[to[i]], std::string(t.Str(t.slices.name[f - 1])));
  }
  std::sort(by_ts.begin(), by_ts.end());
  std::vector<std::string> out;
  for (auto& [ts, op] : by_ts) out.push_back(op);
  return out;
}

StatusOr<std::unique_ptr<Trace>> MergeText(const TempDir& dir, const std::string& replay, const std::string& capture) {
  return ImportWithGraphCaptures(dir.Write("replay.json", replay), {dir.Write("capture.json", capture)});
}

TEST(GraphCaptureMergeTest, PairsByGraphNodeIdWhenBothSidesCarryOne) {
  TempDir dir;
  const char* launch_args[3] = {R"(,"graph node id":1)", R"(,"graph node id":2)", R"(,"graph node id":3)"};
  // The graph ran node 2 first: order alone would pair it with aten::mm.
  auto r = MergeText(dir, ReplayJson({{{"kB", R"(,"graph node id":2)"}, {"kA", R"(,"graph node id":1)"},
                                       {"kC", R"(,"graph node id":3)"}}}),
                     CaptureJson(launch_args));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->metadata.at("graph_capture.pairs_by_method"), "node id 3, in order 0, greedy 0, by name 0");
  EXPECT_EQ(OpsOfReplayedKernels(**r), (std::vector<std::string>{"aten::add", "aten::mm", "aten::relu"}));
}

TEST(GraphCaptureMergeTest, PairsByNameWhenTheGraphReordersNodes) {
  TempDir dir;
  const char* launch_args[3] = {R"(,"kernel":"kA")", R"(,"kernel":"kB")", R"(,"kernel":"kC")"};
  auto r = MergeText(dir, ReplayJson({{{"kB", ""}, {"kA", ""}, {"kC", ""}}}), CaptureJson(launch_args));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->metadata.at("graph_capture.pairs_by_method"), "node id 0, in order 0, greedy 0, by name 3");
  EXPECT_EQ(OpsOfReplayedKernels(**r), (std::vector<std::string>{"aten::add", "aten::mm", "aten::relu"}));
}

TEST(GraphCaptureMergeTest, UnnamedCaptureLaunchesPairInOrderUnverifiedAndMismatchesAreCounted) {
  TempDir dir;
  const char* launch_args[3] = {"", "", ""};
  // The first launch has the capture's three kernels; the second only two:
  // without kernel names nothing but the order can pair them, so it is not
  // paired, and counted.
  auto r = MergeText(dir, ReplayJson({{{"kA", ""}, {"kB", ""}, {"kC", ""}}, {{"kA", ""}, {"kB", ""}}}),
                     CaptureJson(launch_args));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  EXPECT_EQ(t.metadata.at("graph_capture.graph_launches"), "2");
  EXPECT_EQ(t.metadata.at("graph_capture.merged_launches"), "1");
  EXPECT_EQ(t.metadata.at("graph_capture.matched_activities"), "3");
  EXPECT_EQ(t.metadata.at("graph_capture.unverified_activities"), "3");
  EXPECT_EQ(t.diagnostics.entries().count("graph_capture_unpaired"), 1u);
  EXPECT_EQ(t.diagnostics.entries().count("graph_capture_unverified"), 1u);
  EXPECT_EQ(OpsOfReplayedKernels(t), (std::vector<std::string>{"aten::mm", "aten::add", "aten::relu"}));
}

}  // namespace
}  // namespace aiprof
