#include "src/analysis/communication/clock_alignment.h"

#include <gtest/gtest.h>

#include <vector>

namespace aiprof {
namespace {

constexpr int64_t kAlignMs = 1'000'000, kAlignUs = 1'000;

CollectiveSequences AlignSeq(std::vector<CollectiveInstance> v) { return {{{0, 1}, std::move(v)}}; }

// One instance on a clock `offset` ahead of the true one.
CollectiveInstance AlignAt(int64_t arrival, int64_t end, int64_t step, int64_t offset) {
  return {arrival + offset, end + offset, step};
}

// Two ranks, rank b's clock 30 ms ahead. Steps 0-2: both end together on
// the true clock but for b's 1 ms of jitter (−1, 0, +1 ms), so b's ends are
// 29, 30 and 31 ms after a's; each rank's offset is half the median, ±15
// ms. Step 3 is stalled (both sat 4 s in it for a third rank: b arrived 40
// ms after a, so its timeout ended 40 ms later, 70 ms on the raw clocks):
// taken into the median ({29, 30, 31, 70} → 30.5) it would give ±15.25 ms.
TEST(ClockAlignmentTest, OffsetsFromTheCompletedCollectivesNotTheStalledOne) {
  const int64_t ob = 30 * kAlignMs, jitter[3] = {-kAlignMs, 0, kAlignMs};
  std::vector<CollectiveInstance> va, vb;
  for (int64_t i = 0; i < 3; ++i) {
    va.push_back(AlignAt(100 * i * kAlignMs, 100 * i * kAlignMs + 20 * kAlignMs, i, 0));
    vb.push_back(AlignAt(100 * i * kAlignMs + 2 * kAlignMs, 100 * i * kAlignMs + 20 * kAlignMs + jitter[i], i, ob));
  }
  va.push_back(AlignAt(300 * kAlignMs, 4300 * kAlignMs, 3, 0));
  vb.push_back(AlignAt(340 * kAlignMs, 4340 * kAlignMs, 3, ob));
  const CollectiveSequences a = AlignSeq(va), b = AlignSeq(vb);
  const std::vector<const CollectiveSequences*> members{&a, &b};
  const CollectivePairing p = PairCollectives(members);
  ASSERT_EQ(p.matched.size(), 4u);
  const PairedSums raw = SumPairedCollectives(members, p);
  EXPECT_FALSE(raw.clocks_agree);
  EXPECT_EQ(raw.stalled_count, 1u);

  const ClockAlignment al = AlignClocks(members, p, raw, !raw.clocks_agree);
  ASSERT_TRUE(al.aligned);
  EXPECT_EQ(al.offset_ns, (std::vector<int64_t>{-15 * kAlignMs, 15 * kAlignMs}));
  // The stalled one given too: what the old cluster estimator did.
  EXPECT_EQ(EstimateClockOffsets(members, p, std::vector<bool>(4, true)),
            (std::vector<int64_t>{-15'250 * kAlignUs, 15'250 * kAlignUs}));
  // Aligned: b's ends 1 ms before, at and 1 ms after a's → median spread 1 ms.
  EXPECT_TRUE(al.sums.clocks_agree);
  EXPECT_EQ(al.sums.end_spread_p50_ns, kAlignMs);
  // b arrives 2 ms after a (true clock) less its 15 − 15 = 0 ms error: 3 × 2 ms.
  EXPECT_EQ(al.sums.wait_ns, (std::vector<int64_t>{6 * kAlignMs, 0}));
  EXPECT_EQ(al.sums.lateness_ns, (std::vector<int64_t>{0, 6 * kAlignMs}));
  EXPECT_EQ(al.sums.stalled_count, 1u);

  // Not asked to align: the raw sums, zero offsets.
  const ClockAlignment none = AlignClocks(members, p, raw, false);
  EXPECT_FALSE(none.aligned);
  EXPECT_EQ(none.offset_ns, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(none.sums.wait_ns, raw.wait_ns);
}

// Three ranks, b's clock 500 ms ahead and c's 400 ms behind. Steps 0-2
// complete: a and b end together, c 0.2, 0 and −0.4 ms from them; arrivals
// a +0, b +3, c +1 ms. Step 3: a and b timed out after 4 s, c came 60 s
// later and left at once (incomplete, not stalled: c was in it 1 ms). On
// the raw clocks nothing marks step 3 incomplete, so the first estimate
// takes its 56 s deviation into c's median ({−400.4, −400, −399.8, 55101}
// → −399.9 ms); once aligned step 3 shows incomplete and the estimate
// without it is c −400 ms exactly.
TEST(ClockAlignmentTest, IncompleteCollectiveLeftOutOnceTheAlignedClocksShowIt) {
  const int64_t off[3] = {0, 500 * kAlignMs, -400 * kAlignMs}, jitter[3] = {200 * kAlignUs, 0, -400 * kAlignUs};
  const int64_t late[3] = {0, 3 * kAlignMs, 1 * kAlignMs};
  std::vector<CollectiveInstance> v[3];
  for (int64_t i = 0; i < 3; ++i) {
    for (int r = 0; r < 3; ++r) {
      const int64_t end = 100 * i * kAlignMs + 20 * kAlignMs + (r == 2 ? jitter[i] : 0);
      v[r].push_back(AlignAt(100 * i * kAlignMs + late[r], end, i, off[r]));
    }
  }
  v[0].push_back(AlignAt(300 * kAlignMs, 4300 * kAlignMs, 3, off[0]));
  v[1].push_back(AlignAt(300 * kAlignMs, 4300 * kAlignMs, 3, off[1]));
  v[2].push_back(AlignAt(60'300 * kAlignMs, 60'301 * kAlignMs, 3, off[2]));
  const CollectiveSequences a = AlignSeq(v[0]), b = AlignSeq(v[1]), c = AlignSeq(v[2]);
  const std::vector<const CollectiveSequences*> members{&a, &b, &c};
  const CollectivePairing p = PairCollectives(members);
  ASSERT_EQ(p.matched.size(), 4u);
  const PairedSums raw = SumPairedCollectives(members, p);
  EXPECT_FALSE(raw.clocks_agree);
  EXPECT_EQ(raw.incomplete, 0u);
  EXPECT_EQ(raw.stalled_count, 0u);
  EXPECT_EQ(EstimateClockOffsets(members, p, raw.complete),
            (std::vector<int64_t>{0, 500 * kAlignMs, -399'900 * kAlignUs}));

  const ClockAlignment al = AlignClocks(members, p, raw, true);
  ASSERT_TRUE(al.aligned);
  EXPECT_EQ(al.offset_ns, (std::vector<int64_t>{0, 500 * kAlignMs, -400 * kAlignMs}));
  EXPECT_TRUE(al.sums.clocks_agree);
  EXPECT_EQ(al.sums.incomplete, 1u);
  EXPECT_EQ(al.sums.complete, (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(LateAfterEnd(members, p.matched[3], al.offset_ns), std::vector<uint32_t>{2});
  // On the true clock: lateness a 0, b 3, c 1 ms and waits 3, 0, 2 ms per
  // step; transfer end − b's arrival, c's with its jitter (+0.2 + 0 − 0.4).
  EXPECT_EQ(al.sums.lateness_ns, (std::vector<int64_t>{0, 9 * kAlignMs, 3 * kAlignMs}));
  EXPECT_EQ(al.sums.wait_ns, (std::vector<int64_t>{9 * kAlignMs, 0, 6 * kAlignMs}));
  EXPECT_EQ(al.sums.transfer_ns, (std::vector<int64_t>{51 * kAlignMs, 51 * kAlignMs, 51 * kAlignMs - 200 * kAlignUs}));
}

// A member in none of the collectives used keeps offset 0; nothing paired:
// nothing aligned.
TEST(ClockAlignmentTest, NothingToEstimateFrom) {
  const CollectiveSequences a = AlignSeq({{0, 10, 1}}), b = AlignSeq({{5, 10, 1}});
  const std::vector<const CollectiveSequences*> members{&a, &b};
  const CollectivePairing p = PairCollectives(members);
  EXPECT_EQ(EstimateClockOffsets(members, p, {false}), (std::vector<int64_t>{0, 0}));
  const CollectiveSequences lone = AlignSeq({{0, 10, 1}});
  const std::vector<const CollectiveSequences*> one{&lone};
  const CollectivePairing none = PairCollectives(one);
  const ClockAlignment al = AlignClocks(one, none, SumPairedCollectives(one, none), true);
  EXPECT_FALSE(al.aligned);
  EXPECT_EQ(al.offset_ns, std::vector<int64_t>{0});
}

}  // namespace
}  // namespace aiprof
