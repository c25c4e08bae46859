#include "src/cluster/cluster_reduce.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "src/analysis/communication/clock_alignment.h"
#include "src/analysis/communication/collective_pairing.h"
#include "src/analysis/communication/collective_type.h"
#include "src/analysis/communication/cross_rank.h"
#include "src/base/quantile.h"
#include "src/importers/common/folder_importer.h"
#include "src/importers/common/import_confinement.h"
#include "src/model/event_kind.h"
#include "src/render/units.h"

namespace aiprof {
namespace {

struct RankOp {
  uint32_t op;  // global op id
  uint64_t count;
  int64_t total_ns;
  double p50_ns, p99_ns;
};

struct RankState {
  ClusterRank info;
  std::string digest;                              // where its digest was read from ("" unknown)
  std::vector<std::pair<int64_t, int64_t>> steps;  // (number, dur)
  std::vector<DigestCollectiveType> types;
  std::vector<RankOp> ops;  // by op id
  std::vector<DigestLink> links;
  // (group id, type) → instances in arrival order.
  CollectiveSequences seq;
};

// Robust z-scores (Iglewicz & Hoaglin) of `v`.
std::vector<double> RobustZ(const std::vector<double>& v) {
  const double median = Median(v);
  std::vector<double> dev(v.size());
  double mean_abs = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    dev[i] = std::fabs(v[i] - median);
    mean_abs += dev[i];
  }
  mean_abs /= std::max<size_t>(1, v.size());
  const double mad = Median(std::move(dev));
  std::vector<double> z(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const double d = v[i] - median;
    if (mad > 0) {
      z[i] = 0.6745 * d / mad;
    } else if (mean_abs > 0) {
      z[i] = d / (1.2533 * mean_abs);
    } else {
      z[i] = d > 0 ? std::numeric_limits<double>::infinity() : 0;
    }
  }
  return z;
}

// Ops that are no work of the rank's own: the step annotation
// (ProfilerStep#N spans the whole step) and torch_npu's overlap_analysis
// bands (Computing, Communication, Free: sums of other slices).
bool IsStepOrBand(const std::string& name, const std::string& category, uint8_t kind) {
  return name.rfind("ProfilerStep", 0) == 0 || category == "overlap_analysis" ||
         static_cast<EventKind>(kind) == EventKind::kTraceSpan;
}

}  // namespace

struct ClusterReducer::State {
  ClusterOptions options;
  std::vector<RankState> ranks;
  std::map<int32_t, size_t> by_rank;
  std::vector<ProblemDigest> broken;
  uint64_t digests = 0;
  int64_t world_size = 0;
  // The world size the links (largest rank named + 1) and the collectives'
  // group sizes imply; 0 none.
  int64_t link_world = 0, group_world = 0;
  std::unordered_map<std::string, uint32_t> group_ids;
  std::vector<std::string> groups;
  std::map<std::pair<std::string, std::string>, uint32_t> op_ids;
  std::vector<std::tuple<std::string, std::string, uint8_t>> op_names;
  std::vector<DurationSketch> op_sketches;

  uint32_t GroupId(const std::string& g) {
    auto [it, fresh] = group_ids.try_emplace(g, static_cast<uint32_t>(groups.size()));
    if (fresh) groups.push_back(g);
    return it->second;
  }
  uint32_t OpId(const std::string& name, const std::string& category, uint8_t kind) {
    auto [it, fresh] = op_ids.try_emplace({name, category}, static_cast<uint32_t>(op_names.size()));
    if (fresh) {
      op_names.emplace_back(name, category, kind);
      op_sketches.emplace_back();
    }
    return it->second;
  }
};

ClusterReducer::ClusterReducer(ClusterOptions options) : s_(std::make_unique<State>()) { s_->options = options; }
ClusterReducer::~ClusterReducer() = default;

void ClusterReducer::AddBroken(const std::string& source, const std::string& reason, int32_t rank) {
  ++s_->digests;
  s_->broken.push_back(ProblemDigest{rank, source, reason});
}

