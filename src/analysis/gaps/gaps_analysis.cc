#include "src/analysis/gaps/gaps_analysis.h"

#include "src/analysis/window/window_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kGapsMetrics[] = {
        {"comm_exposed_ratio", U::kRatio, "communication time not hidden behind compute, share of the device span (per base: comm_exposed_ns)"},
        {"comm_overlap_ratio", U::kRatio, "share of communication time overlapped by compute"},
        {"comm_ratio", U::kRatio, "communication (collectives) time, share of device busy time"},
        {"compute_ratio", U::kRatio, "compute (kernel) time, share of the device span"},
        {"data_loading_ratio", U::kRatio,
         "idle time overlapped by data loading (the device's; on CPU-only traces the main thread's between its ops), "
         "share of the span"},
        {"device_idle_ratio", U::kRatio, "1 - device_util: the device's idle share, on device_util's base"},
        {"device_util", U::kRatio,
         "device busy time / the steady steps' wall time; without steps (or steps only from a breakdown file), / the "
         "device span less aiprof's own work (CPU traces: main thread op time)"},
        {"idle_host_bound_ratio", U::kRatio, "idle time whose launching call began after the device went idle, share of span"},
        {"idle_sync_ratio", U::kRatio, "idle time overlapped by a synchronization call, share of span"},
        {"idle_startup_ratio", U::kRatio, "idle time at least half covered by start-up work of the host (start-up calls such as a first launch loading its code object, stream capture windows): one-off, not the steady state's; share of span"},
        {"memcpy_ratio", U::kRatio, "memory copy time, share of device busy time"},
        {"comm_exposed_ns", U::kNanoseconds, "impact: communication not overlapped by compute, per base"},
        {"data_loading_wait_ns", U::kNanoseconds, "impact: device (or main-thread) idle time overlapped by data loading, per base"},
        {"idle_host_bound_ns", U::kNanoseconds, "impact: device idle time waiting for the host to launch, per base"},
        {"idle_other_ns", U::kNanoseconds, "idle time with no known cause, per base: the device's, or on a CPU-only trace the main thread's between its ops"},
        {"idle_sync_ns", U::kNanoseconds, "impact: device idle time overlapped by a blocking synchronisation, per base"},
        {"idle_startup_ns", U::kNanoseconds, "device idle time at least half covered by start-up work of the host (idle_startup_ratio's), per base: one-off, not a steady-state impact"},
        {"memcpy_exposed_ns", U::kNanoseconds, "impact: copy time not overlapped by compute or communication on its device, per base"},
};
// clang-format on

GapsResult ComputeWindowGaps(AnalysisResults& in, bool keep_all_gaps) {
  GapsOptions o;
  o.window = &in.Get(kWindow);
  o.keep_all_gaps = keep_all_gaps;
  return ComputeGaps(in.trace(), o);
}

void PublishGapsAnalysis(AnalysisResults& in, MetricSet* m) {
  const GapsResult& r = in.Get(kGaps);
  PublishGaps(in.trace(), r, m);
  PublishGapImpacts(r, in.Get(kWindow), m);
}

}  // namespace

const ResultSpec<GapsResult> kGaps{
    "breakdown", [](AnalysisResults& in) { return ComputeWindowGaps(in, in.options().keep_all_gaps); }};

const ResultSpec<GapsResult> kAllGaps{
    "breakdown_all_gaps", [](AnalysisResults& in) { return ComputeWindowGaps(in, true); },
    [](const AnalysisResults& in) { return in.options().keep_all_gaps ? &kGaps : nullptr; }};

const AnalysisSpec kBreakdownAnalysis{"breakdown", PublishGapsAnalysis, nullptr, kGapsMetrics};

}  // namespace aiprof
