#include "src/monitor/window.h"

#include <algorithm>
#include <cmath>

namespace aiprof {

double NearestRankQuantile(std::vector<double>* values, double q) {
  if (values->empty()) return 0;
  const size_t n = values->size();
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
  rank = std::clamp<size_t>(rank, 1, n);
  std::nth_element(values->begin(), values->begin() + static_cast<std::ptrdiff_t>(rank - 1), values->end());
  return (*values)[rank - 1];
}

void RollingWindow::AddRequest(int64_t end_ns, int64_t latency_ns, bool error) {
  requests_.push_back(Sample{end_ns, latency_ns, error});
}

void RollingWindow::AddStep(int64_t end_ns, int64_t duration_ns) { steps_.push_back(Sample{end_ns, duration_ns, false}); }

void RollingWindow::AddCounter(const std::string& name, int64_t ts_ns, double value) {
  counters_[name] = CounterPoint{ts_ns, value};
}

void RollingWindow::Advance(int64_t now_ns) {
  const int64_t from = now_ns - window_ns_;
  // Records arrive in index order, which is end order up to the few
  // nanoseconds between a clock read and the index taken: the front is oldest.
  while (!requests_.empty() && requests_.front().end_ns < from) requests_.pop_front();
  while (!steps_.empty() && steps_.front().end_ns < from) steps_.pop_front();
  for (auto it = counters_.begin(); it != counters_.end();) {
    it = it->second.ts_ns < from ? counters_.erase(it) : std::next(it);
  }
}

WindowStats RollingWindow::Stats(int64_t now_ns) const {
  WindowStats s;
  s.now_ns = now_ns;
  s.window_ns = window_ns_;
  s.covered_ns = std::max<int64_t>(0, std::min(window_ns_, now_ns - start_ns_));
  const double covered_s = static_cast<double>(s.covered_ns) / 1e9;
  std::vector<double> v;
  v.reserve(requests_.size());
  double sum = 0;
  for (const Sample& r : requests_) {
    v.push_back(static_cast<double>(r.value_ns));
    sum += static_cast<double>(r.value_ns);
    s.errors += r.error ? 1 : 0;
  }
  s.requests = requests_.size();
  if (covered_s > 0) s.throughput_per_s = static_cast<double>(s.requests) / covered_s;
  if (!v.empty()) {
    s.mean_ns = sum / static_cast<double>(v.size());
    s.max_ns = *std::max_element(v.begin(), v.end());
    s.p50_ns = NearestRankQuantile(&v, 0.50);
    s.p90_ns = NearestRankQuantile(&v, 0.90);
    s.p99_ns = NearestRankQuantile(&v, 0.99);
  }
  v.clear();
  for (const Sample& st : steps_) v.push_back(static_cast<double>(st.value_ns));
  s.steps = steps_.size();
  if (covered_s > 0) s.step_rate_per_s = static_cast<double>(s.steps) / covered_s;
  if (!v.empty()) {
    s.step_max_ns = *std::max_element(v.begin(), v.end());
    s.step_p50_ns = NearestRankQuantile(&v, 0.50);
    s.step_p99_ns = NearestRankQuantile(&v, 0.99);
  }
  for (const auto& [name, point] : counters_) s.counters[name] = point.value;
  return s;
}

}  // namespace aiprof
