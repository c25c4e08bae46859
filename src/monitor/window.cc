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

DurationWindow::DurationWindow(int64_t window_ns, size_t exact_limit)
    : window_ns_(window_ns), part_ns_(std::max<int64_t>(1, window_ns / kWindowParts)), exact_limit_(exact_limit) {}

void DurationWindow::Add(int64_t end_ns, int64_t value_ns, bool error) {
  if (exact_.size() < exact_limit_) {
    exact_.push_back(Sample{end_ns, value_ns, error});
  } else {
    incomplete_until_ns_ = std::max(incomplete_until_ns_, end_ns);
  }
  const int64_t start = end_ns - ((end_ns % part_ns_) + part_ns_) % part_ns_;
  if (parts_.empty() || parts_.back().start_ns < start) {
    parts_.emplace_back();
    parts_.back().start_ns = start;
  }
  // Records arrive in index order, which is end order up to the few
  // nanoseconds between a clock read and the index taken: a record of an
  // older part goes to the newest one.
  Part& p = parts_.back();
  p.sketch.Add(value_ns);
  p.errors += error ? 1 : 0;
  p.sum += static_cast<double>(value_ns);
  p.max = std::max(p.max, static_cast<double>(value_ns));
}

void DurationWindow::Advance(int64_t now_ns) {
  const int64_t from = now_ns - window_ns_;
  while (!exact_.empty() && exact_.front().end_ns < from) exact_.pop_front();
  // A part leaves once it lies wholly before the window.
  while (!parts_.empty() && parts_.front().start_ns + part_ns_ <= from) parts_.pop_front();
}

DurationWindow::Summary DurationWindow::Summarize(int64_t now_ns) const {
  Summary s;
  if (ExactValid(now_ns)) {
    std::vector<double> v;
    v.reserve(exact_.size());
    double sum = 0;
    for (const Sample& r : exact_) {
      v.push_back(static_cast<double>(r.value_ns));
      sum += static_cast<double>(r.value_ns);
      s.errors += r.error ? 1 : 0;
    }
    s.count = v.size();
    if (!v.empty()) {
      s.mean = sum / static_cast<double>(v.size());
      s.max = *std::max_element(v.begin(), v.end());
      s.p50 = NearestRankQuantile(&v, 0.50);
      s.p90 = NearestRankQuantile(&v, 0.90);
      s.p99 = NearestRankQuantile(&v, 0.99);
    }
    return s;
  }
  s.exact = false;
  DurationSketch merged;
  double sum = 0;
  for (const Part& p : parts_) {
    merged.Merge(p.sketch);
    s.errors += p.errors;
    sum += p.sum;
    s.max = std::max(s.max, p.max);
  }
  s.count = merged.count();
  if (s.count > 0) {
    s.mean = sum / static_cast<double>(s.count);
    s.p50 = merged.Quantile(0.50);
    s.p90 = merged.Quantile(0.90);
    s.p99 = merged.Quantile(0.99);
  }
  return s;
}

void RollingWindow::AddCounter(const std::string& name, int64_t ts_ns, double value) {
  counters_[name] = CounterPoint{Clamp(ts_ns), value};
}

void RollingWindow::Advance(int64_t now_ns) {
  const int64_t from = now_ns - window_ns_;
  requests_.Advance(now_ns);
  steps_.Advance(now_ns);
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
  const DurationWindow::Summary r = requests_.Summarize(now_ns);
  s.requests = r.count;
  s.errors = r.errors;
  s.p50_ns = r.p50;
  s.p90_ns = r.p90;
  s.p99_ns = r.p99;
  s.max_ns = r.max;
  s.mean_ns = r.mean;
  const DurationWindow::Summary st = steps_.Summarize(now_ns);
  s.steps = st.count;
  s.step_p50_ns = st.p50;
  s.step_p99_ns = st.p99;
  s.step_max_ns = st.max;
  s.quantiles_exact = r.exact && st.exact;
  if (covered_s > 0) {
    s.throughput_per_s = static_cast<double>(s.requests) / covered_s;
    s.step_rate_per_s = static_cast<double>(s.steps) / covered_s;
  }
  for (const auto& [name, point] : counters_) s.counters[name] = point.value;
  return s;
}

std::string RollingWindow::RequestsCsv(int64_t now_ns, bool* complete) const {
  std::string out = "end_monotonic_ns,latency_ns,error\n";
  requests_.ForEachSample(
      [&](int64_t end_ns, int64_t value_ns, bool error) {
        out += std::to_string(end_ns) + "," + std::to_string(value_ns) + (error ? ",1\n" : ",0\n");
      },
      complete, now_ns);
  return out;
}

}  // namespace aiprof
