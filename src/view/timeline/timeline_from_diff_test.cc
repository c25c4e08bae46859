#include "src/view/timeline/timeline_from_diff.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <simdjson.h>

#include "src/analysis/window/analysis_window.h"
#include "src/model/page_fault_records.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

struct Pair {
  std::unique_ptr<Trace> a, b;
  AttributionResult ra, rb;
  AttributionDiff d;
};

// `swap`: the pair as B → A, so the longer step of a slot is B's and the
// longer run (more steady steps) is B.
std::unique_ptr<Pair> LoadResNet50(bool swap = false) {
  auto p = std::make_unique<Pair>();
  for (auto [name, t] : {std::pair{"resnet50_num_workers_0.pt.trace.json.gz", swap ? &p->b : &p->a},
                         std::pair{"resnet50_num_workers_4.pt.trace.json.gz", swap ? &p->a : &p->b}}) {
    StatusOr<std::unique_ptr<Trace>> r = testing::ImportPath(std::string(AIPROF_TEST_DATA_DIR) + "/" + name);
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok()) return nullptr;
    *t = std::move(*r);
  }
  // As the session computes it: over the analysis window's steady steps.
  const AnalysisWindow wa = ComputeAnalysisWindow(*p->a), wb = ComputeAnalysisWindow(*p->b);
  p->ra = ComputeAttribution(*p->a, &wa);
  p->rb = ComputeAttribution(*p->b, &wb);
  p->d = DiffAttribution(*p->a, p->ra, *p->b, p->rb, {});
  return p;
}

// The run's ProfilerStep rows straight from the trace's step table, in time
// order: the last `steady` of them are the steps the diff compares (the
// analysis window leaves out leading warm-up steps only).
std::vector<std::pair<int64_t, int64_t>> LastSteps(const Trace& t, size_t steady) {
  std::vector<std::pair<int64_t, int64_t>> all;
  for (size_t i = 0; i < t.steps.size(); ++i) all.push_back({t.steps.ts_ns[i], t.steps.dur_ns[i]});
  std::sort(all.begin(), all.end());
  EXPECT_GE(all.size(), steady);
  return {all.end() - static_cast<std::ptrdiff_t>(std::min(steady, all.size())), all.end()};
}

// Per slice name: the time the run's slices spend inside its steps, and how
// many (slice, step) overlaps there are, by brute force over every pair.
struct Inside {
  std::map<std::string, int64_t> ns;
  uint64_t pieces = 0;
};
Inside BruteForceInside(const Trace& t, const std::vector<std::pair<int64_t, int64_t>>& steps) {
  Inside out;
  for (size_t i = 0; i < t.slices.size(); ++i) {
    const int64_t ts = t.slices.ts_ns[i], end = ts + t.slices.dur_ns[i];
    for (auto [s, d] : steps) {
      const int64_t lo = std::max(ts, s), hi = std::min(end, s + d);
      if (hi > lo || (ts == end && ts >= s && ts < s + d)) {
        ++out.pieces;
        out.ns[std::string(t.Str(t.slices.name[i]))] += hi - lo;
      }
    }
  }
  return out;
}

class DiffTimelineOrderTest : public ::testing::TestWithParam<bool> {};

