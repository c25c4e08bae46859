#include "src/report/page/report_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>

#include "src/analysis/attribution/attribution_analysis.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/communication/communication.h"
#include "src/analysis/communication/communication_analysis.h"
#include "src/analysis/gaps/gaps_analysis.h"
#include "src/analysis/llm/llm_analysis.h"
#include "src/analysis/memory/memory_analysis.h"
#include "src/analysis/memory/memory_series.h"
#include "src/analysis/page_faults/page_faults.h"
#include "src/analysis/roofline/roofline_analysis.h"
#include "src/analysis/steps/steps_analysis.h"
#include "src/analysis/summary/summary_analysis.h"
#include "src/analysis/window/window_analysis.h"
#include "src/report/analysis/analysis_sections.h"
#include "src/report/attribution/attribution_report.h"

namespace aiprof {
namespace {

double NsToMs(double ns) { return ns / 1e6; }

std::string UtcNow() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string TimelineLabel(const TimelineBreakdown& tl) {
  std::string who = tl.device == kHostDevice ? "main thread" : "device " + std::to_string(tl.device);
  if (tl.rank != kNoRank) who = "rank " + std::to_string(tl.rank) + " " + who;
  return who;
}

// The step chart: every step on the headline's base, with the median and
// slow flags the steps analysis gives them (StepStats::every_step).
void FillSteps(const Trace& t, ReportData* r) {
  const bool multi_rank = [&] {
    for (size_t i = 1; i < t.steps.size(); ++i) {
      if (t.steps.rank[i] != t.steps.rank[0]) return true;
    }
    return false;
  }();
  for (const StepTime& st : r->steady_stats.every_step) {
    ReportStep s;
    if (st.row < t.steps.size()) {
      s.label = std::string(t.Str(t.steps.name[st.row]));
      if (multi_rank && st.rank != kNoRank) s.label = "r" + std::to_string(st.rank) + " " + s.label;
    } else {  // a breakdown file's step (step_trace_time.csv)
      s.label = (st.rank != kNoRank ? "r" + std::to_string(st.rank) + " " : std::string()) + "step " +
                std::to_string(st.number);
    }
    s.host_ms = NsToMs(static_cast<double>(st.host_ns));
    s.dur_ms = st.dur_ns >= 0 ? NsToMs(static_cast<double>(st.dur_ns)) : std::numeric_limits<double>::quiet_NaN();
    s.slow = st.slow;
    r->steps.push_back(std::move(s));
  }
  r->median_step_ms = NsToMs(r->steady_stats.every_step_median_ns);
}

void FillOps(const Summary& summary, const Trace& t, ReportData* r) {
  // Shares of self time: summed total times count a nested op inside its
  // parent's too (a category's shares of total came to more than 100%). The
  // base is the self time of the ops the table can list: profiler wrappers
  // (ProfilerStep#N, category Operator in PyTorch 1.8) are left out of both,
  // their self time being host time between ops, not an op's, and so are
  // device records (summary bands, HCCL sub-tasks: OpStat::device_record).
  std::map<uint32_t, int64_t> category_self;
  for (const OpStat& op : summary.ops) {
    if (!op.profiler_wrapper && !op.device_record) category_self[op.category.raw] += op.self_ns;
  }
  std::vector<size_t> ranked = TopOpsBySelf(t, summary);
  for (size_t i = 0; i < ranked.size() && i < kReportTopOps; ++i) {
    const OpStat& op = summary.ops[ranked[i]];
    ReportOp o;
    o.name = std::string(t.Str(op.name));
    o.category = std::string(t.Str(op.category));
    o.count = op.count;
    o.total_ms = NsToMs(static_cast<double>(op.total_ns));
    o.self_ms = NsToMs(static_cast<double>(op.self_ns));
    o.mean_us = op.mean_ns / 1e3;
    o.p50_us = op.p50_ns / 1e3;
    o.p99_us = op.p99_ns / 1e3;
    o.max_us = static_cast<double>(op.max_ns) / 1e3;
    const int64_t self = category_self[op.category.raw];
    o.share = self > 0 ? static_cast<double>(op.self_ns) / static_cast<double>(self) : 0;
    r->top_ops.push_back(std::move(o));
  }
}

}  // namespace

const char* GapBucketLabel(size_t bucket) {
  static const char* kLabels[kGapBucketCount] = {"<1us", "1-10us", "10-100us", "0.1-1ms", "1-10ms", ">=10ms"};
  return bucket < kGapBucketCount ? kLabels[bucket] : "?";
}

std::vector<ReportHostFunction> HostFunctionsOf(const Trace& t, const HostSampleStats& s, size_t limit) {
  std::vector<ReportHostFunction> out;
  const double stacks = static_cast<double>(s.with_stack);
  for (size_t i = 0; i < s.functions.size() && i < limit; ++i) {
    const SampledFunction& f = s.functions[i];
    ReportHostFunction h;
    h.name = std::string(t.Str(f.frame));
    h.module = std::string(t.Str(f.module));
    h.self_samples = f.self_samples;
    h.total_samples = f.total_samples;
    h.self_share = s.with_stack ? static_cast<double>(f.self_samples) / stacks : 0;
    h.total_share = s.with_stack ? static_cast<double>(f.total_samples) / stacks : 0;
    out.push_back(std::move(h));
  }
  return out;
}

BestFix ChooseBestFix(const Finding* top_finding, const std::vector<SuggestionOutcome>& kept) {
  BestFix b;
  if (!kept.empty() && MeasuredToPay(kept.front())) b.measured = &kept.front();
  // The top finding's largest prior; a simulated gain of it whose interval
  // reaches zero is not a prior (e2e_page_faults: "-2.6% to 22.3%" was the
  // headline's best fix over the rule's 1.1-3.2%). Only when the top
  // finding has no prior, its largest gain of any source.
  // Among equal gains (a caveat's measurement fixes gain nothing), the
  // cheapest: lower effort, then the rules' order.
  auto better = [](const SuggestionOutcome& o, const SuggestionOutcome* than) {
    if (!than) return true;
    if (o.gain_max != than->gain_max) return o.gain_max > than->gain_max;
    return EffortRank(o.suggestion->risk.effort) < EffortRank(than->suggestion->risk.effort);
  };
  const SuggestionOutcome* prior = nullptr;
  const SuggestionOutcome* any = nullptr;
  for (const SuggestionOutcome& o : kept) {
    if (!top_finding || o.finding != top_finding) continue;
    if (better(o, any)) any = &o;
    if (o.gain_source == kGainFromPrior && better(o, prior)) prior = &o;
  }
  if (!prior) prior = any;
  b.best = b.measured && (!prior || b.measured->gain_max >= prior->gain_min) ? b.measured : prior;
  return b;
}

StatusOr<ReportData> BuildReport(const ReportInputs& in) {
  AnalysisSession& session = *in.session;
  AnalysisResults& results = session.results();
  const Trace& t = session.trace();
  ASSIGN_OR_RETURN(const Diagnosis* diagnosis, session.diagnosis());
  ASSIGN_OR_RETURN(const SuggestResult* suggestions, session.suggestions());
  ReportData r;
  r.source = session.options().input;
  r.before_source = in.before_source;
  r.version = AIPROF_VERSION;
  r.generated_utc = UtcNow();
  r.platform = diagnosis->platform.Describe();
  auto fmt_it = t.metadata.find("source_format");
  r.source_format = fmt_it != t.metadata.end() ? fmt_it->second : "";
  r.slices = t.slices.size();
  r.instants = t.instants.size();
  r.counters = t.counters.size();
  r.samples = t.samples.size();
  r.tracks = t.tracks.size();
  const HostSampleStats& samples = results.Get(kSummary).host_samples;
  r.host_functions = HostFunctionsOf(t, samples, kReportHostFunctions);
  r.host_stacks = samples.with_stack;
  for (const auto& [kind, e] : t.diagnostics.entries()) {
    r.diagnostics.emplace_back(kind, std::to_string(e.count) + " × " + e.description +
                                         (e.first_where.empty() ? std::string() : " (first at " + e.first_where + ")"));
  }
  const SuggestOptions& options = session.options().suggest;
  r.target = options.target;
  for (const Constraint& c : options.constraints) r.constraints.push_back(c.text);
  r.diagnosis = diagnosis;
  r.suggestions = suggestions;
  r.suggest_options = &options;
  r.metrics = &session.metrics();
  r.validation = in.validation;

  // Headline.
  r.steps_stats = results.Get(kAllSteps);
  r.steady_stats = results.Get(kSteps);
  r.warmup_steps = results.Get(kWindow).warmup_only();
  r.truncated_steps = results.Get(kWindow).truncated.size();
  const GapsResult& gaps = results.Get(kGaps);
  r.cpu_only = gaps.cpu_only;
  int64_t own = 0;
  for (const TimelineBreakdown& tl : gaps.timelines) {
    own += tl.aiprof_overhead_ns;
    ReportBreakdownRow row;
    row.label = TimelineLabel(tl);
    row.span_ms = NsToMs(static_cast<double>(tl.span_ns));
    row.compute_ms = NsToMs(static_cast<double>(tl.compute_ns));
    row.comm_ms = NsToMs(static_cast<double>(tl.comm_exposed_ns()));
    row.memcpy_ms = NsToMs(static_cast<double>(tl.memcpy_ns));
    if (gaps.cpu_only) row.compute_ms = NsToMs(static_cast<double>(tl.busy_ns));
    row.aiprof_own_ms = NsToMs(static_cast<double>(tl.aiprof_overhead_ns));
    for (size_t c = 0; c < kGapCauseCount; ++c)
      row.idle_by_cause_ms[c] = NsToMs(static_cast<double>(tl.idle_by_cause_ns[c]));
    r.breakdown.push_back(row);
    for (size_t b = 0; b < kGapBucketCount; ++b) {
      r.gap_hist_count[b] += tl.gap_hist_count[b];
      for (size_t c = 0; c < kGapCauseCount; ++c)
        r.gap_hist_ms[b][c] += NsToMs(static_cast<double>(tl.gap_hist_ns_by_cause[b][c]));
    }
  }
  const size_t timelines = gaps.timelines.size();
  const std::string mean_over =
      timelines > 1 ? fmt::format(", the mean of {} {}", timelines, gaps.cpu_only ? "main threads" : "devices") : "";
  // The analysis' figure (GapsResult::device_util, analyze's device_util),
  // said with its base.
  r.device_util = gaps.device_util;
  if (gaps.device_util_base == UtilBase::kSteadySteps) {
    r.device_util_basis = (gaps.cpu_only ? "main-thread op time / the steady steps' wall time"
                                         : "device busy time / the steady steps' wall time") +
                          mean_over;
  } else if (gaps.device_util_base == UtilBase::kSpan) {
    r.device_util_basis = (gaps.cpu_only ? "main-thread op time / its span (first to last op)"
                                         : "device busy time / device span (first to last activity)") +
                          mean_over;
    if (own > 0)
      r.device_util_basis += ", less aiprof's own work in it (" + FormatDurationNs(static_cast<double>(own)) + ")";
  }
  if (!diagnosis->findings.empty()) r.top_finding = &diagnosis->findings.front();
  BestFix best = ChooseBestFix(r.top_finding, suggestions->kept);
  r.best_fix = best.best;
  r.best_measured_fix = best.measured;
  // A caveat that does not lead (a finding about the program does) is named
  // beside the headline with its cheapest fix.
  for (const Finding& f : diagnosis->findings) {
    if (&f == r.top_finding || !CaveatFinding(f.rule->bottleneck)) continue;
    r.caveat = &f;
    r.caveat_fix = ChooseBestFix(&f, suggestions->kept).best;
    if (r.caveat_fix && r.caveat_fix->finding != &f) r.caveat_fix = nullptr;  // a measured fix of another finding
    break;
  }

  FillSteps(t, &r);
  FillOps(results.Get(kSummary), t, &r);
  r.attribution = AttributionToDocument(t, results.Get(kAttribution));
  if (HasPageFaultData(t)) {
    r.page_faults.key = "page_faults";
    r.page_faults.title = "Page faults";
    AddAnalysisSection("page_faults", results, &r.page_faults);
  }
  if (!results.Get(kLlmPhases).source.empty()) {
    r.llm.key = "llm";
    r.llm.title = "LLM phases: prefill and decode";
    AddAnalysisSection("llm", results, &r.llm);
  }

  r.roofline_device = results.Get(kRoofline).device;
  r.roofline_problem = results.Get(kRoofline).problem;
  r.roofline = results.Get(kRoofline).result;

  const CommunicationResult& comm = results.Get(kCommunication);
  std::map<int32_t, ReportCommRow> by_rank;
  for (const CollectiveTypeStats& s : comm.stats.by_type) {
    ReportCommRow& row = by_rank[s.rank];
    row.rank = s.rank;
    row.comm_ms += NsToMs(static_cast<double>(s.total_ns));
  }
  for (const RankCommunication& rc : comm.cross.ranks) {
    ReportCommRow& row = by_rank[rc.rank];
    row.rank = rc.rank;
    row.stalled_ms = NsToMs(static_cast<double>(rc.stalled_ns));  // its own durations: no clocks compared
    row.clock_shift_ms = NsToMs(static_cast<double>(-rc.clock_offset_ns));  // as analyze shows it
    if (comm.cross.clocks_agree) {
      row.wait_ms = NsToMs(static_cast<double>(rc.wait_ns));
      row.transfer_ms = NsToMs(static_cast<double>(rc.transfer_ns));
    } else if (rc.profiler_wait_ns >= 0) {
      row.wait_ms = NsToMs(static_cast<double>(rc.profiler_wait_ns));
      row.transfer_ms = NsToMs(static_cast<double>(rc.profiler_transit_ns));
    } else {
      row.wait_ms = row.transfer_ms = -1;  // not 0: unknown on clocks that disagree
    }
  }
  for (const StepCommunication& sc : comm.stats.steps) {
    int64_t exposed = sc.exposed_ns >= 0 ? sc.exposed_ns : sc.profiler_exposed_ns;
    if (exposed < 0) continue;
    ReportCommRow& row = by_rank[sc.rank];
    row.rank = sc.rank;
    row.exposed_ms = std::max(0.0, row.exposed_ms) + NsToMs(static_cast<double>(exposed));
  }
  for (auto& [rank, row] : by_rank) r.comm.push_back(row);
  r.comm_clocks_aligned = comm.cross.aligned_from_collectives;
  r.comm_matched = comm.cross.matched > 0;

  r.memory = results.Get(kMemorySeries);
  return r;
}

}  // namespace aiprof
