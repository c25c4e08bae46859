#include "src/analysis/long_tail/op_tails.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "src/analysis/common/intervals.h"
#include "src/analysis/common/op_args.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/summary/summary.h"
#include "src/analysis/window/analysis_window.h"
#include "src/base/ascii.h"

namespace aiprof {
namespace {

constexpr char kLongTailSource[] = "long_tail";

// Marks each op's tail instances that hold another op's tail instance
// (an ancestor of a tail slice on the host timeline): the evidence names the
// innermost slow op of a nesting chain once, not every wrapper around it.
void CountWrappingTails(const Trace& trace, const std::vector<uint32_t>& parent,
                        const std::vector<std::pair<size_t, uint32_t>>& tail_slices, std::vector<OpTail>* ops) {
  if (parent.empty()) return;  // device activity: kernels do not nest
  std::vector<uint8_t> wraps(trace.slices.size(), 0);
  for (const auto& [op, slice] : tail_slices) {
    for (uint32_t p = parent[slice]; p != kNoSlice && !wraps[p]; p = parent[p]) wraps[p] = 1;
  }
  for (const auto& [op, slice] : tail_slices) {
    if (wraps[slice]) ++(*ops)[op].wrapping_tail_count;
  }
}

}  // namespace

bool IsCollectiveKernelName(std::string_view name) {
  auto has = [&](std::string_view k) { return ContainsIgnoreCase(name, k); };

  return has("nccl") || has("hccl") || has("hcom_") || has("rccl");
}

LongTailResult ComputeLongTails(const Trace& trace, const AnalysisWindow* window) {
  LongTailResult r;
  const SliceTable& s = trace.slices;
  for (size_t i = 0; i < s.size() && !r.device; ++i) r.device = IsDeviceActivity(s.kind[i]);
  std::vector<uint32_t> parent;
  if (!r.device) parent = ParentSlices(trace);
  std::optional<CoveredTime> in_window;
  if (window) in_window.emplace(r.device ? window->DeviceIntervals() : window->intervals);
  r.on_device_periods = r.device && window && window->device_behind();
  struct Row {
    uint32_t slice, name, shape_a, shape_b, shape_c;
    int64_t dur;
    bool steady, top;
    bool Same(const Row& o) const {
      return name == o.name && shape_a == o.shape_a && shape_b == o.shape_b && shape_c == o.shape_c;
    }
    bool operator<(const Row& o) const {
      return std::tie(name, shape_a, shape_b, shape_c, dur) < std::tie(o.name, o.shape_a, o.shape_b, o.shape_c, o.dur);
    }
  };
  // The shape keys: a kernel's launch configuration, an op's input sizes,
  // each arg text on one line (white space aside, as attribution's shapes)
  // and numbered once per distinct text (0 when absent).
  const std::optional<StringId> key_a = trace.strings.Find(r.device ? "grid" : "Input Dims");
  const std::optional<StringId> key_b = r.device ? trace.strings.Find("block") : std::nullopt;
  // A kernel's launching op's Input Dims too: cuDNN's batch-norm kernels
  // take the channel count as their grid, so one grid covers layers of
  // every spatial size (ResNet50: 47 us to 681 us under grid [256, 1, 1]).
  const std::optional<StringId> key_c = r.device ? trace.strings.Find("Input Dims") : std::nullopt;
  std::vector<uint32_t> launch_call, launch_op, host_parent;
  if (key_c) {
    launch_call = OpLaunchingCalls(trace);
    launch_op = LaunchingOps(trace);
    host_parent = ParentSlices(trace);
  }
  // The innermost framework op around the launching call, else the op the
  // activity links to directly (torch_npu).
  auto launching_op = [&](uint32_t i) {
    for (uint32_t p = launch_call[i]; p != kNoSlice; p = host_parent[p]) {
      if (s.kind[p] == EventKind::kCpuOp) return p;
    }
    return launch_op[i];
  };
  r.shape_labels.assign(1, "");
  std::vector<uint32_t> label_of_text;  // per arg text's StringId: label index + 1, 0 not yet
  std::unordered_map<std::string, uint32_t> label_index;
  auto shape = [&](uint32_t slice, std::optional<StringId> key) -> uint32_t {
    if (!key) return 0;
    const Arg* a = trace.FindSliceArg(slice, *key);
    if (a == nullptr || (a->type != ArgType::kJson && a->type != ArgType::kString)) return 0;
    if (label_of_text.size() <= a->str) label_of_text.resize(trace.strings.size(), 0);
    uint32_t& slot = label_of_text[a->str];
    if (slot == 0) {
      std::string label = OneLineArgText(trace.Str(StringId{a->str}));
      auto [it, added] = label_index.emplace(std::move(label), static_cast<uint32_t>(r.shape_labels.size()));
      if (added) r.shape_labels.push_back(it->first);
      slot = it->second + 1;
    }
    return slot - 1;
  };
  const std::vector<char> under_op = UnderCpuOp(trace, parent);  // empty on device timelines
  std::vector<Row> rows;
  // IsCollectiveKernelName memoised per string id (0 unknown, 1 no, 2 yes).
  std::vector<uint8_t> collective(r.device ? trace.strings.size() : 0, 0);
  auto is_collective = [&](StringId name) {
    uint8_t& c = collective[name.raw];
    if (c == 0) c = IsCollectiveKernelName(trace.Str(name)) ? 2 : 1;
    return c == 2;
  };
  for (uint32_t i = 0; i < s.size(); ++i) {
    bool take = r.device ? IsDeviceActivity(s.kind[i]) : s.kind[i] == EventKind::kCpuOp;
    if (!take) continue;
    if (r.device && (s.kind[i] == EventKind::kCollective || is_collective(s.name[i]))) {
      ++r.communication_left_out;
      r.communication_left_out_ns += s.dur_ns[i];
      continue;
    }
    const bool top = r.device || !under_op[i];
    bool steady = !in_window || in_window->Within(s.ts_ns[i], s.ts_ns[i] + 1) > 0;
    if (!steady) ++r.outside_window;
    uint32_t shape_c = 0;
    if (key_c) {
      uint32_t op = launching_op(i);
      if (op != kNoSlice) shape_c = shape(op, key_c);
    }
    rows.push_back({i, s.name[i].raw, shape(i, key_a), shape(i, key_b), shape_c, s.dur_ns[i], steady, top});
  }
  std::sort(rows.begin(), rows.end());
  for (const Row& row : rows) {
    if (row.steady) r.op_time_ns += row.dur;
  }
  std::vector<int64_t> durs;
  std::vector<std::pair<size_t, uint32_t>> tail_slices;  // (index in r.ops, slice) of qualifying ops' steady tails
  std::vector<uint32_t> op_tail_slices;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    durs.clear();
    OpTail op;
    op.name = StringId{rows[i].name};
    op.shape_a = rows[i].shape_a;
    op.shape_b = rows[i].shape_b;
    op.shape_c = rows[i].shape_c;
    for (; j < rows.size() && rows[j].Same(rows[i]); ++j) {
      if (rows[j].steady) durs.push_back(rows[j].dur);
      else ++op.warmup_count;
    }
    if (durs.empty()) {  // only warm-up instances: nothing steady to compare with
      i = j;
      continue;
    }
    op.count = durs.size();
    for (int64_t d : durs) op.total_ns += d;
    op.max_ns = durs.back();
    op.p50_ns = QuantileSorted(durs.data(), durs.size(), 0.5);
    op.p90_ns = QuantileSorted(durs.data(), durs.size(), 0.9);
    op.p99_ns = QuantileSorted(durs.data(), durs.size(), 0.99);
    op_tail_slices.clear();
    for (size_t k = i; k < j; ++k) {
      const Row& row = rows[k];
      if (static_cast<double>(row.dur) <= kLongTailFactor * op.p50_ns) continue;
      double excess = static_cast<double>(row.dur) - op.p50_ns;
      if (!row.steady) {
        ++op.warmup_tail_count;
        op.warmup_excess_ns += excess;
        continue;
      }
      ++op.tail_count;
      op_tail_slices.push_back(row.slice);
      op.tail_ns += row.dur;
      op.tail_excess_ns += excess;
      if (row.top) op.top_level_excess_ns += excess;
    }
    op.tail_share = op.total_ns > 0 ? static_cast<double>(op.tail_ns) / static_cast<double>(op.total_ns) : 0;
    op.qualifies = op.count >= kLongTailMinCount && r.op_time_ns > 0 &&
                   static_cast<double>(op.total_ns) >= kLongTailMinTimeShare * static_cast<double>(r.op_time_ns);
    // Only a qualifying op's tail makes its wrappers' slowness its own: an
    // op too rare or too small to be listed explains nothing in the evidence.
    if (op.qualifies) {
      for (uint32_t slice : op_tail_slices) tail_slices.emplace_back(r.ops.size(), slice);
    }
    r.ops.push_back(op);
    i = j;
  }
  CountWrappingTails(trace, parent, tail_slices, &r.ops);
  std::sort(r.ops.begin(), r.ops.end(), [&](const OpTail& a, const OpTail& b) {
    if (a.qualifies != b.qualifies) return a.qualifies;
    if (a.tail_ns != b.tail_ns) return a.tail_ns > b.tail_ns;
    if (a.name != b.name) return trace.Str(a.name) < trace.Str(b.name);
    return std::tie(a.shape_a, a.shape_b, a.shape_c) < std::tie(b.shape_a, b.shape_b, b.shape_c);
  });
  return r;
}

