// The catalogue of metrics (name, unit, meaning): the metrics of the
// analysis window, listed here, and each analysis's own (its AnalysisSpec's
// `metrics`, in its folder). Analyses publish these into a MetricSet;
// diagnosis rules may only name metrics listed here. docs/metrics.md
// documents the same list.
#include <algorithm>

#include "src/analysis/analysis_spec.h"
#include "src/analysis/metrics/metric_set.h"

namespace aiprof {

const std::vector<MetricInfo>& MetricCatalogue() {
  using U = MetricUnit;
  static const std::vector<MetricInfo> kCatalogue = [] {
    // The metrics no analysis publishes (the window's), one a line, to read
    // as a table.
    // clang-format off
    std::vector<MetricInfo> v = {
        // Impacts: wall-clock time per the base (impact_base_ns: per step, or per
        // trace without steps) over the steady-state window (src/analysis/window).
        {"impact_base_ns", U::kNanoseconds, "the base every impact is per: mean steady-state step, or steady-state time of the trace"},
        {"impact_device_periods", U::kCount, "device periods the base averages where it is the device's period (the device runs behind the host); absent on a host-span base"},
        {"impact_host_base_ns", U::kNanoseconds, "the steady steps' mean host span, beside a base on the device's period"},
        {"impact_steps", U::kCount, "steady-state steps the base averages, over all ranks (0: per trace)"},
        {"impact_ranks", U::kCount, "ranks whose steps the base averages (0: per trace)"},
        {"startup_ns", U::kNanoseconds, "start-up calls (context creation, first allocations, module loading), union over the trace"},
        {"startup_ratio", U::kRatio, "start-up time, share of the trace span"},
        {"trace_span_ns", U::kNanoseconds, "first start to last end of the trace"},
        {"truncated_steps", U::kCount,
         "trailing steps left out of impacts as truncated: cut short where the recording stopped (set only when some are)"},
        {"warmup_steps", U::kCount, "leading warm-up steps left out of impacts"},
        {"warmup_forced", U::kCount, "the warm-up count --warmup-steps asked for (set only when asked)"},
        {"warmup_clamped_ranks", U::kCount,
         "ranks whose steps --warmup-steps would all have left out, each keeping its last (set only when some did)"},
        {"warmup_prefill_steps", U::kCount,
         "of the warm-up steps, those holding an LLM prefill step annotation (set only when some do)"},
    };
    // clang-format on
    for (const AnalysisSpec* a : AllAnalyses()) v.insert(v.end(), a->metrics.begin(), a->metrics.end());
    std::sort(v.begin(), v.end(), [](const MetricInfo& a, const MetricInfo& b) { return a.name < b.name; });
    return v;
  }();
  return kCatalogue;
}

}  // namespace aiprof
