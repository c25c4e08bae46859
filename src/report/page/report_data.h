// `aiprof report`: the one page a team lead opens first. BuildReport()
// gathers the structured results of the analyses, the diagnosis, the
// suggestions and (with --before) the validation into ReportData;
// ReportToDocument (report_document.cc) turns it into one document, which the
// shared renderers write as HTML (and from it PDF), Markdown, text or JSON,
// so every format says the same thing.
#ifndef AIPROF_SRC_REPORT_PAGE_REPORT_DATA_H_
#define AIPROF_SRC_REPORT_PAGE_REPORT_DATA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/analysis/diagnosis/diagnose.h"
#include "src/analysis/diagnosis/suggest.h"
#include "src/analysis/gaps/idle_gaps.h"
#include "src/analysis/host_functions/host_functions.h"
#include "src/analysis/memory/memory_analysis.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/roofline/ops_to_roofline.h"
#include "src/analysis/steps/step_stats.h"
#include "src/analysis/summary/summary.h"
#include "src/analysis/validation/compare.h"
#include "src/model/trace.h"
#include "src/render/document.h"
#include "src/session/session.h"

namespace aiprof {

inline constexpr size_t kReportTopOps = 50;
inline constexpr size_t kReportRooflinePoints = 200;
inline constexpr size_t kReportStepBars = 500;  // the step chart's bars (runs of steps past it)
inline constexpr size_t kReportMemoryPoints = kMemorySeriesPoints;

// Everything the report shows comes from the session: its trace, the
// analyses' results, the diagnosis and the suggestions (computed once, shared
// with the views the report embeds).
struct ReportInputs {
  std::string before_source;  // --before, or empty
  AnalysisSession* session = nullptr;
  const ValidationResult* validation = nullptr;  // with --before
};

struct ReportStep {
  std::string label;  // "ProfilerStep#3" (rank-prefixed on multi-rank traces)
  double dur_ms = 0;  // on the headline's base (steady_stats.base): NaN where a rank's first step has no period
  bool slow = false;  // StepTime::slow
  double host_ms = 0;  // its host span (the same as dur_ms on a host-span base)
};

struct ReportBreakdownRow {
  std::string label;  // "rank 0 device 0", "main thread"
  double span_ms = 0, compute_ms = 0, comm_ms = 0, memcpy_ms = 0;
  double idle_by_cause_ms[kGapCauseCount] = {};
  double aiprof_own_ms = 0;  // aiprof's own work in the span (TimelineBreakdown::aiprof_overhead_ns)
};

struct ReportCommRow {
  int32_t rank = kNoRank;
  // wait/transfer -1: unknown (one rank's collectives only, or clocks that
  // disagree even once aligned; and no communication.json split).
  double comm_ms = 0, wait_ms = 0, transfer_ms = 0, exposed_ms = -1;
  double clock_shift_ms = 0;  // added to its times where the clocks were aligned (-clock_offset_ns)
  // In stalled collectives: waiting for a rank not in the inputs (crashed
  // or hung; collective_pairing.h), in neither wait nor transfer.
  double stalled_ms = 0;
};

struct ReportOp {
  std::string name, category;
  uint64_t count = 0;
  double total_ms = 0, self_ms = 0, mean_us = 0, p50_us = 0, p99_us = 0, max_us = 0;
  double share = 0;  // self time, of the summed self time of the ops in the same category (wrappers left out)
};

using ReportHostFunction = HostFunction;
inline constexpr size_t kReportHostFunctions = 15;

// The first `limit` host functions of the session's summary (its host
// samples: most self samples first, then total, then name), with their
// shares of the samples with a stack: the report's and the monitor
// incident's table.
std::vector<ReportHostFunction> HostFunctionsOf(const Trace& t, const HostSampleStats& samples, size_t limit);

struct ReportData {
  // Set by the caller (aiprof monitor's incident): rows shown first, under
  // `context_title`.
  std::string context_title;
  std::vector<std::pair<std::string, std::string>> context;

  // Evidence: what was read, by what.
  std::string source, before_source, version, generated_utc, platform, source_format;
  uint64_t slices = 0, instants = 0, counters = 0, samples = 0, tracks = 0;
  std::vector<std::pair<std::string, std::string>> diagnostics;  // kind, "count × description (first at ...)"
  std::string target;
  std::vector<std::string> constraints;

