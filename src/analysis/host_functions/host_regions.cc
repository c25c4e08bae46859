#include "src/analysis/host_functions/host_regions.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"

namespace aiprof {
namespace {

constexpr char kHostRegionsSource[] = "host_regions";

// Per node: a region (region[i]) inside a region of its own name (a
// decorated function calling itself, one label at two levels). One
// depth-first walk with a count per name of the regions open on the path:
// linear in nodes, whatever the depth.
std::vector<uint8_t> InsideSameName(const AttributionNodes& n, const std::vector<uint8_t>& region, size_t names) {
  std::vector<uint32_t> first(n.size(), kNoNode), next(n.size(), kNoNode);
  for (size_t i = n.size(); i-- > 1;) {
    next[i] = first[n.parent[i]];
    first[n.parent[i]] = static_cast<uint32_t>(i);
  }
  std::vector<uint8_t> inside(n.size(), 0);
  std::vector<uint32_t> open(names, 0);
  std::vector<std::pair<uint32_t, bool>> stack{{0, false}};  // (node, children done)
  while (!stack.empty()) {
    const auto [i, done] = stack.back();
    stack.pop_back();
    if (done) {
      if (region[i]) --open[n.name[i].raw];
      continue;
    }
    if (region[i]) inside[i] = open[n.name[i].raw]++ > 0;
    stack.emplace_back(i, true);
    for (uint32_t c = first[i]; c != kNoNode; c = next[c]) stack.emplace_back(c, false);
  }
  return inside;
}

// Per string: 1 for the names of the slices around a step's own marker on
// its thread (a label around the whole loop, profiler.step() inside it).
// Each slice's enclosing chain is walked once (a slice seen ends the walk).
std::vector<uint8_t> NamesAroundSteps(const Trace& trace, const AttributionResult& a) {
  std::vector<uint8_t> around(trace.strings.size(), 0);
  if (a.pseudo_step || a.per_step.empty()) return around;
  const SliceTable& s = trace.slices;
  const std::vector<uint32_t> parent = ParentSlices(trace);
  std::vector<uint8_t> seen(s.size(), 0);
  for (const AttributionStep& st : a.per_step) {
    // The marker: on the step's track, starting at its start, of its name
    // (slices are in (track, start) order).
    auto at = [&](uint32_t i) { return std::make_pair(static_cast<uint32_t>(s.track[i]), s.ts_ns[i]); };
    uint32_t lo = 0, hi = static_cast<uint32_t>(s.size());
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (at(mid) < std::make_pair(st.track, st.start_ns))
        lo = mid + 1;
      else
        hi = mid;
    }
    for (uint32_t i = lo; i < s.size() && at(i) == std::make_pair(st.track, st.start_ns); ++i) {
      if (s.name[i] != st.name) continue;
      for (uint32_t p = parent[i]; p != kNoSlice && !seen[p]; p = parent[p]) {
        seen[p] = 1;
        around[s.name[p].raw] = 1;
      }
      break;
    }
  }
  return around;
}

// "[other thread 7]" (NodeLabel of a thread node) -> "other thread 7".
std::string Unbracketed(const std::string& label) {
  return label.size() >= 2 && label.front() == '[' && label.back() == ']' ? label.substr(1, label.size() - 2) : label;
}

}  // namespace