TEST_P(DiffTimelineOrderTest, ResNet50SlotsAreTheLongerStepAndEverySliceLiesInItsSlot) {
  std::unique_ptr<Pair> p = LoadResNet50(GetParam());
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->d.available);
  DiffTimeline t = BuildDiffTimeline(*p->a, p->ra, *p->b, p->rb, p->d);
  ASSERT_TRUE(t.available) << t.problem;
  ASSERT_EQ(t.a.steps, p->d.steps_a);
  ASSERT_EQ(t.b.steps, p->d.steps_b);
  ASSERT_NE(t.a.steps, t.b.steps);  // the pair has 6 and 5 steady steps: the unequal case is exercised
  const auto sa = LastSteps(*p->a, t.a.steps), sb = LastSteps(*p->b, t.b.steps);
  ASSERT_EQ(t.slots.size(), std::max(sa.size(), sb.size()));
  int64_t at = 0;
  for (size_t k = 0; k < t.slots.size(); ++k) {
    const DiffTimelineSlot& s = t.slots[k];
    const int64_t da = k < sa.size() ? sa[k].second : 0, db = k < sb.size() ? sb[k].second : 0;
    EXPECT_EQ(s.start_ns, at) << k;
    EXPECT_EQ(s.width_ns, std::max(da, db)) << k;
    EXPECT_EQ(s.a.present, k < sa.size());
    EXPECT_EQ(s.b.present, k < sb.size());
    if (s.a.present) {
      EXPECT_EQ(s.a.start_ns, sa[k].first);
    }
    if (s.b.present) {
      EXPECT_EQ(s.b.start_ns, sb[k].first);
    }
    at += s.width_ns;
  }

  // Every slice of the merged trace: in its run's slot, within the run's step.
  const Trace& m = *t.trace;
  std::map<std::string, int64_t> got_ns[2];
  uint64_t got_pieces[2] = {0, 0};
  for (size_t i = 0; i < m.slices.size(); ++i) {
    const int32_t rank = m.tracks.rank[m.slices.track[i]];
    ASSERT_TRUE(rank == kDiffTimelineRankA || rank == kDiffTimelineRankB) << i;
    const int side = rank == kDiffTimelineRankA ? 0 : 1;
    const int64_t ts = m.slices.ts_ns[i], end = ts + m.slices.dur_ns[i];
    auto slot = std::upper_bound(t.slots.begin(), t.slots.end(), ts,
                                 [](int64_t v, const DiffTimelineSlot& s) { return v < s.start_ns; });
    ASSERT_NE(slot, t.slots.begin());
    --slot;
    const DiffTimelineStep& step = side == 0 ? slot->a : slot->b;
    ASSERT_TRUE(step.present) << i;
    EXPECT_LE(end, slot->start_ns + step.dur_ns) << i;
    EXPECT_LE(end, slot->start_ns + slot->width_ns) << i;
    const std::string_view label = m.Str(m.tracks.process_name[m.slices.track[i]]);
    EXPECT_EQ(label.substr(0, 3), side == 0 ? "A: " : "B: ");
    got_ns[side][std::string(m.Str(m.slices.name[i]))] += m.slices.dur_ns[i];
    ++got_pieces[side];
  }
  // Nothing inside a step is lost, nothing outside is added: per name, the
  // time equals the brute-force overlap of the source slices with the steps.
  const Inside want_a = BruteForceInside(*p->a, sa), want_b = BruteForceInside(*p->b, sb);
  EXPECT_EQ(got_pieces[0], want_a.pieces);
  EXPECT_EQ(got_pieces[1], want_b.pieces);
  EXPECT_EQ(got_ns[0], want_a.ns);
  EXPECT_EQ(got_ns[1], want_b.ns);
  EXPECT_GT(t.a.clipped + t.b.clipped, 0u);  // slices across step boundaries exist and were cut

  // The merged trace keeps Finalize()'s order and nesting: by track and
  // start, and every slice at depth d > 0 inside the last slice at d - 1.
  std::vector<std::pair<int64_t, int64_t>> open;
  for (size_t i = 0; i < m.slices.size(); ++i) {
    const bool new_track = i == 0 || m.slices.track[i] != m.slices.track[i - 1];
    if (!new_track) {
      ASSERT_GE(m.slices.track[i], m.slices.track[i - 1]);
      ASSERT_GE(m.slices.ts_ns[i], m.slices.ts_ns[i - 1]) << i;
    } else {
      open.clear();
    }
    const uint16_t depth = m.slices.depth[i];
    ASSERT_LE(depth, open.size()) << i;
    open.resize(depth);
    if (depth > 0) {
      EXPECT_GE(m.slices.ts_ns[i], open.back().first) << i;
      EXPECT_LE(m.slices.ts_ns[i] + m.slices.dur_ns[i], open.back().second) << i;
    }
    open.push_back({m.slices.ts_ns[i], m.slices.ts_ns[i] + m.slices.dur_ns[i]});
  }

  // Slot labels: one rank-0 step per slot with both durations.
  size_t slot_steps = 0;
  for (size_t i = 0; i < m.steps.size(); ++i) {
    if (m.steps.rank[i] != kDiffTimelineSlotRank) continue;
    const size_t k = slot_steps++;
    EXPECT_EQ(m.steps.ts_ns[i], t.slots[k].start_ns);
    EXPECT_EQ(m.steps.dur_ns[i], t.slots[k].width_ns);
    const std::string name(m.Str(m.steps.name[i]));
    EXPECT_EQ(name.rfind("step " + std::to_string(k + 1) + ": A ", 0), 0u) << name;
    EXPECT_NE(name.find(", B "), std::string::npos) << name;
  }
  EXPECT_EQ(slot_steps, t.slots.size());
}

