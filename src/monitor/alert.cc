#include "src/monitor/alert.h"

#include <algorithm>
#include <numeric>

#include "src/analysis/validation/baseline_store.h"
#include "src/monitor/monitor_metrics.h"

namespace aiprof {

StatusOr<MonitorBaseline> LoadMonitorBaseline(const std::string& db_path, const std::string& service) {
  ASSIGN_OR_RETURN(std::unique_ptr<BaselineStore> store, BaselineStore::Open(db_path));
  ASSIGN_OR_RETURN(StoredBaseline b, store->LatestBaseline(service));
  MonitorBaseline out;
  out.label = b.samples.label;
  std::vector<double> v = b.samples.latency_ns;
  if (v.empty()) return ErrStatus(out.label + " holds no samples");
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  const double p50 = NearestRankQuantile(&v, 0.50), p90 = NearestRankQuantile(&v, 0.90);
  const double p99 = NearestRankQuantile(&v, 0.99), max = NearestRankQuantile(&v, 1.0);
  if (b.samples.unit == "step") {
    out.values["baseline.step_time_p50"] = p50;
    out.values["baseline.step_time_p99"] = p99;
    out.values["baseline.step_time_max"] = max;
  } else {
    out.values["baseline.p50_latency"] = p50;
    out.values["baseline.p90_latency"] = p90;
    out.values["baseline.p99_latency"] = p99;
    out.values["baseline.max_latency"] = max;
    out.values["baseline.mean_latency"] = mean;
  }
  return out;
}

namespace {

// One --alert of `texts`, with the checks its text alone decides (a bad
// command line: exit 2).
StatusOr<Expression> ParseAlertText(const std::vector<std::string>& texts, const std::string& text,
                                    bool baseline_named) {
  // Its text labels its series on /metrics: twice, two samples of one series.
  if (std::count(texts.begin(), texts.end(), text) > 1)
    return UsageStatus("--alert \"" + text + "\" is given twice (its text labels its series on /metrics)");
  StatusOr<Expression> e = Expression::Parse(text, &FindMonitorMetric);
  if (!e.ok()) return UsageStatus("--alert: " + e.status().message() + " (metrics: docs/monitor.md)");
  for (const std::string& m : e->Metrics()) {
    if (m.starts_with("counter.") && m.size() - 8 > kMaxCounterNameBytes) {
      return UsageStatus("--alert \"" + text + "\": " + m + ": the SDK's live channel keeps counter names of at most " +
                         std::to_string(kMaxCounterNameBytes) + " bytes (this one has " + std::to_string(m.size() - 8) +
                         "), so it can never match: shorten the name");
    }
  }
  if (e->UsesBaseline() && !baseline_named) {
    return UsageStatus("--alert \"" + text +
                       "\" compares with the baseline: give --service NAME (and --db PATH) of a "
                       "baseline stored with aiprof set-baseline");
  }
  return e;
}

}  // namespace

Status CheckAlertTexts(const std::vector<std::string>& texts, bool baseline_named) {
  if (texts.empty())
    return UsageStatus("aiprof monitor: give at least one --alert EXPR (e.g. --alert \"p99_latency > 2.0s\")");
  for (const std::string& text : texts) RETURN_IF_ERROR(ParseAlertText(texts, text, baseline_named).status());
  return OkStatus();
}

StatusOr<std::vector<AlertRule>> ParseAlertRules(const std::vector<std::string>& texts,
                                                 const MonitorBaseline* baseline) {
  RETURN_IF_ERROR(CheckAlertTexts(texts, baseline != nullptr));
  std::vector<AlertRule> out;
  for (const std::string& text : texts) {
    ASSIGN_OR_RETURN(Expression e, ParseAlertText(texts, text, baseline != nullptr));
    if (e.UsesBaseline()) {
      // Evaluated with every window metric present, what is still missing
      // is a baseline value the expression needs (the stored baseline's
      // content, not the command line: exit 1).
      std::map<std::string, MetricValue, std::less<>> probe;
      for (const std::string& m : e.Metrics()) probe[m] = MetricValue{1, true, "probe"};
      for (const auto& [k, v] : baseline->values) probe[k] = MetricValue{v, true, baseline->label};
      EvalResult r = e.Evaluate([&](std::string_view n) -> const MetricValue* {
        auto it = probe.find(n);
        return it == probe.end() ? nullptr : &it->second;
      });
      if (!r.missing_metrics.empty()) {
        return ErrStatus("--alert \"" + text + "\": " + baseline->label + " has no value for " +
                         r.missing_metrics.begin()->substr(9) +
                         " (a baseline of steps gives step_time_p50/p99/max, one of requests p50/p90/p99/max/mean_latency)");
      }
    }
    out.push_back(AlertRule{text, std::move(e)});
  }
  return out;
}

AlertOutcome EvaluateAlert(const AlertRule& rule, const WindowStats& stats, const MonitorBaseline* baseline) {
  const auto values = MonitorMetricValues(stats);
  MetricValue holder;
  AlertOutcome out;
  out.result = rule.expression.Evaluate([&](std::string_view name) -> const MetricValue* {
    auto it = values.find(name);
    if (it != values.end()) return &it->second;
    if (baseline) {
      auto b = baseline->values.find(name);
      if (b != baseline->values.end()) {
        holder = MetricValue{b->second, true, baseline->label};
        return &holder;
      }
    }
    return nullptr;
  });
  out.holds = out.result.truth == Truth::kTrue;
  return out;
}

}  // namespace aiprof
