#include "src/view/timeline/timeline_model.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/critical_path/critical_path_analysis.h"
#include "src/analysis/diagnosis/bottleneck_types.h"
#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/gaps/idle_gaps.h"
#include "src/model/page_fault_records.h"
#include "src/model/trace_builder.h"
#include "src/session/session.h"
#include "src/view/timeline/timeline_html.h"
#include "src/view/timeline/timeline_view.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::ImportFixture;
using testing::ImportJsonText;

// Hand-made: thread 1 holds A ⊃ {B ⊃ C, B2} and ten 1 µs slices; thread 2
// holds D; a flow runs from C to D; one counter with three points.
constexpr char kHandMade[] = R"({"traceEvents":[
  {"ph":"M","name":"process_name","pid":1,"args":{"name":"app"}},
  {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},
  {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"worker"}},
  {"ph":"X","name":"A","cat":"user_annotation","pid":1,"tid":1,"ts":0,"dur":1000},
  {"ph":"X","name":"B","cat":"cpu_op","pid":1,"tid":1,"ts":100,"dur":300},
  {"ph":"X","name":"C","cat":"cpu_op","pid":1,"tid":1,"ts":150,"dur":10},
  {"ph":"X","name":"B2","cat":"cpu_op","pid":1,"tid":1,"ts":500,"dur":400},
  {"ph":"X","name":"small","cat":"cpu_op","pid":1,"tid":1,"ts":2000,"dur":1},
  {"ph":"X","name":"small","cat":"cpu_op","pid":1,"tid":1,"ts":2010,"dur":1},
  {"ph":"X","name":"small","cat":"cpu_op","pid":1,"tid":1,"ts":2020,"dur":1},
  {"ph":"X","name":"small","cat":"cpu_op","pid":1,"tid":1,"ts":2030,"dur":1},
  {"ph":"X","name":"small","cat":"cpu_op","pid":1,"tid":1,"ts":2040,"dur":1},
  {"ph":"X","name":"small","cat":"cpu_op","pid":1,"tid":1,"ts":2050,"dur":1},
  {"ph":"X","name":"small","cat":"cpu_op","pid":1,"tid":1,"ts":2060,"dur":1},
  {"ph":"X","name":"small","cat":"cpu_op","pid":1,"tid":1,"ts":2070,"dur":1},
  {"ph":"X","name":"small","cat":"cpu_op","pid":1,"tid":1,"ts":2080,"dur":1},
  {"ph":"X","name":"small","cat":"cpu_op","pid":1,"tid":1,"ts":2090,"dur":1},
  {"ph":"X","name":"D","cat":"cpu_op","pid":1,"tid":2,"ts":200,"dur":50},
  {"ph":"s","name":"f","cat":"fwdbwd","id":7,"pid":1,"tid":1,"ts":155},
  {"ph":"f","name":"f","cat":"fwdbwd","id":7,"pid":1,"tid":2,"ts":210,"bp":"e"},
  {"ph":"C","name":"mem","pid":1,"ts":0,"args":{"bytes":10}},
  {"ph":"C","name":"mem","pid":1,"ts":500,"args":{"bytes":30}},
  {"ph":"C","name":"mem","pid":1,"ts":1500,"args":{"bytes":20}}
]})";

const TimelineRow* FindRow(const Trace& t, const TimelineModel& m, std::string_view label_part) {
  for (const TimelineRow& r : m.rows) {
    if (r.label.find(label_part) != std::string::npos) return &r;
  }
  return nullptr;
}

std::vector<std::string> DetailedNames(const Trace& t, const TimelineRow& r) {
  std::vector<std::string> out;
  for (uint32_t s : r.detailed) out.emplace_back(t.Str(t.slices.name[s]));
  return out;
}

