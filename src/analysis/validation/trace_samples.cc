#include "src/analysis/validation/trace_samples.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <tuple>

#include "src/analysis/common/intervals.h"
#include "src/analysis/common/steps.h"
#include "src/analysis/results.h"
#include "src/analysis/summary/summary.h"
#include "src/analysis/summary/summary_analysis.h"
#include "src/analysis/window/analysis_window.h"

namespace aiprof {
namespace {

// Device activity per rank, merged (sorted, disjoint), to measure any step's share.
std::map<int32_t, CoveredTime> MergedDeviceActivity(const Trace& trace) {
  std::map<int32_t, Intervals> by_rank;
  const SliceTable& s = trace.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!IsDeviceActivity(s.kind[i])) continue;
    by_rank[trace.tracks.rank[s.track[i]]].emplace_back(s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i]);
  }
  std::map<int32_t, CoveredTime> out;
  for (auto& [rank, iv] : by_rank) out.emplace(rank, CoveredTime(MergeIntervals(std::move(iv))));
  return out;
}

// `skip` leading steps (warm-up) and the steps in `dropped` (truncated) are
// left out; both index the step list, whose rows are trace.steps' here.
void AddDeviceUtilization(const Trace& trace, size_t skip, const std::vector<size_t>& dropped, RunSamples* out) {
  const std::map<int32_t, CoveredTime> activity = MergedDeviceActivity(trace);
  if (activity.empty()) {
    out->device_util_missing = "the trace has no device activity (kernels, copies, collectives)";
    return;
  }
  if (trace.steps.size() == 0) {
    out->device_util_missing = "the trace has no steps to measure utilization per step";
    return;
  }
  for (size_t i = skip; i < trace.steps.size(); ++i) {
    if (std::binary_search(dropped.begin(), dropped.end(), i)) continue;
    int64_t start = trace.steps.ts_ns[i], dur = trace.steps.dur_ns[i];
    if (dur <= 0) continue;
    auto it = activity.find(trace.steps.rank[i]);
    if (it == activity.end()) it = activity.begin();  // single-rank traces may leave the step rank unset
    out->device_util.push_back(static_cast<double>(it->second.Within(start, start + dur)) / static_cast<double>(dur));
  }
}

void AddQuality(const Trace& trace, RunSamples* out) {
  for (const auto& [key, value] : trace.metadata) {
    bool wanted = key.rfind("quality.", 0) == 0;
    for (std::string_view k : kQualityMetadataKeys) wanted = wanted || key == k;
    if (!wanted) continue;
    double v = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || ptr != value.data() + value.size() || !std::isfinite(v)) continue;
    std::string name = key.rfind("quality.", 0) == 0 ? key.substr(8) : key;
    out->quality[name].push_back(v);
  }
}

void AddOps(const Trace& trace, RunSamples* out) {
  const SliceTable& s = trace.slices;
  bool has_cpu_ops = false;
  for (size_t i = 0; i < s.size() && !has_cpu_ops; ++i) has_cpu_ops = s.kind[i] == EventKind::kCpuOp;
  for (size_t i = 0; i < s.size(); ++i) {
    EventKind k = s.kind[i];
    // Traces without categories (torch's legacy export) classify ops as kOther.
    bool op = has_cpu_ops ? k == EventKind::kCpuOp : (k == EventKind::kOther || k == EventKind::kCpuOp);
    if (!op) continue;
    std::string_view name = trace.Str(s.name[i]);
    if (SpanNameMatchesUnit(name, "ProfilerStep")) continue;
    out->op_dur_ns[std::string(name)].push_back(static_cast<double>(s.dur_ns[i]));
  }
}

}  // namespace

bool SpanNameMatchesUnit(std::string_view name, std::string_view unit) {
  if (unit.empty() || name.size() < unit.size() || name.substr(0, unit.size()) != unit) return false;
  if (name.size() == unit.size()) return true;
  char c = name[unit.size()];
  return c == '#' || c == ' ' || c == '_' || c == ':' || c == '-' || c == '/';
}

