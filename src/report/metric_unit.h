// The unit the renderers format a metric's value in, from the metric's
// declared unit (src/analysis/metrics/): one mapping for every report that
// shows metrics (analyze, diagnosis evidence).
#ifndef AIPROF_SRC_REPORT_METRIC_UNIT_H_
#define AIPROF_SRC_REPORT_METRIC_UNIT_H_

#include "src/analysis/metrics/metric_set.h"
#include "src/render/document.h"

namespace aiprof {

inline render::Unit MetricDisplayUnit(const MetricInfo* info) {
  using render::Unit;
  switch (info ? info->unit : MetricUnit::kNumber) {
    case MetricUnit::kRatio: return Unit::kFraction;
    case MetricUnit::kCount: return Unit::kCount;
    case MetricUnit::kNanoseconds: return Unit::kNs;
    case MetricUnit::kBytes: return Unit::kBytes;
    case MetricUnit::kBytesPerSecond: return Unit::kBytesPerSecond;
    case MetricUnit::kFlopsPerSecond: return Unit::kFlopsPerSecond;
    case MetricUnit::kPerSecond: return Unit::kPerSecond;
    case MetricUnit::kNumber: return Unit::kNone;
  }
  return Unit::kNone;
}

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_METRIC_UNIT_H_
