// PublishCriticalPath and DescribeCriticalPath: the path's figures per
// steady step, and the lines of `aiprof analyze --only critical_path`.
#include <algorithm>
#include <unordered_map>

#include "src/analysis/common/text_format.h"
#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/metrics/metric_set.h"

namespace aiprof {
namespace {

constexpr char kSource[] = "critical_path";
// Steps described one by one; the slices named as the largest on-path consumers.
constexpr size_t kStepsDescribed = 8;
constexpr size_t kTopSlices = 8;

int64_t ClassNs(const std::array<int64_t, kPathClassCount>& a, PathClass c) { return a[static_cast<size_t>(c)]; }
std::string Ns(double ns) { return FormatDurationNs(ns); }
double Share(double a, double b) { return b > 0 ? a / b : 0; }

int64_t HostNs(const std::array<int64_t, kPathClassCount>& a) {
  return ClassNs(a, PathClass::kHostOp) + ClassNs(a, PathClass::kRuntime) + ClassNs(a, PathClass::kSync);
}
int64_t IdleNs(const std::array<int64_t, kPathClassCount>& a) {
  int64_t sum = 0;
  for (size_t c = 0; c < kPathClassCount; ++c) sum += IsIdleClass(static_cast<PathClass>(c)) ? a[c] : 0;
  return sum;
}

std::string Composition(const std::array<int64_t, kPathClassCount>& a, int64_t total_ns, double per) {
  std::string out;
  for (size_t c = 0; c < kPathClassCount; ++c) {
    if (a[c] == 0) continue;
    out += std::string(out.empty() ? "" : ", ") + PathClassName(static_cast<PathClass>(c)) + " " +
           Ns(static_cast<double>(a[c]) / per) + " (" + FormatPercent(Share(static_cast<double>(a[c]), static_cast<double>(total_ns))) + ")";
  }
  return out.empty() ? "empty" : out;
}

std::string OnPathLine(const char* what, const CriticalPathResult& r, PathClass c, double per) {
  const double on = static_cast<double>(ClassNs(r.window_by_class_ns, c));
  const double total = static_cast<double>(ClassNs(r.window_device_total_ns, c));
  if (total <= 0) return {};
  const double hidden = std::max(0.0, total - on);
  return std::string(what) + ": " + Ns(total / per) + " of device time per step, " + Ns(on / per) +
         " on the critical path (" + FormatPercent(Share(on, total)) + "); " + Ns(hidden / per) +
         " hidden under other work (not a bottleneck)";
}

std::vector<std::string> TopSlices(const Trace& trace, const CriticalPathResult& r, double per) {
  std::unordered_map<uint32_t, std::pair<int64_t, PathClass>> by_name;
  for (const StepPath& p : r.steps) {
    if (r.window_steps > 0 && !p.steady && r.window_steps != r.steps.size()) continue;
    for (size_t k = p.first_segment; k < p.first_segment + p.segment_count; ++k) {
      const PathSegment& seg = r.segments[k];
      if (seg.slice == kNoSlice || IsIdleClass(seg.cls)) continue;
      auto& e = by_name[trace.slices.name[seg.slice].raw];
      e.first += seg.end_ns - seg.start_ns;
      e.second = seg.cls;
    }
  }
  std::vector<std::pair<uint32_t, std::pair<int64_t, PathClass>>> v(by_name.begin(), by_name.end());
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second.first != b.second.first ? a.second.first > b.second.first : a.first < b.first;
  });
  std::vector<std::string> out;
  for (size_t k = 0; k < std::min(kTopSlices, v.size()); ++k) {
    out.push_back("  " + std::string(trace.Str(StringId{v[k].first})) + " [" + PathClassName(v[k].second.second) +
                  "]: " + Ns(static_cast<double>(v[k].second.first) / per) + " per step on the path");
  }
  return out;
}