namespace {

// --unit ttft | tpot | itl: the SDK's request token figures
// (src/analysis/summary/request_tokens.h); empty for other units or without
// token calls (then the unit is a span name, as before).
std::vector<double> TokenSamples(const Trace& trace, const std::string& unit, AnalysisResults* results) {
  std::vector<double> out;
  if (unit != "ttft" && unit != "tpot" && unit != "itl") return out;
  std::optional<RequestTokenStats> own;
  const RequestTokenStats& r =
      results != nullptr ? results->Get(kRequestTokenStats) : own.emplace(ComputeRequestTokens(trace));
  if (unit == "itl") {
    // One sample per token event after a request's first, in time order per request.
    const auto token = trace.strings.Find("token"), id_key = trace.strings.Find("id"), n_key = trace.strings.Find("n");
    if (!token || !id_key) return out;
    std::vector<std::tuple<uint32_t, uint64_t, int64_t, double>> toks;  // track, id, ts, n
    const InstantTable& in = trace.instants;
    for (uint32_t i = 0; i < in.size(); ++i) {
      if (in.category[i] != *token || in.name[i] != *token) continue;
      uint64_t id = 0;
      double n = 1;
      for (uint64_t a = in.arg_begin[i]; a < in.arg_begin[i] + in.arg_count[i]; ++a) {
        if (trace.args[a].key == *id_key && trace.args[a].type == ArgType::kUint) id = trace.args[a].u;
        if (n_key && trace.args[a].key == *n_key && trace.args[a].type == ArgType::kUint) n = static_cast<double>(trace.args[a].u);
      }
      toks.emplace_back(in.track[i], id, in.ts_ns[i], n);
    }
    std::sort(toks.begin(), toks.end());
    for (size_t i = 1; i < toks.size(); ++i) {
      if (std::get<0>(toks[i]) != std::get<0>(toks[i - 1]) || std::get<1>(toks[i]) != std::get<1>(toks[i - 1])) continue;
      if (std::get<3>(toks[i]) <= 0) continue;
      out.push_back(static_cast<double>(std::get<2>(toks[i]) - std::get<2>(toks[i - 1])) / std::get<3>(toks[i]));
    }
    return out;
  }
  for (const RequestTokenRow& row : r.requests) {
    if (unit == "ttft") out.push_back(static_cast<double>(row.ttft_ns));
    if (unit == "tpot" && row.tpot_ns >= 0) out.push_back(row.tpot_ns);
  }
  return out;
}

}  // namespace

StatusOr<RunSamples> SamplesFromTrace(const Trace& trace, const std::string& label, const TraceSampleOptions& options) {
  RunSamples out;
  out.label = label;
  out.source_kind = "trace";
  std::vector<size_t> truncated;  // FindSteps indices left out as truncated (unit "step" only)
  out.items_per_sample = options.items_per_sample;
  if (options.unit == "step") {
    out.unit = "step";
    // The steps every command sees (src/analysis/common/steps.h).
    StepList steps = FindSteps(trace);
    // Trailing steps cut short where the recording stopped leave first, as
    // the analysis window leaves them (FindTruncatedSteps), then warm-up.
    truncated = FindTruncatedSteps(trace, steps, ComputeStepPeriods(trace, steps));
    auto step_text = [&](const StepSpan& st) {
      std::string name = st.name.empty() ? "step " + std::to_string(st.number) : std::string(trace.Str(st.name));
      char buf[64];
      std::snprintf(buf, sizeof(buf), " %.2f ms", static_cast<double>(st.dur_ns) / 1e6);
      return name + buf;
    };
    std::vector<const StepSpan*> kept;
    std::string cut;
    for (size_t k = 0; k < steps.steps.size(); ++k) {
      if (std::binary_search(truncated.begin(), truncated.end(), k)) {
        cut += (cut.empty() ? "" : ", ") + step_text(steps.steps[k]);
        continue;
      }
      kept.push_back(&steps.steps[k]);
      out.latency_ns.push_back(static_cast<double>(steps.steps[k].dur_ns));
    }
    if (!truncated.empty()) {
      out.notes.push_back("left out " + std::to_string(truncated.size()) + " truncated last step" +
                          (truncated.size() == 1 ? "" : "s") + " (" + cut +
                          "): short and without the work the earlier steps hold, cut where the recording stopped");
    }
    size_t warm = LeadingWarmup(out.latency_ns, options.warmup_steps);
    if (warm > 0) {
      std::string which;
      for (size_t k = 0; k < warm; ++k) {
        const StepSpan& st = *kept[k];
        which += (k ? ", " : "") + step_text(st);
        out.warmup_left_out_ns.push_back(out.latency_ns[k]);
      }
      out.latency_ns.erase(out.latency_ns.begin(), out.latency_ns.begin() + static_cast<long>(warm));
      out.notes.push_back("left out " + std::to_string(warm) + " warm-up step" + (warm == 1 ? "" : "s") + " (" + which +
                          ")" + (options.warmup_steps >= 0 ? " as --warmup-steps asks"
                                                           : ": leading outliers against the other steps; "
                                                             "--warmup-steps 0 keeps them"));
    }
    if (out.latency_ns.empty()) {
      return ErrStatus(label +
                       ": no steps (ProfilerStep#N or similar markers, or step_trace_time.csv) in the trace; choose "
                       "spans with --unit NAME");
    }
  } else if (std::vector<double> tokens = TokenSamples(trace, options.unit, options.results); !tokens.empty()) {
    // LLM serving: per-request TTFT or TPOT, or per-token ITL, from the SDK's token calls.
    out.unit = options.unit;
    out.latency_ns = std::move(tokens);
  } else {
    out.unit = "span '" + options.unit + "'";
    const SliceTable& s = trace.slices;
    for (size_t i = 0; i < s.size(); ++i) {
      if (SpanNameMatchesUnit(trace.Str(s.name[i]), options.unit)) out.latency_ns.push_back(static_cast<double>(s.dur_ns[i]));
    }
    if (out.latency_ns.empty()) return ErrStatus(label + ": no span named '" + options.unit + "' (--unit) in the trace");
  }
  AddDeviceUtilization(trace, out.warmup_left_out_ns.size(), truncated, &out);
  AddQuality(trace, &out);
  AddOps(trace, &out);
  return out;
}

}  // namespace aiprof
