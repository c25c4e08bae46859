#include "src/analysis/diagnosis/diagnose.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "src/analysis/attribution/op_class.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/diagnosis/bottleneck_types.h"
#include "src/analysis/gaps/idle_gaps.h"
#include "src/analysis/window/analysis_window.h"

namespace aiprof {
namespace {

std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", fraction * 100);
  return buf;
}

std::string FormatValue(const std::string& metric, double v) {
  const MetricInfo* info = FindMetricInfo(metric);
  char buf[64];
  switch (info ? info->unit : MetricUnit::kNumber) {
    case MetricUnit::kRatio: return Percent(v);
    case MetricUnit::kNanoseconds: std::snprintf(buf, sizeof(buf), "%.3f ms", v / 1e6); return buf;
    case MetricUnit::kBytes: std::snprintf(buf, sizeof(buf), "%.1f MB", v / 1e6); return buf;
    case MetricUnit::kBytesPerSecond: std::snprintf(buf, sizeof(buf), "%.1f GB/s", v / 1e9); return buf;
    case MetricUnit::kFlopsPerSecond: std::snprintf(buf, sizeof(buf), "%.1f GFLOP/s", v / 1e9); return buf;
    default: std::snprintf(buf, sizeof(buf), "%.4g", v); return buf;
  }
}

Confidence LowerConfidence(Confidence c) { return c == Confidence::kHigh ? Confidence::kMedium : Confidence::kLow; }

std::string DescribeBase(const MetricSet& metrics) {
  const MetricValue* base = metrics.Get("impact_base_ns");
  if (!base) return "";
  auto count = [&](const char* name) {
    const MetricValue* v = metrics.Get(name);
    return v && v->value > 0 ? static_cast<size_t>(v->value) : size_t{0};
  };
  const MetricValue* forced = metrics.Get("warmup_forced");
  const std::string forced_text = WarmupForcedText(forced ? static_cast<int>(forced->value) : -1, count("impact_steps"),
                                                   count("warmup_clamped_ranks"), count("impact_ranks"));
  if (const MetricValue* host = metrics.Get("impact_host_base_ns"); host && count("impact_device_periods") > 0) {
    return DescribeDevicePeriodBase(count("impact_steps"), count("impact_device_periods"), base->value, host->value,
                                    count("warmup_steps"), count("warmup_prefill_steps"), count("truncated_steps")) +
           forced_text;
  }
  const MetricValue* startup = metrics.Get("startup_ns");
  return DescribeImpactBase(count("impact_steps"), count("impact_ranks"), base->value, count("warmup_steps"),
                            startup && startup->value > 0 ? static_cast<int64_t>(startup->value) : 0,
                            count("warmup_prefill_steps"), count("truncated_steps")) +
         forced_text;
}

Impact ComputeImpact(const Rule& rule, const MetricSet& metrics, std::string* reason) {
  Impact im;
  im.metric = rule.impact_metric;
  if (rule.impact_on_memory) {
    im.basis = "device memory";
    im.basis_text = "share of device memory";
  } else if (rule.impact_on_trace) {
    const MetricValue* span = metrics.Get("trace_span_ns");
    im.basis = "trace span";
    im.basis_ns = span ? span->value : 0;
    im.basis_text = "of the whole trace span";
  } else {
    const MetricValue* base = metrics.Get("impact_base_ns");
    const MetricValue* steps = metrics.Get("impact_steps");
    im.basis = steps && steps->value > 0 ? "per step" : "per trace";
    im.basis_ns = base ? base->value : 0;
    im.basis_text = DescribeBase(metrics);
  }
  if (rule.impact_metric.empty()) {
    *reason += "; impact not quantified in wall-clock time by this rule";
    return im;
  }
  const MetricValue* v = metrics.Get(rule.impact_metric);
  if (!v) {
    *reason += "; impact unknown (" + rule.impact_metric + " unavailable)";
    return im;
  }
  im.quantified = true;
  *reason += "; impact from " + rule.impact_metric;
  if (rule.impact_on_memory) {
    im.share = std::clamp(v->value, 0.0, 1.0);
    im.max_speedup = 1;
    return im;
  }
  // Time saved cannot exceed the time it is a share of.
  im.time_ns = std::clamp(v->value, 0.0, std::max(0.0, im.basis_ns));
  im.share = im.basis_ns > 0 ? im.time_ns / im.basis_ns : 0;
  im.max_speedup = im.share < 1 ? 1.0 / (1.0 - im.share) : INFINITY;
  return im;
}

std::vector<RankedCause> RankCauses(const Rule& rule, const MetricSet& metrics) {
  struct Scored {
    RankedCause cause;
    int tier;  // 0: condition holds, 1: general, 2: condition unknown
    double margin;
  };
  std::vector<Scored> scored;
  for (const RootCause& c : rule.root_causes) {
    if (!c.applies_if_computed.empty() && !metrics.Get(c.applies_if_computed) &&
        !metrics.UnavailableReason(c.applies_if_computed)) {
      continue;
    }
    Scored s{{c.id, c.text, {}, ""}, 1, 0};
    if (c.when) {
      EvalResult r = c.when->Evaluate(metrics);
      if (r.truth == Truth::kFalse) continue;
      if (r.truth == Truth::kTrue) {
        s.tier = 0;
        for (const auto& cmp : r.comparisons) {
          if (!cmp.holds) continue;
          s.margin = std::max(s.margin, cmp.margin);
          s.cause.why += (s.cause.why.empty() ? "" : "; ") + DescribeComparison(cmp);
        }
      } else {
        s.tier = 2;
        s.cause.why = "not checked: the trace lacks";
        const char* separator = " ";
        for (const std::string& name : r.missing_metrics) {
          std::optional<std::string> reason = metrics.UnavailableReason(name);
          s.cause.why += separator + name + (reason ? " (" + *reason + ")" : "");
          separator = "; ";
        }
        if (r.missing_metrics.empty()) s.cause.why += " the metrics for its condition";
      }
    } else {
      s.cause.why = "general cause of this bottleneck";
    }
    if (!c.evidence_topic.empty()) s.cause.evidence = metrics.Evidence(c.evidence_topic);
    scored.push_back(std::move(s));
  }
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    if (a.tier != b.tier) return a.tier < b.tier;
    if (a.cause.evidence.empty() != b.cause.evidence.empty()) return !a.cause.evidence.empty();
    return a.margin > b.margin;
  });
  std::vector<RankedCause> out;
  for (auto& s : scored) {
    // Causes that share an evidence topic show its lines once, under the
    // first (best ranked) of them.
    for (const RankedCause& shown : out) {
      if (!s.cause.evidence.empty() && shown.evidence == s.cause.evidence) s.cause.evidence.clear();
    }
    out.push_back(std::move(s.cause));
  }
  return out;
}

}  // namespace

