// Flame graph tree, folded, speedscope and SVG writers on small hand-made
// traces (built with TraceBuilder; every expected figure worked out by hand).
#include "src/view/flame/flame_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <simdjson.h>

#include "src/model/trace_builder.h"
#include "src/view/flame/flame_html.h"
#include "src/view/flame/flame_speedscope.h"
#include "src/view/flame/flame_svg.h"
#include "src/view/flame/flame_view.h"

namespace aiprof {
namespace {

// main thread "worker": a [0,100) > b [10,40) > c [20,30); b [50,70); d [60,90)
// starts inside b and outlives it (kept whole under a, b has [50,60)); a
// second root a [200,210).
std::unique_ptr<Trace> SpanTrace(std::string_view hostile = "") {
  auto trace = std::make_unique<Trace>();
  TraceBuilder b(trace.get());
  uint32_t t = b.ThreadTrack(IdValue::Num(1), IdValue::Num(7));
  b.SetThreadName(t, b.Intern("worker"));
  StringId op = b.Intern("cpu_op");
  auto add = [&](int64_t ts, int64_t dur, std::string_view name) {
    b.AddSlice(t, ts, dur, b.Intern(name), op, kNoCorrelation, b.ArgCursor(), 0);
  };
  add(0, 100, "a");
  add(10, 30, "b");
  add(20, 10, "c");
  add(50, 20, "b");
  add(60, 30, "d");
  add(200, 10, "a");
  add(300, 0, "zero");  // zero-length: no frame
  if (!hostile.empty()) add(400, 5, hostile);
  EXPECT_TRUE(b.Finalize().ok());
  return trace;
}

uint32_t FindPath(const FrameTree& tree, std::string_view path) {
  for (uint32_t f = 0; f < tree.size(); ++f) {
    if (tree.PathOf(f, ";") == path) return f;
  }
  return kNoFrame;
}

TEST(FlameGraphTest, SpanNestingTotalsAndSelfTimes) {
  auto trace = SpanTrace();
  StatusOr<FrameTree> tree = BuildFrameTree(*trace, ViewOptions{});
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  EXPECT_FALSE(tree->from_samples);
  EXPECT_EQ(tree->events, 6u);
  EXPECT_EQ(tree->outliving_events, 1u);  // d ends at 90, after b's end at 70
  EXPECT_EQ(tree->root_total_ns(), 110);  // a: 100 + 10
  uint32_t a = FindPath(*tree, "worker;a"), ab = FindPath(*tree, "worker;a;b");
  uint32_t abc = FindPath(*tree, "worker;a;b;c"), ad = FindPath(*tree, "worker;a;d");
  ASSERT_NE(a, kNoFrame);
  ASSERT_NE(ad, kNoFrame);
  EXPECT_EQ(FindPath(*tree, "worker;a;b;d"), kNoFrame);
  EXPECT_EQ(tree->total_ns[a], 110);
  EXPECT_EQ(tree->total_ns[ab], 40);   // [10, 40) and [50, 60): d has the time from 60
  EXPECT_EQ(tree->total_ns[abc], 10);
  EXPECT_EQ(tree->total_ns[ad], 30);   // [60, 90), whole
  EXPECT_EQ(tree->self_ns[a], 40);     // [0,10) [40,50) [90,100) and the second a
  EXPECT_EQ(tree->self_ns[ab], 30);    // [10,20) [30,40) [50,60)
  EXPECT_EQ(FindPath(*tree, "worker;zero"), kNoFrame);
  EXPECT_EQ(FoldedStacks(*tree), "worker;a 40\nworker;a;b 30\nworker;a;b;c 10\nworker;a;d 30\n");
}

// torch (with_stack=True) opens ProfilerStep#N and `## backward ##` inside
// the short `_record_function_enter_new` call that creates them: each is
// kept whole under the slice that encloses it, and a frame's self time is
// the time it is the latest started open slice (`aiprof query`'s self_ns).
// The old builder clipped both labels to the enter call (2 ns and 1 ns) and
// gave their time to `run` and `train_step`.
std::unique_ptr<Trace> LabelOpenedInEnterCallTrace() {
  auto trace = std::make_unique<Trace>();
  TraceBuilder b(trace.get());
  uint32_t t = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  b.SetThreadName(t, b.Intern("main"));
  const StringId py = b.Intern("python_function"), op = b.Intern("cpu_op"), ua = b.Intern("user_annotation");
  auto add = [&](int64_t ts, int64_t dur, std::string_view name, StringId cat) {
    b.AddSlice(t, ts, dur, b.Intern(name), cat, kNoCorrelation, b.ArgCursor(), 0);
  };
  add(0, 2000, "run", py);
  add(5, 4, "_record_function_enter_new", py);  // [5, 9)
  add(7, 1900, "ProfilerStep#3", ua);           // [7, 1907): outlives the enter call
  add(20, 1000, "train_step", py);              // [20, 1020)
  add(30, 3, "_record_function_enter_new", py); // [30, 33)
  add(32, 800, "## backward ##", ua);           // [32, 832): outlives the enter call
  add(100, 200, "aten::mm", op);                // [100, 300)
  EXPECT_TRUE(b.Finalize().ok());
  return trace;
}

TEST(FlameGraphTest, ALabelOpenedInsideItsEnterCallKeepsItsTime) {
  auto trace = LabelOpenedInEnterCallTrace();
  StatusOr<FrameTree> tree = BuildFrameTree(*trace, ViewOptions{});
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(tree->outliving_events, 2u);
  EXPECT_EQ(tree->root_total_ns(), 2000);
  EXPECT_EQ(FoldedStacks(*tree),
            "main;run 98\n"                                          // [0,5) [1907,2000)
            "main;run;ProfilerStep#* 900\n"                          // [7,20) [1020,1907)
            "main;run;ProfilerStep#*;train_step 198\n"               // [20,30) [832,1020)
            "main;run;ProfilerStep#*;train_step;## backward ## 600\n" // [32,100) [300,832)
            "main;run;ProfilerStep#*;train_step;## backward ##;aten::mm 200\n"
            "main;run;ProfilerStep#*;train_step;_record_function_enter_new 2\n"  // [30,32)
            "main;run;_record_function_enter_new 2\n");             // [5,7)
  EXPECT_EQ(tree->total_ns[FindPath(*tree, "main;run;ProfilerStep#*")], 1900);
  EXPECT_EQ(tree->total_ns[FindPath(*tree, "main;run;ProfilerStep#*;train_step;## backward ##")], 800);
}

// The speedscope (evented) form follows the same rule: the enter call
// closes where the label it outlived opens, so each frame's time on top is
// the folded self time above.
TEST(FlameGraphTest, SpeedscopeEventedKeepsALabelOpenedInsideItsEnterCall) {
  auto trace = LabelOpenedInEnterCallTrace();
  StringViewSink sink;
  ASSERT_TRUE(WriteSpeedscope(*trace, ViewOptions{}, &sink).ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(sink.str()).get(doc), simdjson::SUCCESS) << sink.str();
  simdjson::dom::array frames = doc["shared"]["frames"];
  simdjson::dom::element p = simdjson::dom::array(doc["profiles"]).at(0);
  std::vector<uint64_t> open;
  std::map<std::string, int64_t> on_top;  // frame name -> time on top of the stack
  int64_t last = 0;
  for (simdjson::dom::element e : simdjson::dom::array(p["events"])) {
    int64_t at = e["at"];
    if (!open.empty()) on_top[std::string(std::string_view(frames.at(open.back())["name"]))] += at - last;
    last = at;
    uint64_t frame = e["frame"];
    if (std::string_view(e["type"]) == "O") {
      open.push_back(frame);
    } else {
      ASSERT_FALSE(open.empty());
      ASSERT_EQ(open.back(), frame);
      open.pop_back();
    }
  }
  EXPECT_TRUE(open.empty());
  EXPECT_EQ(on_top, (std::map<std::string, int64_t>{{"run", 98},
                                                    {"ProfilerStep#3", 900},
                                                    {"train_step", 198},
                                                    {"## backward ##", 600},
                                                    {"aten::mm", 200},
                                                    {"_record_function_enter_new", 4}}));
  EXPECT_EQ(int64_t(p["endValue"]), 2000);
}

TEST(FlameGraphTest, StepMarkersMergeIntoOneFrame) {
  Trace trace;
  TraceBuilder b(&trace);
  uint32_t t = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  StringId cat = b.Intern("user_annotation");
  b.AddSlice(t, 0, 10, b.Intern("ProfilerStep#1"), cat, kNoCorrelation, 0, 0);
  b.AddSlice(t, 10, 30, b.Intern("ProfilerStep#2"), cat, kNoCorrelation, 0, 0);
  b.AddSlice(t, 40, 5, b.Intern("ProfilerStep#x"), cat, kNoCorrelation, 0, 0);  // not a step number
  ASSERT_TRUE(b.Finalize().ok());
  StatusOr<FrameTree> tree = BuildFrameTree(trace, ViewOptions{});
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(FoldedStacks(*tree), "thread 1;ProfilerStep#* 40\nthread 1;ProfilerStep#x 5\n");
}

// Two threads sampled: stacks main>f>g (3 samples of 10 ns) and main>f
// (1 sample), h alone on the other thread (2 samples of 5 ns), and one
// sample without a stack.
std::unique_ptr<Trace> SampleTrace() {
  auto trace = std::make_unique<Trace>();
  TraceBuilder b(trace.get());
  uint32_t t1 = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  uint32_t t2 = b.ThreadTrack(IdValue::Num(1), IdValue::Num(2));
  b.SetThreadName(t1, b.Intern("main"));
  b.SetThreadName(t2, b.Intern("helper"));
  StringId lib = b.Intern("/usr/lib/libx.so");
  uint32_t m = b.InternCallsite(kNoCallsite, b.Intern("main"), lib, FrameKind::kNative);
  uint32_t f = b.InternCallsite(m, b.Intern("f"), lib, FrameKind::kNative);
  uint32_t g = b.InternCallsite(f, b.Intern("g"), b.Intern("[python]"), FrameKind::kPython);
  uint32_t h = b.InternCallsite(kNoCallsite, b.Intern("h"), StringId{}, FrameKind::kKernel);
  for (int i = 0; i < 3; ++i) b.AddStackSample(t1, 100 + i, g, 10);
  b.AddStackSample(t1, 50, f, 10);
  b.AddStackSample(t2, 10, h, 5);
  b.AddStackSample(t2, 20, h, 5);
  b.AddStackSample(t2, 30, kNoCallsite, 7);
  EXPECT_TRUE(b.Finalize().ok());
  return trace;
}

TEST(FlameGraphTest, SamplesBuildTheTreeFromCallsites) {
  auto trace = SampleTrace();
  StatusOr<FrameTree> tree = BuildFrameTree(*trace, ViewOptions{});
  ASSERT_TRUE(tree.ok());
  EXPECT_TRUE(tree->from_samples);
  EXPECT_EQ(tree->threads, 2u);
  EXPECT_EQ(tree->root_total_ns(), 57);
  EXPECT_EQ(tree->total_ns[FindPath(*tree, "main;main;f")], 40);
  EXPECT_EQ(tree->self_ns[FindPath(*tree, "main;main;f")], 10);
  EXPECT_EQ(tree->self_ns[FindPath(*tree, "main;main;f;g")], 30);
  EXPECT_EQ(tree->kind[FindPath(*tree, "main;main;f;g")], FrameClass::kPython);
  EXPECT_EQ(tree->self_ns[FindPath(*tree, "helper")], 7);  // the sample without a stack
  EXPECT_EQ(tree->total_ns[FindPath(*tree, "helper")], 17);
  EXPECT_EQ(tree->names[tree->module[FindPath(*tree, "main;main")]], "/usr/lib/libx.so");
}

TEST(FlameGraphTest, ThreadFilterAndUnknownThread) {
  auto trace = SampleTrace();
  ViewOptions options;
  options.thread = "helper";
  StatusOr<FrameTree> tree = BuildFrameTree(*trace, options);
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(tree->root_total_ns(), 17);
  options.thread = "2";  // by tid
  EXPECT_EQ(BuildFrameTree(*trace, options)->root_total_ns(), 17);
  options.thread = "nope";
  StatusOr<FrameTree> none = BuildFrameTree(*trace, options);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("'helper'"), std::string::npos) << none.status().message();
  options.thread = "";
  options.rank = 3;
  EXPECT_FALSE(BuildFrameTree(*trace, options).ok());
}

TEST(FlameGraphTest, DiffMatchesPathsAndThreadsWithOtherLabels) {
  auto now = SpanTrace();
  // Baseline: the same shape on a thread named differently, and a path the new trace lacks.
  Trace base;
  TraceBuilder b(&base);
  uint32_t t = b.ThreadTrack(IdValue::Num(9), IdValue::Num(9));
  StringId op = b.Intern("cpu_op");
  b.AddSlice(t, 0, 100, b.Intern("a"), op, kNoCorrelation, 0, 0);
  b.AddSlice(t, 10, 20, b.Intern("b"), op, kNoCorrelation, 0, 0);
  b.AddSlice(t, 40, 10, b.Intern("gone"), op, kNoCorrelation, 0, 0);
  ASSERT_TRUE(b.Finalize().ok());
  FrameTree tree = std::move(BuildFrameTree(*now, ViewOptions{}).value());
  FrameTree baseline = std::move(BuildFrameTree(base, ViewOptions{}).value());
  std::vector<uint32_t> match = MatchFrames(tree, baseline);
  uint32_t ab = FindPath(tree, "worker;a;b");
  ASSERT_NE(match[ab], kNoFrame);
  EXPECT_EQ(baseline.total_ns[match[ab]], 20);
  EXPECT_EQ(match[FindPath(tree, "worker;a;b;c")], kNoFrame);
  // difffolded: BASE NEW; the baseline-only path appears with NEW = 0.
  std::string folded = FoldedStacks(tree, &baseline, &match);
  EXPECT_NE(folded.find("worker;a 70 40\n"), std::string::npos) << folded;
  EXPECT_NE(folded.find("worker;a;b 20 30\n"), std::string::npos) << folded;
  EXPECT_NE(folded.find("thread 9;a;gone 10 0\n"), std::string::npos) << folded;
}

// Hand-made: a 2,000-deep chain, each frame with 20 ns of self time. Full
// paths would be quadratic (2,000 lines of up to 2,000 names); past depth
// kMaxFoldedDepth the self times are summed into one line.
TEST(FlameGraphTest, FoldedStacksStopAtTheDepthCap) {
  constexpr int kDepth = 2000;
  Trace trace;
  TraceBuilder b(&trace);
  uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  b.SetThreadName(track, b.Intern("t"));
  StringId name = b.Intern("f"), cat = b.Intern("python_function");
  for (int k = 0; k < kDepth; ++k) b.AddSlice(track, 10 * k, 20 * (kDepth - k), name, cat, kNoCorrelation, 0, 0);
  ASSERT_TRUE(b.Finalize().ok());
  StatusOr<FrameTree> tree = BuildFrameTree(trace, ViewOptions{});
  ASSERT_TRUE(tree.ok());
  std::string folded = FoldedStacks(*tree);
  size_t lines = 0, longest = 0, pos = 0;
  int64_t total = 0;
  std::string deep_line;
  while (pos < folded.size()) {
    size_t end = folded.find('\n', pos);
    std::string line = folded.substr(pos, end - pos);
    ++lines;
    longest = std::max<size_t>(longest, std::count(line.begin(), line.end(), ';'));
    total += std::stoll(line.substr(line.rfind(' ') + 1));
    if (line.find("[frames deeper than 256 folded here]") != std::string::npos) deep_line = line;
    pos = end + 1;
  }
  // The thread frame is depth 1 (no self time), slice k depth k + 2 with 20 ns
  // of self time: 255 slices written in full, then one line for the rest.
  EXPECT_EQ(lines, size_t{kMaxFoldedDepth});
  EXPECT_EQ(longest, size_t{kMaxFoldedDepth});  // 256 names to depth 256, then the marker
  EXPECT_EQ(total, tree->root_total_ns());
  ASSERT_FALSE(deep_line.empty());
  EXPECT_EQ(std::stoll(deep_line.substr(deep_line.rfind(' ') + 1)), (kDepth - 255) * 20);
}

TEST(FlameGraphTest, FoldedNamesEscapeSeparators) {
  EXPECT_EQ(FoldedName("a;b\nc\rd e"), "a\xEF\xBC\x9B" "b\xE2\x90\xA4" "c\xE2\x90\x8D" "d e");
  EXPECT_EQ(FoldedName("plain"), "plain");
  // Folded stacks go to stdout by default: ESC and bidi overrides shown, not sent.
  EXPECT_EQ(FoldedName("x\x1b[2Jy\xe2\x80\xae"), "x\\x1b[2Jy\\u202e");
}

constexpr std::string_view kHostile = "</script><img src=x onerror=alert(1)><!--;\x01";

TEST(FlameGraphTest, HtmlKeepsHostileNamesInsideTheJson) {
  auto trace = SpanTrace(kHostile);
  FrameTree tree = std::move(BuildFrameTree(*trace, ViewOptions{}).value());
  ViewOptions options;
  options.title = "<b>title</b>";
  StringViewSink sink;
  ASSERT_TRUE(WriteFlameHtml(tree, FlameDiff{}, options, &sink).ok());
  const std::string& html = sink.str();
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<!--;"), std::string::npos);
  EXPECT_EQ(html.find("<b>title"), std::string::npos);
  EXPECT_NE(html.find("\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e\\u003c!--;\\u0001"), std::string::npos);
  // Exactly the page's own two script elements close.
  size_t closes = 0;
  for (size_t p = html.find("</script>"); p != std::string::npos; p = html.find("</script>", p + 1)) ++closes;
  EXPECT_EQ(closes, 2u);
}

// A bidi override in a name reaches the page's data as the visible text
// \u202e (the script sets names with textContent, where U+202E would still
// reorder "rtl\u202egpj.json" into "rtlnosj.jpg").
TEST(FlameGraphTest, HtmlShowsBidiControlsInNamesAsText) {
  auto trace = SpanTrace("rtl\xe2\x80\xaegpj.json");
  FrameTree tree = std::move(BuildFrameTree(*trace, ViewOptions{}).value());
  StringViewSink sink;
  ASSERT_TRUE(WriteFlameHtml(tree, FlameDiff{}, ViewOptions{}, &sink).ok());
  EXPECT_EQ(sink.str().find("\xe2\x80\xae"), std::string::npos);
  EXPECT_NE(sink.str().find("\"rtl\\\\u202egpj.json\""), std::string::npos);
}

TEST(FlameGraphTest, SvgEscapesNamesAndControlCharacters) {
  auto trace = SpanTrace(kHostile);
  FrameTree tree = std::move(BuildFrameTree(*trace, ViewOptions{}).value());
  std::string svg = FlameSvg(tree, FlameDiff{}, ViewOptions{});
  EXPECT_EQ(svg.find("<img"), std::string::npos);
  EXPECT_EQ(svg.find('\x01'), std::string::npos);
  EXPECT_NE(svg.find("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
}

TEST(FlameGraphTest, SpeedscopeSampledProfiles) {
  auto trace = SampleTrace();
  StringViewSink sink;
  ViewOptions options;
  options.title = "t";
  ASSERT_TRUE(WriteSpeedscope(*trace, options, &sink).ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(sink.str()).get(doc), simdjson::SUCCESS) << sink.str();
  EXPECT_EQ(std::string_view(doc["$schema"]), "https://www.speedscope.app/file-format-schema.json");
  simdjson::dom::array frames = doc["shared"]["frames"];
  simdjson::dom::array profiles = doc["profiles"];
  ASSERT_EQ(profiles.size(), 2u);
  simdjson::dom::element p0 = profiles.at(0);
  EXPECT_EQ(std::string_view(p0["type"]), "sampled");
  EXPECT_EQ(std::string_view(p0["name"]), "main");
  EXPECT_EQ(std::string_view(p0["unit"]), "nanoseconds");
  simdjson::dom::array samples = p0["samples"], weights = p0["weights"];
  ASSERT_EQ(samples.size(), 4u);
  ASSERT_EQ(weights.size(), 4u);
  EXPECT_EQ(int64_t(p0["endValue"]), 40);
  // Sorted by time: the first sample (ts 50) is main>f, root first.
  simdjson::dom::array first = samples.at(0);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(std::string_view(frames.at(uint64_t(first.at(0)))["name"]), "main");
  EXPECT_EQ(std::string_view(frames.at(uint64_t(first.at(1)))["name"]), "f");
  EXPECT_EQ(std::string_view(frames.at(uint64_t(first.at(0)))["file"]), "/usr/lib/libx.so");
  simdjson::dom::element p1 = profiles.at(1);
  EXPECT_EQ(simdjson::dom::array(p1["samples"]).size(), 3u);
  EXPECT_EQ(simdjson::dom::array(simdjson::dom::array(p1["samples"]).at(2)).size(), 0u);  // no stack
}

TEST(FlameGraphTest, SpeedscopeEventedIsBalancedAndOrdered) {
  auto trace = SpanTrace(kHostile);
  StringViewSink sink;
  ASSERT_TRUE(WriteSpeedscope(*trace, ViewOptions{}, &sink).ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(sink.str()).get(doc), simdjson::SUCCESS) << sink.str();
  simdjson::dom::array frames = doc["shared"]["frames"];
  simdjson::dom::element p = simdjson::dom::array(doc["profiles"]).at(0);
  EXPECT_EQ(std::string_view(p["type"]), "evented");
  std::vector<uint64_t> open;
  int64_t last = -1;
  size_t opens = 0;
  bool saw_hostile = false;
  for (simdjson::dom::element e : simdjson::dom::array(p["events"])) {
    int64_t at = e["at"];
    EXPECT_GE(at, last);
    last = at;
    uint64_t frame = e["frame"];
    if (std::string_view(e["type"]) == "O") {
      open.push_back(frame);
      ++opens;
      saw_hostile |= std::string_view(frames.at(frame)["name"]) == kHostile;
    } else {
      ASSERT_FALSE(open.empty());
      EXPECT_EQ(open.back(), frame);
      open.pop_back();
    }
  }
  EXPECT_TRUE(open.empty());
  EXPECT_EQ(opens, 7u);  // six spans and the hostile one; the zero-length span is left out
  EXPECT_TRUE(saw_hostile);
  EXPECT_EQ(int64_t(p["endValue"]), 405);  // from the first slice's start (0) to the last end
}

TEST(ViewRegistryTest, FormatFromExtensionLongestWins) {
  ViewSpec spec = FlameViewSpec();
  EXPECT_EQ(FormatForPath(spec, "out/flame.HTML"), "html");
  EXPECT_EQ(FormatForPath(spec, "flame.svg"), "svg");
  EXPECT_EQ(FormatForPath(spec, "x.speedscope.json"), "speedscope");
  EXPECT_EQ(FormatForPath(spec, "x.json"), "speedscope");
  EXPECT_EQ(FormatForPath(spec, "x.folded"), "folded");
  EXPECT_EQ(FormatForPath(spec, "x.pdf"), "");
  EXPECT_NE(FindView("flame"), nullptr);
  EXPECT_EQ(FindView("nope"), nullptr);
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// --color-by module: frames made by nn.Module / record_function slices are
// flagged, plain Python frames, ops and the step marker are not; the page
// carries the flags and the svg format refuses the option.
TEST(FlameGraphTest, ColourByModuleFlagsModuleFrames) {
  auto t = std::make_unique<Trace>();
  TraceBuilder b(t.get());
  uint32_t th = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  b.SetThreadName(th, b.Intern("main"));
  const StringId py = b.Intern("python_function"), op = b.Intern("cpu_op"), ua = b.Intern("user_annotation");
  auto add = [&](int64_t ts, int64_t dur, std::string_view name, StringId cat) {
    b.AddSlice(th, ts, dur, b.Intern(name), cat, kNoCorrelation, b.ArgCursor(), 0);
  };
  add(0, 100, "ProfilerStep#4", ua);
  add(1, 90, "nn.Module: Net_0", py);
  add(2, 40, "nn.Module: Linear_0", py);
  add(3, 30, "aten::linear", op);
  add(50, 10, "torch/nn/functional.py(1): relu", py);
  add(70, 10, "my_block", ua);
  ASSERT_TRUE(b.Finalize().ok());
  ViewOptions options;
  options.color_by = "module";
  options.format = "html";
  StatusOr<FrameTree> tree = BuildFrameTree(*t, options);
  ASSERT_TRUE(tree.ok());
  ASSERT_EQ(tree->nn_module.size(), tree->size());
  std::vector<std::string> flagged;
  for (uint32_t f = 0; f < tree->size(); ++f) {
    if (tree->nn_module[f]) flagged.push_back(std::string(tree->names[tree->name[f]]));
  }
  std::sort(flagged.begin(), flagged.end());
  EXPECT_EQ(flagged, (std::vector<std::string>{"my_block", "nn.Module: Linear_0", "nn.Module: Net_0"}));
  std::string json = FlameJson(*tree, {}, options);
  EXPECT_NE(json.find("\"nn_module\":["), std::string::npos);
  // Without the option: no flags.
  ViewOptions plain;
  StatusOr<FrameTree> tree2 = BuildFrameTree(*t, plain);
  ASSERT_TRUE(tree2.ok());
  EXPECT_TRUE(tree2->nn_module.empty());
  EXPECT_EQ(FlameJson(*tree2, {}, plain).find("nn_module"), std::string::npos);
}

}  // namespace
}  // namespace aiprof
