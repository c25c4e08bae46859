// Metrics of the attribution tree (its `analyze` section is the report's
// attribution document, src/report/attribution).
#include "src/analysis/attribution/attribution.h"
#include "src/analysis/metrics/metric_set.h"

namespace aiprof {

void PublishAttribution(const AttributionResult& r, MetricSet* m) {
  static constexpr const char* kNames[] = {"attribution_coverage", "untraced_host_ratio", "untraced_host_ns"};
  if (!r.available) {
    for (const char* name : kNames) m->SetUnavailable(name, "attribution: " + r.problem);
    return;
  }
  const double wall = static_cast<double>(r.wall_ns);
  const int64_t untraced = r.by_class_ns[static_cast<size_t>(TimeClass::kUntraced)];
  m->Set("attribution_coverage", r.Coverage(), "attribution");
  m->Set("untraced_host_ratio", wall > 0 ? static_cast<double>(untraced) / wall : 0, "attribution");
  m->Set("untraced_host_ns", r.PerStep(untraced), "attribution");
}

}  // namespace aiprof
