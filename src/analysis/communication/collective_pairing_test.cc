#include "src/analysis/communication/collective_pairing.h"

#include <gtest/gtest.h>

#include <string>

#include "src/analysis/communication/clock_alignment.h"
#include "src/analysis/communication/communication.h"
#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/metrics/metric_set.h"
#include "test/util/trace_fixtures.h"

namespace aiprof {
namespace {

using testing::MustImport;

// Hand-made per-rank Kineto traces (test/cross_rank/make_traces.py writes
// them; its docstring says what each holds). The expected figures are those
// of test/cross_rank/cross_rank_oracle.py over the same files, an
// independent Python computation, and by hand below.
std::unique_ptr<Trace> CrossRankCase(const std::string& name) {
  return MustImport(std::string(AIPROF_SOURCE_DIR) + "/test/cross_rank/data/" + name);
}

const RankCommunication* PairedRank(const CrossRankResult& c, int32_t rank) {
  for (const RankCommunication& r : c.ranks) {
    if (r.rank == rank) return &r;
  }
  return nullptr;
}

CollectiveSequences Seq(std::vector<CollectiveInstance> v) { return {{{0, 1}, std::move(v)}}; }

TEST(CollectivePairingTest, WithinStepsAndByPositionWhenARankNumbersNoStep) {
  // Rank B's profile began a step later: by position its step-2 instance
  // would pair with A's step-1 one.
  const CollectiveSequences a = Seq({{100, 110, 1}, {200, 210, 2}, {300, 310, 3}});
  const CollectiveSequences b = Seq({{201, 210, 2}, {301, 310, 3}});
  CollectivePairing p = PairCollectives({&a, &b});
  EXPECT_EQ(p.keys_by_step, 1u);
  EXPECT_EQ(p.keys_by_position, 0u);
  ASSERT_EQ(p.matched.size(), 2u);
  EXPECT_EQ(p.unmatched, 1u);
  EXPECT_EQ(p.matched[0].step, 2);
  EXPECT_EQ(p.matched[0].members[0], (std::pair<uint32_t, uint32_t>{0, 1}));
  EXPECT_EQ(p.matched[0].members[1], (std::pair<uint32_t, uint32_t>{1, 0}));
  PairedSums s = SumPairedCollectives({&a, &b}, p);
  EXPECT_EQ(s.end_spread_p50_ns, 0);
  EXPECT_EQ(s.lateness_ns[1], 2);
  EXPECT_EQ(s.wait_ns[0], 2);
  EXPECT_EQ(s.transfer_ns[0], 18);  // 210 − 201 + 310 − 301
  // A holder without step numbers: by position, and said.
  const CollectiveSequences c = Seq({{201, 210, -1}, {301, 310, -1}});
  p = PairCollectives({&a, &c});
  EXPECT_EQ(p.keys_by_position, 1u);
  ASSERT_EQ(p.matched.size(), 2u);
  EXPECT_EQ(p.matched[0].members[0].second, 0u);  // A's step-1 instance with C's first
  EXPECT_FALSE(SumPairedCollectives({&a, &c}, p).clocks_agree);
}

// A tie for the last arrival: no single rank is last.
TEST(CollectivePairingTest, TiedLastArrivalHasNoSingleLastRank) {
  const CollectiveSequences a = Seq({{100, 200, 1}}), b = Seq({{150, 200, 1}}), c = Seq({{150, 200, 1}});
  CollectivePairing p = PairCollectives({&a, &b, &c});
  ASSERT_EQ(p.matched.size(), 1u);
  PairedArrival last = LastArrival({&a, &b, &c}, p.matched[0]);
  EXPECT_EQ(last.tied, 2u);
  EXPECT_EQ(last.last_ns, 150);
  const CollectiveSequences d = Seq({{151, 200, 1}});
  last = LastArrival({&a, &b, &d}, PairCollectives({&a, &b, &d}).matched[0]);
  EXPECT_EQ(last.tied, 1u);
  EXPECT_EQ(last.last, 2u);
}

// `aiprof analyze` of a folder of ranks where rank 3's profile began a step
// later. The old pairing (by position over the whole trace) paired rank 3's
// step-2 all-reduces with the others' step-1 ones: ends 1 ms apart, the
// clocks judged not to agree, wait and slow rank withheld. Within steps:
// steps 2 and 3 pair (2 each), step 1 of ranks 0–2 is unmatched; the
// second all-reduce of each step runs on the device after the next step
// began on the host, and belongs to the step that launched it.
// By hand: per matched all-reduce rank 2 arrives 10 µs after the others
// and all end together; transfer (400 − 210) + (1300 − 1060) = 430 µs per
// step. Oracle (cross_rank_oracle.py): matched 4, unmatched 6, spread 0;
// ranks 0/1/3 wait 40,000 ns, rank 2 lateness 40,000 ns, transfer 860,000.
TEST(CrossRankTest, CollectivesArePairedWithinTheirStepWhenARankStartsLater) {
  auto t = CrossRankCase("late_start");
  ASSERT_NE(t, nullptr);
  CommunicationResult r = ComputeCommunication(*t);
  const CrossRankResult& c = r.cross;
  EXPECT_EQ(c.matched, 4u);
  EXPECT_EQ(c.unmatched, 6u);
  EXPECT_EQ(c.keys_by_step, 1u);
  EXPECT_EQ(c.keys_by_position, 0u);
  EXPECT_EQ(c.incomplete, 0u);
  EXPECT_EQ(c.end_spread_p50_ns, 0);
  EXPECT_TRUE(c.clocks_agree);
  for (int32_t rank = 0; rank < 4; ++rank) {
    const RankCommunication* rc = PairedRank(c, rank);
    ASSERT_NE(rc, nullptr) << rank;
    EXPECT_EQ(rc->matched, 4u);
    EXPECT_EQ(rc->wait_ns, rank == 2 ? 0 : 40000) << rank;
    EXPECT_EQ(rc->lateness_ns, rank == 2 ? 40000 : 0) << rank;
    EXPECT_EQ(rc->transfer_ns, 860000) << rank;
    EXPECT_EQ(rc->comm_ns, rank == 2 ? 860000 : 900000) << rank;
  }
  // The slices of each pair, for the critical path's join: one per rank,
  // ending together (every all-reduce of a step ends at one time).
  ASSERT_EQ(c.paired_slices.size(), 4u);
  for (const std::vector<uint32_t>& pair : c.paired_slices) {
    ASSERT_EQ(pair.size(), 4u);
    const int64_t end = t->slices.ts_ns[pair[0]] + t->slices.dur_ns[pair[0]];
    for (uint32_t slice : pair) EXPECT_EQ(t->slices.ts_ns[slice] + t->slices.dur_ns[slice], end);
  }
  // The last arrival of each pair is the pairing's (LastArrival): rank 2's
  // slice, the one that starts latest.
  ASSERT_EQ(c.paired_last.size(), c.paired_slices.size());
  for (size_t j = 0; j < c.paired_slices.size(); ++j) {
    for (uint32_t slice : c.paired_slices[j]) {
      if (slice != c.paired_last[j]) {
        EXPECT_LT(t->slices.ts_ns[slice], t->slices.ts_ns[c.paired_last[j]]);
      }
    }
  }
  ASSERT_TRUE(c.slow_rank.has_value());
  EXPECT_EQ(c.slow_rank->rank, 2);
  EXPECT_EQ(c.slow_rank->excess_ns, 40000);
  EXPECT_TRUE(c.slow_rank->test.outlier);  // Dixon's Q = 1 for {0, 0, 0, 40000}
  MetricSet m;
  PublishCommunication(r, &m);
  ASSERT_NE(m.Get("comm_wait_ratio"), nullptr);
  EXPECT_NEAR(m.Get("comm_wait_ratio")->value, 120000.0 / 3560000.0, 1e-12);
}

// The critical path joined collectives across ranks by their ordinal over
// the whole trace, its own copy of the old pairing: on late_start (rank 3
// lacks step 1) ranks 0-2's step 1 "waited for rank 3". It now joins the
// communication analysis's pairs: every collective edge stays within one.
TEST(CrossRankTest, CriticalPathJoinsCollectivesAsTheyArePaired) {
  auto t = CrossRankCase("late_start");
  ASSERT_NE(t, nullptr);
  const CommunicationResult r = ComputeCommunication(*t);
  ASSERT_TRUE(r.cross.clocks_agree);
  std::vector<size_t> pair_of(t->slices.size(), SIZE_MAX);
  for (size_t i = 0; i < r.cross.paired_slices.size(); ++i) {
    for (uint32_t slice : r.cross.paired_slices[i]) pair_of[slice] = i;
  }
  CriticalPathOptions o;
  o.cross = &r.cross;
  const CriticalPathResult p = ComputeCriticalPath(*t, o);
  ASSERT_TRUE(p.graph.cross_rank);
  size_t edges = 0;
  for (uint32_t s = 0; s < t->slices.size(); ++s) {
    if (p.graph.peer[s] == kNoSlice) continue;
    ++edges;
    EXPECT_NE(pair_of[s], SIZE_MAX) << "slice " << s << " joined, not paired";
    EXPECT_EQ(pair_of[s], pair_of[p.graph.peer[s]]) << "slice " << s << " joined to another pair's slice";
  }
  // 4 pairs of 4 ranks, rank 2 last in each: 3 edges a pair.
  EXPECT_EQ(edges, 12u);
}

// A 4-rank job whose rank 3 crashed (no trace): in step 2's second
// all-reduce rank 0 left with an error at +1055 µs, before rank 2 arrived
// at +1070, and rank 1 waited until +1600. The old sums took rank 1's
// 530 µs after rank 2's arrival as transfer (1,150,000 ns in all). Now the
// instance is incomplete and left out: 3 completed, transfer (190 + 240 +
// 190) µs = 620,000 ns a rank, as the oracle gives.
TEST(CrossRankTest, ACollectiveAPeerFailedInIsNotTransfer) {
  auto t = CrossRankCase("failed_peer");
  ASSERT_NE(t, nullptr);
  const CrossRankResult c = ComputeCommunication(*t).cross;
  EXPECT_EQ(c.matched, 4u);
  EXPECT_EQ(c.incomplete, 1u);
  EXPECT_EQ(c.unmatched, 0u);
  EXPECT_TRUE(c.clocks_agree);
  EXPECT_EQ(c.paired_slices.size(), 3u);  // the critical path joins the completed ones only
  for (int32_t rank = 0; rank < 3; ++rank) {
    const RankCommunication* rc = PairedRank(c, rank);
    ASSERT_NE(rc, nullptr) << rank;
    EXPECT_EQ(rc->matched, 3u);
    EXPECT_EQ(rc->incomplete, 1u);
    EXPECT_EQ(rc->transfer_ns, 620000) << rank;
    EXPECT_EQ(rc->wait_ns, rank == 2 ? 0 : 30000) << rank;
    EXPECT_EQ(rc->comm_ns, rank == 2 ? 620000 : 650000) << rank;
  }
}

// Ranks 1 and 2 arrive equally late at every all-reduce: their lateness
// totals tie (40,000 ns each); the old code named rank 1 (the first of the
// two) the slow rank. No single rank is slowest now, and the metrics say why.
TEST(CrossRankTest, TiedLatenessNamesNoSlowRank) {
  auto t = CrossRankCase("tie");
  ASSERT_NE(t, nullptr);
  CommunicationResult r = ComputeCommunication(*t);
  EXPECT_EQ(r.cross.matched, 4u);
  EXPECT_EQ(PairedRank(r.cross, 1)->lateness_ns, 40000);
  EXPECT_EQ(PairedRank(r.cross, 2)->lateness_ns, 40000);
  EXPECT_FALSE(r.cross.slow_rank.has_value());
  EXPECT_EQ(r.cross.slow_rank_tied, 2u);
  MetricSet m;
  PublishCommunication(r, &m);
  ASSERT_TRUE(m.UnavailableReason("slow_ranks").has_value());
  EXPECT_NE(m.UnavailableReason("slow_ranks")->find("2 ranks share the largest lateness"), std::string::npos);
  EXPECT_NE(m.Get("comm_wait_ratio"), nullptr);  // the wait ratio needs no single slow rank
}

// CPU-only ranks (gloo host spans, no device activity): rank 2 arrives
// 10 µs late at all four all-reduces. Its excess was published as 0.0% "of
// its device span" (it has none), then as unavailable; now it is a share of
// the sum of its step times, as `aiprof cluster` judges CPU ranks (37927bd):
// 40,000 ns of its two 1,000 us steps, 2.0% (oracle: lateness 40,000 ns).
TEST(CrossRankTest, CpuOnlySlowRankIsAShareOfItsStepTimes) {
  auto t = CrossRankCase("gloo_cpu");
  ASSERT_NE(t, nullptr);
  CommunicationResult r = ComputeCommunication(*t);
  EXPECT_EQ(r.cross.matched, 4u);
  EXPECT_TRUE(r.cross.clocks_agree);
  ASSERT_TRUE(r.cross.slow_rank.has_value());
  EXPECT_EQ(r.cross.slow_rank->rank, 2);
  EXPECT_EQ(r.cross.slow_rank->excess_ns, 40000);
  MetricSet m;
  PublishCommunication(r, &m);
  ASSERT_NE(m.Get("slow_rank_excess_ratio"), nullptr);
  EXPECT_DOUBLE_EQ(m.Get("slow_rank_excess_ratio")->value, 40'000.0 / 2'000'000);
  EXPECT_EQ(r.cross.slow_rank->excess_ratio_base, "the sum of its step times");
  ASSERT_NE(m.Get("slow_ranks"), nullptr);
  EXPECT_EQ(m.Get("slow_ranks")->value, 1);
}

// Stalled (collective_pairing.h): the last collective every member entered,
// on every member at least kStalledMinNs and kStalledFactor x its usual.
// Two members, four 10 ms all-reduces in steps 0-3 (B 1 ms late), then a
// fifth in step 4 that both sit in until a timeout. Both sides of each
// condition.
TEST(CollectivePairingTest, StalledWhenEveryMemberSatInItsLastCollective) {
  constexpr int64_t ms = 1'000'000;
  auto job = [&](int64_t a_last_ns, int64_t b_last_ns, int64_t usual_ns, bool one_more) {
    std::vector<CollectiveInstance> a, b;
    for (int64_t s = 0; s < 4; ++s) {
      a.push_back({s * 100 * ms, s * 100 * ms + usual_ns, s});
      b.push_back({s * 100 * ms + ms, s * 100 * ms + usual_ns, s});
    }
    a.push_back({400 * ms, 400 * ms + a_last_ns, 4});
    b.push_back({400 * ms + ms, 400 * ms + ms + b_last_ns, 4});
    if (one_more) {
      a.push_back({6000 * ms, 6000 * ms + usual_ns, 5});
      b.push_back({6000 * ms + ms, 6000 * ms + usual_ns, 5});
    }
    return std::pair{Seq(a), Seq(b)};
  };
  auto sums = [](const std::pair<CollectiveSequences, CollectiveSequences>& j) {
    return SumPairedCollectives({&j.first, &j.second}, PairCollectives({&j.first, &j.second}));
  };
  const auto stalled = job(4096 * ms, 4095 * ms, 10 * ms, false);
  PairedSums s = sums(stalled);
  EXPECT_EQ(s.stalled_count, 1u);
  EXPECT_EQ(s.incomplete, 0u);
  EXPECT_EQ(s.stalled_ns[0], 4096 * ms);
  EXPECT_EQ(s.stalled_ns[1], 4095 * ms);
  EXPECT_EQ(s.matched[0], 4u);
  EXPECT_EQ(s.transfer_ns[0], 4 * 9 * ms);  // the old sums: + 4095 ms of "transfer"
  EXPECT_EQ(s.transfer_ns[1], 4 * 9 * ms);
  EXPECT_EQ(s.end_spread_p50_ns, 0);
  EXPECT_TRUE(s.clocks_agree);
  // Below kStalledMinNs: a collective, if a long one.
  s = sums(job(kStalledMinNs - 1, kStalledMinNs - 1, 10 * ms, false));
  EXPECT_EQ(s.stalled_count, 0u);
  s = sums(job(kStalledMinNs + 2 * ms, kStalledMinNs + ms, 10 * ms, false));
  EXPECT_EQ(s.stalled_count, 1u);
  // Below kStalledFactor x the usual: 1.5 s against 200 ms collectives.
  s = sums(job(1500 * ms, 1500 * ms, 200 * ms, false));
  EXPECT_EQ(s.stalled_count, 0u);
  s = sums(job(2001 * ms, 2001 * ms, 200 * ms, false));
  EXPECT_EQ(s.stalled_count, 1u);
  // Not the last collective: the job went on, so it completed.
  s = sums(job(4096 * ms, 4095 * ms, 10 * ms, true));
  EXPECT_EQ(s.stalled_count, 0u);
  // One member short in it (the rank the other waited for is present):
  // a wait, named by the arrivals, not stalled.
  s = sums(job(4096 * ms, 2 * ms, 10 * ms, false));
  EXPECT_EQ(s.stalled_count, 0u);
}

// The clocks' agreement is judged against the usual collective, not the
// mean: two members, five 10 ms all-reduces of which the third lasted 4 s on
// both (a long wait, not the last collective: not stalled), B's clock 5 ms
// ahead. The mean duration (808 ms) made the 5 ms end spread 0.6% of it and
// the clocks "agree" (the old statistic); of the median duration (10 ms) it
// is 50%: they disagree, and aligning by the ends brings the spread to 0.
TEST(CollectivePairingTest, LongCollectivesDoNotMakeDisagreeingClocksAgree) {
  constexpr int64_t ms = 1'000'000;
  std::vector<CollectiveInstance> a, b;
  for (int64_t s = 0; s < 5; ++s) {
    const int64_t dur = s == 2 ? 4000 * ms : 10 * ms;
    a.push_back({s * 5000 * ms, s * 5000 * ms + dur, s});
    b.push_back({s * 5000 * ms + 5 * ms, s * 5000 * ms + dur + 5 * ms, s});
  }
  const CollectiveSequences sa = Seq(a), sb = Seq(b);
  const CollectivePairing p = PairCollectives({&sa, &sb});
  ASSERT_EQ(p.matched.size(), 5u);
  const PairedSums raw = SumPairedCollectives({&sa, &sb}, p);
  EXPECT_EQ(raw.stalled_count, 0u);
  EXPECT_EQ(raw.end_spread_p50_ns, 5 * ms);
  EXPECT_DOUBLE_EQ(raw.end_spread_share, 0.5);  // the mean's: 5 / 808
  EXPECT_FALSE(raw.clocks_agree);
  const ClockAlignment aligned = AlignClocks({&sa, &sb}, p, raw, !raw.clocks_agree);
  EXPECT_TRUE(aligned.aligned);
  EXPECT_EQ(aligned.offset_ns, (std::vector<int64_t>{-2'500'000, 2'500'000}));
  EXPECT_EQ(aligned.sums.end_spread_p50_ns, 0);
  EXPECT_TRUE(aligned.sums.clocks_agree);
  EXPECT_EQ(aligned.sums.lateness_ns[1], 0);  // raw: 5 ms per collective
  EXPECT_EQ(raw.lateness_ns[1], 25 * ms);
  // The same job on one clock agrees.
  for (CollectiveInstance& c : b) c.arrival_ns -= 5 * ms, c.end_ns -= 5 * ms;
  const CollectiveSequences sb0 = Seq(b);
  EXPECT_TRUE(SumPairedCollectives({&sa, &sb0}, PairCollectives({&sa, &sb0})).clocks_agree);
}

// Step numbers a step apart (collective_pairing.h): iterations of unequal
// lengths, every rank ends iteration i's all-reduce at one moment on its
// clock (rank r's clock r x 7 ms off). Rank 0 started profiling an
// iteration later (its step N is iteration N + 1) and holds the most
// instances; ranks 1 and 2 number iterations as they are. Shifts are in the
// majority's numbers: rank 0 +1, the others 0; each pair is one iteration.
TEST(CollectivePairingTest, StepNumbersApartAreShiftedInTheMajoritysNumbers) {
  constexpr int64_t ms = 1'000'000;
  const int64_t lengths[] = {100, 250, 130, 300, 180, 220, 160, 270};
  std::vector<int64_t> end{0};
  for (int64_t l : lengths) end.push_back(end.back() + l * ms);
  auto rank = [&](int r, int first, int last, int numbered_from) {
    std::vector<CollectiveInstance> v;
    for (int i = first; i <= last; ++i) {
      const int64_t e = end[static_cast<size_t>(i) + 1] + r * 7 * ms;
      v.push_back({e - 20 * ms + r * ms, e, i - first + numbered_from});
    }
    return Seq(v);
  };
  const CollectiveSequences r0 = rank(0, 1, 7, 0);  // iterations 1-7 as steps 0-6
  const CollectiveSequences r1 = rank(1, 0, 5, 0), r2 = rank(2, 0, 5, 0);
  const CollectivePairing p = PairCollectives({&r0, &r1, &r2});
  EXPECT_EQ(p.step_shift, (std::vector<int64_t>{1, 0, 0}));
  ASSERT_EQ(p.matched.size(), 5u);  // iterations 1-5
  for (const PairedCollective& c : p.matched) {
    EXPECT_GE(c.step, 1);
    EXPECT_LE(c.step, 5);
    EXPECT_EQ(c.members[0].second + 1, static_cast<uint32_t>(c.step));  // rank 0's instance of that iteration
    EXPECT_EQ(c.members[1].second, static_cast<uint32_t>(c.step));
  }
  const PairedSums s = SumPairedCollectives({&r0, &r1, &r2}, p);
  EXPECT_EQ(s.end_spread_p50_ns, 14 * ms);  // the clocks' offsets, nothing else
  // Every iteration as long: nothing to tell a shift by, none taken.
  const CollectiveSequences a = Seq({{80, 100, 0}, {180, 200, 1}, {280, 300, 2}, {380, 400, 3}});
  const CollectiveSequences b = Seq({{185, 205, 0}, {285, 305, 1}, {385, 405, 2}});
  EXPECT_EQ(PairCollectives({&a, &b}).step_shift, (std::vector<int64_t>{0, 0}));
}

}  // namespace
}  // namespace aiprof