std::string DescribeStep(const Trace& trace, const StepPath& p) {
  std::string who = p.number >= 0 ? "step " + std::to_string(p.number) : std::string("trace");
  if (p.rank != kNoRank) who = "rank " + std::to_string(p.rank) + " " + who;
  std::string line = who + (p.steady ? "" : " (warm-up)") + ": path " + Ns(static_cast<double>(p.length_ns())) +
                     " (host span " + Ns(static_cast<double>(p.step_dur_ns)) + "): " +
                     Composition(p.by_class_ns, p.length_ns(), 1.0);
  if (p.waited_rank != kNoRank) {
    const SliceTable& s = trace.slices;
    line += "; waited for rank " + std::to_string(p.waited_rank) + ", late by " +
            Ns(static_cast<double>(p.waited_late_ns)) + " at " + std::string(trace.Str(s.name[p.waited_collective]));
    if (p.waited_cause != kNoSlice) line += " after " + std::string(trace.Str(s.name[p.waited_cause]));
  }
  if (p.truncated) line += " [walk truncated]";
  return line;
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
  m->Set("critical_path_ns", static_cast<double>(r.window_path_ns) / per, kSource);
  m->Set("critical_path_compute_ns", static_cast<double>(ClassNs(a, PathClass::kCompute)) / per, kSource);
  m->Set("critical_path_copy_ns", static_cast<double>(ClassNs(a, PathClass::kCopy)) / per, kSource);
  m->Set("critical_path_collective_ns", static_cast<double>(ClassNs(a, PathClass::kCollective)) / per, kSource);
  m->Set("critical_path_host_ns", static_cast<double>(HostNs(a)) / per, kSource);
  m->Set("critical_path_idle_ns", static_cast<double>(IdleNs(a)) / per, kSource);
  const double copies = static_cast<double>(ClassNs(r.window_device_total_ns, PathClass::kCopy));
  if (copies > 0) {
    m->Set("critical_path_copy_hidden_ratio",
           std::max(0.0, copies - static_cast<double>(ClassNs(a, PathClass::kCopy))) / copies, kSource);
  } else {
    m->SetUnavailable("critical_path_copy_hidden_ratio", "no device copies in the steps");
  }
}

std::vector<std::string> DescribeCriticalPath(const Trace& trace, const CriticalPathResult& r) {
  if (r.steps.empty()) return {"no steps or activity to walk"};
  const DependencyGraph& g = r.graph;
  std::string edges = "dependency graph: edges";
  for (size_t k = 1; k < kDepKindCount; ++k) {
    edges += std::string(" ") + DepKindName(static_cast<DepKind>(k)) + " " + std::to_string(g.edges[k]);
  }
  if (!g.cross_rank) edges += "; collectives not joined across ranks (one rank, or clocks that disagree)";
  std::vector<std::string> out = {edges};
  const double per = std::max<double>(1.0, static_cast<double>(r.window_steps));
  out.push_back("critical path per steady step (its makespan: step start to the end of the last work it "
                "launched), mean of " + std::to_string(r.window_steps) + " step(s): " +
                Ns(static_cast<double>(r.window_path_ns) / per));
  out.push_back("  composition: " + Composition(r.window_by_class_ns, r.window_path_ns, per));
  for (auto [what, c] : {std::pair{"compute", PathClass::kCompute}, std::pair{"copies", PathClass::kCopy},
                         std::pair{"collectives", PathClass::kCollective}}) {
    std::string line = OnPathLine(what, r, c, per);
    if (!line.empty()) out.push_back("  " + line);
  }
  out.push_back("largest on-path consumers (own time, per steady step):");
  for (std::string& line : TopSlices(trace, r, per)) out.push_back(std::move(line));
  for (size_t k = 0; k < std::min(kStepsDescribed, r.steps.size()); ++k) out.push_back(DescribeStep(trace, r.steps[k]));
  if (r.steps.size() > kStepsDescribed) {
    out.push_back("(" + std::to_string(r.steps.size() - kStepsDescribed) + " more steps)");
  }
  return out;
}

}  // namespace aiprof