  // Headline.
  StepStats steps_stats;   // every step: the step chart
  StepStats steady_stats;  // warm-up and truncated steps left out: the headline, as analyze
  size_t warmup_steps = 0;
  size_t truncated_steps = 0;     // trailing steps cut short where the recording stopped (AnalysisWindow::truncated)
  double device_util = -1;        // busy share of the steady steps (else of the span), -1 unknown
  std::string device_util_basis;  // its base: the steady steps' wall time, else the span
  const Finding* top_finding = nullptr;
  const SuggestionOutcome* best_fix = nullptr;           // report_data.cc says how it is chosen
  const SuggestionOutcome* best_measured_fix = nullptr;  // suggest's first, if measured and above zero
  // A caveat finding (CaveatFinding: op coverage) that is not the top one,
  // and its cheapest fix (ChooseBestFix over its own suggestions), for the
  // headline: a caveat never displaces a finding about the program there.
  const Finding* caveat = nullptr;
  const SuggestionOutcome* caveat_fix = nullptr;

  // Charts.
  std::vector<ReportBreakdownRow> breakdown;
  bool cpu_only = false;
  std::vector<ReportStep> steps;
  double median_step_ms = 0;  // of every step (StepStats::every_step_median_ns)
  // Idle gaps: per duration bucket, time per cause (ms), summed over timelines.
  double gap_hist_ms[kGapBucketCount][kGapCauseCount] = {};
  uint64_t gap_hist_count[kGapBucketCount] = {};
  RooflineResult roofline;
  std::optional<DevicePeaks> roofline_device;
  std::string roofline_problem;
  std::vector<ReportCommRow> comm;
  bool comm_clocks_aligned = false;  // wait and transfer on clocks aligned by collective ends (cross_rank.h)
  bool comm_matched = false;         // collectives matched across 2 or more ranks (else wait/transfer need more)
  std::vector<MemorySeries> memory;

  // Tables.
  std::vector<ReportOp> top_ops;  // by self time, profiler wrappers left out (TopOpsBySelf)
  // The attribution tree as a document (module table, collapsible tree).
  render::Document attribution;
  // aiprof analyze's page_faults section, only for traces with page-fault
  // records (src/analysis/page_faults/); no blocks otherwise.
  render::Section page_faults;
  // aiprof analyze's llm section (prefill/decode phases, tokens, per-token
  // time), only for runs where it found phases; no blocks otherwise.
  render::Section llm;
  std::vector<ReportHostFunction> host_functions;
  uint64_t host_stacks = 0;  // samples with a stack
  const Diagnosis* diagnosis = nullptr;
  const SuggestResult* suggestions = nullptr;
  const SuggestOptions* suggest_options = nullptr;  // target and constraints the suggestions were filtered by
  const MetricSet* metrics = nullptr;
  const ValidationResult* validation = nullptr;

  // Other views (flame graph, timeline overview) as self-contained HTML
  // documents, embedded in frames; filled by the caller when available.
  std::vector<std::pair<std::string, std::string>> embedded_views;  // title, html
  // Static forms (SVG) drawn inline, for print and PDF: title, <svg> markup
  // written and escaped by the view itself.
  std::vector<std::pair<std::string, std::string>> embedded_svgs;
  std::vector<std::pair<std::string, std::string>> view_errors;  // title, why it is missing
};

// The headline's best fix: the best gain measured on this trace (`kept`'s
// first when it is simulated or corrected by cards and above zero:
// RankSuggestions puts those first, over all findings), unless the top
// finding's largest prior is larger even at its low end. Priors of
// different rules are not compared with each other: without a measured
// gain, the top finding's largest prior (a simulated gain whose interval
// reaches zero is not one; only a top finding without any prior gives its
// largest gain of any source); among equal gains the lower effort, then
// the suggestions' order. `measured` is kept's first when measured,
// whichever is chosen.
struct BestFix {
  const SuggestionOutcome* best = nullptr;
  const SuggestionOutcome* measured = nullptr;
};
BestFix ChooseBestFix(const Finding* top_finding, const std::vector<SuggestionOutcome>& kept);

// The report of the session's trace; an error when its rules do not load.
StatusOr<ReportData> BuildReport(const ReportInputs& in);

// The report as one document: every section, figure and table.
render::Document ReportToDocument(const ReportData& r);
// The document as a page in the shared shell (its CSP also allows the
// embedded views' scripts), and as Markdown.
std::string ReportToHtml(const ReportData& r);
std::string ReportToMarkdown(const ReportData& r);

// "Bucket" names of the idle-gap histogram (<1us, 1-10us, ...).
const char* GapBucketLabel(size_t bucket);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_PAGE_REPORT_DATA_H_