std::string DescribeComparison(const ComparisonOutcome& c) {
  return c.metric + " = " + FormatValue(c.metric, c.value) + " (" + c.op + " " + FormatValue(c.metric, c.threshold) +
         (c.measured ? ", measured" : ", estimated") + ")";
}

std::optional<double> ReplayedGain(const Impact& im) {
  if (!im.replayed || !(im.replayed->measured_ns > 0) || !(im.replayed->predicted_ns > 0)) return std::nullopt;
  return 1 - im.replayed->predicted_ns / im.replayed->measured_ns;
}

std::string ImpactText(const Finding& f) {
  auto pct = [](double x) { return FormatPercent(x); };
  auto ms = [](double ns) { return FormatFixed(ns / 1e6, 3) + " ms"; };
  const Impact& im = f.impact;
  if (f.rule->impact_on_memory) return pct(im.share) + " of device memory";
  if (!im.quantified) {
    // The diagnosis says why, last in its reason: "impact not quantified in
    // wall-clock time by this rule" or "impact unknown (metric unavailable)".
    const size_t last = f.confidence_reason.rfind("; ");
    std::string why = last == std::string::npos ? f.confidence_reason : f.confidence_reason.substr(last + 2);
    if (why.rfind("impact ", 0) == 0) why.erase(0, 7);
    if (why.empty()) return "not quantified in wall-clock time";
    return why.rfind("not quantified", 0) == 0 ? why : "not quantified in wall-clock time (" + why + ")";
  }
  if (f.rule->impact_on_trace) {
    return ms(im.time_ns) + " = " + pct(im.share) + " of the " + ms(im.basis_ns) +
           " trace span (one-off work, not the steady state)";
  }
  const std::string share = ms(im.time_ns) + " " + im.basis + " = " + pct(im.share) + " of " + ms(im.basis_ns);
  if (f.rule->id == "unexplained_time") return share + " not explained by the findings above";
  std::string bound;
  if (im.max_speedup == 1 && im.share > 0) {
    // A descriptive finding (compute): what the step does, not a cause to
    // remove, so no Amdahl bound (above).
    bound = "what the step computes, not a cause to remove: a faster implementation saves part of it";
  } else if (std::isfinite(im.max_speedup)) {
    bound = "at most x" + FormatFixed(im.max_speedup, 2) + " if removed";
  } else {
    bound = "at most unbounded if removed";
  }
  if (const std::optional<double> gain = ReplayedGain(im)) {
    // The dependency-aware figure beside the Amdahl bound, its verdict
    // before its figures: the cause removed in the replay of the steady
    // steps (SimulateRemovals).
    const SimulatedGain& r = *im.replayed;
    const bool hidden = im.share >= kReplayHiddenMinShare && *gain < im.share / 4;
    bound += std::string(hidden ? "; but replayed without it x" : "; replayed without it x") +
             FormatFixed(r.measured_ns / r.predicted_ns, 2) +
             (hidden ? ": other work on the critical path takes its place" : "") + " ('" + r.scenario +
             (r.step_period ? "'; step period, end of the previous step's device work to the end of its own, "
                            : "'; step wall time to " + std::string(StepEndText(r.host_only)) + ", ") +
             (r.mean ? "mean" : "median") + " of " + std::to_string(r.steps) + " steady step" +
             (r.steps == 1 ? "" : "s") + ": " + ms(r.measured_ns) + " -> " + ms(r.predicted_ns) + ")";
  }
  return share + " [" + im.basis_text + "]; " + bound;
}