std::string OpTailShape(const Trace& trace, const LongTailResult& r, const OpTail& op) {
  if (op.shape_a == 0 && op.shape_b == 0 && op.shape_c == 0) return "";
  auto text = [&](uint32_t id) {
    return id == 0 || id >= r.shape_labels.size() ? std::string("?") : r.shape_labels[id];
  };
  if (!r.device) return "Input Dims " + text(op.shape_a);
  std::string out = "grid " + text(op.shape_a) + ", block " + text(op.shape_b);
  if (op.shape_c != 0) out += ", op Input Dims " + text(op.shape_c);
  return out;
}

void PublishLongTailImpact(const LongTailResult& r, const AnalysisWindow& window, MetricSet* metrics) {
  bool any = false;
  double excess = 0;
  for (const OpTail& op : r.ops) {
    if (!op.qualifies) continue;
    any = true;
    excess += op.top_level_excess_ns;
  }
  if (!any) {
    metrics->SetUnavailable("long_tail_excess_ns", "no op has at least 5 steady-state instances and 1% of op time");
    return;
  }
  metrics->Set("long_tail_excess_ns", r.device ? window.PerDeviceBase(excess) : window.PerBase(excess),
               kLongTailSource);
}

void PublishLongTails(const Trace& trace, const LongTailResult& r, MetricSet* metrics) {
  double best = -1;
  for (const OpTail& op : r.ops) {
    if (op.qualifies) best = std::max(best, op.tail_share);
  }
  if (best < 0) {
    metrics->SetUnavailable("long_tail_ratio", "no op has at least 5 instances and 1% of op time");
    metrics->SetUnavailable("long_tail_time_ratio", "no op has at least 5 instances and 1% of op time");
    return;
  }
  metrics->Set("long_tail_ratio", best, kLongTailSource);
  // The time the tails cost: what their instances take beyond the median,
  // over all op time. This is the share of time that would vanish if every
  // tail instance ran at its op's median (the impact of a long-tail finding).
  double excess_ns = 0;
  for (const OpTail& op : r.ops) {
    if (op.qualifies) excess_ns += op.tail_excess_ns;
  }
  metrics->Set("long_tail_time_ratio", r.op_time_ns > 0 ? excess_ns / static_cast<double>(r.op_time_ns) : 0,
               kLongTailSource);
  if (r.communication_left_out > 0) {
    metrics->AddEvidence("long_tail", std::to_string(r.communication_left_out) + " collective kernels (" +
                                          FormatDurationNs(static_cast<double>(r.communication_left_out_ns)) +
                                          ") left out: their duration includes waiting for peers (communication wait)");
  }
  for (const OpTail& op : r.ops) {
    if (op.warmup_tail_count == 0) continue;
    const std::string shape = OpTailShape(trace, r, op);
    metrics->AddEvidence("long_tail_warmup",
                         std::string(trace.Str(op.name)) + (shape.empty() ? "" : " [" + shape + "]") + ": " +
                             std::to_string(op.warmup_tail_count) +
                             (r.on_device_periods ? " instance(s) outside the steady steps' device periods "
                                                    "(warm-up, or the queue the trace starts with)"
                                                  : " instance(s) outside the steady steps' spans (warm-up, "
                                                    "between steps, or running past its step)") +
                             " beyond 3x the steady median (" + FormatDurationNs(op.p50_ns) + "), " +
                             FormatDurationNs(op.warmup_excess_ns) + " excess; counted apart");
  }
  size_t reported = 0;
  for (size_t i = 0; i < r.ops.size() && reported < kLongTailReported; ++i) {
    const OpTail& op = r.ops[i];
    if (!op.qualifies || op.tail_count == 0) break;
    // Every slow instance is slow because of a slow op inside it, which is
    // listed on its own: one line per nesting chain, the innermost op.
    if (op.wrapping_tail_count == op.tail_count) continue;
    ++reported;
    const std::string shape = OpTailShape(trace, r, op);
    metrics->AddEvidence("long_tail", std::string(trace.Str(op.name)) + (shape.empty() ? "" : " [" + shape + "]") +
                                          ": " + std::to_string(op.tail_count) + " of " + std::to_string(op.count) +
                                          " instances beyond 3x median (p50 " + FormatDurationNs(op.p50_ns) + ", p99 " +
                                          FormatDurationNs(op.p99_ns) + ", max " +
                                          FormatDurationNs(static_cast<double>(op.max_ns)) + ") hold " +
                                          FormatPercent(op.tail_share) + " of its time" +
                                          (op.tail_share > kTailDominatedShare ? " (tail-dominated)" : ""));
  }
}

}  // namespace aiprof