INSTANTIATE_TEST_SUITE_P(BothOrders, DiffTimelineOrderTest, ::testing::Bool());

TEST(DiffTimelineTest, ResNet50LargestChangeIsMarkedOnBothRunsInItsSlots) {
  std::unique_ptr<Pair> p = LoadResNet50();
  ASSERT_NE(p, nullptr);
  DiffTimeline t = BuildDiffTimeline(*p->a, p->ra, *p->b, p->rb, p->d);
  ASSERT_TRUE(t.available) << t.problem;
  ASSERT_FALSE(p->d.ranked.empty());
  // The pair's largest change is the DataLoader iterator (single → multi
  // process), aligned by role: it is found in every slot of each run.
  const uint32_t top = p->d.ranked[0];
  ASSERT_EQ(p->d.nodes.match[top], DiffMatch::kRole);
  size_t on[2] = {0, 0};
  for (const TimelineMarker& m : t.markers) {
    ASSERT_TRUE(m.rank == kDiffTimelineRankA || m.rank == kDiffTimelineRankB);
    const int side = m.rank == kDiffTimelineRankA ? 0 : 1;
    auto slot = std::upper_bound(t.slots.begin(), t.slots.end(), m.ts_ns,
                                 [](int64_t v, const DiffTimelineSlot& s) { return v < s.start_ns; });
    ASSERT_NE(slot, t.slots.begin());
    --slot;
    const DiffTimelineStep& step = side == 0 ? slot->a : slot->b;
    ASSERT_TRUE(step.present);
    EXPECT_LE(m.ts_ns + m.dur_ns, slot->start_ns + step.dur_ns);
    if (m.rule_id == "diff change #1") ++on[side];
  }
  EXPECT_EQ(on[0], t.a.steps);
  EXPECT_EQ(on[1], t.b.steps);
  // Removed nodes are marked on A only.
  for (const TimelineMarker& m : t.markers) {
    if (m.bottleneck == "removed") {
      EXPECT_EQ(m.rank, kDiffTimelineRankA) << m.title;
    }
    if (m.bottleneck == "added") {
      EXPECT_EQ(m.rank, kDiffTimelineRankB) << m.title;
    }
  }
}

TEST(DiffTimelineTest, HostileNamesStayEscapedOnThePage) {
  std::unique_ptr<Pair> p = LoadResNet50();
  ASSERT_NE(p, nullptr);
  DiffTimeline t = BuildDiffTimeline(*p->a, p->ra, *p->b, p->rb, p->d);
  ASSERT_TRUE(t.available) << t.problem;
  const std::string hostile = "</script><img src=x onerror=alert(1)>";
  t.trace->slices.name[0] = t.trace->strings.Intern(hostile);
  t.trace->tracks.process_name[0] = t.trace->strings.Intern("A: " + hostile);
  if (!t.markers.empty()) t.markers[0].title = hostile;
  std::string page;
  AppendDiffTimelineHtml(t, hostile + ".json", "b.json", &page);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("</script><img"), std::string::npos);
  EXPECT_NE(page.find("Content-Security-Policy"), std::string::npos);
  EXPECT_NE(page.find("Time between steps is dropped"), std::string::npos);
  EXPECT_NE(page.find("<meta name=\"generator\" content=\"aiprof diff --timeline\">"), std::string::npos);
}