void ClusterReducer::Add(const RankDigest& d, const std::string& digest) {
  ++s_->digests;
  s_->world_size = std::max(s_->world_size, d.world_size);
  if (!d.ok()) {
    s_->broken.push_back(ProblemDigest{d.rank, d.source, d.error});
    return;
  }
  if (d.rank < 0) {
    s_->broken.push_back(ProblemDigest{d.rank, d.source, "the digest does not say which rank it is"});
    return;
  }
  if (auto it = s_->by_rank.find(d.rank); it != s_->by_rank.end()) {
    const RankState& first = s_->ranks[it->second];
    std::string reason = "rank " + std::to_string(d.rank) + " again";
    if (digest.empty() && first.digest.empty()) {
      reason += " (also in " + first.info.source + "); left out";
    } else {
      // Both digests and both inputs: which file to delete.
      auto of = [](const std::string& file, const std::string& input) {
        return (file.empty() ? std::string("a digest") : file) + " (of " + input + ")";
      };
      reason += ": digest " + of(digest, d.source) + " left out; rank " + std::to_string(d.rank) + " is taken from " +
                of(first.digest, first.info.source) + "; delete the digest that is wrong";
    }
    s_->broken.push_back(ProblemDigest{d.rank, d.source, std::move(reason)});
    return;
  }
  RankState st;
  st.digest = digest;
  ClusterRank& r = st.info;
  r.rank = d.rank;
  r.host = d.host;
  r.source = d.source;
  r.source_format = d.source_format;
  r.slices = d.slice_count;
  r.steps = d.steps.size();
  for (const DigestDiagnostic& g : d.diagnostics) r.diagnostics += g.count;
  r.import_diagnostics = d.diagnostics;
  r.span_ns = d.span_ns;
  double step_sum = 0;
  for (const DigestStep& s : d.steps) {
    st.steps.emplace_back(s.number, s.dur_ns);
    step_sum += static_cast<double>(s.dur_ns);
  }
  r.mean_step_ns = d.steps.empty() ? 0 : step_sum / static_cast<double>(d.steps.size());
  for (const DigestDevice& v : d.devices) {
    if (v.device == kHostDevice) continue;
    r.device_busy_ns += v.busy_ns;
    r.device_span_ns += v.span_ns;
  }
  for (const DigestMemory& m : d.memory) {
    if (m.peak_allocated > r.memory_peak_allocated) {
      r.memory_peak_allocated = m.peak_allocated;
      r.memory_capacity = m.capacity;
    }
    r.memory_peak_reserved = std::max(r.memory_peak_reserved, m.peak_reserved);
  }
  r.profiler_elapse_ns = d.profiler_elapse_ns;
  r.profiler_wait_ns = d.profiler_wait_ns;
  r.profiler_transit_ns = d.profiler_transit_ns;
  r.profiler_idle_ns = d.profiler_idle_ns;
  st.types = d.collective_types;
  st.links = d.links;
  for (const DigestCollectiveType& t : d.collective_types) s_->group_world = std::max(s_->group_world, t.group_size);
  for (const DigestLink& l : d.links) s_->link_world = std::max(s_->link_world, LargestLinkRank(l.link) + 1);
  for (const DigestOp& o : d.ops) {
    const uint32_t id = s_->OpId(std::string(d.Str(o.name)), std::string(d.Str(o.category)), o.kind);
    if (IsStepOrBand(std::string(d.Str(o.name)), std::string(d.Str(o.category)), o.kind)) continue;
    s_->op_sketches[id].Merge(o.sketch);
    st.ops.push_back(RankOp{id, o.count, o.total_ns, o.sketch.Quantile(0.5), o.sketch.Quantile(0.99)});
  }
  std::sort(st.ops.begin(), st.ops.end(), [](const RankOp& a, const RankOp& b) { return a.op < b.op; });
  for (const DigestCollective& c : d.collectives) {
    st.seq[{s_->GroupId(std::string(d.Str(c.group))), c.type}].push_back(
        CollectiveInstance{c.arrival_ns, c.end_ns, c.step});
  }
  for (auto& [key, v] : st.seq) {
    std::stable_sort(v.begin(), v.end(), [](const CollectiveInstance& a, const CollectiveInstance& b) {
      return a.arrival_ns < b.arrival_ns;
    });
  }
  s_->by_rank.emplace(d.rank, s_->ranks.size());
  s_->ranks.push_back(std::move(st));
}

