#include "src/analysis/long_tail/op_tails.h"

#include <algorithm>

#include "src/analysis/common/text_format.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/summary/summary.h"

namespace aiprof {
namespace {

constexpr char kSource[] = "long_tail";

}  // namespace

LongTailResult ComputeLongTails(const Trace& trace) {
  LongTailResult r;
  const SliceTable& s = trace.slices;
  for (size_t i = 0; i < s.size() && !r.device; ++i) r.device = IsDeviceActivity(s.kind[i]);
  std::vector<std::pair<uint32_t, int64_t>> rows;  // (name, dur)
  for (size_t i = 0; i < s.size(); ++i) {
    bool take = r.device ? IsDeviceActivity(s.kind[i]) : s.kind[i] == EventKind::kCpuOp;
    if (take) rows.emplace_back(s.name[i].raw, s.dur_ns[i]);
  }
  std::sort(rows.begin(), rows.end());
  for (const auto& row : rows) r.op_time_ns += row.second;
  std::vector<int64_t> durs;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    durs.clear();
    while (j < rows.size() && rows[j].first == rows[i].first) durs.push_back(rows[j++].second);
    OpTail op;
    op.name = StringId{rows[i].first};
    op.count = durs.size();
    for (int64_t d : durs) op.total_ns += d;
    op.max_ns = durs.back();
    op.p50_ns = QuantileSorted(durs.data(), durs.size(), 0.5);
    op.p90_ns = QuantileSorted(durs.data(), durs.size(), 0.9);
    op.p99_ns = QuantileSorted(durs.data(), durs.size(), 0.99);
    for (int64_t d : durs) {
      if (static_cast<double>(d) > kLongTailFactor * op.p50_ns) {
        ++op.tail_count;
        op.tail_ns += d;
        op.tail_excess_ns += static_cast<double>(d) - op.p50_ns;
      }
    }
    op.tail_share = op.total_ns > 0 ? static_cast<double>(op.tail_ns) / static_cast<double>(op.total_ns) : 0;
    op.qualifies = op.count >= kLongTailMinCount && r.op_time_ns > 0 &&
                   static_cast<double>(op.total_ns) >= kLongTailMinTimeShare * static_cast<double>(r.op_time_ns);
    r.ops.push_back(op);
    i = j;
  }
  std::sort(r.ops.begin(), r.ops.end(), [&](const OpTail& a, const OpTail& b) {
    if (a.qualifies != b.qualifies) return a.qualifies;
    if (a.tail_ns != b.tail_ns) return a.tail_ns > b.tail_ns;
    return trace.Str(a.name) < trace.Str(b.name);
  });
  return r;
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
  metrics->Set("long_tail_ratio", best, kSource);
  // The time the tails cost: what their instances take beyond the median,
  // over all op time. This is the share of time that would vanish if every
  // tail instance ran at its op's median (the impact of a long-tail finding).
  double excess_ns = 0;
  for (const OpTail& op : r.ops) {
    if (op.qualifies) excess_ns += op.tail_excess_ns;
  }
  metrics->Set("long_tail_time_ratio",
               r.op_time_ns > 0 ? excess_ns / static_cast<double>(r.op_time_ns) : 0, kSource);
  for (size_t i = 0; i < std::min(kLongTailReported, r.ops.size()); ++i) {
    const OpTail& op = r.ops[i];
    if (!op.qualifies || op.tail_count == 0) break;
    metrics->AddEvidence("long_tail", std::string(trace.Str(op.name)) + ": " + std::to_string(op.tail_count) + " of " +
                                          std::to_string(op.count) + " instances beyond 3x median (p50 " +
                                          FormatDurationNs(op.p50_ns) + ", p99 " + FormatDurationNs(op.p99_ns) +
                                          ", max " + FormatDurationNs(static_cast<double>(op.max_ns)) + ") hold " +
                                          FormatPercent(op.tail_share) + " of its time" +
                                          (op.tail_share > kTailDominatedShare ? " (tail-dominated)" : ""));
  }
}

}  // namespace aiprof