const char* PriorityName(Priority p) {
  switch (p) {
    case Priority::kLow: return "low";
    case Priority::kMedium: return "medium";
    case Priority::kHigh: return "high";
  }
  return "low";
}

bool Platform::Matches(const std::string& platform) const {
  auto one = [this](std::string_view tag) {
    if (tag == "generic") return true;
    if (tag == "pytorch") return pytorch;
    if (tag == "native") return !pytorch;
    if (tag == "cuda") return cuda;
    if (tag == "rocm") return rocm;
    if (tag == "gpu") return cuda || rocm;
    if (tag == "ascend") return ascend;
    if (tag == "cpu") return cpu_only;
    return false;
  };
  std::string_view rest = platform;
  while (true) {
    const size_t comma = rest.find(',');
    std::string_view tag = rest.substr(0, comma);
    while (!tag.empty() && tag.front() == ' ') tag.remove_prefix(1);
    if (!one(tag)) return false;
    if (comma == std::string_view::npos) return true;
    rest.remove_prefix(comma + 1);
  }
}

std::string Platform::Describe() const {
  std::string out;
  auto add = [&out](std::string_view s) { out += (out.empty() ? "" : ", ") + std::string(s); };
  if (pytorch) add("pytorch");
  if (cuda) add("cuda");
  if (rocm) add("rocm");
  if (ascend) add("ascend");
  if (!other_device.empty()) add(other_device);
  if (cpu_only) add("cpu");
  return out.empty() ? "generic" : out;
}