namespace {

const CollectiveInstance& At(const std::vector<const CollectiveSequences*>& members, const PairedCollective& c,
                             size_t k) {
  return members[c.members[k].first]->at(c.key)[c.members[k].second];
}

// L1 distance between two ranks' op totals (ops sorted by id).
double OpDistance(const std::vector<RankOp>& a, const std::vector<RankOp>& b) {
  double d = 0;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].op < b[j].op)) {
      d += static_cast<double>(std::llabs(a[i++].total_ns));
    } else if (i == a.size() || b[j].op < a[i].op) {
      d += static_cast<double>(std::llabs(b[j++].total_ns));
    } else {
      d += static_cast<double>(std::llabs(a[i++].total_ns - b[j++].total_ns));
    }
  }
  return d;
}

// The ranks that run the same work as `slow`: the nearest half of the
// others by OpDistance (ties by rank), at least one.
std::vector<size_t> Peers(const std::vector<RankState>& ranks, size_t slow) {
  std::vector<std::pair<double, size_t>> by;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (r != slow) by.emplace_back(OpDistance(ranks[slow].ops, ranks[r].ops), r);
  }
  std::sort(by.begin(), by.end());
  by.resize(std::max<size_t>(std::min<size_t>(1, by.size()), (by.size() + 1) / 2));
  std::vector<size_t> out;
  for (const auto& [d, r] : by) out.push_back(r);
  return out;
}

std::vector<OpDifference> OpDifferences(const std::vector<RankState>& ranks, size_t slow,
                                        const std::vector<std::tuple<std::string, std::string, uint8_t>>& names,
                                        const std::vector<DurationSketch>& sketches) {
  std::vector<OpDifference> out;
  const std::vector<size_t> peers = Peers(ranks, slow);
  std::vector<double> totals(peers.size() + 1);
  for (const RankOp& op : ranks[slow].ops) {
    OpDifference d;
    std::tie(d.name, d.category, d.kind) = names[op.op];
    if (static_cast<EventKind>(d.kind) == EventKind::kCollective) continue;  // an effect of waiting, not a cause
    for (size_t k = 0; k < peers.size(); ++k) {
      const auto& v = ranks[peers[k]].ops;
      auto it = std::lower_bound(v.begin(), v.end(), op.op, [](const RankOp& a, uint32_t id) { return a.op < id; });
      totals[k] = it != v.end() && it->op == op.op ? static_cast<double>(it->total_ns) : 0;
    }
    d.median_total_ns = Median(std::vector<double>(totals.begin(), totals.end() - 1));
    totals.back() = static_cast<double>(op.total_ns);
    d.z = peers.size() >= kSlowRankOpsMinPeersForZ ? RobustZ(totals).back() : std::nan("");
    d.count = op.count;
    d.total_ns = op.total_ns;
    d.excess_ns = static_cast<double>(op.total_ns) - d.median_total_ns;
    d.p50_ns = op.p50_ns;
    d.p99_ns = op.p99_ns;
    d.cluster_p50_ns = sketches[op.op].Quantile(0.5);
    d.cluster_p99_ns = sketches[op.op].Quantile(0.99);
    if (d.excess_ns > 0) out.push_back(std::move(d));
  }
  // Ops whose total is an outlier among the peers first (robust z above the
  // limit), then by excess.
  std::sort(out.begin(), out.end(), [](const OpDifference& a, const OpDifference& b) {
    const bool sa = a.z > kRobustZLimit, sb = b.z > kRobustZLimit;  // false for NaN
    if (sa != sb) return sa;
    if (a.excess_ns != b.excess_ns) return a.excess_ns > b.excess_ns;
    return a.name < b.name;
  });
  if (out.size() > kSlowRankOpsReported) out.resize(kSlowRankOpsReported);
  return out;
}

}  // namespace

