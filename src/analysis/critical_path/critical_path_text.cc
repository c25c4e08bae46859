// PublishCriticalPath: the path's figures per steady step (its `analyze`
// section is src/report/analysis/analysis_sections.cc).
#include <algorithm>

#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/metrics/metric_set.h"

namespace aiprof {
namespace {

constexpr char kCriticalPathSource[] = "critical_path";

int64_t ClassNs(const std::array<int64_t, kPathClassCount>& a, PathClass c) { return a[static_cast<size_t>(c)]; }

int64_t HostNs(const std::array<int64_t, kPathClassCount>& a) {
  return ClassNs(a, PathClass::kHostOp) + ClassNs(a, PathClass::kRuntime) + ClassNs(a, PathClass::kSync);
}
int64_t IdleNs(const std::array<int64_t, kPathClassCount>& a) {
  int64_t sum = 0;
  for (size_t c = 0; c < kPathClassCount; ++c) sum += IsIdleClass(static_cast<PathClass>(c)) ? a[c] : 0;
  return sum;
}

}  // namespace

void PublishCriticalPath(const CriticalPathResult& r, MetricSet* m) {
  if (r.window_steps == 0 || r.window_path_ns <= 0) {
    for (const char* name : {"critical_path_ns", "critical_path_compute_ns", "critical_path_copy_ns",
                             "critical_path_collective_ns", "critical_path_host_ns", "critical_path_idle_ns"}) {
      m->SetUnavailable(name, "no step (or trace window) with activity to walk");
    }
    return;
  }
  const double per = static_cast<double>(r.window_steps);
  const auto& a = r.window_by_class_ns;
  m->Set("critical_path_ns", static_cast<double>(r.window_path_ns) / per, kCriticalPathSource);
  m->Set("critical_path_compute_ns", static_cast<double>(ClassNs(a, PathClass::kCompute)) / per, kCriticalPathSource);
  m->Set("critical_path_copy_ns", static_cast<double>(ClassNs(a, PathClass::kCopy)) / per, kCriticalPathSource);
  m->Set("critical_path_collective_ns", static_cast<double>(ClassNs(a, PathClass::kCollective)) / per,
         kCriticalPathSource);
  m->Set("critical_path_host_ns", static_cast<double>(HostNs(a)) / per, kCriticalPathSource);
  m->Set("critical_path_idle_ns", static_cast<double>(IdleNs(a)) / per, kCriticalPathSource);
  const double copies = static_cast<double>(ClassNs(r.window_device_total_ns, PathClass::kCopy));
  if (copies > 0) {
    // On one base: the steps' own copies, on the path or not.
    m->Set("critical_path_copy_hidden_ratio",
           std::max(0.0, copies - static_cast<double>(ClassNs(r.window_own_on_path_ns, PathClass::kCopy))) / copies,
           kCriticalPathSource);
  } else {
    m->SetUnavailable("critical_path_copy_hidden_ratio", "no device copies in the steps");
  }
}

}  // namespace aiprof