Platform DetectPlatform(const Trace& trace) {
  Platform p;
  bool cuda_calls = false;
  const SliceTable& s = trace.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    EventKind k = s.kind[i];
    if (IsDeviceActivity(k)) p.cpu_only = false;
    if (k == EventKind::kRuntime || k == EventKind::kDriver) {
      std::string_view name = trace.Str(s.name[i]);
      if (name.substr(0, 4) == "cuda" || name.substr(0, 2) == "cu") cuda_calls = true;
      if (name.substr(0, 3) == "acl" || name.substr(0, 4) == "aclr") p.ascend = true;
    }
  }
  p.pytorch = HasTorchOps(trace);
  for (size_t t = 0; t < trace.tracks.size(); ++t) {
    std::string_view pname = trace.Str(trace.tracks.process_name[t]);
    if (pname.find("Ascend") != std::string_view::npos || pname == "CANN") p.ascend = true;
  }
  auto it = trace.metadata.find("source_format");
  if (it != trace.metadata.end() && (it->second.find("npu") != std::string::npos ||
                                     it->second.find("ascend") != std::string::npos ||
                                     it->second.find("msprof") != std::string::npos)) {
    p.ascend = true;
  }
  // The accelerator family the importer recognised (runtime call names,
  // profiler keys, device process names: src/importers/common/accelerator.cc).
  auto acc = trace.metadata.find("accelerator");
  const std::string accelerator = acc == trace.metadata.end() ? "" : acc->second;
  if (accelerator == "ascend") p.ascend = true;
  if (accelerator == "rocm") {
    p.rocm = true;
  } else if (accelerator == "mtia" || accelerator == "xpu" || accelerator == "hpu") {
    p.other_device = accelerator;
  } else if (!p.ascend && (cuda_calls || !p.cpu_only)) {
    // CUDA calls, or device activity of no recognised family (a hand-made
    // or converted trace without runtime names): a GPU, taken as NVIDIA.
    p.cuda = true;
  }
  return p;
}

Confidence DecideConfidence(const Rule& rule, const MetricSet& metrics, const EvalResult& when,
                            std::string* reason) {
  Confidence c;
  std::string basis;
  if (rule.high_when || rule.medium_when) {
    if (rule.high_when && rule.high_when->Evaluate(metrics).truth == Truth::kTrue) {
      c = Confidence::kHigh;
      basis = "past the rule's high-confidence level (" + rule.high_when->text() + ")";
    } else if (rule.medium_when && rule.medium_when->Evaluate(metrics).truth == Truth::kTrue) {
      c = Confidence::kMedium;
      basis = "past the rule's medium-confidence level (" + rule.medium_when->text() + ")";
    } else {
      c = Confidence::kLow;
      basis = "just past the indicator thresholds";
    }
  } else {
    double margin = INFINITY;
    for (const auto& cmp : when.comparisons) {
      if (cmp.holds) margin = std::min(margin, cmp.margin);
    }
    if (!std::isfinite(margin)) margin = 0;
    c = margin >= kHighMargin ? Confidence::kHigh : margin >= kMediumMargin ? Confidence::kMedium : Confidence::kLow;
    basis = Percent(margin) + " past the nearest indicator threshold";
  }
  bool estimated = std::any_of(when.comparisons.begin(), when.comparisons.end(),
                               [](const ComparisonOutcome& x) { return x.holds && !x.measured; });
  if (estimated && c != Confidence::kLow) {
    c = LowerConfidence(c);
    basis += "; lowered one level because an indicator is estimated, not measured";
  }
  *reason = basis;
  return c;
}

Priority DecidePriority(double share, Confidence confidence) {
  const double weight = confidence == Confidence::kHigh     ? kHighConfidenceWeight
                        : confidence == Confidence::kMedium ? kMediumConfidenceWeight
                                                            : kLowConfidenceWeight;
  double score = share * weight;
  return score >= kHighPriorityScore ? Priority::kHigh : score >= kMediumPriorityScore ? Priority::kMedium : Priority::kLow;
}

namespace {
// A trait of the bottleneck type `b` (bottleneck_types.cc); false for a type
// of a user's own.
bool HasTrait(const std::string& b, bool BottleneckType::*trait) {
  const BottleneckType* t = FindBottleneckType(b);
  return t != nullptr && t->*trait;
}
}  // namespace

bool DescriptiveFinding(const std::string& b) { return HasTrait(b, &BottleneckType::descriptive); }
bool CaveatFinding(const std::string& b) { return HasTrait(b, &BottleneckType::caveat); }
bool ExclusiveImpact(const std::string& b) { return HasTrait(b, &BottleneckType::exclusive_impact); }
bool SpreadFinding(const std::string& b) { return HasTrait(b, &BottleneckType::spread); }