// Thread instants (the ResNet50 runs' 12 k `[memory]` events each) are
// carried into their step's slot: per run and slot, the instants on the
// run's ranks, as offsets from the slot's start, are exactly the source's
// thread instants in its step k as offsets from the step's start (brute
// force over the source table); the rest are counted as dropped.
TEST(DiffTimelineTest, ResNet50InstantsLieInTheirStepsSlot) {
  std::unique_ptr<Pair> p = LoadResNet50();
  ASSERT_NE(p, nullptr);
  const DiffTimeline t = BuildDiffTimeline(*p->a, p->ra, *p->b, p->rb, p->d);
  ASSERT_TRUE(t.available) << t.problem;
  const Trace& m = *t.trace;
  for (int side = 0; side < 2; ++side) {
    const Trace& src = side == 0 ? *p->a : *p->b;
    const DiffTimelineRun& run = side == 0 ? t.a : t.b;
    const auto steps = LastSteps(src, run.steps);
    uint64_t in_steps = 0, thread = 0, other = 0;
    for (size_t k = 0; k < steps.size(); ++k) {
      std::vector<int64_t> want, got;
      for (size_t i = 0; i < src.instants.size(); ++i) {
        if (src.instants.scope[i] != 't') continue;
        const int64_t ts = src.instants.ts_ns[i];
        if (ts >= steps[k].first && ts < steps[k].first + steps[k].second) want.push_back(ts - steps[k].first);
      }
      const int64_t slot = t.slots[k].start_ns;
      for (size_t i = 0; i < m.instants.size(); ++i) {
        if (m.tracks.rank[m.instants.track[i]] != run.out_ranks[0]) continue;
        const int64_t ts = m.instants.ts_ns[i];
        if (ts >= slot && ts < slot + steps[k].second) got.push_back(ts - slot);
      }
      std::sort(want.begin(), want.end());
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want) << "side " << side << " step " << k;
      in_steps += want.size();
    }
    for (size_t i = 0; i < src.instants.size(); ++i) (src.instants.scope[i] == 't' ? thread : other)++;
    EXPECT_GT(in_steps, 1000u);
    EXPECT_EQ(run.instants, in_steps);
    EXPECT_EQ(run.instants + run.instants_out, thread);
    EXPECT_EQ(run.instants_unscoped, other);
  }
}

// Each run's page fault records keep their own capture's period and cost:
// fault records added on each run's step thread (A: 5 per steady step,
// period 1, cost 2 µs; B: 3 per steady step, period 4, no cost) are two
// kinds of fault on the page, one per run's source, with their records; a
// hostile-named instant stays text.
TEST(DiffTimelineTest, FaultRecordsUseEachRunsPeriodAndCost) {
  std::unique_ptr<Pair> p = LoadResNet50();
  ASSERT_NE(p, nullptr);
  const std::string hostile = "</script><img src=x onerror=alert(1)>";
  std::map<int, uint64_t> added;
  for (int side = 0; side < 2; ++side) {
    Trace& tr = side == 0 ? *p->a : *p->b;
    const AttributionResult& r = side == 0 ? p->ra : p->rb;
    const StringId cat = tr.strings.Intern(kPageFaultCategory), name = tr.strings.Intern(kPageFaultName);
    for (const AttributionStep& s : r.per_step) {
      if (!s.steady || s.wall_ns <= 0) continue;
      for (int k = 0; k < (side == 0 ? 5 : 3); ++k) {
        tr.instants.Append({.ts_ns = s.start_ns + (k + 1) * s.wall_ns / 8, .name = name, .category = cat,
                            .track = TrackId{s.track}, .scope = 't', .arg_begin = 0, .arg_count = 0});
        ++added[side];
      }
    }
    if (side == 0) {
      tr.metadata[kPageFaultPeriodMeta] = "1";
      tr.metadata[kPageFaultCostMeta] = "2000";
      tr.instants.Append({.ts_ns = r.per_step.back().start_ns, .name = tr.strings.Intern(hostile),
                          .category = tr.strings.Intern(hostile), .track = TrackId{r.per_step.back().track},
                          .scope = 't', .arg_begin = 0, .arg_count = 0});
    } else {
      tr.metadata[kPageFaultPeriodMeta] = "4";
    }
  }
  const DiffTimeline t = BuildDiffTimeline(*p->a, p->ra, *p->b, p->rb, p->d);
  ASSERT_TRUE(t.available) << t.problem;
  EXPECT_EQ(t.a.faults.period, 1u);
  EXPECT_TRUE(t.a.faults.cost_known);
  EXPECT_EQ(t.b.faults.period, 4u);
  EXPECT_FALSE(t.b.faults.cost_known);
  std::string page;
  AppendDiffTimelineHtml(t, "a.json", "b.json", &page);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  size_t open = page.find(R"(<script type="application/json" id="aiprof-data">)");
  ASSERT_NE(open, std::string::npos);
  open = page.find('>', open) + 1;
  const std::string data = page.substr(open, page.find("</script>", open) - open);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(data).get(doc), simdjson::SUCCESS);
  simdjson::dom::element in = doc["instants"];
  simdjson::dom::array sources = in["fault_sources"];
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(std::string_view(sources.at(0)["label"]), "A");
  EXPECT_EQ(int64_t(sources.at(0)["fault_period"]), 1);
  EXPECT_EQ(double(sources.at(0)["fault_cost_ns"]), 2000.0);
  EXPECT_EQ(std::string_view(sources.at(1)["label"]), "B");
  EXPECT_EQ(int64_t(sources.at(1)["fault_period"]), 4);
  EXPECT_TRUE(sources.at(1)["fault_cost_ns"].is_null());
  std::map<int64_t, int64_t> records_by_source;
  bool hostile_kind = false;
  for (auto k : in["kinds"].get_array()) {
    if (int64_t(k["fault"]) == 1) records_by_source[int64_t(k["src"])] += int64_t(k["total"]);
    if (std::string_view(k["name"]) == hostile) hostile_kind = true;
  }
  EXPECT_TRUE(hostile_kind);
  ASSERT_EQ(records_by_source.size(), 2u);
  EXPECT_EQ(records_by_source[0], int64_t(added[0]));
  EXPECT_EQ(records_by_source[1], int64_t(added[1]));
  EXPECT_NE(page.find("Thread instants in the steps are drawn"), std::string::npos);
}

