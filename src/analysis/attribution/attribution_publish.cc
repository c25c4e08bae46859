// Metrics, consumers and the `analyze` section of the attribution tree.
#include <algorithm>

#include "src/analysis/attribution/attribution.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/metrics/metric_set.h"

namespace aiprof {
namespace {

// Lines of the tree printed by DescribeAttribution: depth and size limits.
constexpr size_t kDescribeMaxDepth = 7;
constexpr double kDescribeMinShare = 0.01;  // of the step's wall time (or of the device time)
constexpr size_t kDescribeMaxLines = 80;

std::string Ns(double ns) { return FormatDurationNs(ns); }

// Children of every node, largest total first (CSR: begin[n]..begin[n+1] in `kids`).
struct Children {
  std::vector<uint32_t> begin, kids;
  explicit Children(const AttributionNodes& n) : begin(n.size() + 1, 0), kids(n.size() > 0 ? n.size() - 1 : 0) {
    for (size_t i = 1; i < n.size(); ++i) ++begin[n.parent[i] + 1];
    for (size_t i = 0; i < n.size(); ++i) begin[i + 1] += begin[i];
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (size_t i = 1; i < n.size(); ++i) kids[fill[n.parent[i]]++] = static_cast<uint32_t>(i);
    for (size_t i = 0; i < n.size(); ++i) {
      std::sort(kids.begin() + begin[i], kids.begin() + begin[i + 1], [&](uint32_t a, uint32_t b) {
        int64_t ka = std::max(n.total_ns[a], n.device_total_ns[a]), kb = std::max(n.total_ns[b], n.device_total_ns[b]);
        return ka != kb ? ka > kb : a < b;
      });
    }
  }
};

}  // namespace

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

std::vector<std::string> DescribeAttribution(const Trace& trace, const AttributionResult& r) {
  if (!r.available) return {"not available: " + r.problem};
  std::vector<std::string> out;
  const AttributionNodes& n = r.nodes;
  const double wall = r.PerStep(r.wall_ns);
  const AttributionStep* first = nullptr;
  for (const AttributionStep& st : r.per_step) {
    if (st.steady) {
      first = &st;
      break;
    }
  }
  std::string thread = first ? std::string(trace.Str(trace.tracks.name[first->track])) : std::string();
  out.push_back(std::string(r.pseudo_step ? "trace (no steps): main thread span " : "step wall time ") + Ns(wall) +
                (r.pseudo_step ? "" : " (mean of " + std::to_string(r.steps) + " steady-state steps)") +
                " on the critical thread" + (thread.empty() ? "" : " " + thread) + "; coverage " +
                FormatPercent(r.Coverage()) + " (every ns assigned once)");
  std::string classes = "by class (per step):";
  for (size_t c = 0; c < kTimeClassCount; ++c) {
    if (r.by_class_ns[c] == 0) continue;
    classes += std::string(" ") + TimeClassName(static_cast<TimeClass>(c)) + " " + Ns(r.PerStep(r.by_class_ns[c])) +
               " (" + FormatPercent(static_cast<double>(r.by_class_ns[c]) / static_cast<double>(r.wall_ns)) + ");";
  }
  out.push_back(classes);
  if (r.device_ns > 0 || r.unlinked_device_ns > 0) {
    out.push_back("device activity launched from the tree " + Ns(r.PerStep(r.device_ns)) + " per step; not joined to a host op " +
                  Ns(r.PerStep(r.unlinked_device_ns)));
  }
  out.push_back("tree (total / self host time per step, device time, instances per step):");
  Children ch(n);
  const double device_total = static_cast<double>(std::max<int64_t>(n.device_total_ns[0], 1));
  struct Item {
    uint32_t node;
    size_t depth;
  };
  std::vector<Item> todo = {{0, 0}};
  size_t hidden = 0;
  while (!todo.empty()) {
    Item it = todo.back();
    todo.pop_back();
    if (out.size() >= kDescribeMaxLines) {
      ++hidden;
      continue;
    }
    const uint32_t x = it.node;
    std::string line(2 * it.depth + 2, ' ');
    line += "[" + std::string(AttributionKindName(n.kind[x])) + "] " + NodeLabel(trace, r, x) + ": ";
    if (n.kind[x] == AttributionKind::kDevice) {
      line += "device " + Ns(r.PerStep(n.device_total_ns[x]));
    } else {
      line += Ns(r.PerStep(n.total_ns[x])) + " (" +
              FormatPercent(static_cast<double>(n.total_ns[x]) / static_cast<double>(r.wall_ns)) + "), self " +
              Ns(r.PerStep(n.self_ns[x]));
      if (n.device_total_ns[x] > 0) line += ", device " + Ns(r.PerStep(n.device_total_ns[x]));
    }
    if (x != 0) line += ", x" + FormatFixed(r.PerStep(static_cast<int64_t>(n.count[x])), 1);
    if (n.kind[x] == AttributionKind::kOp && n.op_class[x] != OpClass::kOther) {
      line += std::string(" [") + OpClassName(n.op_class[x]) + "]";
    }
    out.push_back(std::move(line));
    if (it.depth + 1 >= kDescribeMaxDepth) continue;
    for (size_t k = ch.begin[x + 1]; k-- > ch.begin[x];) {
      uint32_t c = ch.kids[k];
      bool big = static_cast<double>(n.total_ns[c]) >= kDescribeMinShare * static_cast<double>(r.wall_ns) ||
                 static_cast<double>(n.device_total_ns[c]) >= kDescribeMinShare * device_total;
      if (big && (n.total_ns[c] > 0 || n.device_total_ns[c] > 0)) todo.push_back({c, it.depth + 1});
    }
  }
  if (hidden > 0) out.push_back("  ... " + std::to_string(hidden) + " more nodes above 1% (see --format json)");
  return out;
}

}  // namespace aiprof
