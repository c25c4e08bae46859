#include "src/analysis/diagnosis/diagnose.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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

std::string Describe(const ComparisonOutcome& c) {
  return c.metric + " = " + FormatValue(c.metric, c.value) + " (" + c.op + " " + FormatValue(c.metric, c.threshold) +
         (c.measured ? ", measured" : ", estimated") + ")";
}

Confidence Lower(Confidence c) { return c == Confidence::kHigh ? Confidence::kMedium : Confidence::kLow; }

// The basis an impact share is of: the mean step when there are steps, else
// the span of the whole trace.
void ImpactBasis(const Trace& trace, const MetricSet& metrics, Impact* impact) {
  if (const MetricValue* step = metrics.Get("step_time_mean_ns"); step && step->value > 0) {
    impact->basis_ns = step->value;
    impact->basis = "mean step time";
    return;
  }
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (size_t i = 0; i < trace.slices.size(); ++i) {
    first = std::min(first, trace.slices.ts_ns[i]);
    last = std::max(last, trace.slices.ts_ns[i] + trace.slices.dur_ns[i]);
  }
  impact->basis_ns = last > first ? static_cast<double>(last - first) : 0;
  impact->basis = "trace span";
}

std::vector<RankedCause> RankCauses(const Rule& rule, const MetricSet& metrics) {
  struct Scored {
    RankedCause cause;
    int tier;  // 0: condition holds, 1: general, 2: condition unknown
    double margin;
  };
  std::vector<Scored> scored;
  for (const RootCause& c : rule.root_causes) {
    Scored s{{c.id, c.text, {}, ""}, 1, 0};
    if (c.when) {
      EvalResult r = c.when->Evaluate(metrics);
      if (r.truth == Truth::kFalse) continue;
      if (r.truth == Truth::kTrue) {
        s.tier = 0;
        for (const auto& cmp : r.comparisons) {
          if (!cmp.holds) continue;
          s.margin = std::max(s.margin, cmp.margin);
          s.cause.why += (s.cause.why.empty() ? "" : "; ") + Describe(cmp);
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
  for (auto& s : scored) out.push_back(std::move(s.cause));
  return out;
}

}  // namespace

const char* PriorityName(Priority p) {
  switch (p) {
    case Priority::kLow: return "low";
    case Priority::kMedium: return "medium";
    case Priority::kHigh: return "high";
  }
  return "low";
}

bool Platform::Matches(const std::string& platform) const {
  if (platform == "generic") return true;
  if (platform == "pytorch") return pytorch;
  if (platform == "cuda") return cuda;
  if (platform == "ascend") return ascend;
  if (platform == "cpu") return cpu_only;
  return false;
}

std::string Platform::Describe() const {
  std::string out;
  auto add = [&out](const char* s) { out += (out.empty() ? "" : ", ") + std::string(s); };
  if (pytorch) add("pytorch");
  if (cuda) add("cuda");
  if (ascend) add("ascend");
  if (cpu_only) add("cpu");
  return out.empty() ? "generic" : out;
}

Platform DetectPlatform(const Trace& trace) {
  Platform p;
  const SliceTable& s = trace.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    EventKind k = s.kind[i];
    if (k == EventKind::kCpuOp || k == EventKind::kPythonFunction || k == EventKind::kUserAnnotation) p.pytorch = true;
    if (IsDeviceActivity(k)) p.cpu_only = false;
    if (k == EventKind::kRuntime || k == EventKind::kDriver) {
      std::string_view name = trace.Str(s.name[i]);
      if (name.substr(0, 4) == "cuda" || name.substr(0, 2) == "cu") p.cuda = true;
      if (name.substr(0, 3) == "acl" || name.substr(0, 4) == "aclr") p.ascend = true;
    }
  }
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
  // Device activity that is not Ascend is a GPU (CUDA or ROCm, same advice).
  if (!p.cpu_only && !p.ascend) p.cuda = true;
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
    c = Lower(c);
    basis += "; lowered one level because an indicator is estimated, not measured";
  }
  *reason = basis;
  return c;
}

Priority DecidePriority(double share, Confidence confidence) {
  double weight = confidence == Confidence::kHigh ? 1.0 : confidence == Confidence::kMedium ? 0.6 : 0.3;
  double score = share * weight;
  return score >= kHighPriorityScore ? Priority::kHigh : score >= kMediumPriorityScore ? Priority::kMedium : Priority::kLow;
}

Diagnosis Diagnose(const Trace& trace, const MetricSet& metrics, const std::vector<Rule>& rules) {
  Diagnosis d;
  d.platform = DetectPlatform(trace);
  Impact basis;
  ImpactBasis(trace, metrics, &basis);
  for (const Rule& rule : rules) {
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
    f.impact = basis;
    if (rule.impact_on_memory) {
      f.impact.basis = "device memory";
      f.impact.basis_ns = 0;
    }
    if (const MetricValue* share = metrics.Get(rule.impact_metric)) {
      f.impact.share = std::clamp(share->value, 0.0, 1.0);
      f.confidence_reason += "; impact from " + rule.impact_metric;
    } else {
      f.confidence_reason += "; impact unknown (" + rule.impact_metric + " unavailable)";
    }
    f.impact.time_ns = f.impact.share * f.impact.basis_ns;
    f.impact.max_speedup = rule.impact_on_memory ? 1.0 : f.impact.share < 1 ? 1.0 / (1.0 - f.impact.share) : INFINITY;
    f.priority = DecidePriority(f.impact.share, f.confidence);
    d.findings.push_back(std::move(f));
  }
  std::stable_sort(d.findings.begin(), d.findings.end(), [](const Finding& a, const Finding& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.confidence != b.confidence) return a.confidence > b.confidence;
    return a.impact.share > b.impact.share;
  });
  return d;
}

}  // namespace aiprof
