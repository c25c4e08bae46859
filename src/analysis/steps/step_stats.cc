#include "src/analysis/steps/step_stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>

#include "src/analysis/common/steps.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/summary/summary.h"
#include "src/analysis/window/analysis_window.h"

namespace aiprof {
namespace {

constexpr char kStepsSource[] = "steps";

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
// `sampled`: ops were recorded in 1 step in N (AnalysisWindow::unprofiled),
// so an op's median is over the steps that carry ops, not over steps whose
// ops were never recorded (every median was 0 ns there).
void ExplainSlowSteps(const Trace& trace, bool sampled, StepStats* stats) {
  OpStepTotals totals = CollectOpStepTotals(trace);
  // Per op name: totals over all steps (missing steps count as 0). The
  // profiler's wrappers (ProfilerStep#N, one per step) are not ops that
  // differ: each is the step itself, with a median of 0 elsewhere.
  std::unordered_map<uint32_t, std::vector<int64_t>> per_op;
  std::unordered_map<uint32_t, bool> wrapper;
  std::vector<char> with_ops(trace.steps.size(), 0);
  for (const auto& [key, ns] : totals) {
    const uint32_t op = static_cast<uint32_t>(key >> 32);
    auto [w, fresh] = wrapper.try_emplace(op, false);
    if (fresh) w->second = IsProfilerWrapperName(trace.Str(StringId{op}));
    if (w->second) continue;
    per_op[op].push_back(ns);
    with_ops[static_cast<uint32_t>(key)] = 1;
  }
  std::unordered_map<uint32_t, double> median;
  size_t n_steps = trace.steps.size();
  if (sampled) n_steps = static_cast<size_t>(std::count(with_ops.begin(), with_ops.end(), 1));
  stats->op_median_steps = n_steps;
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

// Mean, stddev, cv, quantiles, min and max of `durs` (sorted here).
void SetDistribution(std::vector<int64_t> durs, StepStats* stats) {
  stats->count = durs.size();
  if (durs.empty()) return;
  double sum = 0;
  for (int64_t d : durs) sum += static_cast<double>(d);
  stats->mean_ns = sum / static_cast<double>(durs.size());
  double sq = 0;
  for (int64_t d : durs) sq += (static_cast<double>(d) - stats->mean_ns) * (static_cast<double>(d) - stats->mean_ns);
  stats->stddev_ns = std::sqrt(sq / static_cast<double>(durs.size()));
  stats->cv = stats->mean_ns > 0 ? stats->stddev_ns / stats->mean_ns : 0;
  std::sort(durs.begin(), durs.end());
  stats->p50_ns = QuantileSorted(durs.data(), durs.size(), 0.5);
  stats->p99_ns = QuantileSorted(durs.data(), durs.size(), 0.99);
  stats->min_ns = durs.front();
  stats->max_ns = durs.back();
  stats->typical_ns = stats->p50_ns;
  if (durs.size() >= kMinStepsForFastMode) {
    const double fast = QuantileSorted(durs.data(), durs.size() / 4, 0.5);
    if (fast < kFastModeShare * stats->p50_ns) {
      stats->typical_ns = fast;
      stats->fast_mode = true;
    }
  }
}

// Steps of the step breakdown table (FindSteps' second source), by (rank, step).
std::vector<BreakdownStep> BreakdownSteps(const StepList& list) {
  std::vector<BreakdownStep> steps;
  for (const StepSpan& st : list.steps) {
    steps.push_back({st.rank, st.number, st.dur_ns, st.computing_ns, st.communication_not_overlapped_ns, st.free_ns});
  }
  return steps;
}

StepStats ComputeBreakdownStepStats(const StepList& list) {
  StepStats stats;
  stats.source = list.source;
  stats.breakdown_steps = BreakdownSteps(list);
  std::vector<int64_t> durs;
  for (const BreakdownStep& s : stats.breakdown_steps) durs.push_back(s.dur_ns);
  SetDistribution(std::move(durs), &stats);
  if (stats.count == 0) stats.source.clear();
  return stats;
}

// StepStats::every_step_median_ns and the slow flags, over the steps with a time.
void MarkSlowSteps(StepStats* stats) {
  std::vector<int64_t> durs;
  for (const StepTime& st : stats->every_step) {
    if (st.dur_ns >= 0) durs.push_back(st.dur_ns);
  }
  if (durs.empty()) return;
  std::sort(durs.begin(), durs.end());
  stats->every_step_median_ns = QuantileSorted(durs.data(), durs.size(), 0.5);
  for (StepTime& st : stats->every_step) {
    st.slow = durs.size() >= 3 && static_cast<double>(st.dur_ns) > kSlowStepFactor * stats->every_step_median_ns;
  }
}

// Every timeline step (Trace::steps order) on the chosen base: its host span,
// or its device period where it has one.
void SetEveryStep(const Trace& trace, const StepList& list, const StepPeriods& periods, StepStats* stats) {
  const bool by_period = stats->base == StepTimeBase::kDevicePeriod;
  stats->every_step.resize(trace.steps.size());
  for (uint32_t i = 0; i < trace.steps.size(); ++i) {
    StepTime& st = stats->every_step[i];
    st.row = i;
    st.rank = trace.steps.rank[i];
    st.host_ns = trace.steps.dur_ns[i];
    st.dur_ns = by_period ? -1 : st.host_ns;
  }
  for (size_t k = 0; by_period && k < list.steps.size() && k < periods.period_ns.size(); ++k) {
    if (list.steps[k].row < stats->every_step.size() && periods.period_ns[k] >= 0) {
      stats->every_step[list.steps[k].row].dur_ns = periods.period_ns[k];
    }
  }
  MarkSlowSteps(stats);
}

}  // namespace

StepStats ComputeStepStats(const Trace& trace, const AnalysisWindow* window) {
  StepList list = FindSteps(trace);
  // Steady-state steps only: warm-up steps are reported by the window. The
  // steady steps a capture recorded no ops in (AnalysisWindow::unprofiled)
  // are steps all the same: the step time counts them.
  std::vector<char> warm(list.steps.size(), 0);
  if (window) {
    for (size_t k : window->warmup) warm[k] = 1;
    for (size_t k : window->unprofiled) warm[k] = 0;
  }
  std::vector<size_t> steady;
  for (size_t k = 0; k < list.steps.size(); ++k) {
    if (!warm[k]) steady.push_back(k);
  }
  if (list.source != "timeline") {
    StepList kept;
    kept.source = list.source;
    for (size_t k : steady) kept.steps.push_back(list.steps[k]);
    StepStats stats = ComputeBreakdownStepStats(kept);
    for (const StepSpan& st : list.steps)
      stats.every_step.push_back({kNoSlice, st.rank, st.number, st.dur_ns, st.dur_ns});
    MarkSlowSteps(&stats);
    return stats;
  }
  StepStats stats;
  stats.source = list.reported_source();
  const StepPeriods periods = ComputeStepPeriods(trace, list);
  std::vector<size_t> with_period;
  stats.base = ChooseStepTimeBase(list, periods, steady, &with_period);
  std::vector<int64_t> host;
  for (size_t k : steady) host.push_back(list.steps[k].dur_ns);
  stats.host_count = host.size();
  for (int64_t d : host) stats.host_mean_ns += static_cast<double>(d) / static_cast<double>(host.size());
  stats.period_count = with_period.size();
  for (size_t k : with_period) {
    stats.period_mean_ns += static_cast<double>(periods.period_ns[k]) / static_cast<double>(with_period.size());
  }
  SetEveryStep(trace, list, periods, &stats);
  // The distribution and the slowest steps on the chosen base.
  const bool by_period = stats.base == StepTimeBase::kDevicePeriod;
  const std::vector<size_t>& used = by_period ? with_period : steady;
  auto time_of = [&](size_t k) { return by_period ? periods.period_ns[k] : list.steps[k].dur_ns; };
  std::vector<int64_t> durs;
  for (size_t k : used) durs.push_back(time_of(k));
  SetDistribution(std::move(durs), &stats);
  std::vector<size_t> order = used;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return time_of(a) != time_of(b) ? time_of(a) > time_of(b) : list.steps[a].row < list.steps[b].row;
  });
  for (size_t k = 0; k < std::min(kSlowStepsReported, order.size()); ++k) {
    stats.slowest.push_back({list.steps[order[k]].row, time_of(order[k]), {}});
  }
  // Host ops explain a slow host span; a device period is not theirs.
  if (!by_period) ExplainSlowSteps(trace, window != nullptr && !window->unprofiled.empty(), &stats);
  return stats;
}