namespace {

// Missing ranks: 0..expected-1 without a digest. A rank number far beyond
// the digests (a hostile or corrupt trace) is not enumerated.
void FindMissingRanks(const std::vector<RankState>& ranks, int64_t world_size_option, int64_t world_size,
                      int64_t link_world, int64_t group_world, ClusterResult* out) {
  int64_t expected = world_size_option;
  std::vector<int32_t> seen;
  for (const RankState& r : ranks) seen.push_back(r.info.rank);
  for (const ProblemDigest& b : out->broken) {
    if (b.rank >= 0) seen.push_back(b.rank);
  }
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  // What the inputs imply (cross_rank.h, ExpectRanks: the multi-rank
  // analysis's rule).
  const int64_t largest = seen.empty() ? 0 : int64_t{seen.back()} + 1;
  const ExpectedRanks implied = ExpectRanks(world_size, link_world, group_world, largest);
  out->implied_world_size = implied.count;
  out->implied_world_size_from = implied.from;
  out->expected_ranks_from = "--world-size";
  if (expected <= 0) {
    expected = out->implied_world_size;
    out->expected_ranks_from =
        out->implied_world_size_from.empty() ? "largest rank seen" : out->implied_world_size_from;
  } else {
    for (int32_t r : seen) {
      if (r >= expected) out->beyond_world_size.push_back(r);
    }
  }
  out->expected_ranks = expected;
  const int64_t present = std::lower_bound(seen.begin(), seen.end(), expected) - seen.begin();
  out->missing_count = static_cast<uint64_t>(expected - present);
  if (expected <= static_cast<int64_t>(kMaxListedRanks)) {
    size_t k = 0;
    for (int64_t r = 0; r < expected; ++r) {
      while (k < seen.size() && seen[k] < r) ++k;
      if (k == seen.size() || seen[k] != r) out->missing.push_back(static_cast<int32_t>(r));
    }
  }
}

// Each rank's collective figures on the trace's clocks (`raw`) and on the
// clocks used (`alignment`).
void SetRankCollectiveFigures(const CollectivePairing& pairing, const PairedSums& raw, const ClockAlignment& alignment,
                              std::vector<RankState>& ranks, ClusterResult* out) {
  const std::vector<int64_t>& offset = alignment.offset_ns;
  const PairedSums& used = alignment.sums;
  for (size_t r = 0; r < ranks.size(); ++r) {
    ClusterRank& c = ranks[r].info;
    c.matched = raw.matched[r];
    c.incomplete = used.incomplete_by_member[r];
    c.comm_ns = raw.comm_ns[r];
    c.wait_ns = raw.wait_ns[r];
    c.lateness_ns = raw.lateness_ns[r];
    c.transfer_ns = raw.transfer_ns[r];
    c.clock_offset_ns = offset[r];
    c.aligned_wait_ns = used.wait_ns[r];
    c.aligned_lateness_ns = used.lateness_ns[r];
    c.aligned_transfer_ns = used.transfer_ns[r];
    c.stalled_wait_ns = used.stalled_ns[r];
    c.step_shift = pairing.step_shift[r];
    out->max_abs_offset_ns = std::max<int64_t>(out->max_abs_offset_ns, offset[r] < 0 ? -offset[r] : offset[r]);
    // Ranks missing: the time after the last rank present arrived holds the
    // wait for them. communication.json's idle (neither transit nor a wait
    // for a peer that arrived) is that wait; without it, it cannot be told
    // from transfer.
    if (out->missing_count > 0 && c.matched > 0) {
      if (c.profiler_idle_ns >= 0) {
        c.absent_wait_ns = std::min(c.profiler_idle_ns, c.aligned_transfer_ns);  // the clocks used, as the analysis
        c.transfer_ns = std::max<int64_t>(0, c.transfer_ns - c.absent_wait_ns);
        c.aligned_transfer_ns = std::max<int64_t>(0, c.aligned_transfer_ns - c.absent_wait_ns);
      } else {
        out->transfer_includes_absent_wait = true;
      }
    }
  }
}

// Instances: last arrival and by how much (used clocks), in step order; each
// rank's count of last arrivals.
void AddInstances(const std::vector<const CollectiveSequences*>& members, const CollectivePairing& pairing,
                  const ClockAlignment& alignment, const std::vector<std::string>& groups,
                  std::vector<RankState>& ranks, ClusterResult* out) {
  const std::vector<PairedCollective>& matched = pairing.matched;
  const std::vector<int64_t>& offset = alignment.offset_ns;
  const PairedSums& used = alignment.sums;
  std::vector<double> arrivals;
  for (size_t j = 0; j < matched.size(); ++j) {
    const PairedCollective& m = matched[j];
    ClusterInstance in;
    in.group = groups[m.key.first];
    in.type = m.key.second;
    in.ordinal = m.members.front().second;  // in the first member's sequence of the key
    in.ranks = static_cast<uint32_t>(m.members.size());
    arrivals.clear();
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    // Arrivals relative to the first member's: epoch nanoseconds are not
    // exact in a double, their differences are.
    const int64_t base = At(members, m, 0).arrival_ns - offset[m.members.front().first];
    for (size_t k = 0; k < m.members.size(); ++k) {
      const uint32_t r = m.members[k].first;
      const CollectiveInstance& a = At(members, m, k);
      arrivals.push_back(static_cast<double>(a.arrival_ns - offset[r] - base));
      lo = std::min(lo, a.end_ns - offset[r]);
      hi = std::max(hi, a.end_ns - offset[r]);
    }
    // A tie for the last arrival: no single rank is last.
    const PairedArrival last_arrival = LastArrival(members, m, offset);
    const int64_t last = last_arrival.last_ns;
    const uint32_t last_r = m.members[last_arrival.last].first;
    in.step = m.step >= 0 ? m.step : At(members, m, last_arrival.last).step;  // m.step: in shifted numbers
    in.last_tied = last_arrival.tied;
    in.last_rank = last_arrival.tied == 1 ? ranks[last_r].info.rank : kDigestNoRank;
    if (!used.complete[j]) {
      // Stalled: the last rank present is not what held it, a rank not in
      // the inputs is.
      in.state = used.stalled[j] ? "stalled" : "incomplete";
      if (used.stalled[j]) in.last_rank = kDigestNoRank;
      const std::vector<uint32_t> late = used.stalled[j] ? std::vector<uint32_t>{} : LateAfterEnd(members, m, offset);
      for (size_t k = 0; k < m.members.size(); ++k) {
        const CollectiveInstance& a = At(members, m, k);
        if (std::find(late.begin(), late.end(), k) == late.end())
          in.waited_ns = std::max(in.waited_ns, a.end_ns - a.arrival_ns);
      }
      for (uint32_t k : late) in.late_after_end.push_back(ranks[m.members[k].first].info.rank);
    }
    std::sort(arrivals.begin(), arrivals.end());
    const double median = arrivals.size() % 2 ? arrivals[arrivals.size() / 2]
                                              : (arrivals[arrivals.size() / 2 - 1] + arrivals[arrivals.size() / 2]) / 2;
    in.late_by_ns = static_cast<int64_t>(std::llround(static_cast<double>(last - base) - median));
    in.late_by_next_ns = static_cast<int64_t>(std::llround(arrivals.back() - arrivals[arrivals.size() - 2]));
    in.end_spread_ns = hi - lo;
    if (in.late_by_ns > 0 && in.last_rank != kDigestNoRank) ++ranks[last_r].info.last_arrivals;
    out->instances.push_back(std::move(in));
  }
  std::stable_sort(out->instances.begin(), out->instances.end(),
                   [](const ClusterInstance& a, const ClusterInstance& b) { return a.step < b.step; });
}

// Steps: the job's step time is its slowest rank's; the rank last in each
// step's collectives, by how much.
void AddSteps(const std::vector<RankState>& ranks, ClusterResult* out) {
  std::map<int64_t, std::vector<std::pair<int64_t, int32_t>>> by_step;
  for (const RankState& r : ranks) {
    for (const auto& [number, dur] : r.steps) by_step[number + r.info.step_shift].emplace_back(dur, r.info.rank);
  }
  for (auto& [number, v] : by_step) {
    ClusterStep st;
    st.number = number;
    st.ranks = static_cast<uint32_t>(v.size());
    std::sort(v.begin(), v.end());
    st.max_ns = v.back().first;
    st.slowest_rank = v.back().second;
    st.median_ns = v.size() % 2 ? v[v.size() / 2].first : (v[v.size() / 2 - 1].first + v[v.size() / 2].first) / 2;
    for (const ClusterInstance& in : out->instances) {
      if (in.step != number) continue;
      ++st.collectives;
      if (in.last_rank == kDigestNoRank) continue;  // a tie, or stalled: no single rank last
      if (in.late_by_ns > st.last_late_by_ns || st.last_rank == kDigestNoRank) {
        st.last_rank = in.last_rank;
        st.last_late_by_ns = in.late_by_ns;
        st.last_collective = std::string(CollectiveTypeNameOfByte(in.type)) + " #" + std::to_string(in.ordinal) +
                             (in.group.empty() ? "" : " (" + in.group + ")");
      }
    }
    out->steps.push_back(std::move(st));
  }
}

// The median end spread of matched collectives, in words: why arrival times
// cannot be compared.
std::string EndSpreadText(const PairedSums& used, bool aligned) {
  return "the ranks' ends of matched collectives differ by a median " +
         render::FormatQuantity(static_cast<double>(used.end_spread_p50_ns), render::Unit::kNs) +
         (aligned ? " even after aligning the clocks" : "");
}

// Wait ratio, as the multi-rank analysis publishes comm_wait_ratio.
void SetWaitRatio(const std::vector<RankState>& ranks, const PairedSums& used, ClusterResult* out) {
  bool all_profiler = !ranks.empty();
  int64_t wait = 0, total = 0;
  for (const RankState& r : ranks) all_profiler &= r.info.profiler_elapse_ns > 0 && r.info.profiler_wait_ns >= 0;
  if (all_profiler) {
    for (const RankState& r : ranks) {
      wait += r.info.profiler_wait_ns;
      total += r.info.profiler_elapse_ns;
    }
    out->wait_ratio = static_cast<double>(wait) / static_cast<double>(total);
    out->wait_ratio_source = "communication.json";
    return;
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    wait += used.wait_ns[r];
    total += used.comm_ns[r];
  }
  if (out->matched == 0 || total == 0) {
    out->wait_ratio_unavailable = "needs collectives matched across 2 or more ranks, or torch_npu communication.json";
  } else if (!used.clocks_agree) {
    out->wait_ratio_unavailable = EndSpreadText(used, out->aligned) + ": arrival times cannot be compared";
  } else {
    out->wait_ratio = static_cast<double>(wait) / static_cast<double>(total);
    out->wait_ratio_source = out->aligned ? "collectives, aligned clocks" : "collectives";
  }
}

// Slow ranks among the ranks with matched collectives, on their total
// lateness (cluster_reduce.h: no test for 2, Dixon's Q up to
// kDixonMaxValues, the robust z-score above), each reported with its excess
// lateness and the ops where it differs from its peers.
void FindSlowRanks(std::vector<RankState>& ranks, const PairedSums& used,
                   const std::vector<std::tuple<std::string, std::string, uint8_t>>& op_names,
                   const std::vector<DurationSketch>& op_sketches, ClusterResult* out) {
  std::vector<size_t> with;
  std::vector<double> lateness;
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (used.matched[r] == 0) continue;
    with.push_back(r);
    lateness.push_back(static_cast<double>(used.lateness_ns[r]));
  }
  auto report = [&](size_t k) {
    const size_t r = with[k];
    SlowRankReport rep;
    rep.rank = ranks[r].info.rank;
    std::vector<double> others;
    for (size_t j = 0; j < with.size(); ++j) {
      if (j != k) others.push_back(lateness[j]);
    }
    rep.excess_ns = std::max<int64_t>(0, used.lateness_ns[r] - std::llround(Median(others)));
    const ClusterRank& c = ranks[r].info;
    const double step_sum = c.mean_step_ns * static_cast<double>(c.steps);
    if (c.span_ns > 0) {
      rep.excess_ratio = static_cast<double>(rep.excess_ns) / static_cast<double>(c.span_ns);
      rep.excess_ratio_base = "its device span";
    } else if (step_sum > 0) {
      // No device activity (CPU-only ranks): the time its steps took.
      rep.excess_ratio = static_cast<double>(rep.excess_ns) / step_sum;
      rep.excess_ratio_base = "the sum of its step times";
    }
    rep.last_arrivals = ranks[r].info.last_arrivals;
    rep.ops = OpDifferences(ranks, r, op_names, op_sketches);
    return rep;
  };
  // Ranks sharing the largest lateness exactly: no single rank is slowest.
  const double largest = lateness.empty() ? 0 : *std::max_element(lateness.begin(), lateness.end());
  const size_t tied = static_cast<size_t>(std::count(lateness.begin(), lateness.end(), largest));
  const std::string tie_reason = std::to_string(tied) + " ranks share the largest lateness exactly (" +
                                 render::FormatQuantity(largest, render::Unit::kNs) + "): no single rank is slowest";
  if (with.size() >= 2 && !used.clocks_agree) {
    out->slow_rank_unavailable =
        EndSpreadText(used, out->aligned) +
        " (collectives not paired one to one, or point-to-point ones that do not end together): "
        "arrival times cannot be compared";
  } else if (with.size() < 2) {
    out->slow_rank_unavailable = "needs collectives matched across 2 or more ranks";
  } else if (tied > 1 && with.size() <= kDixonMaxValues) {
    out->slow_rank_unavailable = tie_reason;
  } else if (with.size() <= kDixonMaxValues) {
    OutlierResult t = TestLargestForOutlier(lateness);
    out->test = t.test;
    out->test_name = OutlierTestName(t.test);
    SlowRankReport rep = report(t.index);
    rep.outlier = t.outlier;
    rep.statistic = t.statistic;
    rep.critical = t.critical;
    out->slowest = rep;
    if (t.outlier || t.test == OutlierTest::kNone) out->slow_ranks.push_back(rep);
  } else {
    out->test = OutlierTest::kNone;
    out->test_name = "robust_z";
    std::vector<double> z = RobustZ(lateness);
    std::vector<size_t> order(with.size());
    for (size_t k = 0; k < order.size(); ++k) {
      order[k] = k;
      ranks[with[k]].info.lateness_z = z[k];
    }
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (lateness[a] != lateness[b]) return lateness[a] > lateness[b];
      return a < b;
    });
    for (size_t k : order) {
      if (!(z[k] > kRobustZLimit) && k != order.front()) break;
      SlowRankReport rep = report(k);
      rep.outlier = z[k] > kRobustZLimit;
      rep.statistic = z[k];
      rep.critical = kRobustZLimit;
      if (k == order.front() && tied == 1) out->slowest = rep;
      if (k == order.front() && tied > 1) out->slow_rank_unavailable = tie_reason;
      if (rep.outlier) out->slow_ranks.push_back(std::move(rep));
    }
  }
}