HostRegionsResult ComputeHostRegions(const Trace& trace, const AttributionResult& a) {
  HostRegionsResult out;
  bool ops = false;
  for (size_t i = 0; i < trace.slices.size(); ++i) {
    out.device = out.device || IsDeviceActivity(trace.slices.kind[i]);
    ops = ops || trace.slices.kind[i] == EventKind::kCpuOp;
  }
  if (out.device) return out;
  out.no_ops = !ops;
  if (out.no_ops || !a.available || a.steps == 0 || a.wall_ns <= 0) return out;
  const AttributionNodes& n = a.nodes;
  // Op instances under each node (at any depth): children follow parents.
  std::vector<uint64_t> ops_under(n.size(), 0);
  for (size_t i = n.size(); i-- > 1;) {
    if (n.kind[i] == AttributionKind::kOp) ops_under[i] += n.count[i];
    if (n.parent[i] != kNoNode) ops_under[n.parent[i]] += ops_under[i];
  }
  out.available = true;
  out.step_ns = a.PerStep(a.wall_ns);
  // A label around the steps (its node at the top of the tree, or under
  // another such label) holds whole steps, not a piece of one: its time
  // without ops is the steps' untraced time, no region's work.
  const std::vector<uint8_t> around = NamesAroundSteps(trace, a);
  std::vector<uint8_t> holds_steps(n.size(), 0);
  std::vector<uint8_t> region(n.size(), 0);
  for (size_t i = 1; i < n.size(); ++i) {
    holds_steps[i] = n.kind[i] == AttributionKind::kModule && around[n.name[i].raw] &&
                     (n.parent[i] == 0 || holds_steps[n.parent[i]]);
    region[i] = n.kind[i] == AttributionKind::kModule && n.time_class[i] != TimeClass::kDataLoading &&
                n.time_class[i] != TimeClass::kCommunication && !holds_steps[i] &&
                !trace.Str(n.name[i]).starts_with("nn.Module: ");
  }
  // A region inside one of its own name adds its own time and instances;
  // its total and ops are in the outer one's already.
  const std::vector<uint8_t> inside = InsideSameName(n, region, trace.strings.size());
  // Each node's thread node (children follow parents): kNoNode on the step's thread.
  std::vector<uint32_t> thread_node(n.size(), kNoNode);
  for (size_t i = 1; i < n.size(); ++i) {
    thread_node[i] = n.kind[i] == AttributionKind::kThread ? static_cast<uint32_t>(i) : thread_node[n.parent[i]];
  }
  std::unordered_map<uint32_t, size_t> by_name;  // name id -> index in out.regions
  for (size_t i = 1; i < n.size(); ++i) {
    if (!region[i]) continue;
    auto [it, added] = by_name.emplace(n.name[i].raw, out.regions.size());
    if (added) out.regions.emplace_back().name = n.name[i];
    HostRegion& r = out.regions[it->second];
    if (r.other_thread.empty() && thread_node[i] != kNoNode) r.other_thread = NodeLabel(trace, a, thread_node[i]);
    r.instances_per_step += a.PerStep(static_cast<int64_t>(n.count[i]));
    r.host_ns_per_step += a.PerStep(n.self_ns[i]);
    if (inside[i]) continue;
    r.total_ns_per_step += a.PerStep(n.total_ns[i]);
    r.ops_per_step += a.PerStep(static_cast<int64_t>(ops_under[i]));
  }
  for (HostRegion& r : out.regions) {
    r.host_work = r.host_ns_per_step > 0 && r.host_ns_per_step >= kHostRegionMinHostShare * r.total_ns_per_step;
  }
  std::sort(out.regions.begin(), out.regions.end(), [&](const HostRegion& x, const HostRegion& y) {
    if (x.host_ns_per_step != y.host_ns_per_step) return x.host_ns_per_step > y.host_ns_per_step;
    return trace.Str(x.name) < trace.Str(y.name);
  });
  return out;
}

void PublishHostRegions(const Trace& trace, const HostRegionsResult& r, const AnalysisWindow& w, MetricSet* m) {
  // A trace with device activity publishes nothing: the host_region rule
  // applies only where the metric is computed (applies_if_computed), as its
  // time costs a device trace's step only where the device waits for it,
  // which host_launch_bound and data_loading measure. Nor does a trace
  // without ops: there every span runs "no op".
  if (r.device || r.no_ops) return;
  if (!r.available) {
    const char* why = "no attribution tree (no steps and no host thread with ops)";
    m->SetUnavailable("host_region_ratio", why);
    m->SetUnavailable("host_region_ns", why);
    return;
  }
  // The largest host work (regions are sorted by host time).
  auto it = std::find_if(r.regions.begin(), r.regions.end(), [](const HostRegion& g) { return g.host_work; });
  const HostRegion* top = it == r.regions.end() ? nullptr : &*it;
  // The share of the impact's own base: per step the same mean step as the
  // tree's; per trace the window's steady-state time, not the tree's
  // pseudo-step (the main thread's span), which may be a part of it.
  const bool per_trace = w.steps == 0 && w.base_ns > 0;
  const double base_ns = per_trace ? w.base_ns : r.step_ns;
  m->Set("host_region_ratio", top && base_ns > 0 ? top->host_ns_per_step / base_ns : 0, kHostRegionsSource);
  m->Set("host_region_ns", top ? top->host_ns_per_step : 0, kHostRegionsSource);
  size_t reported = 0;
  for (const HostRegion& g : r.regions) {
    if (!g.host_work) continue;
    if (reported++ == kHostRegionsReported) break;
    m->AddEvidence("host_region",
                   "\"" + std::string(trace.Str(g.name)) + "\": " + FormatDurationNs(g.host_ns_per_step) +
                       (per_trace ? " per trace" : " per step") + " with no op running in it (" +
                       FormatPercent(base_ns > 0 ? g.host_ns_per_step / base_ns : 0) +
                       (per_trace ? " of the steady-state time, " : " of the mean step, ") + FormatDurationNs(base_ns) +
                       "), of " + FormatDurationNs(g.total_ns_per_step) + " per step in it; " +
                       FormatFixed(g.instances_per_step, 1) + " instances and " + FormatFixed(g.ops_per_step, 1) +
                       " ops per step" +
                       (g.other_thread.empty() ? std::string()
                                               : "; runs on " + Unbracketed(g.other_thread) +
                                                     ", counted only while the step's thread recorded nothing (waiting "
                                                     "for it, or untraced code beside it)"));
  }
}

}  // namespace aiprof