const Rule& UnexplainedTimeRule() {
  static const Rule kRule = [] {
    Rule r;
    r.id = "unexplained_time";
    r.bottleneck = "unexplained";
    r.title = "Most of the step is not explained by any finding";
    r.description =
        "The findings account for less than half of the step time. The largest consumers of the rest are listed; "
        "if one of them is a bottleneck aiprof has no rule for, draft one with aiprof diagnose --draft-rule FILE.";
    r.source = "built-in";
    Suggestion s;
    s.id = "draft_rule";
    s.title = "Draft a rule for what you find";
    s.platform = "generic";
    s.action = "Run aiprof diagnose TRACE --draft-rule my_rule.yaml, refine its thresholds and texts, and load it with "
               "--rules my_rule.yaml (or add it to your rule library).";
    s.efficacy_min = 0;
    s.efficacy_max = 0;
    s.targets = {"latency", "throughput"};
    r.suggestions.push_back(std::move(s));
    return r;
  }();
  return kRule;
}

Diagnosis Diagnose(const Trace& trace, const MetricSet& metrics, const std::vector<Rule>& rules) {
  Diagnosis d;
  d.platform = DetectPlatform(trace);
  d.impact_basis_text = DescribeBase(metrics);
  for (const Rule& rule : rules) {
    if (!rule.applies_if_computed.empty() && !metrics.Get(rule.applies_if_computed) &&
        !metrics.UnavailableReason(rule.applies_if_computed)) {
      continue;  // the trace has no such data at all (not an aiprof trace capture, ...)
    }
    EvalResult r = rule.when.Evaluate(metrics);
    if (r.truth == Truth::kUnknown) {
      NotEvaluated ne{&rule, {}};
      for (const std::string& m : r.missing_metrics) {
        ne.missing.emplace_back(m, metrics.UnavailableReason(m).value_or("not computed for this trace"));
      }
      d.not_evaluated.push_back(std::move(ne));
      continue;
    }
    if (r.truth == Truth::kFalse) {
      d.not_fired.push_back(&rule);
      continue;
    }
    Finding f;
    f.rule = &rule;
    f.confidence = DecideConfidence(rule, metrics, r, &f.confidence_reason);
    f.indicators = r.comparisons;
    f.causes = RankCauses(rule, metrics);
    f.impact = ComputeImpact(rule, metrics, &f.confidence_reason);
    if (f.impact.quantified && !rule.impact_on_memory && !rule.impact_on_trace &&
        f.impact.share < kNegligibleImpactShare && f.confidence != Confidence::kLow) {
      // The indicators hold over the whole trace, but removing the cause would
      // save almost nothing in the steady state: not a confident finding.
      f.confidence = Confidence::kLow;
      f.confidence_reason += "; lowered to low: its steady-state impact is below " + Percent(kNegligibleImpactShare) +
                             " of the base";
    }
    // Compute is what the step does, not a cause to remove: its impact is
    // the time a faster implementation could at most save, no Amdahl bound.
    if (DescriptiveFinding(rule.bottleneck)) f.impact.max_speedup = 1;
    f.priority = rule.first ? Priority::kHigh : DecidePriority(f.impact.share, f.confidence);
    d.findings.push_back(std::move(f));
  }
  std::stable_sort(d.findings.begin(), d.findings.end(), [](const Finding& a, const Finding& b) {
    if (a.rule->first != b.rule->first) return a.rule->first;
    // Caveats about what the trace lets the analyses see (op coverage) say
    // nothing about where the program's time goes: after every finding that
    // does, so that a caveat leads only where no finding about the program
    // fired (DiagnosisToDocument names them at the top, as caveats).
    bool ca = CaveatFinding(a.rule->bottleneck), cb = CaveatFinding(b.rule->bottleneck);
    if (ca != cb) return cb;
    // Removable causes first; what the time is (compute) after them.
    bool da = DescriptiveFinding(a.rule->bottleneck), db = DescriptiveFinding(b.rule->bottleneck);
    if (da != db) return db;
    if (a.priority != b.priority) return a.priority > b.priority;
    // Within a priority, the larger wall-clock impact first.
    if (a.impact.share != b.impact.share) return a.impact.share > b.impact.share;
    return a.confidence > b.confidence;
  });
  // How much of the base the findings explain: exclusive parts add up, the
  // largest overlapping one is counted on top (a lower bound of the union
  // would be the max; this is the most they can explain together).
  double exclusive = 0, other = 0;
  const MetricValue* base = metrics.Get("impact_base_ns");
  for (const Finding& f : d.findings) {
    if (!f.impact.quantified || f.rule->impact_on_memory || f.rule->impact_on_trace) continue;
    if (ExclusiveImpact(f.rule->bottleneck)) exclusive += f.impact.time_ns;
    else other = std::max(other, f.impact.time_ns);
  }
  d.explained_ns = base ? std::min(base->value, exclusive + other) : 0;
  // With the attribution tree, only time no op, module or wait accounts for
  // stays unexplained: the untraced host time of the critical thread.
  const MetricValue* untraced = metrics.Get("untraced_host_ns");
  const bool attributed = untraced != nullptr;
  const bool untraced_large = !attributed || (base && untraced->value >= kUntracedMinShare * base->value);
  if (base && base->value > 0 && d.explained_ns < kExplainedMinShare * base->value && untraced_large &&
      (!metrics.consumers().empty() || attributed)) {
    Finding f;
    f.rule = &UnexplainedTimeRule();
    f.confidence = Confidence::kMedium;
    f.confidence_reason = "the findings explain " + Percent(d.explained_ns / base->value) + " of the base, below " +
                          Percent(kExplainedMinShare);
    f.impact.quantified = true;
    f.impact.basis_ns = base->value;
    const MetricValue* steps = metrics.Get("impact_steps");
    f.impact.basis = steps && steps->value > 0 ? "per step" : "per trace";
    f.impact.basis_text = d.impact_basis_text;
    // The rest of the base, or the untraced host time where that is less:
    // `metric` names the figure the time is (trial_invariants: a CPU trace's
    // 31.33 ms, its untraced time, read "impact_base_ns", 210.11 ms).
    f.impact.metric = "impact_base_ns";
    f.impact.time_ns = base->value - d.explained_ns;
    if (attributed && untraced->value < f.impact.time_ns) {
      f.impact.time_ns = untraced->value;
      f.impact.metric = "untraced_host_ns";
    }
    f.impact.share = f.impact.time_ns / base->value;
    f.impact.max_speedup = 1;  // not removable as such: it is what is left to explain
    std::vector<TimeConsumer> consumers;
    if (attributed) consumers.push_back({"untraced", "host time outside any recorded op (attribution tree)", untraced->value});
    for (const TimeConsumer& c : metrics.consumers()) {
      // The profiler's wrapper spans are structure, never consumers.
      if (!IsProfilerWrapperName(c.name)) consumers.push_back(c);
    }
    if (const MetricValue* idle = metrics.Get("idle_other_ns"); idle && idle->value > 0) {
      consumers.push_back({"idle", IdleOtherDescription(d.platform.cpu_only), idle->value});
    }
    std::stable_sort(consumers.begin(), consumers.end(),
                     [](const TimeConsumer& a, const TimeConsumer& b) { return a.ns > b.ns; });
    if (consumers.size() > 10) consumers.resize(10);
    f.consumers = std::move(consumers);
    f.priority = Priority::kLow;
    d.findings.push_back(std::move(f));  // last: what is left to explain
  }
  // Findings that would save next to nothing in the steady state go after
  // everything else, the unexplained time included.
  auto negligible = [](const Finding& f) {
    return f.impact.quantified && !f.rule->impact_on_memory && !f.rule->impact_on_trace &&
           f.rule->id != "unexplained_time" && f.impact.share < kNegligibleImpactShare;
  };
  std::stable_partition(d.findings.begin(), d.findings.end(), [&](const Finding& f) { return !negligible(f); });
  return d;
}

}  // namespace aiprof