// Per-type times (each rank's, then the job's per type) and the links'
// bandwidths, judged and sorted.
void AddTypeTimesAndLinks(const std::vector<RankState>& ranks, ClusterResult* out) {
  std::map<uint8_t, ClusterTypeTime> job;
  for (const RankState& r : ranks) {
    for (const DigestCollectiveType& t : r.types) {
      ClusterTypeTime c{r.info.rank, t.type, t.count, t.total_ns, t.max_ns, t.bytes, t.sized, t.sized_time_ns, t.group_size};
      out->type_times.push_back(c);
      ClusterTypeTime& j = job[t.type];
      j.type = t.type;
      j.count += t.count;
      j.total_ns += t.total_ns;
      j.max_ns = std::max(j.max_ns, t.max_ns);
      j.bytes += t.bytes;
      j.sized += t.sized;
      j.sized_time_ns += t.sized_time_ns;
      j.group_size = std::max(j.group_size, t.group_size);
    }
  }
  for (auto& [type, j] : job) out->type_times.push_back(j);
  for (const RankState& r : ranks) {
    for (const DigestLink& l : r.links) {
      LinkBandwidth b;
      b.rank = r.info.rank;
      b.link = l.link;
      b.transport = l.transport;
      b.bytes = l.bytes;
      b.time_ns = l.time_ns;
      b.bandwidth_bytes_per_second = l.time_ns > 0 ? l.bytes / (l.time_ns * 1e-9) : 0;
      out->links.push_back(std::move(b));
    }
  }
  JudgeAndSortLinks(&out->links);
}

}  // namespace