void PublishStepImpact(const StepStats& stats, MetricSet* metrics) {
  if (stats.count < kMinStepsForExcess) {
    metrics->SetUnavailable("step_time_excess_ns", stats.count == 0 ? "no steps in the trace"
                                                                    : "fewer than 3 steady-state steps");
    return;
  }
  metrics->Set("step_time_excess_ns", std::max(0.0, stats.mean_ns - stats.typical_ns), kStepsSource);
}

void PublishStepStats(const Trace& trace, const StepStats& stats, MetricSet* metrics) {
  metrics->Set("steps", static_cast<double>(stats.count), kStepsSource);
  if (stats.count == 0) {
    const char* why = "no steps in the trace (no ProfilerStep#N, step annotations or step_trace_time.csv)";
    metrics->SetUnavailable("step_time_mean_ns", why);
    metrics->SetUnavailable("step_time_cv", why);
    metrics->SetUnavailable("step_time_p99_ns", why);
    metrics->SetUnavailable("step_time_excess_ratio", why);
    metrics->SetUnavailable("step_time_fast_mode", why);
    return;
  }
  metrics->Set("step_time_mean_ns", stats.mean_ns, kStepsSource);
  if (stats.host_count > 0) {  // timeline steps: both readings, and which one the step time is
    metrics->Set("step_time_device_period", stats.base == StepTimeBase::kDevicePeriod ? 1 : 0, kStepsSource);
    metrics->Set("step_time_host_mean_ns", stats.host_mean_ns, kStepsSource);
    if (stats.period_count > 0) {
      metrics->Set("step_time_device_period_mean_ns", stats.period_mean_ns, kStepsSource);
    } else {
      metrics->SetUnavailable("step_time_device_period_mean_ns", "one step per rank: a period needs the previous step");
    }
  }
  metrics->Set("step_time_cv", stats.cv, kStepsSource);
  metrics->Set("step_time_p99_ns", stats.p99_ns, kStepsSource);
  // Share of the mean step lost to steps slower than the typical one: what
  // the slow steps cost, the impact of an unstable-steps finding.
  if (stats.count < kMinStepsForExcess) {
    metrics->SetUnavailable("step_time_excess_ratio", "fewer than 3 steps: no typical step to compare with");
  } else {
    metrics->Set("step_time_excess_ratio",
                 stats.mean_ns > 0 ? std::max(0.0, (stats.mean_ns - stats.typical_ns) / stats.mean_ns) : 0,
                 kStepsSource);
  }
  // 0 with 3 to 7 steps too: no fastest quarter of 2 steps or more, so no
  // fast mode is taken (the rules read it beside step_time_excess_ratio).
  if (stats.count < kMinStepsForExcess) {
    metrics->SetUnavailable("step_time_fast_mode", "fewer than 3 steps: no typical step to compare with");
  } else {
    metrics->Set("step_time_fast_mode", stats.fast_mode ? 1 : 0, kStepsSource);
  }
  for (const BreakdownStep& b : stats.breakdown_steps) {
    if (stats.p50_ns <= 0 || static_cast<double>(b.dur_ns) < 1.5 * stats.p50_ns) continue;
    std::string line = "step " + std::to_string(b.number) + (b.rank == kNoRank ? "" : " rank " + std::to_string(b.rank)) +
                       " (" + stats.source + "): " + FormatDurationNs(static_cast<double>(b.dur_ns)) + " vs median " +
                       FormatDurationNs(stats.p50_ns);
    for (auto [label, ns] : {std::pair<const char*, int64_t>{"Computing", b.computing_ns},
                             {"Communication(Not Overlapped)", b.communication_not_overlapped_ns}, {"Free", b.free_ns}}) {
      if (ns >= 0) line += "; " + std::string(label) + " " + FormatDurationNs(static_cast<double>(ns));
    }
    metrics->AddEvidence("step_variance", line);
  }
  for (const SlowStep& slow : stats.slowest) {
    if (stats.p50_ns <= 0 || static_cast<double>(slow.dur_ns) < 1.5 * stats.p50_ns) continue;
    std::string line = std::string(trace.Str(trace.steps.name[slow.step])) +
                       (stats.base == StepTimeBase::kDevicePeriod ? " (device period)" : "") + ": " +
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
