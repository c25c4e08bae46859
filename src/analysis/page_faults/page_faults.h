// Minor page faults recorded by `aiprof trace` (src/model/page_fault_records.h):
// per steady step, how many and their estimated time (count x the cost of
// one first-touch fault the capture measured on its machine), its share of
// the step, and the ops that took them (docs/analyses.md, "page_faults").
//
// Which faults count: those of the processes whose tracks hold the steps
// (every process when the steps have no track), inside the analysis
// window's steady steps (or its steady time without steps). The time base
// is the window's: per steady step (mean), else per trace.
//
// Ops: for each counted fault, the named slices that enclose its time on
// the faulting thread (every track of the same pid and tid: the torch ops',
// the SDK's and the host samples' tracks are separate tracks of one
// thread): the outermost (the earliest-starting; step markers such as
// ProfilerStep#N are left out) and the innermost (the latest-starting).
#ifndef AIPROF_SRC_ANALYSIS_PAGE_FAULTS_PAGE_FAULTS_H_
#define AIPROF_SRC_ANALYSIS_PAGE_FAULTS_PAGE_FAULTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

class MetricSet;
struct AnalysisWindow;

inline constexpr size_t kPageFaultOpsReported = 10;

struct PageFaultStep {
  int64_t number = -1;
  int64_t start_ns = 0, dur_ns = 0;
  uint64_t faults = 0;
  bool steady = false;  // in the analysis window (warm-up steps are not)
};

struct PageFaultOp {
  std::string outer, inner;  // "" when no named slice encloses the fault
  uint64_t faults = 0;       // counted faults (the window's), all of them
};

struct PageFaultsResult {
  bool has_data = false;       // the trace holds fault records (or says recording was on)
  std::string recording;       // metadata capture.page_faults ("on", "off", "blocked"), "" when absent
  uint64_t period = 1;         // faults per record
  bool period_known = false;   // capture.page_faults.period was present
  uint64_t records = 0;        // fault instants in the trace
  uint64_t lost_records = 0;   // capture.page_faults.lost_records
  uint64_t total_faults = 0;   // over the whole trace
  bool cost_known = false;     // capture.page_fault_cost_ns present and valid
  double cost_ns = 0;          // per fault
  std::string cost_method;     // capture.page_fault_cost_method, or why the cost is unknown
  // The window: base (per step / per trace), steady steps, mean step.
  std::string base;
  size_t steady_steps = 0;
  double base_ns = 0;
  uint64_t window_faults = 0;     // counted faults inside the window
  double faults_per_base = 0;     // window_faults per the base
  double fault_ns_per_base = 0;   // x cost_ns; 0 when the cost is unknown
  double share = 0;               // fault_ns_per_base / base_ns
  // The traced process's malloc (metadata capture.malloc*, "" when the
  // trace does not say), and what its settings mean for how it returns
  // memory to the kernel (MallocNote).
  std::string malloc, malloc_library, malloc_settings, malloc_note;
  std::vector<PageFaultStep> steps;  // every step with a start, in time order
  std::vector<PageFaultOp> ops;      // by faults, most first (at most kPageFaultOpsReported)
  uint64_t ops_total = 0;            // distinct (outer, inner) pairs
};

// How an allocator with these settings ("NAME=value; ..." of
// capture.malloc.settings) returns freed memory to the kernel, in a sentence
// (docs/analyses.md, "page_faults"); "" for an unknown allocator.
std::string MallocNote(const std::string& malloc, const std::string& settings);
// Whether that malloc, so configured, keeps freed memory mapped for reuse:
// tcmalloc, or jemalloc with dirty_decay_ms:-1 (metric malloc_keeps_freed).
bool MallocKeepsFreed(const std::string& malloc, const std::string& settings);
// Whether glibc's mmap and trim thresholds are both fixed in `settings`
// (GLIBC_TUNABLES or MALLOC_*_THRESHOLD_; metric malloc_glibc_fixed).
bool GlibcThresholdsFixed(const std::string& settings);

// The recording's figures in the metadata: faults per record
// (capture.page_faults.period) and the cost of one fault measured at capture
// start (capture.page_fault_cost_ns), each known only when well formed (a
// positive integer; a positive finite number). Every reader of fault
// records takes them from here (this analysis, fault_slices.h, the
// timeline view).
struct PageFaultMeta {
  uint64_t period = 1;
  bool period_known = false;
  double cost_ns = 0;
  bool cost_known = false;
};
PageFaultMeta ReadPageFaultMeta(const Trace& trace);

// True when the trace holds fault records or says whether they were
// recorded (metadata capture.page_faults): an aiprof trace capture.
bool HasPageFaultData(const Trace& trace);

// O(slices + faults log faults).
PageFaultsResult ComputePageFaults(const Trace& trace, const AnalysisWindow& window);

// Publishes page_faults_per_step, page_fault_ns (impact) and
// page_fault_ratio, or each as unavailable with the reason, and evidence
// "page_faults".
void PublishPageFaults(const PageFaultsResult& r, MetricSet* metrics);

// One line for the outputs of what-if on a trace with fault data:
// "N faults per step, ~X ms (Y% of the step); the replay keeps them in the
// ops that took them; ...". Empty when the trace has no fault data.
std::string PageFaultWhatIfNote(const PageFaultsResult& r);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_PAGE_FAULTS_PAGE_FAULTS_H_