// The reduce, in the order each part needs the last: the ranks expected,
// the collectives paired and the clocks aligned, each rank's figures, the
// instances and steps, the wait ratio, the slow ranks, the per-type times
// and links.
ClusterResult ClusterReducer::Finish() {
  State& s = *s_;
  ClusterResult out;
  out.digests = s.digests;
  out.world_size_in_traces = s.world_size;
  std::sort(s.ranks.begin(), s.ranks.end(),
            [](const RankState& a, const RankState& b) { return a.info.rank < b.info.rank; });
  std::vector<RankState>& ranks = s.ranks;
  out.usable = ranks.size();
  out.broken = s.broken;
  std::sort(out.broken.begin(), out.broken.end(), [](const ProblemDigest& a, const ProblemDigest& b) {
    return std::tie(a.rank, a.source) < std::tie(b.rank, b.source);
  });
  FindMissingRanks(ranks, s.options.world_size, s.world_size, s.link_world, s.group_world, &out);
  // Pairing within steps, and the per-rank figures (collective_pairing.h,
  // the multi-rank analysis's routine).
  std::vector<const CollectiveSequences*> members;
  for (const RankState& r : ranks) members.push_back(&r.seq);
  const CollectivePairing pairing = PairCollectives(members);
  out.unmatched = pairing.unmatched;
  out.keys_by_step = pairing.keys_by_step;
  out.keys_by_position = pairing.keys_by_position;
  out.matched = pairing.matched.size();
  const std::vector<int64_t> zero(ranks.size(), 0);
  const PairedSums raw = SumPairedCollectives(members, pairing, zero);
  out.raw_end_spread_p50_ns = raw.end_spread_p50_ns;
  out.raw_end_spread_share = raw.end_spread_share;
  out.raw_clocks_agree = raw.clocks_agree;
  out.aligned = !pairing.matched.empty() &&
                (s.options.align == ClockAlign::kAlways || (s.options.align == ClockAlign::kAuto && !raw.clocks_agree));
  // The multi-rank analysis's estimator (clock_alignment.h): from the ends
  // of the completed collectives.
  const ClockAlignment alignment = AlignClocks(members, pairing, raw, out.aligned);
  const PairedSums& used = alignment.sums;
  if (out.aligned) {
    out.aligned_end_spread_p50_ns = used.end_spread_p50_ns;
    out.aligned_end_spread_share = used.end_spread_share;
    out.aligned_clocks_agree = used.clocks_agree;
  }
  out.trusted = used.clocks_agree;
  out.incomplete = used.incomplete;
  out.stalled = used.stalled_count;
  SetRankCollectiveFigures(pairing, raw, alignment, ranks, &out);
  AddInstances(members, pairing, alignment, s.groups, ranks, &out);
  AddSteps(ranks, &out);
  SetWaitRatio(ranks, used, &out);
  FindSlowRanks(ranks, used, s.op_names, s.op_sketches, &out);
  AddTypeTimesAndLinks(ranks, &out);
  for (RankState& r : ranks) out.ranks.push_back(std::move(r.info));
  return out;
}

