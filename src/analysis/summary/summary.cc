#include "src/analysis/summary/summary.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "src/analysis/common/steps.h"

namespace aiprof {

double QuantileSorted(const int64_t* sorted, size_t n, double q) {
  if (n == 0) return 0;
  double pos = q * static_cast<double>(n - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  if (lo + 1 >= n) return static_cast<double>(sorted[n - 1]);
  double frac = pos - static_cast<double>(lo);
  return static_cast<double>(sorted[lo]) + (static_cast<double>(sorted[lo + 1] - sorted[lo])) * frac;
}

int64_t UnionLengthNs(std::vector<std::pair<int64_t, int64_t>>* intervals) {
  std::sort(intervals->begin(), intervals->end());
  int64_t total = 0;
  int64_t cur_start = 0, cur_end = 0;
  bool open = false;
  for (const auto& [start, end] : *intervals) {
    if (!open || start > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = start;
      cur_end = end;
      open = true;
    } else {
      cur_end = std::max(cur_end, end);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

namespace {

std::vector<OpStat> ComputeOps(const Trace& trace) {
  const SliceTable& s = trace.slices;
  struct Row {
    uint64_t key;  // category << 32 | name
    int64_t dur_ns;
  };
  std::vector<Row> rows(s.size());
  for (size_t i = 0; i < s.size(); ++i) rows[i] = {(uint64_t{s.category[i].raw} << 32) | s.name[i].raw, s.dur_ns[i]};
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return a.key != b.key ? a.key < b.key : a.dur_ns < b.dur_ns;
  });
  std::vector<OpStat> ops;
  std::vector<int64_t> durs;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    durs.clear();
    __int128 total = 0;
    while (j < rows.size() && rows[j].key == rows[i].key) {
      durs.push_back(rows[j].dur_ns);
      total += rows[j].dur_ns;
      ++j;
    }
    OpStat op;
    op.category = StringId{static_cast<uint32_t>(rows[i].key >> 32)};
    op.name = StringId{static_cast<uint32_t>(rows[i].key & 0xffffffffu)};
    op.count = durs.size();
    op.total_ns = static_cast<int64_t>(total);
    op.max_ns = durs.back();
    op.mean_ns = static_cast<double>(total) / static_cast<double>(durs.size());
    op.p50_ns = QuantileSorted(durs.data(), durs.size(), 0.5);
    op.p99_ns = QuantileSorted(durs.data(), durs.size(), 0.99);
    ops.push_back(op);
    i = j;
  }
  std::sort(ops.begin(), ops.end(), [&trace](const OpStat& a, const OpStat& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    return trace.Str(a.name) < trace.Str(b.name);
  });
  return ops;
}

std::vector<DeviceStat> ComputeDevices(const Trace& trace) {
  const SliceTable& s = trace.slices;
  std::map<std::pair<int32_t, int32_t>, std::vector<std::pair<int64_t, int64_t>>> by_device;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!IsDeviceActivity(s.kind[i])) continue;
    uint32_t t = s.track[i];
    by_device[{trace.tracks.rank[t], trace.tracks.device[t]}].emplace_back(s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i]);
  }
  std::vector<DeviceStat> out;
  for (auto& [key, intervals] : by_device) {
    DeviceStat d;
    d.rank = key.first;
    d.device = key.second;
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (const auto& [a, b] : intervals) {
      first = std::min(first, a);
      last = std::max(last, b);
    }
    d.busy_ns = UnionLengthNs(&intervals);
    d.span_ns = last - first;
    d.utilization = d.span_ns > 0 ? static_cast<double>(d.busy_ns) / static_cast<double>(d.span_ns) : 0;
    out.push_back(d);
  }
  return out;
}

}  // namespace

Summary ComputeSummary(const Trace& trace) {
  Summary sum;
  sum.ops = ComputeOps(trace);
  sum.devices = ComputeDevices(trace);
  StepList steps = FindSteps(trace);
  sum.step_source = steps.source;
  for (const StepSpan& st : steps.steps) sum.steps.push_back({st.name, st.number, st.rank, st.start_ns, st.dur_ns});
  std::unordered_map<uint32_t, uint64_t> by_cat;
  for (size_t i = 0; i < trace.slices.size(); ++i) ++by_cat[trace.slices.category[i].raw];
  for (size_t i = 0; i < trace.instants.size(); ++i) ++by_cat[trace.instants.category[i].raw];
  for (const auto& [cat, n] : by_cat) sum.events_by_category[std::string(trace.Str(StringId{cat}))] += n;
  sum.ranks = ComputeRankStats(trace);
  sum.step_breakdowns = ComputeStepBreakdowns(trace);
  sum.op_types = ComputeOpTypeStats(trace);
  sum.slice_count = trace.slices.size();
  sum.instant_count = trace.instants.size();
  sum.counter_count = trace.counters.size();
  sum.flow_count = trace.flows.size();
  sum.track_count = trace.tracks.size();
  return sum;
}

}  // namespace aiprof
