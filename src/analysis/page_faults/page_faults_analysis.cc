#include "src/analysis/page_faults/page_faults_analysis.h"

#include "src/analysis/window/window_analysis.h"

namespace aiprof {
namespace {

using U = MetricUnit;

// The metrics it publishes, one a line to read as a table (docs/metrics.md
// documents each).
// clang-format off
constexpr MetricInfo kPageFaultsMetrics[] = {
        {"page_fault_ns", U::kNanoseconds, "impact: estimated time of minor page faults per base (faults of the steps' processes x the cost of one first-touch fault measured at capture start; aiprof trace)"},
        {"page_fault_ratio", U::kRatio, "page_fault_ns, share of the base (the mean steady step)"},
        {"malloc_glibc", U::kCount, "1 when the traced process used glibc's malloc, 0 when it had another mapped (jemalloc, tcmalloc, mimalloc; aiprof trace's capture.malloc)"},
        {"malloc_glibc_fixed", U::kCount, "1 when the traced process used glibc's malloc with its mmap and trim thresholds both fixed (GLIBC_TUNABLES or MALLOC_*_THRESHOLD_), else 0 (capture.malloc.settings)"},
        {"malloc_keeps_freed", U::kCount, "1 when the traced process's malloc, as configured, keeps freed memory mapped for reuse (jemalloc with dirty_decay_ms:-1, tcmalloc), else 0 (aiprof trace's capture.malloc and .settings)"},
        {"page_faults_per_step", U::kCount, "minor page faults of the steps' processes per base (aiprof trace's perf page-fault records)"},
};
// clang-format on

void PublishPageFaultsAnalysis(AnalysisResults& in, MetricSet* m) { PublishPageFaults(in.Get(kPageFaults), m); }

}  // namespace

const ResultSpec<PageFaultsResult> kPageFaults{
    "page_faults", [](AnalysisResults& in) { return ComputePageFaults(in.trace(), in.Get(kWindow)); }};

const AnalysisSpec kPageFaultsAnalysis{"page_faults", PublishPageFaultsAnalysis, HasPageFaultData, kPageFaultsMetrics};

}  // namespace aiprof
