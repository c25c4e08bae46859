#include "src/analysis/steps/step_stats.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "src/analysis/common/text_format.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/summary/summary.h"

namespace aiprof {
namespace {

constexpr char kSource[] = "steps";

// Steps of one track sorted by start, for assigning slices to steps.
struct TrackSteps {
  std::vector<std::pair<int64_t, uint32_t>> starts;  // (ts, step row)
};

// Per-step totals of each op name: (op name raw, step row) -> ns.
using OpStepTotals = std::unordered_map<uint64_t, int64_t>;

OpStepTotals CollectOpStepTotals(const Trace& trace) {
  std::unordered_map<uint32_t, TrackSteps> by_track;
  for (uint32_t i = 0; i < trace.steps.size(); ++i) {
    by_track[trace.steps.track[i]].starts.emplace_back(trace.steps.ts_ns[i], i);
  }
  for (auto& [track, ts] : by_track) std::sort(ts.starts.begin(), ts.starts.end());
  OpStepTotals totals;
  const SliceTable& s = trace.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != EventKind::kCpuOp) continue;
    auto it = by_track.find(s.track[i]);
    if (it == by_track.end()) continue;
    const auto& starts = it->second.starts;
    auto pos = std::upper_bound(starts.begin(), starts.end(), std::make_pair(s.ts_ns[i], UINT32_MAX));
    if (pos == starts.begin()) continue;
    uint32_t step = std::prev(pos)->second;
    if (s.ts_ns[i] >= trace.steps.ts_ns[step] + trace.steps.dur_ns[step]) continue;
    totals[(uint64_t{s.name[i].raw} << 32) | step] += s.dur_ns[i];
  }
  return totals;
}

// For each slow step, the ops whose time there exceeds their median the most.
void ExplainSlowSteps(const Trace& trace, StepStats* stats) {
  OpStepTotals totals = CollectOpStepTotals(trace);
  // Per op name: totals over all steps (missing steps count as 0).
  std::unordered_map<uint32_t, std::vector<int64_t>> per_op;
  for (const auto& [key, ns] : totals) per_op[static_cast<uint32_t>(key >> 32)].push_back(ns);
  std::unordered_map<uint32_t, double> median;
  size_t n_steps = trace.steps.size();
  for (auto& [op, v] : per_op) {
    v.resize(n_steps, 0);
    std::sort(v.begin(), v.end());
    median[op] = QuantileSorted(v.data(), v.size(), 0.5);
  }
  for (SlowStep& slow : stats->slowest) {
    std::vector<StepDiffOp> diffs;
    for (const auto& [op, med] : median) {
      auto it = totals.find((uint64_t{op} << 32) | slow.step);
      int64_t here = it == totals.end() ? 0 : it->second;
      if (static_cast<double>(here) > med) diffs.push_back({StringId{op}, here, med});
    }
    auto excess = [](const StepDiffOp& d) { return static_cast<double>(d.step_total_ns) - d.median_total_ns; };
    std::sort(diffs.begin(), diffs.end(), [&](const StepDiffOp& a, const StepDiffOp& b) {
      return excess(a) != excess(b) ? excess(a) > excess(b) : a.name.raw < b.name.raw;
    });
    if (diffs.size() > kStepDiffOpsReported) diffs.resize(kStepDiffOpsReported);
    slow.differing_ops = std::move(diffs);
  }
}

}  // namespace

StepStats ComputeStepStats(const Trace& trace) {
  StepStats stats;
  const StepTable& st = trace.steps;
  stats.count = st.size();
  if (stats.count == 0) return stats;
  std::vector<int64_t> durs(st.size());
  double sum = 0;
  for (size_t i = 0; i < st.size(); ++i) {
    durs[i] = st.dur_ns[i];
    sum += static_cast<double>(durs[i]);
  }
  stats.mean_ns = sum / static_cast<double>(durs.size());
  double sq = 0;
  for (int64_t d : durs) sq += (static_cast<double>(d) - stats.mean_ns) * (static_cast<double>(d) - stats.mean_ns);
  stats.stddev_ns = std::sqrt(sq / static_cast<double>(durs.size()));
  stats.cv = stats.mean_ns > 0 ? stats.stddev_ns / stats.mean_ns : 0;
  std::vector<uint32_t> order(st.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return st.dur_ns[a] != st.dur_ns[b] ? st.dur_ns[a] > st.dur_ns[b] : a < b;
  });
  std::sort(durs.begin(), durs.end());
  stats.p50_ns = QuantileSorted(durs.data(), durs.size(), 0.5);
  stats.p99_ns = QuantileSorted(durs.data(), durs.size(), 0.99);
  stats.min_ns = durs.front();
  stats.max_ns = durs.back();
  for (size_t k = 0; k < std::min(kSlowStepsReported, order.size()); ++k) {
    stats.slowest.push_back({order[k], st.dur_ns[order[k]], {}});
  }
  ExplainSlowSteps(trace, &stats);
  return stats;
}

void PublishStepStats(const Trace& trace, const StepStats& stats, MetricSet* metrics) {
  metrics->Set("steps", static_cast<double>(stats.count), kSource);
  if (stats.count == 0) {
    const char* why = "no steps in the trace (no ProfilerStep#N or step markers)";
    metrics->SetUnavailable("step_time_mean_ns", why);
    metrics->SetUnavailable("step_time_cv", why);
    metrics->SetUnavailable("step_time_p99_ns", why);
    metrics->SetUnavailable("step_time_excess_ratio", why);
    return;
  }
  metrics->Set("step_time_mean_ns", stats.mean_ns, kSource);
  metrics->Set("step_time_cv", stats.cv, kSource);
  metrics->Set("step_time_p99_ns", stats.p99_ns, kSource);
  // Share of the mean step lost to steps slower than the median: what the
  // slow steps cost, the impact of an unstable-steps finding.
  if (stats.count < kMinStepsForExcess) {
    metrics->SetUnavailable("step_time_excess_ratio", "fewer than 3 steps: no typical step to compare with");
  } else {
    metrics->Set("step_time_excess_ratio",
                 stats.mean_ns > 0 ? std::max(0.0, (stats.mean_ns - stats.p50_ns) / stats.mean_ns) : 0, kSource);
  }
  for (const SlowStep& slow : stats.slowest) {
    if (stats.p50_ns <= 0 || static_cast<double>(slow.dur_ns) < 1.5 * stats.p50_ns) continue;
    std::string line = std::string(trace.Str(trace.steps.name[slow.step])) + ": " +
                       FormatDurationNs(static_cast<double>(slow.dur_ns)) + " vs median " +
                       FormatDurationNs(stats.p50_ns);
    for (const StepDiffOp& op : slow.differing_ops) {
      line += "; " + std::string(trace.Str(op.name)) + " " + FormatDurationNs(static_cast<double>(op.step_total_ns)) +
              " (median " + FormatDurationNs(op.median_total_ns) + ")";
    }
    metrics->AddEvidence("step_variance", line);
  }
}

}  // namespace aiprof