StatusOr<ClusterResult> ReduceDigestFolder(const std::string& dir, const ClusterOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return ErrStatus(dir + ": not a folder of digests");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".digest") files.push_back(e.path().string());
  }
  if (ec) return ErrStatus(dir + ": cannot list the folder: " + ec.message());
  if (files.empty()) return ErrStatus(dir + ": no *.digest files (write them with `aiprof cluster map`)");
  std::sort(files.begin(), files.end());
  ClusterReducer reducer(options);
  for (const std::string& f : files) {
    // Never opened unless a regular file (links followed): a FIFO would
    // block forever, a device never end (as the folder importer does).
    if (Status member = CheckFolderMember(f); !member.ok()) {
      reducer.AddBroken(f, member.message(), RankFromName(f));
      continue;
    }
    std::vector<DigestAt> digests;
    Status read = ReadDigestFile(f, &digests);
    for (const DigestAt& d : digests) {
      // A file of one digest is named by its path; concatenated ones also by
      // ordinal and offset.
      const bool alone = digests.size() == 1 && read.ok();
      reducer.Add(d.digest, alone ? f
                                  : f + " (digest " + std::to_string(&d - digests.data() + 1) + ", at byte " +
                                        std::to_string(d.offset) + ")");
    }
    // The file's name tells the rank only of a file that held no digest.
    if (!read.ok()) reducer.AddBroken(f, read.message(), digests.empty() ? RankFromName(f) : kDigestNoRank);
  }
  return reducer.Finish();
}

}  // namespace aiprof