TEST(DiffTimelineTest, UnavailableDiffSaysWhy) {
  Trace a, b;
  AttributionResult ra, rb;
  AttributionDiff d;
  d.problem = "no steps";
  DiffTimeline t = BuildDiffTimeline(a, ra, b, rb, d);
  EXPECT_FALSE(t.available);
  EXPECT_NE(t.problem.find("no steps"), std::string::npos);
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// Two 2-rank runs (HTA's two sampled ranks, as a rank folder each): every
// rank of both runs is shown on its own output rank, slot k is the longest
// step k of any rank, and every rank's pieces lie in their slot, within
// that rank's own step k, covering exactly the rank's slices' time inside
// its steady steps.
TEST(DiffTimelineTest, MultiRankRunsShowEveryRankInItsSlots) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("aiprof_diff_ranks_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (int r : {0, 1}) {
    fs::copy_file(std::string(AIPROF_FIXTURES_DIR) +
                      "/kineto/HolisticTraceAnalysis__tests__data__trace_filter__sampled_rank-" + std::to_string(r) +
                      ".json.gz",
                  dir / ("rank-" + std::to_string(r) + ".json.gz"));
  }
  Pair p;
  for (std::unique_ptr<Trace>* t : {&p.a, &p.b}) {
    StatusOr<std::unique_ptr<Trace>> r = testing::ImportPath(dir.string());
    ASSERT_TRUE(r.ok()) << r.status().message();
    *t = std::move(*r);
  }
  fs::remove_all(dir);
  const AnalysisWindow wa = ComputeAnalysisWindow(*p.a), wb = ComputeAnalysisWindow(*p.b);
  p.ra = ComputeAttribution(*p.a, &wa);
  p.rb = ComputeAttribution(*p.b, &wb);
  p.d = DiffAttribution(*p.a, p.ra, *p.b, p.rb, {});
  ASSERT_TRUE(p.d.available) << p.d.problem;
  DiffTimeline t = BuildDiffTimeline(*p.a, p.ra, *p.b, p.rb, p.d);
  ASSERT_TRUE(t.available) << t.problem;
  EXPECT_EQ(t.a.ranks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(t.b.ranks, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(t.a.out_ranks, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(t.b.out_ranks, (std::vector<int32_t>{3, 4}));
  // Each output rank's steps straight from attribution's per-step rows.
  std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> steps;  // out rank → (start, dur)
  std::map<int32_t, int32_t> source_rank;
  for (int side = 0; side < 2; ++side) {
    const AttributionResult& r = side == 0 ? p.ra : p.rb;
    const DiffTimelineRun& run = side == 0 ? t.a : t.b;
    for (size_t i = 0; i < run.ranks.size(); ++i) {
      source_rank[run.out_ranks[i]] = run.ranks[i];
      for (const AttributionStep& s : r.per_step) {
        if (s.steady && s.rank == run.ranks[i]) steps[run.out_ranks[i]].push_back({s.start_ns, s.wall_ns});
      }
      std::sort(steps[run.out_ranks[i]].begin(), steps[run.out_ranks[i]].end());
    }
  }
  ASSERT_EQ(steps.size(), 4u);
  for (size_t k = 0; k < t.slots.size(); ++k) {
    int64_t longest = 0;
    for (const auto& [rank, s] : steps) {
      if (k < s.size()) longest = std::max(longest, s[k].second);
    }
    EXPECT_EQ(t.slots[k].width_ns, longest) << k;
    if (k > 0) {
      EXPECT_EQ(t.slots[k].start_ns, t.slots[k - 1].start_ns + t.slots[k - 1].width_ns);
    }
  }
  const Trace& m = *t.trace;
  std::map<int32_t, int64_t> shown_ns;
  size_t outside = 0;
  for (size_t i = 0; i < m.slices.size(); ++i) {
    const int32_t rank = m.tracks.rank[m.slices.track[i]];
    ASSERT_TRUE(steps.count(rank)) << rank;
    const int64_t ts = m.slices.ts_ns[i], end = ts + m.slices.dur_ns[i];
    size_t k = 0;
    while (k + 1 < t.slots.size() && t.slots[k + 1].start_ns <= ts) ++k;
    const auto& s = steps[rank];
    if (k >= s.size() || ts < t.slots[k].start_ns || end > t.slots[k].start_ns + s[k].second) ++outside;
    shown_ns[rank] += m.slices.dur_ns[i];
  }
  EXPECT_EQ(outside, 0u);
  // Per output rank: the source rank's slices' time inside its steady steps, by brute force.
  for (const auto& [rank, s] : steps) {
    const Trace& src = rank <= 2 ? *p.a : *p.b;
    int64_t want = 0;
    for (size_t i = 0; i < src.slices.size(); ++i) {
      if (src.tracks.rank[src.slices.track[i]] != source_rank[rank]) continue;
      const int64_t ts = src.slices.ts_ns[i], end = ts + src.slices.dur_ns[i];
      for (auto [st, d] : s) want += std::max<int64_t>(0, std::min(end, st + d) - std::max(ts, st));
    }
    EXPECT_GT(want, 0) << rank;
    EXPECT_EQ(shown_ns[rank], want) << "output rank " << rank;
  }
  std::string page;
  AppendDiffTimelineHtml(t, "a<dir>", "b&dir", &page);
  EXPECT_EQ(page.find("a<dir>"), std::string::npos);  // escaped
  EXPECT_NE(page.find("dir\\u003e, rank 1"), std::string::npos) << "A's rank 1 header";
}

// A pair made by the name map is coloured alike: B's iterator as A's.
TEST(DiffTimelineTest, NameMapPairSharesAColour) {
  std::unique_ptr<Pair> p = LoadResNet50();
  ASSERT_TRUE(p);
  const std::string ya = "map:\n  - a: /SingleProcessDataLoaderIter/\n    b: /MultiProcessingDataLoaderIter/\n";
  StatusOr<DiffNameMap> map = DiffNameMap::Parse(ya, "map.yaml");
  ASSERT_TRUE(map.ok()) << map.status().message();
  DiffOptions o;
  o.map = &*map;
  AttributionDiff d = DiffAttribution(*p->a, p->ra, *p->b, p->rb, o);
  ASSERT_EQ(d.by_map, 1u);
  DiffTimeline t = BuildDiffTimeline(*p->a, p->ra, *p->b, p->rb, d);
  ASSERT_TRUE(t.available);
  const std::pair<std::string, std::string> want{"enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                                                 "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"};
  EXPECT_NE(std::find(t.color_as.begin(), t.color_as.end(), want), t.color_as.end());
  // Every alias points at an A name, and no name is aliased twice.
  std::set<std::string> seen;
  for (const auto& [name, as] : t.color_as) {
    EXPECT_TRUE(seen.insert(name).second) << name;
    EXPECT_NE(name, as);
  }
  std::string page;
  AppendDiffTimelineHtml(t, "a", "b", &page);
  EXPECT_NE(page.find("\"color_as\":[["), std::string::npos);
}

}  // namespace
}  // namespace aiprof