TEST(TimelineModelTest, DurationBucketsAreMonotoneQuarterPowers) {
  int prev = 0;
  for (int64_t d = 0; d < 5000; ++d) {
    int b = DurationBucket(d);
    EXPECT_GE(b, prev) << d;
    EXPECT_LE(BucketLowerBound(b), d) << d;
    EXPECT_GT(BucketLowerBound(b + 1), d) << d;
    prev = b;
  }
  EXPECT_EQ(BucketLowerBound(DurationBucket(10'000)), 8192);
  EXPECT_EQ(BucketLowerBound(DurationBucket(int64_t{1} << 62)), int64_t{1} << 62);
}

// Hand-made: rows, positions and nesting when everything fits.
TEST(TimelineModelTest, HandMadeAllDetailedPositionsAndNesting) {
  auto t = ImportJsonText(kHandMade);
  ASSERT_NE(t, nullptr);
  TimelineModel m = BuildTimelineModel(*t, {}, {});
  EXPECT_EQ(m.slice_count, 15u);
  EXPECT_EQ(m.detailed_count, 15u);
  EXPECT_EQ(m.detail_threshold_ns, 0);
  EXPECT_TRUE(m.level_bin_ns.empty());
  EXPECT_EQ(m.start_ns, t->slices.ts_ns[0]);
  EXPECT_EQ(m.end_ns - m.start_ns, 2'091'000);  // last "small" ends at 2091 µs
  ASSERT_EQ(m.rows.size(), 3u);                // main, worker, then the counter
  EXPECT_EQ(m.rows[0].label, "app: main (1)");
  EXPECT_EQ(m.rows[1].label, "app: worker (2)");
  EXPECT_EQ(m.rows[2].kind, TimelineRowKind::kCounter);
  EXPECT_EQ(m.rows[2].label, "app: mem");
  const TimelineRow& main = m.rows[0];
  EXPECT_EQ(main.depth_count, 3);
  std::vector<std::string> expect = {"A", "B", "C", "B2", "small", "small", "small", "small", "small",
                                     "small", "small", "small", "small", "small"};
  EXPECT_EQ(DetailedNames(*t, main), expect);
  std::map<std::string, std::pair<int64_t, int>> pos;  // name -> (start rel. ns, depth)
  for (uint32_t s : main.detailed) pos[std::string(t->Str(t->slices.name[s]))] = {t->slices.ts_ns[s] - m.start_ns, t->slices.depth[s]};
  EXPECT_EQ(pos["A"], std::make_pair(int64_t{0}, 0));
  EXPECT_EQ(pos["B"], std::make_pair(int64_t{100'000}, 1));
  EXPECT_EQ(pos["C"], std::make_pair(int64_t{150'000}, 2));
  EXPECT_EQ(pos["B2"], std::make_pair(int64_t{500'000}, 1));
  ASSERT_EQ(m.flows.size(), 1u);
  EXPECT_EQ(t->Str(t->slices.name[t->flows.from_slice[m.flows[0]]]), "C");
  EXPECT_EQ(t->Str(t->slices.name[t->flows.to_slice[m.flows[0]]]), "D");
  EXPECT_EQ(m.rows[2].counter_points.size(), 3u);
}

// Brute-force oracle: per bin of width w, the merged slices starting in it and
// the time they cover inside it.
std::map<int64_t, std::pair<uint32_t, int64_t>> OracleBins(const std::vector<std::pair<int64_t, int64_t>>& slices,
                                                         int64_t w) {
  std::map<int64_t, std::pair<uint32_t, int64_t>> out;
  for (auto [a, b] : slices) {
    ++out[a / w].first;
    for (int64_t bin = a / w; bin * w < b; ++bin) {
      int64_t lo = std::max(a, bin * w), hi = std::min(b, (bin + 1) * w);
      if (hi > lo) out[bin].second += hi - lo;
    }
  }
  return out;
}

// Hand-made: a budget of 5 keeps A, B2, B, D, C; the ten 1 µs slices are
// merged, and every level's bins match the brute-force oracle exactly.
TEST(TimelineModelTest, HandMadeLodMergeCountsAreExact) {
  auto t = ImportJsonText(kHandMade);
  ASSERT_NE(t, nullptr);
  TimelineOptions o;
  o.max_detailed_slices = 5;
  TimelineModel m = BuildTimelineModel(*t, {}, o);
  EXPECT_EQ(m.detailed_count, 5u);
  // The 1 µs slices' bucket [896, 1024) is the first over the budget.
  EXPECT_EQ(m.detail_threshold_ns, 1024);
  const TimelineRow* main = FindRow(*t, m, "main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(DetailedNames(*t, *main), (std::vector<std::string>{"A", "B", "C", "B2"}));
  EXPECT_EQ(m.flows.size(), 1u);  // C and D both detailed
  // w0 = ceil(2'091'000 / 2048) = 1021, then /4 per level down to 1024 / 16.
  ASSERT_EQ(m.level_bin_ns, (std::vector<int64_t>{1021, 255}));
  for (size_t l = 1; l < m.level_bin_ns.size(); ++l) EXPECT_EQ(m.level_bin_ns[l], m.level_bin_ns[l - 1] / 4);
  std::vector<std::pair<int64_t, int64_t>> small;
  for (int k = 0; k < 10; ++k) small.push_back({2'000'000 + 10'000 * k, 2'001'000 + 10'000 * k});
  uint64_t bins = 0;
  for (size_t l = 0; l < m.level_bin_ns.size(); ++l) {
    ASSERT_EQ(main->density[l].size(), 1u) << "level " << l;
    const DensityBins& db = main->density[l][0];
    EXPECT_EQ(db.depth, 0);
    auto oracle = OracleBins(small, m.level_bin_ns[l]);
    ASSERT_EQ(db.bin.size(), oracle.size()) << "level " << l;
    size_t i = 0;
    for (const auto& [bin, cb] : oracle) {
      EXPECT_EQ(db.bin[i], bin) << "level " << l;
      EXPECT_EQ(db.count[i], cb.first) << "level " << l << " bin " << bin;
      EXPECT_EQ(db.busy_ns[i], cb.second) << "level " << l << " bin " << bin;
      ++i;
    }
    bins += db.bin.size();
  }
  EXPECT_EQ(m.density_bin_count, bins);
  // Budget 4: C is merged too (at depth 2), and the flow C -> D is not shown.
  o.max_detailed_slices = 4;
  TimelineModel m4 = BuildTimelineModel(*t, {}, o);
  EXPECT_EQ(m4.detailed_count, 4u);
  EXPECT_TRUE(m4.flows.empty());
  EXPECT_EQ(m4.flows_total, 1u);
  const TimelineRow* main4 = FindRow(*t, m4, "main");
  ASSERT_EQ(main4->density[0].size(), 2u);
  EXPECT_EQ(main4->density[0][1].depth, 2);
  // C (150..160 µs) spans eleven 1021 ns bins: counted once, covered time split.
  auto oracle = OracleBins({{150'000, 160'000}}, 1021);
  const DensityBins& c = main4->density[0][1];
  ASSERT_EQ(c.bin.size(), oracle.size());
  size_t i = 0;
  int64_t covered = 0;
  for (const auto& [bin, cb] : oracle) {
    EXPECT_EQ(c.bin[i], bin);
    EXPECT_EQ(c.count[i], cb.first);
    EXPECT_EQ(c.busy_ns[i], cb.second);
    covered += c.busy_ns[i++];
  }
  EXPECT_EQ(covered, 10'000);
  EXPECT_EQ(c.count[0], 1u);
}

// The bin budget keeps whole levels from the coarse end.
TEST(TimelineModelTest, DensityBudgetKeepsCoarseLevels) {
  auto t = ImportJsonText(kHandMade);
  ASSERT_NE(t, nullptr);
  TimelineOptions o;
  o.max_detailed_slices = 5;
  TimelineModel all = BuildTimelineModel(*t, {}, o);
  ASSERT_EQ(all.level_bin_ns.size(), 2u);
  uint64_t first = all.rows[0].density[0][0].bin.size();
  o.max_density_bins = first + all.rows[0].density[1][0].bin.size() - 1;
  TimelineModel one = BuildTimelineModel(*t, {}, o);
  EXPECT_EQ(one.level_bin_ns.size(), 1u);
  EXPECT_EQ(one.density_bin_count, first);
  o.max_density_bins = 0;
  EXPECT_TRUE(BuildTimelineModel(*t, {}, o).level_bin_ns.empty());
}

// Real fixture: every slice is either detailed or counted in the density
// bins exactly once per level, whatever the budget; busy time is conserved.
void CheckConservation(const Trace& t, size_t budget) {
  TimelineOptions o;
  o.max_detailed_slices = budget;
  o.max_density_bins = 300'000;
  TimelineModel m = BuildTimelineModel(t, {}, o);
  EXPECT_LE(m.detailed_count, budget);
  uint64_t detailed = 0;
  int64_t detailed_ns = 0, all_ns = 0;
  for (size_t i = 0; i < t.slices.size(); ++i) all_ns += t.slices.dur_ns[i];
  for (const TimelineRow& r : m.rows) {
    detailed += r.detailed.size();
    for (uint32_t s : r.detailed) {
      detailed_ns += t.slices.dur_ns[s];
      EXPECT_GE(t.slices.dur_ns[s], m.detail_threshold_ns);
    }
  }
  EXPECT_EQ(detailed, m.detailed_count);
  for (size_t l = 0; l < m.level_bin_ns.size(); ++l) {
    uint64_t merged = 0;
    int64_t busy = 0;
    for (const TimelineRow& r : m.rows) {
      if (r.density.empty()) continue;
      for (const DensityBins& db : r.density[l]) {
        for (size_t i = 0; i < db.bin.size(); ++i) {
          merged += db.count[i];
          busy += db.busy_ns[i];
          EXPECT_LE(db.busy_ns[i], m.level_bin_ns[l] * int64_t(db.count[i] + 1) + m.level_bin_ns[l]);
          if (i) {
            EXPECT_LT(db.bin[i - 1], db.bin[i]);
          }
        }
      }
    }
    EXPECT_EQ(merged, m.slice_count - m.detailed_count) << "level " << l;
    EXPECT_EQ(busy, all_ns - detailed_ns) << "level " << l;
  }
}

// Hand-made: 70,000 nested slices on one thread, past the 16-bit depth
// column. The depth is held at 65,535 (and counted); the density builder's
// row count (max depth + 1) wrapped to 0 in 16 bits and wrote out of bounds.
TEST(TimelineModelTest, NestingPastTheDepthLimitStaysInBounds) {
  constexpr int kDepth = 70'000;
  Trace trace;
  TraceBuilder b(&trace);
  uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  StringId name = b.Intern("recurse"), cat = b.Intern("python_function");
  for (int k = 0; k < kDepth; ++k) b.AddSlice(track, k, 2 * (kDepth - k) + 10, name, cat, kNoCorrelation, 0, 0);
  ASSERT_TRUE(b.Finalize().ok());
  ASSERT_TRUE(trace.diagnostics.entries().count("slice_depth_limit"));
  EXPECT_EQ(trace.diagnostics.entries().at("slice_depth_limit").count, uint64_t{kDepth - 65'536});
  TimelineOptions o;
  o.max_detailed_slices = 100;  // the rest merged into density bins, every depth
  o.overview_bins = 2;          // every slice spans the trace: 2 bins per depth at the coarsest level
  o.max_density_bins = 1'000'000;
  TimelineModel m = BuildTimelineModel(trace, {}, o);
  ASSERT_EQ(m.rows.size(), 1u);
  EXPECT_EQ(m.rows[0].depth_count, 65'536u);
  ASSERT_FALSE(m.rows[0].density.empty());
  uint64_t merged = 0;
  for (const DensityBins& db : m.rows[0].density[0]) {
    EXPECT_LT(db.depth, 65'536u);
    for (uint32_t c : db.count) merged += c;
  }
  EXPECT_EQ(merged + m.detailed_count, uint64_t{kDepth});
}

TEST(TimelineModelTest, AlexnetSampleConservesCountsAtEveryBudget) {
  auto r = ImportTrace(std::string(AIPROF_TEST_DATA_DIR) + "/alexnet_a100_kineto.json.gz");
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& trace = **r;
  for (size_t budget : {size_t{0}, size_t{50}, size_t{1000}, size_t{1'000'000}}) {
    SCOPED_TRACE(budget);
    CheckConservation(trace, budget);
  }
}

// Every Kineto fixture, a torch_npu rank, an Nsight Systems database and a
// CPU trace with python stacks.
TEST(TimelineModelTest, RealFixturesConserveCounts) {
  std::vector<std::string> files = {"ascend-pt/level1/rank0_ascend_pt", "ascend-pt/level0/rank1_ascend_pt",
                                    "nsys/perlmutter-cloverleaf-cuda.sqlite", "torch-cpu/resnet18_bs1_full.kineto.json"};
  for (const auto& e : std::filesystem::directory_iterator(testing::FixturesDir() + "/kineto")) {
    if (e.path().extension() == ".gz") files.push_back("kineto/" + e.path().filename().string());
  }
  ASSERT_GE(files.size(), 14u);
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    auto t = ImportFixture(f);
    ASSERT_NE(t, nullptr);
    CheckConservation(*t, 2000);
  }
}

// Rows are grouped by rank, then layer in the model's order.
TEST(TimelineModelTest, TwoRankAscendRowsGroupByRankThenLayer) {
  auto t = ImportFixture("ascend-pt/level1");
  ASSERT_NE(t, nullptr);
  TimelineModel m = BuildTimelineModel(*t, {}, {});
  ASSERT_FALSE(m.rows.empty());
  auto order = [](Layer l) { return l == Layer::kUnknown ? 100 : int(l); };
  std::set<int32_t> ranks;
  for (size_t i = 1; i < m.rows.size(); ++i) {
    const TimelineRow &a = m.rows[i - 1], &b = m.rows[i];
    ranks.insert(b.rank);
    ASSERT_LE(a.rank, b.rank);
    if (a.rank == b.rank) {
      EXPECT_LE(order(a.layer), order(b.layer)) << a.label << " / " << b.label;
    }
  }
  EXPECT_EQ(ranks, (std::set<int32_t>{0, 1}));
}

// The page embeds valid JSON, and a hostile name never becomes markup.
TEST(TimelineHtmlTest, HostileNameStaysText) {
  std::string hostile = R"(</script><img src=x onerror=alert(1)>)";
  std::string json = std::string(kHandMade);
  json.replace(json.find(R"("name":"B2")"), 11, R"("name":"</script><img src=x onerror=alert(1)>")");
  auto t = ImportJsonText(json);
  ASSERT_NE(t, nullptr);
  TimelineViewOptions o;
  o.layout.title = hostile;
  std::string page;
  ASSERT_TRUE(RenderTimelinePage(*AnalysisSession::ForTrace(*t), o, &page).ok());
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("onerror=alert(1)>"), std::string::npos);
  size_t open = page.find(R"(<script type="application/json" id="aiprof-data">)");
  ASSERT_NE(open, std::string::npos);
  open = page.find('>', open) + 1;
  size_t close = page.find("</script>", open);
  std::string data = page.substr(open, close - open);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(data).get(doc), simdjson::SUCCESS);
  std::string_view title;
  ASSERT_EQ(doc["title"].get(title), simdjson::SUCCESS);
  EXPECT_EQ(title, hostile);
  bool found = false;
  for (auto n : doc["names"].get_array()) found |= std::string_view(n.get_string()) == hostile;
  EXPECT_TRUE(found);
  // Only the page's own two script elements open.
  size_t scripts = 0;
  for (size_t p = page.find("<script"); p != std::string::npos; p = page.find("<script", p + 1)) ++scripts;
  EXPECT_EQ(scripts, 2u);
}

// Real fixture with device activity: gaps by cause and diagnose's findings.
TEST(TimelineViewTest, AlexnetHasGapsAndFindingMarkers) {
  auto r = ImportTrace(std::string(AIPROF_TEST_DATA_DIR) + "/alexnet_a100_kineto.json.gz");
  ASSERT_TRUE(r.ok());
  const Trace& trace = **r;
  GapsOptions go;
  go.keep_all_gaps = true;
  GapsResult gaps = ComputeGaps(trace, go);
  TimelineInputs in;
  in.gaps = &gaps;
  TimelineModel m = BuildTimelineModel(trace, in, {});
  ASSERT_EQ(m.gap_rows.size(), gaps.timelines.size());
  uint64_t total = 0;
  for (const GapRow& g : m.gap_rows) {
    total += g.gaps.size();
    EXPECT_EQ(g.gaps.size(), g.total);  // all fit the default budget
  }
  EXPECT_EQ(total, m.gaps_kept);
  TimelineOptions small;
  small.max_gaps = 10;
  TimelineModel m10 = BuildTimelineModel(trace, in, small);
  EXPECT_LE(m10.gaps_kept, 10u);
  EXPECT_GT(m10.gaps_kept, 0u);
  std::string page;
  ASSERT_TRUE(RenderTimelinePage(*AnalysisSession::ForTrace(trace), {}, &page).ok());
  EXPECT_NE(page.find("\"markers\":[{"), std::string::npos);
}

// A finding is marked at the largest gaps of its bottleneck type's gap cause
// (bottleneck_types.cc) and nowhere else, for every type that has one; on
// the real alexnet trace, whose gaps have several causes.
TEST(TimelineViewTest, FindingsAreMarkedAtTheGapsOfTheirTypesCause) {
  auto r = ImportTrace(std::string(AIPROF_TEST_DATA_DIR) + "/alexnet_a100_kineto.json.gz");
  ASSERT_TRUE(r.ok());
  const Trace& trace = **r;
  GapsOptions go;
  go.keep_all_gaps = true;
  GapsResult gaps = ComputeGaps(trace, go);
  std::set<std::string> present;
  for (const TimelineBreakdown& tl : gaps.timelines) {
    for (const Gap& g : tl.largest_gaps) present.insert(GapCauseName(g.cause));
  }
  size_t marked_types = 0;
  for (const BottleneckType& type : BottleneckTypes()) {
    if (type.gap_cause.empty()) continue;
    Rule rule;
    rule.id = "r";
    rule.bottleneck = std::string(type.name);
    Diagnosis d;
    d.findings.emplace_back();
    d.findings.back().rule = &rule;
    TimelineInputs in;
    in.gaps = &gaps;
    in.diagnosis = &d;
    TimelineModel m = BuildTimelineModel(trace, in, {});
    ASSERT_FALSE(m.markers.empty()) << type.name;
    const std::string at = "idle gap (" + std::string(type.gap_cause) + ")";
    for (const TimelineMarker& mk : m.markers) {
      if (present.count(std::string(type.gap_cause))) {
        EXPECT_EQ(mk.where, at) << type.name;
      } else {
        EXPECT_EQ(mk.where.rfind("idle gap", 0), std::string::npos) << type.name << ": " << mk.where;
      }
    }
    marked_types += present.count(std::string(type.gap_cause));
  }
  EXPECT_GE(marked_types, 1u);  // the trace has gaps of at least one marked cause
}

// Hand-made with TraceBuilder: stack samples become ticks on their thread's
// row, thinned by a stride over the budget; a track filter keeps only the
// chosen rows and counts only their slices.
TEST(TimelineModelTest, HandMadeSamplesAndTrackFilter) {
  Trace t;
  TraceBuilder b(&t);
  const StringId cat = b.Intern("cpu_op"), op = b.Intern("op");
  const uint32_t t1 = b.ThreadTrack(IdValue::Num(1), IdValue::Num(1));
  const uint32_t t2 = b.ThreadTrack(IdValue::Num(1), IdValue::Num(2));
  b.AddSlice(t1, 0, 1'000'000, op, cat, -1, 0, 0);
  b.AddSlice(t2, 0, 500'000, op, cat, -1, 0, 0);
  b.AddSlice(t2, 600'000, 100'000, op, cat, -1, 0, 0);
  const uint32_t leaf = b.InternCallsite(kNoCallsite, b.Intern("main"), b.Intern("a.out"), FrameKind::kNative);
  for (int i = 0; i < 10; ++i) b.AddStackSample(t1, i * 100'000, leaf, 100'000);
  ASSERT_TRUE(b.Finalize().ok());
  TimelineModel m = BuildTimelineModel(t, {}, {});
  ASSERT_EQ(m.rows.size(), 2u);
  EXPECT_EQ(m.rows[0].samples.size(), 10u);
  EXPECT_EQ(m.rows[0].sample_total, 10u);
  EXPECT_TRUE(m.rows[1].samples.empty());
  EXPECT_EQ(m.sample_stride, 1u);
  TimelineOptions o;
  o.max_samples = 4;
  TimelineModel thin = BuildTimelineModel(t, {}, o);
  EXPECT_EQ(thin.sample_stride, 3u);  // ceil(10 / 4)
  ASSERT_EQ(thin.rows[0].samples.size(), 4u);  // samples 0, 3, 6, 9
  EXPECT_EQ(t.samples.ts_ns[thin.rows[0].samples[3]], 900'000);
  o = {};
  o.track_shown.assign(t.tracks.size(), 0);
  o.track_shown[t2] = 1;
  TimelineModel only2 = BuildTimelineModel(t, {}, o);
  ASSERT_EQ(only2.rows.size(), 1u);
  EXPECT_EQ(only2.rows[0].track, t2);
  EXPECT_EQ(only2.slice_count, 2u);
  EXPECT_EQ(only2.detailed_count, 2u);
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// The critical path overlay on critical_path_test.cc's hand-made trace (µs):
// one step [0, 105]; K1 (60) then K2 (10) and a D2H copy (20) on stream 7,
// an H2D copy (30) on stream 8 hidden under K1; the host waits for the D2H
// copy in cudaStreamSynchronize [30, 102]. Worked by hand (backward from the
// step's end): the sync call waits for the D2H copy (sync: the copy's end to
// the call's end), which follows K2, which follows K1 on the stream (stream
// order: end to start), which waits for its launch call at 4 µs (launch: the
// call's start to the kernel's start), inside aten::mm. On the path: aten::mm,
// that launch call, K1, K2, the D2H copy and the sync call; the H2D copy,
// aten::relu, aten::copy_ and the other runtime calls are off it, and
// ProfilerStep#1 is structure (its own time is idle, not a slice on the path).
constexpr char kPathTrace[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":105},
  {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":2,"dur":6},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":4,"dur":2,"args":{"correlation":1}},
  {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":10,"dur":4},
  {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":11,"dur":2,"args":{"correlation":2}},
  {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":20,"dur":4},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":21,"dur":2,"args":{"correlation":3}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":25,"dur":2,"args":{"correlation":4}},
  {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":30,"dur":72},
  {"ph":"X","cat":"kernel","name":"K1","pid":0,"tid":7,"ts":10,"dur":60,"args":{"device":0,"stream":7,"correlation":1}},
  {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":8,"ts":15,"dur":30,"args":{"device":0,"stream":8,"correlation":2}},
  {"ph":"X","cat":"kernel","name":"K2","pid":0,"tid":7,"ts":70,"dur":10,"args":{"device":0,"stream":7,"correlation":3}},
  {"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":7,"ts":80,"dur":20,"args":{"device":0,"stream":7,"correlation":4}}
]})json";

// "name@start_us" of a slice.
std::string At(const Trace& t, uint32_t s) {
  return std::string(t.Str(t.slices.name[s])) + "@" + std::to_string(t.slices.ts_ns[s] / 1000);
}

std::set<std::string> DetailedSet(const Trace& t, const TimelineModel& m) {
  std::set<std::string> out;
  for (const TimelineRow& r : m.rows) {
    for (uint32_t s : r.detailed) out.insert(At(t, s));
  }
  return out;
}

TEST(TimelineModelTest, HandMadeCriticalPathSlicesAndEdges) {
  auto t = ImportJsonText(kPathTrace);
  ASSERT_NE(t, nullptr);
  CriticalPathResult cp = ComputeCriticalPath(*t);
  TimelineInputs in;
  in.critical_path = &cp;
  TimelineModel m = BuildTimelineModel(*t, in, {});
  ASSERT_TRUE(m.path.present);
  std::set<std::string> on;
  for (uint32_t s : m.path.slices) on.insert(At(*t, s));
  EXPECT_EQ(on, (std::set<std::string>{"aten::mm@2", "cudaLaunchKernel@4", "K1@10", "K2@70",
                                       "Memcpy DtoH (Device -> Pageable)@80", "cudaStreamSynchronize@30"}));
  EXPECT_EQ(m.path.slices_total, 6u);
  EXPECT_EQ(m.path.steps, 1u);
  ASSERT_EQ(m.path.edges.size(), 4u);
  EXPECT_EQ(m.path.edges_total, 4u);
  struct Want {
    const char* from;
    const char* to;
    DepKind kind;
    bool from_end, to_end;
  };
  const Want want[] = {{"cudaLaunchKernel@4", "K1@10", DepKind::kLaunch, false, false},
                       {"K1@10", "K2@70", DepKind::kStreamOrder, true, false},
                       {"K2@70", "Memcpy DtoH (Device -> Pageable)@80", DepKind::kStreamOrder, true, false},
                       {"Memcpy DtoH (Device -> Pageable)@80", "cudaStreamSynchronize@30", DepKind::kSync, true, true}};
  for (size_t k = 0; k < 4; ++k) {
    SCOPED_TRACE(k);
    const TimelinePathEdge& e = m.path.edges[k];
    EXPECT_EQ(At(*t, e.from), want[k].from);
    EXPECT_EQ(At(*t, e.to), want[k].to);
    EXPECT_EQ(e.kind, want[k].kind);
    EXPECT_EQ(e.from_end, want[k].from_end);
    EXPECT_EQ(e.to_end, want[k].to_end);
  }
  EXPECT_EQ(m.path.window_path_ns, 105'000);

  // A budget of one slice: only ProfilerStep#1 is detailed on its own; the
  // path forces its six slices in, with aten::mm's and the runtime calls'
  // ancestor ProfilerStep#1 (already there): seven in all.
  TimelineOptions o;
  o.max_detailed_slices = 1;
  TimelineModel small = BuildTimelineModel(*t, in, o);
  EXPECT_EQ(small.path.slices.size(), 6u);
  EXPECT_EQ(small.path.edges.size(), 4u);
  EXPECT_EQ(DetailedSet(*t, small),
            (std::set<std::string>{"ProfilerStep#1@0", "aten::mm@2", "cudaLaunchKernel@4", "K1@10", "K2@70",
                                   "Memcpy DtoH (Device -> Pageable)@80", "cudaStreamSynchronize@30"}));
  EXPECT_EQ(small.detailed_count, 7u);
  // The cap on forced slices: none forced, none shown, the total still counted.
  o.max_path_slices = 0;
  TimelineModel capped = BuildTimelineModel(*t, in, o);
  EXPECT_EQ(capped.path.slices.size(), 0u);
  EXPECT_EQ(capped.path.slices_total, 6u);
  EXPECT_EQ(capped.path.edges.size(), 0u);
  EXPECT_EQ(capped.detailed_count, 1u);

  // The page carries the overlay; without it, no "path" key.
  std::string page;
  AppendTimelineJson(*t, m, {}, &page);
  EXPECT_NE(page.find("\"path\":{\"slices\":["), std::string::npos);
  std::string plain;
  AppendTimelineJson(*t, BuildTimelineModel(*t, {}, {}), {}, &plain);
  EXPECT_EQ(plain.find("\"path\":"), std::string::npos);
}

// Every detailed slice at depth d > 0 has a detailed slice one level up on
// its track that encloses it (nesting stays whole).
void ExpectNestingWhole(const Trace& t, const TimelineModel& m) {
  const SliceTable& s = t.slices;
  for (const TimelineRow& r : m.rows) {
    for (size_t k = 0; k < r.detailed.size(); ++k) {
      const uint32_t i = r.detailed[k];
      if (s.depth[i] == 0) continue;
      bool found = false;
      for (size_t j = k; j-- > 0;) {
        const uint32_t p = r.detailed[j];
        if (s.depth[p] + 1 == s.depth[i] && s.ts_ns[p] <= s.ts_ns[i]) {
          found = true;
          break;
        }
      }
      EXPECT_TRUE(found) << At(t, i);
    }
  }
}

// AlexNet (HTA's critical-path test trace): the overlay flags exactly the
// session's on-path slices and edges, also when the detail budget is tiny.
TEST(TimelineModelTest, AlexnetCriticalPathOverlayMatchesTheSession) {
  auto r = ImportTrace(std::string(AIPROF_TEST_DATA_DIR) + "/alexnet_a100_kineto.json.gz");
  ASSERT_TRUE(r.ok());
  const Trace& trace = **r;
  std::unique_ptr<AnalysisSession> session = AnalysisSession::ForTrace(trace);
  const CriticalPathResult& cp = session->results().Get(kCriticalPath);
  uint64_t on = 0;
  for (bool b : cp.on_path) on += b;
  ASSERT_GT(on, 0u);
  size_t steps = 0, edges = 0;
  for (const StepPath& p : cp.steps) {
    if (p.segment_count > 0) ++steps, edges += p.edge_count;
  }
  TimelineInputs in;
  in.critical_path = &cp;
  for (size_t budget : {size_t{400'000}, size_t{20}}) {
    SCOPED_TRACE(budget);
    TimelineOptions o;
    o.max_detailed_slices = budget;
    TimelineModel m = BuildTimelineModel(trace, in, o);
    EXPECT_EQ(m.path.slices_total, on);
    EXPECT_EQ(m.path.slices.size(), on);
    std::set<uint32_t> detailed, flagged(m.path.slices.begin(), m.path.slices.end());
    for (const TimelineRow& row : m.rows) detailed.insert(row.detailed.begin(), row.detailed.end());
    for (uint32_t s : m.path.slices) {
      EXPECT_TRUE(cp.on_path[s]);
      EXPECT_TRUE(detailed.count(s)) << At(trace, s);
    }
    EXPECT_EQ(m.path.steps, steps);
    EXPECT_EQ(m.path.edges_total, edges);
    EXPECT_EQ(m.path.edges.size(), edges);  // every end is forced into detail
    for (const TimelinePathEdge& e : m.path.edges) {
      EXPECT_TRUE(flagged.count(e.from) && flagged.count(e.to));
      EXPECT_NE(e.kind, DepKind::kNone);
    }
    ExpectNestingWhole(trace, m);
  }
  TimelineViewOptions vo;
  vo.critical_path = true;
  std::string page;
  ASSERT_TRUE(RenderTimelinePage(*session, vo, &page).ok());
  EXPECT_NE(page.find("\"path\":{\"slices\":["), std::string::npos);
}

// Colour by module on a hand-made trace: nn.Module frames, a record_function
// label and an SDK-like annotation are modules; profiler wrappers and the step
// marker are not; a kernel takes its launching call's module.
constexpr char kModules[] = R"json({"traceEvents":[
  {"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":0,"dur":100},
  {"ph":"X","cat":"python_function","name":"nn.Module: Net_0","pid":1,"tid":1,"ts":1,"dur":90},
  {"ph":"X","cat":"python_function","name":"nn.Module: Conv2d_0","pid":1,"tid":1,"ts":2,"dur":40},
  {"ph":"X","cat":"cpu_op","name":"aten::conv2d","pid":1,"tid":1,"ts":3,"dur":30},
  {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":5,"dur":2,"args":{"correlation":9}},
  {"ph":"X","cat":"python_function","name":"torch/nn/functional.py(1): relu","pid":1,"tid":1,"ts":50,"dur":10},
  {"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":51,"dur":5},
  {"ph":"X","cat":"user_annotation","name":"my_block","pid":1,"tid":1,"ts":70,"dur":10},
  {"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":71,"dur":3},
  {"ph":"X","cat":"cpu_op","name":"aten::zeros","pid":1,"tid":1,"ts":95,"dur":3},
  {"ph":"X","cat":"kernel","name":"conv_kernel","pid":0,"tid":7,"ts":8,"dur":20,"args":{"device":0,"stream":7,"correlation":9}}
]})json";

TEST(TimelineModelTest, HandMadeColourByModule) {
  auto t = ImportJsonText(kModules);
  ASSERT_NE(t, nullptr);
  SliceModuleMap map = SliceModules(*t);
  std::map<std::string, std::string> module_of;
  for (uint32_t i = 0; i < t->slices.size(); ++i) {
    module_of[At(*t, i)] = map.of[i] == kNoSlice ? "-" : std::string(t->Str(t->slices.name[map.of[i]]));
  }
  EXPECT_EQ(module_of["ProfilerStep#3@0"], "-");
  EXPECT_EQ(module_of["nn.Module: Net_0@1"], "nn.Module: Net_0");
  EXPECT_EQ(module_of["aten::conv2d@3"], "nn.Module: Conv2d_0");
  EXPECT_EQ(module_of["cudaLaunchKernel@5"], "nn.Module: Conv2d_0");
  EXPECT_EQ(module_of["conv_kernel@8"], "nn.Module: Conv2d_0");
  EXPECT_EQ(module_of["aten::relu@51"], "nn.Module: Net_0");  // a plain Python frame is no module
  EXPECT_EQ(module_of["aten::add@71"], "my_block");
  EXPECT_EQ(module_of["aten::zeros@95"], "-");
  TimelineInputs in;
  in.slice_modules = &map;
  TimelineModel m = BuildTimelineModel(*t, in, {});
  ASSERT_TRUE(m.modules.present);
  // Exclusive time: Net_0 90 - 40 (Conv2d_0) - 10 (my_block) = 40; Conv2d_0 40; my_block 10.
  std::vector<std::pair<std::string, int64_t>> got;
  for (size_t k = 0; k < m.modules.names.size(); ++k) {
    got.emplace_back(t->Str(m.modules.names[k]), m.modules.self_ns[k] / 1000);
  }
  EXPECT_EQ(got, (std::vector<std::pair<std::string, int64_t>>{
                     {"nn.Module: Net_0", 40}, {"nn.Module: Conv2d_0", 40}, {"my_block", 10}}));
  for (const TimelineRow& row : m.rows) {
    ASSERT_EQ(row.module.size(), row.detailed.size());
    for (size_t k = 0; k < row.detailed.size(); ++k) {
      const uint32_t mod = map.of[row.detailed[k]];
      if (mod == kNoSlice) {
        EXPECT_EQ(row.module[k], -1);
      } else {
        ASSERT_GE(row.module[k], 0);
        EXPECT_EQ(m.modules.names[row.module[k]], t->slices.name[mod]);
      }
    }
  }
  std::string page;
  AppendTimelineJson(*t, m, {}, &page);
  EXPECT_NE(page.find("\"modules\":{\"names\":[\"Net_0\",\"Conv2d_0\",\"my_block\"]"), std::string::npos);
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// Instants, worked by hand. Thread 1 holds "step" [100, 1100) µs ⊃ "op"
// [150, 350) µs, a hostile-named mark at 50 µs (the trace's first event) and
// four page fault records at 150, 160, 170 and 700 µs; thread 2 holds only
// two fault records, at 400 and 410 µs. Relative to the start (50 µs), in
// ns: mark 0; thread 1's faults 100000, 110000, 120000, 650000; thread 2's
// 350000, 360000. Span: 50 µs .. 1100 µs = 1,050,000 ns. A global-scoped
// instant at 5000 µs is counted, not drawn, and does not extend the span.
constexpr char kInstants[] = R"({"traceEvents":[
  {"ph":"M","name":"process_name","pid":1,"args":{"name":"app"}},
  {"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"main"}},
  {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"worker"}},
  {"ph":"X","name":"step","cat":"user_annotation","pid":1,"tid":1,"ts":100,"dur":1000},
  {"ph":"X","name":"op","cat":"cpu_op","pid":1,"tid":1,"ts":150,"dur":200},
  {"ph":"i","s":"t","name":"</script><img src=x onerror=alert(1)>","cat":"<b>mark</b>","pid":1,"tid":1,"ts":50},
  {"ph":"i","s":"t","name":"minor page fault","cat":"aiprof_page_fault","pid":1,"tid":1,"ts":150},
  {"ph":"i","s":"t","name":"minor page fault","cat":"aiprof_page_fault","pid":1,"tid":1,"ts":160},
  {"ph":"i","s":"t","name":"minor page fault","cat":"aiprof_page_fault","pid":1,"tid":2,"ts":410},
  {"ph":"i","s":"t","name":"minor page fault","cat":"aiprof_page_fault","pid":1,"tid":1,"ts":700},
  {"ph":"i","s":"t","name":"minor page fault","cat":"aiprof_page_fault","pid":1,"tid":2,"ts":400},
  {"ph":"i","s":"t","name":"minor page fault","cat":"aiprof_page_fault","pid":1,"tid":1,"ts":170},
  {"ph":"i","s":"g","name":"Record Window End","pid":1,"tid":1,"ts":5000}
]})";

std::unique_ptr<Trace> InstantsTrace() {
  auto t = ImportJsonText(kInstants);
  if (t) {
    t->metadata["capture.page_faults.period"] = "4";
    t->metadata["capture.page_fault_cost_ns"] = "20000";
  }
  return t;
}

const InstantGroup* Group(const TimelineModel& m, const TimelineRow& row, bool fault) {
  for (const InstantGroup& g : row.instants) {
    if (m.instant_kinds[g.kind].page_fault == fault) return &g;
  }
  return nullptr;
}

std::vector<int64_t> RelTimes(const Trace& t, const TimelineModel& m, const InstantGroup& g) {
  std::vector<int64_t> out;
  for (uint32_t i : g.shown) out.push_back(t.instants.ts_ns[i] - m.start_ns);
  return out;
}

TEST(TimelineInstantsTest, HandMadeFullDetailPerRowAndKind) {
  auto t = InstantsTrace();
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->instants.size(), 8u);
  TimelineModel m = BuildTimelineModel(*t, {}, {});
  EXPECT_EQ(m.end_ns - m.start_ns, 1'050'000);  // the mark at 50 µs starts the span
  EXPECT_EQ(m.instant_total, 7u);
  EXPECT_EQ(m.instant_hidden, 0u);
  EXPECT_EQ(m.instant_unscoped, 1u);
  EXPECT_FALSE(m.instants_binned);
  EXPECT_TRUE(m.instant_level_ns.empty());
  EXPECT_EQ(m.fault_period, 4u);
  EXPECT_TRUE(m.fault_period_known);
  EXPECT_TRUE(m.fault_cost_known);
  EXPECT_EQ(m.fault_cost_ns, 20000.0);
  ASSERT_EQ(m.instant_kinds.size(), 2u);
  uint64_t fault_total = 0;
  for (const TimelineInstantKind& k : m.instant_kinds) {
    if (k.page_fault) {
      fault_total += k.total;
      EXPECT_EQ(t->Str(k.name), "minor page fault");
    } else {
      EXPECT_EQ(t->Str(k.category), "<b>mark</b>");
      EXPECT_EQ(k.total, 1u);
    }
  }
  EXPECT_EQ(fault_total, 6u);
  // Thread 2 has no slice but gets a row for its instants.
  ASSERT_EQ(m.rows.size(), 2u);
  const TimelineRow* main = FindRow(*t, m, "main");
  const TimelineRow* worker = FindRow(*t, m, "worker");
  ASSERT_NE(main, nullptr);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(worker->slice_count, 0u);
  ASSERT_EQ(main->instants.size(), 2u);
  const InstantGroup* f1 = Group(m, *main, true);
  const InstantGroup* mark = Group(m, *main, false);
  ASSERT_TRUE(f1 && mark);
  EXPECT_EQ(f1->total, 4u);
  EXPECT_EQ(RelTimes(*t, m, *f1), (std::vector<int64_t>{100'000, 110'000, 120'000, 650'000}));  // sorted by time
  EXPECT_EQ(RelTimes(*t, m, *mark), (std::vector<int64_t>{0}));
  ASSERT_EQ(worker->instants.size(), 1u);
  EXPECT_EQ(RelTimes(*t, m, worker->instants[0]), (std::vector<int64_t>{350'000, 360'000}));
  EXPECT_TRUE(f1->lod.empty());
}

// An `aiprof trace` capture records a thread's page faults on its host track
// (with its stack samples) and its ops on the framework track of the same
// (pid, tid): the faults go on the ops' row. Hand-made from the trace above:
// thread 1's four fault records moved to a host-layer track of (1, 1), which
// has no slice; thread 2's stay on its own (no ops track for (1, 2)).
TEST(TimelineInstantsTest, AThreadsFaultsGoUnderItsOps) {
  auto t = InstantsTrace();
  ASSERT_NE(t, nullptr);
  const StringId fault_cat = *t->strings.Find(kPageFaultCategory);
  uint32_t ops = kNoTrack;
  for (uint32_t k = 0; k < t->tracks.size(); ++k) {
    if (t->tracks.tid[k] == 1 && t->tracks.kind[k] == TrackKind::kThread) ops = k;
  }
  ASSERT_NE(ops, kNoTrack);
  const uint32_t host = uint32_t(t->tracks.size());
  t->tracks.Append({TrackKind::kThread, Layer::kHost, 1, 1, {}, {}, t->strings.Intern("python3"), {}, kNoRank,
                    kHostDevice});
  size_t moved = 0;
  for (size_t i = 0; i < t->instants.size(); ++i) {
    if (t->instants.track[i] == ops && t->instants.category[i] == fault_cat) t->instants.track[i] = TrackId(host), ++moved;
  }
  ASSERT_EQ(moved, 4u);
  std::vector<uint8_t> has_slices(t->tracks.size());
  for (size_t i = 0; i < t->slices.size(); ++i) has_slices[t->slices.track[i]] = 1;
  const std::vector<uint32_t> to = InstantTracks(*t, has_slices);
  EXPECT_EQ(to[host], ops);
  EXPECT_EQ(to[ops], ops);
  TimelineModel m = BuildTimelineModel(*t, {}, {});
  // No row for the host track: it holds only instants, drawn on the ops' row.
  ASSERT_EQ(m.rows.size(), 2u);
  const TimelineRow* main = FindRow(*t, m, "main");
  ASSERT_NE(main, nullptr);
  const InstantGroup* f1 = Group(m, *main, true);
  ASSERT_NE(f1, nullptr);
  EXPECT_EQ(RelTimes(*t, m, *f1), (std::vector<int64_t>{100'000, 110'000, 120'000, 650'000}));
  EXPECT_EQ(m.instant_total, 7u);
  EXPECT_EQ(m.instant_hidden, 0u);
  // The ops' track hidden by the track filter: the host track keeps its own row.
  TimelineOptions o;
  o.track_shown.assign(t->tracks.size(), 1);
  o.track_shown[ops] = 0;
  TimelineModel h = BuildTimelineModel(*t, {}, o);
  const TimelineRow* own = FindRow(*t, h, "python3");
  ASSERT_NE(own, nullptr);
  const InstantGroup* f2 = Group(h, *own, true);
  ASSERT_NE(f2, nullptr);
  EXPECT_EQ(f2->total, 4u);
  // The ops' track unnamed (as on a capture): its row takes the host track's name.
  t->tracks.name[ops] = StringId{};
  EXPECT_EQ(t->Str(ThreadTrackNames(*t)[ops]), "python3");  // serve's tiles label it so too
  TimelineModel u = BuildTimelineModel(*t, {}, {});
  std::vector<std::string> labels;
  for (const TimelineRow& row : u.rows) labels.push_back(row.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"app: python3 (1)", "app: worker (2)"}));
}

// LayOutInstants over the time index (serve's tiles) against the whole-table
// pass, for windows that cut the hand-made trace's instants anywhere: the
// same totals, hidden and unscoped counts, and the same instants per row
// and kind (kinds compared by (category, name): their numbering follows
// first appearance, in time with the index).
TEST(TimelineInstantsTest, TimeIndexGivesTheWholeTablePass) {
  auto t = InstantsTrace();
  ASSERT_NE(t, nullptr);
  const std::vector<uint32_t> by_time = InstantsByTime(*t);
  ASSERT_EQ(by_time.size(), t->instants.size());
  for (size_t k = 1; k < by_time.size(); ++k) EXPECT_LE(t->instants.ts_ns[by_time[k - 1]], t->instants.ts_ns[by_time[k]]);
  std::vector<int32_t> row_of(t->tracks.size()), rank_of(t->tracks.size(), kNoRank);
  for (size_t k = 0; k < row_of.size(); ++k) row_of[k] = int32_t(k);
  auto rows = [&](const InstantLayout& l) {
    std::vector<std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>>> out(l.rows.size());
    for (size_t r = 0; r < l.rows.size(); ++r) {
      for (const InstantGroup& g : l.rows[r]) {
        out[r][{l.kinds[g.kind].category.raw, l.kinds[g.kind].name.raw}] = g.shown;
      }
    }
    return out;
  };
  const int64_t us = 1000;
  for (auto [from, to] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 6000 * us}, {150 * us, 170 * us}, {151 * us, 701 * us}, {400 * us, 401 * us}, {5000 * us, 5001 * us},
           {2000 * us, 3000 * us}}) {
    InstantLayoutOptions o;
    o.from_ns = from;
    o.to_ns = to;
    const InstantLayout whole = LayOutInstants(*t, row_of, rank_of, o);
    o.by_time = &by_time;
    const InstantLayout indexed = LayOutInstants(*t, row_of, rank_of, o);
    EXPECT_EQ(indexed.total, whole.total) << from << ".." << to;
    EXPECT_EQ(indexed.hidden, whole.hidden);
    EXPECT_EQ(indexed.unscoped, whole.unscoped);
    EXPECT_EQ(rows(indexed), rows(whole)) << from << ".." << to;
  }
}

// Instants off: the model is the one of a trace without them (span from the
// slices, no instant-only row).
TEST(TimelineInstantsTest, OffLeavesThemOut) {
  auto t = InstantsTrace();
  ASSERT_NE(t, nullptr);
  TimelineOptions o;
  o.instants = false;
  TimelineModel m = BuildTimelineModel(*t, {}, o);
  EXPECT_EQ(m.end_ns - m.start_ns, 1'000'000);
  EXPECT_EQ(m.rows.size(), 1u);
  EXPECT_EQ(m.instant_total, 0u);
  EXPECT_TRUE(m.rows[0].instants.empty());
  std::string page;
  AppendTimelineJson(*t, m, o, &page);
  EXPECT_EQ(page.find("\"instants\":"), std::string::npos);
  EXPECT_EQ(page.find("\"inst\":"), std::string::npos);
}

// Over the budget of instants: count bins per level. With 4 overview bins,
// w0 = ceil(1,050,000 / 4) = 262,500 ns, then 65,625 and 16,406 ns.
//   level 0: mark {0}; thread 1's faults {0:3, 2:1}; thread 2's {1:2}: 4 bins
//   level 1: mark {0}; {1:3, 9:1}; {5:2}: 4 bins
//   level 2: mark {0}; {6:2, 7:1, 39:1} (100000/16406 = 6.1, 110000 -> 6.7,
//            120000 -> 7.3, 650000 -> 39.6); {21:2}: 5 bins
// A budget of 13 bins keeps three levels, 12 keeps two.
TEST(TimelineInstantsTest, HandMadeBinsOverTheBudget) {
  auto t = InstantsTrace();
  ASSERT_NE(t, nullptr);
  TimelineOptions o;
  o.max_instants = 6;
  o.overview_bins = 4;
  o.max_instant_bins = 13;
  TimelineModel m = BuildTimelineModel(*t, {}, o);
  EXPECT_TRUE(m.instants_binned);
  EXPECT_EQ(m.instant_level_ns, (std::vector<int64_t>{262'500, 65'625, 16'406}));
  EXPECT_EQ(m.instant_bin_count, 13u);
  const TimelineRow* main = FindRow(*t, m, "main");
  const TimelineRow* worker = FindRow(*t, m, "worker");
  ASSERT_TRUE(main && worker);
  const InstantGroup* f1 = Group(m, *main, true);
  ASSERT_NE(f1, nullptr);
  EXPECT_TRUE(f1->shown.empty());
  ASSERT_EQ(f1->lod.size(), 3u);
  EXPECT_EQ(f1->lod[0].bin, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(f1->lod[0].count, (std::vector<uint32_t>{3, 1}));
  EXPECT_EQ(f1->lod[1].bin, (std::vector<int64_t>{1, 9}));
  EXPECT_EQ(f1->lod[1].count, (std::vector<uint32_t>{3, 1}));
  EXPECT_EQ(f1->lod[2].bin, (std::vector<int64_t>{6, 7, 39}));
  EXPECT_EQ(f1->lod[2].count, (std::vector<uint32_t>{2, 1, 1}));
  EXPECT_EQ(worker->instants[0].lod[2].bin, (std::vector<int64_t>{21}));
  EXPECT_EQ(worker->instants[0].lod[2].count, (std::vector<uint32_t>{2}));
  o.max_instant_bins = 12;
  EXPECT_EQ(BuildTimelineModel(*t, {}, o).instant_level_ns.size(), 2u);
  // At the budget exactly: still one by one.
  o.max_instants = 7;
  EXPECT_FALSE(BuildTimelineModel(*t, {}, o).instants_binned);
}

// A track filter: the hidden thread's instants are counted as hidden.
TEST(TimelineInstantsTest, TrackFilterHidesInstants) {
  auto t = InstantsTrace();
  ASSERT_NE(t, nullptr);
  TimelineOptions o;
  o.track_shown.assign(t->tracks.size(), 0);
  for (uint32_t k = 0; k < t->tracks.size(); ++k) o.track_shown[k] = t->tracks.tid[k] == 1;
  TimelineModel m = BuildTimelineModel(*t, {}, o);
  EXPECT_EQ(m.instant_total, 5u);
  EXPECT_EQ(m.instant_hidden, 2u);
  EXPECT_EQ(m.instant_unscoped, 1u);
  EXPECT_EQ(m.rows.size(), 1u);
}

// Bad metadata: the period falls back to 1 (said so), the cost is unknown.
TEST(TimelineInstantsTest, MalformedFaultMetadata) {
  auto t = InstantsTrace();
  ASSERT_NE(t, nullptr);
  for (const char* bad : {"-3", "12abc", "0", ""}) {
    t->metadata["capture.page_faults.period"] = bad;
    t->metadata["capture.page_fault_cost_ns"] = bad;
    TimelineModel m = BuildTimelineModel(*t, {}, {});
    EXPECT_EQ(m.fault_period, 1u) << bad;
    EXPECT_FALSE(m.fault_period_known) << bad;
    EXPECT_FALSE(m.fault_cost_known) << bad;
  }
  t->metadata["capture.page_fault_cost_ns"] = "nan";
  EXPECT_FALSE(BuildTimelineModel(*t, {}, {}).fault_cost_known);
}

// The page's data: the instants block and each row's groups (delta-encoded
// times), hostile kind names as escaped JSON text, never markup.
TEST(TimelineInstantsTest, PageDataAndEscaping) {
  auto t = InstantsTrace();
  ASSERT_NE(t, nullptr);
  TimelineViewOptions vo;
  std::string page;
  ASSERT_TRUE(RenderTimelinePage(*AnalysisSession::ForTrace(*t), vo, &page).ok());
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("<b>mark"), std::string::npos);
  size_t open = page.find(R"(<script type="application/json" id="aiprof-data">)");
  ASSERT_NE(open, std::string::npos);
  open = page.find('>', open) + 1;
  std::string data = page.substr(open, page.find("</script>", open) - open);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(data).get(doc), simdjson::SUCCESS);
  simdjson::dom::element in = doc["instants"];
  EXPECT_EQ(int64_t(in["total"]), 7);
  EXPECT_EQ(int64_t(in["unscoped"]), 1);
  EXPECT_EQ(int64_t(in["fault_period"]), 4);
  EXPECT_EQ(double(in["fault_cost_ns"]), 20000.0);
  EXPECT_EQ(int64_t(in["binned"]), 0);
  std::map<std::string, int64_t> fault_of_name;
  std::vector<std::string> kind_names;
  for (auto k : in["kinds"].get_array()) {
    kind_names.emplace_back(std::string_view(k["name"]));
    fault_of_name[kind_names.back()] = int64_t(k["fault"]);
  }
  EXPECT_EQ(fault_of_name["minor page fault"], 1);
  EXPECT_EQ(fault_of_name["</script><img src=x onerror=alert(1)>"], 0);
  std::map<std::string, std::vector<int64_t>> times;  // "row label|kind name" -> decoded times
  for (auto row : doc["rows"].get_array()) {
    simdjson::dom::array groups;
    if (row["inst"].get(groups) != simdjson::SUCCESS) continue;
    for (auto g : groups) {
      int64_t s = 0;
      std::vector<int64_t>& out =
          times[std::string(std::string_view(row["label"])) + "|" + kind_names[size_t(int64_t(g["k"]))]];
      for (auto d : g["ts"].get_array()) out.push_back(s += int64_t(d));
    }
  }
  EXPECT_EQ(times["app: main (1)|minor page fault"], (std::vector<int64_t>{100'000, 110'000, 120'000, 650'000}));
  EXPECT_EQ(times["app: worker (2)|minor page fault"], (std::vector<int64_t>{350'000, 360'000}));
  EXPECT_EQ(times["app: main (1)|</script><img src=x onerror=alert(1)>"], (std::vector<int64_t>{0}));
}

// Hand-made: one process named by 64 KiB holding 200 threads. The name is
// in every row's label: whole, the page's data held it 200 times (12.8 MB;
// a 1 MiB name over 500 threads made a 524 MB page from a 1.1 MB trace).
// Cut, each label holds its first 256 bytes.
TEST(TimelineModelTest, LongProcessAndThreadNamesAreCutInEveryRowLabel) {
  Trace trace;
  TraceBuilder b(&trace);
  const std::string big = "<b>" + std::string(64 << 10, 'P');
  b.SetProcessName(IdValue::Num(1), b.Intern(big));
  const StringId name = b.Intern("op"), cat = b.Intern("cpu_op");
  for (int64_t tid = 1; tid <= 200; ++tid) {
    const uint32_t track = b.ThreadTrack(IdValue::Num(1), IdValue::Num(tid));
    if (tid == 1) b.SetThreadName(track, b.Intern(big + " thread"));
    b.AddSlice(track, tid * 10, 5, name, cat, kNoCorrelation, 0, 0);
  }
  ASSERT_TRUE(b.Finalize().ok());
  const TimelineModel m = BuildTimelineModel(trace, {}, {});
  ASSERT_EQ(m.rows.size(), 200u);
  for (const TimelineRow& r : m.rows) {
    EXPECT_LT(r.label.size(), 2 * kMaxRowLabelPartBytes + 100) << r.label.substr(0, 100);
    EXPECT_EQ(r.label.rfind("<b>PPP", 0), 0u) << r.label.substr(0, 100);
  }
  EXPECT_NE(m.rows[0].label.find("bytes in all) ("), std::string::npos) << m.rows[0].label;
  std::string page;
  AppendTimelineHtml(trace, m, {}, &page);
  EXPECT_LT(page.size(), size_t{2} << 20);
}

}  // namespace
}  // namespace aiprof
