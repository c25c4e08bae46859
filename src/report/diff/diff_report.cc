#include "src/report/diff/diff_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "src/render/units.h"

namespace aiprof {
namespace {

using render::Unit;
using render::Value;

constexpr const char* kTimeBase =
    "time per steady step on the step's critical thread (attribution's host wall time; device activity: device "
    "time per step)";

Value NumValue(double v) { return Value::Number(v); }
Value Rel(double a, double b) { return a != 0 ? Value::Number(b / a - 1) : Value::Null(); }
Value Share(double part, double whole) { return whole > 0 ? Value::Number(part / whole) : Value::Null(); }

std::string Label(const DiffRun& a, const DiffRun& b, const AttributionDiff& d, uint32_t node) {
  return DiffNodeLabel(*a.trace, *a.attribution, *b.trace, *b.attribution, d, node);
}
std::string Path(const DiffRun& a, const DiffRun& b, const AttributionDiff& d, uint32_t node) {
  return DiffNodePath(*a.trace, *a.attribution, *b.trace, *b.attribution, d, node);
}

void AddStepFigures(const DiffRun& a, const DiffRun& b, const AttributionDiff& d, render::Section* s) {
  render::KeyValues kv;
  kv.items.push_back({"run_a", "Run A (before)", Value::String(a.label), Unit::kNone});
  kv.items.push_back({"run_b", "Run B (after)", Value::String(b.label), Unit::kNone});
  kv.items.push_back({"time_base", "Time base", Value::String(kTimeBase), Unit::kNone});
  // Each run's warm-up is found on its own (leading outlier steps) unless
  // --warmup-steps sets it for both: said, since two runs that left out
  // different numbers compare different parts of their runs.
  auto warmup = [](bool pseudo, const DiffRun& run) {
    if (pseudo) return std::string();
    const AttributionResult& r = *run.attribution;
    // Steps left out after the first steady one are truncated last steps
    // (the analysis window's TrailingTruncated), the others warm-up.
    std::map<int32_t, int64_t> first_steady;  // rank -> its first steady step's start
    for (const AttributionStep& st : r.per_step) {
      if (!st.steady) continue;
      auto [it, added] = first_steady.try_emplace(st.rank, st.start_ns);
      if (!added) it->second = std::min(it->second, st.start_ns);
    }
    size_t all = 0, warm = 0, truncated = 0;
    for (const AttributionStep& st : r.per_step) {
      ++all;
      if (st.steady) continue;
      auto it = first_steady.find(st.rank);
      ++(it != first_steady.end() && st.start_ns > it->second ? truncated : warm);
    }
    return "of " + std::to_string(all) + " steps; " + std::to_string(warm) + " leading warm-up step" +
           (warm == 1 ? "" : "s") +
           (truncated > 0 ? " and " + std::to_string(truncated) + " truncated last step" + (truncated == 1 ? "" : "s")
                          : std::string()) +
           " left out" +
           (run.warmup_steps >= 0 ? " (--warmup-steps " + std::to_string(run.warmup_steps) + ", in both runs)"
                                  : " (found in each run on its own; --warmup-steps N sets it for both)");
  };
  kv.items.push_back({"steps_a", d.pseudo_a ? "Steps in A (none: main thread span)" : "Steady steps in A",
                      Value::Int(static_cast<int64_t>(d.steps_a)), Unit::kCount, warmup(d.pseudo_a, a)});
  kv.items.push_back({"steps_b", d.pseudo_b ? "Steps in B (none: main thread span)" : "Steady steps in B",
                      Value::Int(static_cast<int64_t>(d.steps_b)), Unit::kCount, warmup(d.pseudo_b, b)});
  // The step's span on the host (what the steps are: recorded markers, a
  // repeating pattern, ...), not whatif's and validate's "step wall time",
  // which runs on to the step's last device work: two figures, two names.
  // A run that launched no device work (a CPU run): whatif's step wall
  // time ends where the host step does, so the two figures agree.
  auto step_detail = [](bool pseudo, const std::string& what, const DiffRun& run) {
    if (pseudo) return what;
    return what + (run.host_only
                       ? " on its critical thread; no device work, so whatif's step wall time is the same span"
                       : " on its critical thread; whatif's step wall time runs on to the step's last device work");
  };
  kv.items.push_back({"step_a_ns", "Host step time in A (mean)", NumValue(d.step_a_ns), Unit::kNs,
                      step_detail(d.pseudo_a, d.steps_text_a, a)});
  kv.items.push_back({"step_b_ns", "Host step time in B (mean)", NumValue(d.step_b_ns), Unit::kNs,
                      step_detail(d.pseudo_b, d.steps_text_b, b)});
  kv.items.push_back({"step_delta_ns", "Change of the mean per step", NumValue(d.step_b_ns - d.step_a_ns), Unit::kNs});
  kv.items.push_back({"step_change", "Relative change of the mean", Rel(d.step_a_ns, d.step_b_ns), Unit::kChange});
  // Device time beside the host step (the host step time alone read as the
  // GPUs' change on a cross-hardware pair): the kernels, memcpys and
  // memsets the step launched, summed per steady step.
  const DiffNodes& nd = d.nodes;
  const double dev_a = nd.size() > 0 ? nd.a_device_ns[0] : 0, dev_b = nd.size() > 0 ? nd.b_device_ns[0] : 0;
  if (dev_a > 0 || dev_b > 0) {
    kv.items.push_back({"device_a_ns", "Device time per step in A", NumValue(dev_a), Unit::kNs,
                        "the device activity the step launched, summed; not the busy span"});
    kv.items.push_back({"device_b_ns", "Device time per step in B", NumValue(dev_b), Unit::kNs,
                        "the device activity the step launched, summed; not the busy span"});
    kv.items.push_back({"device_delta_ns", "Change of the device time per step", NumValue(dev_b - dev_a), Unit::kNs});
    kv.items.push_back({"device_change", "Relative change of the device time", Rel(dev_a, dev_b), Unit::kChange});
    auto bound = [](double dev, double host) {
      return std::string(DiffRunHostBound(dev, host) ? "host-bound" : "not host-bound") + " (device time " +
             (host > 0 ? render::FormatQuantity(dev / host, Unit::kFraction) : std::string("—")) +
             " of the host step)";
    };
    std::string what = "A " + bound(dev_a, d.step_a_ns) + ", B " + bound(dev_b, d.step_b_ns);
    if (DiffBothHostBound(d)) what += ": the change of the host step time is the host's (CPU, framework, launches), not the devices'";
    kv.items.push_back({"step_bound", "Host-bound (device time at most half the host step)",
                        Value::String(what), Unit::kNone});
  }
  const MetricComparison& m = d.step;
  // The test takes each run's steps as samples: what differs between two
  // runs as a whole (machine load, allocator state) is change to it too.
  kv.items.push_back({"step_verdict", "Verdict (validate's statistics)", Value::String(VerdictText(m.verdict)),
                      Unit::kNone,
                      "each run's steps are the samples: a difference between two runs of one program (machine load, "
                      "allocator state) counts as change; repeated runs tell it apart (docs/diff.md, Limits)"});
  kv.items.push_back({"step_test", "Test", Value::String(m.test.empty() ? "none" : m.test), Unit::kNone});
  kv.items.push_back({"step_p_value", "p-value", m.test.empty() ? Value::Null() : NumValue(m.p_value), Unit::kNone});
  // validate's statistics compare its own statistic (the median for a
  // rank test), which can differ from the means above: said in the labels.
  const std::string of = m.statistic_name.empty() ? "" : " (of the " + m.statistic_name + ")";
  kv.items.push_back({"step_ci_low_ns", "Interval of the change" + of + ", low",
                      m.ci_available ? NumValue(m.ci.low) : Value::Null(), Unit::kNs});
  kv.items.push_back({"step_ci_high_ns", "Interval of the change" + of + ", high",
                      m.ci_available ? NumValue(m.ci.high) : Value::Null(), Unit::kNs});
  kv.items.push_back({"step_reason", "Why" + of, Value::String(m.reason), Unit::kNone});
  kv.items.push_back({"matched", "Nodes matched", Value::Int(static_cast<int64_t>(d.matched)), Unit::kCount});
  kv.items.push_back({"through_op", "… of which through the launching op (renamed runtime calls and kernels)",
                      Value::Int(static_cast<int64_t>(d.through_op)), Unit::kCount});
  kv.items.push_back({"by_position",
                      "… of which kernels by position alone (a kernel of unknown kind: unverified, not ranked)",
                      Value::Int(static_cast<int64_t>(d.by_position)), Unit::kCount});
  kv.items.push_back({"by_map", "… of which by the name map", Value::Int(static_cast<int64_t>(d.by_map)), Unit::kCount});
  kv.items.push_back({"by_role", "… of which by role (data loading)", Value::Int(static_cast<int64_t>(d.by_role)),
                      Unit::kCount});
  kv.items.push_back({"removed", "Nodes only in A (removed)", Value::Int(static_cast<int64_t>(d.removed)), Unit::kCount});
  kv.items.push_back({"added", "Nodes only in B (added)", Value::Int(static_cast<int64_t>(d.added)), Unit::kCount});
  // What only one run has, as time: the outermost removed / added host
  // nodes' totals per step, and their share of that run's host step.
  kv.items.push_back({"removed_ns", "Host time per step in nodes only in A (removed)", NumValue(d.removed_ns),
                      Unit::kNs, "the outermost removed nodes' totals; device activity left out"});
  kv.items.push_back(
      {"removed_share", "… as a share of A's host step time", Share(d.removed_ns, d.step_a_ns), Unit::kFraction});
  kv.items.push_back({"added_ns", "Host time per step in nodes only in B (added)", NumValue(d.added_ns), Unit::kNs,
                      "the outermost added nodes' totals; device activity left out"});
  kv.items.push_back(
      {"added_share", "… as a share of B's host step time", Share(d.added_ns, d.step_b_ns), Unit::kFraction});
  s->Add(std::move(kv));
}

// Warnings that qualify every figure below: the two runs' steps are not
// of one kind, or most of both runs is in nodes the other lacks.
void AddCaveats(const AttributionDiff& d, render::Section* s) {
  if (DiffStepsDiffer(d)) {
    render::Finding f;
    f.key = "steps_differ";
    f.title = "The two runs' steps are not of one kind: per-step figures compare different spans";
    f.severity = render::Severity::kMedium;
    f.detail = "A: " + d.steps_text_a + "; B: " + d.steps_text_b +
               ". A step inferred from a repeating op pattern runs from one period to the next (time between "
               "recorded steps included); the main thread's span is the whole run. Record step markers in both "
               "runs (torch.profiler's schedule, aiprof trace) to compare them.";
    s->Add(std::move(f));
  }
  // Map entries that matched no name on a side pair nothing (a typo, a
  // name from another run): said, with their lines.
  std::string unmatched;
  size_t n_unmatched = 0;
  for (size_t i = 0; i < d.map_line.size(); ++i) {
    const bool a = d.map_names_a[i] == 0, b = d.map_names_b[i] == 0;
    if (!a && !b) continue;
    if (n_unmatched++ < 20) {
      unmatched += (unmatched.empty() ? "" : "; ") + std::string("line ") + std::to_string(d.map_line[i]) + ": " +
                   (a && b ? "no name of A or B"
                    : a    ? "no name of A"
                           : "no name of B");
    }
  }
  if (n_unmatched > 0) {
    render::Finding f;
    f.key = "map_unmatched";
    f.title = std::to_string(n_unmatched) + " of the name map's " + std::to_string(d.map_line.size()) +
              " entries matched no name in a run: they pair nothing";
    f.severity = render::Severity::kLow;
    f.detail = unmatched + (n_unmatched > 20 ? "; …" : "") +
               ". A plain name matches the whole name exactly; /regex/ is searched in it.";
    f.evidence.push_back({"entries", "Entries that matched no name in a run",
                          Value::Int(static_cast<int64_t>(n_unmatched)), Unit::kCount});
    s->Add(std::move(f));
  }
  if (DiffRunsUnrelated(d)) {
    render::Finding f;
    f.key = "runs_unrelated";
    f.title = "Most of both runs is in nodes the other lacks: these look like two different programs";
    f.severity = render::Severity::kMedium;
    if (d.step_a_ns > 0) f.impact = d.removed_ns / d.step_a_ns;
    f.impact_base = "run A's host step time (step span) per steady step";
    f.detail = "Only in A: " + render::FormatQuantity(d.removed_ns, Unit::kNs) + " of A's " +
               render::FormatQuantity(d.step_a_ns, Unit::kNs) +
               " per step; only in B: " + render::FormatQuantity(d.added_ns, Unit::kNs) + " of B's " +
               render::FormatQuantity(d.step_b_ns, Unit::kNs) +
               " per step. The changes below list what differs, not what a change did; for runs on different "
               "hardware or frameworks, a name map (--map) pairs renamed ops.";
    f.evidence.push_back({"removed_ns", "Only in A, per step", NumValue(d.removed_ns), Unit::kNs});
    f.evidence.push_back({"added_ns", "Only in B, per step", NumValue(d.added_ns), Unit::kNs});
    s->Add(std::move(f));
  }
}

// One entry of the changes ranking: a node, or a call-site / shape row of
// an op node (AttributionDiff::ranked_row).
struct Entry {
  uint32_t node = 0;
  int32_t row = -1;
  std::string path, site, shape, kind, change, match;
  double a_ns = 0, b_ns = 0, a_calls = 0, b_calls = 0, a_device_ns = 0, b_device_ns = 0;
  const MetricComparison* stats = nullptr;
  // Where the calls per step changed: the time per call's verdict and its
  // statistics (AttributionDiff::per_call_stats / shape_per_call_stats).
  DiffPerCall per_call = DiffPerCall::kNone;
  const MetricComparison* per_call_stats = nullptr;
  double delta() const { return b_ns - a_ns; }
  double calls_delta() const { return DiffCallsNs(a_ns, a_calls, b_calls); }
  bool both() const { return a_calls > 0 && b_calls > 0; }
};

// The figures DiffNodes and DiffShapes both keep for row i: the change, the
// per-step times, calls and device times, and the row's statistics (an index
// into `stats`: AttributionDiff::stats or ::shape_stats).
template <typename Rows>
void SetFigures(const Rows& t, uint32_t i, const std::vector<DiffNodeStats>& stats,
                const std::vector<DiffNodeStats>& per_call_stats, Entry* e) {
  e->change = DiffChangeName(t.change[i]);
  e->a_ns = t.a_ns[i], e->b_ns = t.b_ns[i], e->a_calls = t.a_calls[i], e->b_calls = t.b_calls[i];
  e->a_device_ns = t.a_device_ns[i], e->b_device_ns = t.b_device_ns[i];
  e->stats = t.stats[i] >= 0 ? &stats[t.stats[i]].cmp : nullptr;
  if (i < t.per_call.size()) {
    e->per_call = t.per_call[i];
    e->per_call_stats = t.per_call_stats[i] >= 0 ? &per_call_stats[t.per_call_stats[i]].cmp : nullptr;
  }
}

// Call-site / shape row `r` (AttributionDiff::shapes) as an entry; the
// caller names its node and path.
Entry RowEntry(const DiffRun& a, const DiffRun& b, const AttributionDiff& d, uint32_t r) {
  const DiffShapes& h = d.shapes;
  Entry e;
  e.row = static_cast<int32_t>(r);
  e.site = DiffRowSite(*a.attribution, *b.attribution, h, r);
  e.shape = DiffRowShape(*a.attribution, *b.attribution, h, r);
  e.kind = "op row";
  e.match = DiffShapeMatchName(h.match[r]);
  SetFigures(h, r, d.shape_stats, d.shape_per_call_stats, &e);
  return e;
}

Entry RankedEntry(const DiffRun& a, const DiffRun& b, const AttributionDiff& d, size_t i) {
  const uint32_t x = d.ranked[i];
  if (d.ranked_row[i] >= 0) {
    Entry e = RowEntry(a, b, d, static_cast<uint32_t>(d.ranked_row[i]));
    e.node = x;
    e.path = Path(a, b, d, x);
    return e;
  }
  const DiffNodes& n = d.nodes;
  Entry e;
  e.node = x;
  e.path = Path(a, b, d, x);
  e.kind = AttributionKindName(n.kind[x]);
  e.match = DiffMatchName(n.match[x]);
  SetFigures(n, x, d.stats, d.per_call_stats, &e);
  return e;
}

// validate's verdict on one entry: the test ("none" without one), its p-value
// and the interval of the change (null where not computed).
struct TestCells {
  Value test, p_value, ci_low_ns, ci_high_ns;
};

TestCells Tested(const MetricComparison* m) {
  const bool tested = m && !m->test.empty();
  const bool ci = tested && m->ci_available;
  return {Value::String(tested ? m->test : "none"), tested ? NumValue(m->p_value) : Value::Null(),
          ci ? NumValue(m->ci.low) : Value::Null(), ci ? NumValue(m->ci.high) : Value::Null()};
}

// The columns both rankings (changes, shapes) show for each entry, and its
// cells under them.
// The calls columns (docs/diff.md, "Fewer or more calls"): the part of Δ
// the change in calls accounts for and the time per call in each run (null
// where a run lacks the entry), the time per call's verdict and statistics
// (where the calls per step changed; else "" and "none").
void AddMeasureColumns(std::vector<render::Column>* columns) {
  columns->insert(columns->end(), {{"a_ns", "A", Unit::kNs},
                                   {"b_ns", "B", Unit::kNs},
                                   {"delta_ns", "Δ", Unit::kNs},
                                   {"change_rel", "Δ%", Unit::kChange},
                                   {"a_calls", "Calls A", Unit::kNone},
                                   {"b_calls", "Calls B", Unit::kNone},
                                   {"calls_delta_ns", "Δ from calls", Unit::kNs},
                                   {"a_per_call_ns", "Per call A", Unit::kNs},
                                   {"b_per_call_ns", "Per call B", Unit::kNs},
                                   {"per_call", "Per call", Unit::kNone},
                                   {"a_device_ns", "Device A", Unit::kNs},
                                   {"b_device_ns", "Device B", Unit::kNs},
                                   {"test", "Test", Unit::kNone},
                                   {"p_value", "p", Unit::kNone},
                                   {"ci_low_ns", "Δ low", Unit::kNs},
                                   {"ci_high_ns", "Δ high", Unit::kNs},
                                   {"per_call_test", "Per-call test", Unit::kNone},
                                   {"per_call_p_value", "Per-call p", Unit::kNone},
                                   {"per_call_ci_low_ns", "Per-call Δ low", Unit::kNs},
                                   {"per_call_ci_high_ns", "Per-call Δ high", Unit::kNs}});
}

void AddMeasureCells(const Entry& e, std::vector<Value>* row) {
  TestCells t = Tested(e.stats);
  TestCells pc = Tested(e.per_call_stats);
  const bool both = e.both();
  row->insert(row->end(), {NumValue(e.a_ns),
                           NumValue(e.b_ns),
                           NumValue(e.delta()),
                           Rel(e.a_ns, e.b_ns),
                           NumValue(e.a_calls),
                           NumValue(e.b_calls),
                           both ? NumValue(e.calls_delta()) : Value::Null(),
                           e.a_calls > 0 ? NumValue(DiffPerCallNs(e.a_ns, e.a_calls)) : Value::Null(),
                           e.b_calls > 0 ? NumValue(DiffPerCallNs(e.b_ns, e.b_calls)) : Value::Null(),
                           Value::String(DiffPerCallName(e.per_call)),
                           NumValue(e.a_device_ns),
                           NumValue(e.b_device_ns),
                           std::move(t.test),
                           std::move(t.p_value),
                           std::move(t.ci_low_ns),
                           std::move(t.ci_high_ns),
                           std::move(pc.test),
                           std::move(pc.p_value),
                           std::move(pc.ci_low_ns),
                           std::move(pc.ci_high_ns)});
}

// One sentence on an entry whose calls per step changed: the calls, the
// time per call and what each accounts for; "" otherwise.
std::string CallsSentence(const Entry& e) {
  if (e.per_call == DiffPerCall::kNone) return {};
  auto calls = [](double c) { return render::FormatQuantity(c, Unit::kNone); };
  auto ns = [](double v) { return render::FormatQuantity(v, Unit::kNs); };
  const double pa = DiffPerCallNs(e.a_ns, e.a_calls), pb = DiffPerCallNs(e.b_ns, e.b_calls);
  std::string each = e.per_call == DiffPerCall::kUnchanged ? "unchanged" : DiffPerCallName(e.per_call);
  return calls(e.a_calls) + " → " + calls(e.b_calls) + " calls per step, each call " + ns(pa) + " → " + ns(pb) + " (" +
         each + "): the change in calls accounts for " + ns(e.calls_delta()) + " of the " + ns(e.delta()) +
         " per step, the time per call for " + ns(e.delta() - e.calls_delta());
}

void AddLargestFinding(const DiffRun& a, const DiffRun& b, const AttributionDiff& d, render::Section* s) {
  if (d.ranked.empty()) {
    s->Add(render::Paragraph{"No node changed by more than the thresholds (docs/diff.md)."});
    return;
  }
  const Entry e = RankedEntry(a, b, d, 0);
  const DiffNodes& n = d.nodes;
  render::Finding f;
  f.key = "largest_change";
  std::string what = Label(a, b, d, e.node);
  if (e.row >= 0) what += " at " + e.site + ", input " + e.shape;
  f.title = "Largest change per step: " + what + " (" + e.change + ")";
  f.severity = render::Severity::kInfo;
  if (d.step_a_ns > 0) f.impact = e.delta() / d.step_a_ns;
  f.impact_base = "run A's host step time (step span) per steady step";
  f.detail = e.path;
  if (e.row >= 0) {
    f.detail += " — one call-site / shape row of the op; the op as a whole changed by " +
                render::FormatQuantity(n.Delta(e.node), Unit::kNs) + " per step";
  }
  // A host node's change on host-bound runs is the host's: said, with the
  // device time per step beside it (bert-small H100 → MI300: the headline
  // read -9.6% while the row's device time went +37%).
  if (n.kind[e.node] != AttributionKind::kDevice && DiffBothHostBound(d)) {
    f.detail += " — both runs are host-bound (device time per step " +
                render::FormatQuantity(n.a_device_ns[0], Unit::kNs) + " → " +
                render::FormatQuantity(n.b_device_ns[0], Unit::kNs) + " against a host step of " +
                render::FormatQuantity(d.step_a_ns, Unit::kNs) + " → " +
                render::FormatQuantity(d.step_b_ns, Unit::kNs) +
                "): this change is the host's; this node's device time per step went " +
                render::FormatQuantity(e.a_device_ns, Unit::kNs) + " → " +
                render::FormatQuantity(e.b_device_ns, Unit::kNs);
  }
  f.evidence.push_back({"a_ns", "A per step", NumValue(e.a_ns), Unit::kNs});
  f.evidence.push_back({"b_ns", "B per step", NumValue(e.b_ns), Unit::kNs});
  f.evidence.push_back({"delta_ns", "Change per step", NumValue(e.delta()), Unit::kNs});
  f.evidence.push_back({"kind", "Kind", Value::String(e.kind), Unit::kNone});
  if (e.row >= 0) {
    f.evidence.push_back({"site", "Call site", Value::String(e.site), Unit::kNone});
    f.evidence.push_back({"shape", "Input shape", Value::String(e.shape), Unit::kNone});
    f.evidence.push_back({"match", "Row matched by", Value::String(e.match), Unit::kNone});
    f.evidence.push_back({"op_a_ns", "The op as a whole, A per step", NumValue(n.a_ns[e.node]), Unit::kNs});
    f.evidence.push_back({"op_b_ns", "The op as a whole, B per step", NumValue(n.b_ns[e.node]), Unit::kNs});
    f.evidence.push_back({"op_delta_ns", "The op as a whole, change per step", NumValue(n.Delta(e.node)), Unit::kNs});
  }
  TestCells t = Tested(e.stats);
  f.evidence.push_back({"test", "Test", std::move(t.test), Unit::kNone});
  f.evidence.push_back({"p_value", "p", std::move(t.p_value), Unit::kNone});
  f.evidence.push_back({"ci_low_ns", "Interval of the change, low", std::move(t.ci_low_ns), Unit::kNs});
  f.evidence.push_back({"ci_high_ns", "Interval of the change, high", std::move(t.ci_high_ns), Unit::kNs});
  if (e.per_call != DiffPerCall::kNone) {
    f.detail += " — " + CallsSentence(e);
    f.evidence.push_back({"a_calls", "Calls per step, A", NumValue(e.a_calls), Unit::kNone});
    f.evidence.push_back({"b_calls", "Calls per step, B", NumValue(e.b_calls), Unit::kNone});
    f.evidence.push_back({"calls_delta_ns", "Change per step from the calls", NumValue(e.calls_delta()), Unit::kNs});
    f.evidence.push_back({"a_per_call_ns", "Time per call, A", NumValue(DiffPerCallNs(e.a_ns, e.a_calls)), Unit::kNs});
    f.evidence.push_back({"b_per_call_ns", "Time per call, B", NumValue(DiffPerCallNs(e.b_ns, e.b_calls)), Unit::kNs});
    f.evidence.push_back({"per_call", "Time per call", Value::String(DiffPerCallName(e.per_call)), Unit::kNone});
    TestCells pc = Tested(e.per_call_stats);
    f.evidence.push_back({"per_call_test", "Per-call test", std::move(pc.test), Unit::kNone});
    f.evidence.push_back({"per_call_p_value", "Per-call p", std::move(pc.p_value), Unit::kNone});
    f.evidence.push_back(
        {"per_call_ci_low_ns", "Interval of the per-call change, low", std::move(pc.ci_low_ns), Unit::kNs});
    f.evidence.push_back(
        {"per_call_ci_high_ns", "Interval of the per-call change, high", std::move(pc.ci_high_ns), Unit::kNs});
  }
  s->Add(std::move(f));
}

void AddClassDiff(const AttributionDiff& d, render::Section* s) {
  render::Table t;
  t.key = "classes";
  t.title = "Step time by class (per steady step)";
  t.columns = {{"class", "Class", Unit::kNone},
               {"a_ns", "A", Unit::kNs},
               {"b_ns", "B", Unit::kNs},
               {"delta_ns", "Change", Unit::kNs}};
  std::vector<size_t> order(kTimeClassCount);
  for (size_t c = 0; c < kTimeClassCount; ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return std::fabs(d.class_b_ns[x] - d.class_a_ns[x]) > std::fabs(d.class_b_ns[y] - d.class_a_ns[y]);
  });
  for (size_t c : order) {
    t.rows.push_back({Value::String(TimeClassName(static_cast<TimeClass>(c))), NumValue(d.class_a_ns[c]),
                      NumValue(d.class_b_ns[c]), NumValue(d.class_b_ns[c] - d.class_a_ns[c])});
  }
  s->Add(std::move(t));
}

void AddChanges(const DiffRun& a, const DiffRun& b, const AttributionDiff& d, size_t top_n, render::Section* s) {
  render::Table t;
  t.key = "changes";
  t.title = "Largest changes per step";
  t.columns = {{"rank", "#", Unit::kCount},
               {"path", "Node (path)", Unit::kNone},
               // Prose and nested lists that a cell beside 15 figures squeezed
               // to a few characters a line: under their row in HTML.
               {"site", "Call site (op rows)", Unit::kNone, true},
               {"shape", "Input shape (op rows)", Unit::kNone, true},
               {"kind", "Kind", Unit::kNone},
               {"change", "Change", Unit::kNone},
               {"match", "Matched by", Unit::kNone}};
  AddMeasureColumns(&t.columns);
  const size_t shown = std::min(top_n, d.ranked.size());
  for (size_t r = 0; r < shown; ++r) {
    const Entry e = RankedEntry(a, b, d, r);
    std::vector<Value>& row = t.rows.emplace_back();
    row = {Value::Int(static_cast<int64_t>(r + 1)), Value::String(e.path), Value::String(e.site),
           Value::String(e.shape), Value::String(e.kind), Value::String(e.change), Value::String(e.match)};
    AddMeasureCells(e, &row);
  }
  if (d.ranked.size() > shown) t.note = std::to_string(d.ranked.size() - shown) + " more changed nodes not shown (--top)";
  else if (d.steps_a < kDiffMinStepsForStats || d.steps_b < kDiffMinStepsForStats) {
    t.note = "no per-node statistics: fewer than " + std::to_string(kDiffMinStepsForStats) + " steady steps in a run";
  }
  if (d.calls_changed > 0) {
    if (!t.note.empty()) t.note += "; ";
    t.note += std::to_string(d.calls_changed) + " entr" + (d.calls_changed == 1 ? "y" : "ies") +
              " changed by their calls per step (calls_removed / calls_added): the time per call did not change, "
              "or changed less than the calls account for; \"Δ from calls\" is (calls B − calls A) × A's time per "
              "call (docs/diff.md, \"Fewer or more calls\")";
  }
  if (d.by_position > 0) {
    if (!t.note.empty()) t.note += "; ";
    t.note += std::to_string(d.by_position) + " kernel pair(s) made by position alone (\"by position, unverified\": a "
              "kernel of unknown kind in a run) are not ranked; the \"Renamed\" section lists them (docs/diff.md, "
              "\"Alignment rules\")";
  }
  if (d.split_ops > 0) {
    if (!t.note.empty()) t.note += "; ";
    t.note += std::to_string(d.split_ops) +
              " op(s) ranked by their call-site / shape rows (kind \"op row\"): one row moved at least 90% of the "
              "op's own change, so the op's changed rows replace it (docs/diff.md, \"Ranking\")";
  }
  s->Add(std::move(t));
}

// Pairs matched under different names: through the op, by the map, by role,
// kernels by position alone.
void AddRenamed(const DiffRun& a, const DiffRun& b, const AttributionDiff& d, size_t top_n, render::Section* s) {
  const DiffNodes& n = d.nodes;
  std::vector<uint32_t> rows;
  for (uint32_t i = 1; i < n.size(); ++i) {
    DiffMatch m = n.match[i];
    if (m == DiffMatch::kLaunchOrder || m == DiffMatch::kMap || m == DiffMatch::kRole || m == DiffMatch::kPosition) {
      rows.push_back(i);
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [&](uint32_t x, uint32_t y) {
    return std::max(n.a_ns[x], n.b_ns[x]) > std::max(n.a_ns[y], n.b_ns[y]);
  });
  render::Table t;
  t.key = "renamed";
  t.title = "Matched under different names";
  t.columns = {{"path", "Node (A → B)", Unit::kNone}, {"kind", "Kind", Unit::kNone}, {"match", "Matched by", Unit::kNone},
               {"a_ns", "A", Unit::kNs},           {"b_ns", "B", Unit::kNs},       {"delta_ns", "Δ", Unit::kNs}};
  const size_t shown = std::min(top_n, rows.size());
  for (size_t r = 0; r < shown; ++r) {
    const uint32_t x = rows[r];
    t.rows.push_back({Value::String(Path(a, b, d, x)), Value::String(AttributionKindName(n.kind[x])),
                      Value::String(DiffMatchName(n.match[x])), NumValue(n.a_ns[x]), NumValue(n.b_ns[x]),
                      NumValue(n.Delta(x))});
  }
  if (rows.size() > shown) t.note = std::to_string(rows.size() - shown) + " more pairs not shown (--top)";
  s->Add(std::move(t));
}

// Op pairs told apart by call site and input shape (AttributionDiff::shapes):
// how many row pairs each level made, then the changed rows largest first
// with validate's statistics per row where there are enough steps.
void AddShapes(const DiffRun& a, const DiffRun& b, const AttributionDiff& d, size_t top_n, render::Section* s) {
  const DiffShapes& h = d.shapes;
  render::KeyValues kv;
  kv.items.push_back({"shape_rows", "Rows (ops split by call site or shape)", Value::Int(static_cast<int64_t>(h.size())),
                      Unit::kCount});
  kv.items.push_back({"shape_by_site", "Row pairs by call site + shape", Value::Int(static_cast<int64_t>(d.shape_by_site)),
                      Unit::kCount});
  kv.items.push_back({"shape_by_function", "Row pairs by the call site's function (line moved) + shape",
                      Value::Int(static_cast<int64_t>(d.shape_by_function)), Unit::kCount});
  kv.items.push_back({"shape_by_shape", "Row pairs by shape alone", Value::Int(static_cast<int64_t>(d.shape_by_shape)),
                      Unit::kCount});
  kv.items.push_back({"shape_by_order", "Row pairs by call site alone (shape changed)",
                      Value::Int(static_cast<int64_t>(d.shape_by_order)), Unit::kCount});
  kv.items.push_back({"shape_tested", "Rows with statistics", Value::Int(static_cast<int64_t>(d.shape_stats.size())),
                      Unit::kCount});
  s->Add(std::move(kv));
  render::Table t;
  t.key = "shapes";
  t.title = "Repeated ops by call site and input shape (changed)";
  t.columns = {{"path", "Op (path)", Unit::kNone},
               {"site", "Call site (A → B where they differ)", Unit::kNone, true},
               {"shape", "Input shape (A → B where they differ)", Unit::kNone, true},
               {"match", "Matched by", Unit::kNone},
               {"change", "Change", Unit::kNone}};
  AddMeasureColumns(&t.columns);
  t.columns.push_back({"no_test", "Why no test", Unit::kNone, true});
  t.columns.push_back({"ranked", "# in changes", Unit::kCount});
  // Rows the changes table lists in their op's place (AttributionDiff::ranked_row).
  std::vector<int64_t> in_changes(h.size(), 0);
  for (size_t i = 0; i < d.ranked.size() && i < top_n; ++i) {
    if (d.ranked_row[i] >= 0) in_changes[d.ranked_row[i]] = static_cast<int64_t>(i + 1);
  }
  const size_t shown = std::min(top_n, d.shape_ranked.size());
  for (size_t r = 0; r < shown; ++r) {
    const uint32_t x = d.shape_ranked[r];
    const Entry e = RowEntry(a, b, d, x);
    const MetricComparison* m = e.stats;
    std::string why = m ? (m->test.empty() ? m->reason : "") : DiffNoStatsText(h.no_stats[x]);
    std::vector<Value>& row = t.rows.emplace_back();
    row = {Value::String(Path(a, b, d, h.node[x])), Value::String(e.site), Value::String(e.shape),
           Value::String(e.match), Value::String(e.change)};
    AddMeasureCells(e, &row);
    row.push_back(Value::String(why));
    row.push_back(in_changes[x] > 0 ? Value::Int(in_changes[x]) : Value::Null());
  }
  if (d.shape_ranked.size() > shown) {
    t.note = std::to_string(d.shape_ranked.size() - shown) + " more changed rows not shown (--top)";
  } else {
    t.note = std::to_string(h.size()) + " rows under ops with more than one call site or input shape (docs/diff.md)";
  }
  s->Add(std::move(t));
}

}  // namespace

render::Document DiffToDocument(const DiffRun& a, const DiffRun& b, const AttributionDiff& d, size_t top_n) {
  render::Document doc;
  doc.key = "diff";
  doc.title = "Structural diff: " + a.label + " → " + b.label;
  doc.generator = "aiprof diff";
  render::Section& s = doc.AddSection("diff", "Step");
  if (!d.available) {
    s.Add(render::Paragraph{"No diff: " + d.problem});
    return doc;
  }
  // What changed most first, then what qualifies it, then the figures (a
  // reader of the page saw ~25 figures before the headline).
  AddLargestFinding(a, b, d, &s);
  AddCaveats(d, &s);
  AddStepFigures(a, b, d, &s);
  AddChanges(a, b, d, top_n, &doc.AddSection("changes", "Changes"));
  AddClassDiff(d, &doc.AddSection("classes", "Time classes"));
  AddRenamed(a, b, d, top_n, &doc.AddSection("renamed", "Renamed"));
  if (a.attribution->op_shapes.computed() && b.attribution->op_shapes.computed()) {
    AddShapes(a, b, d, top_n, &doc.AddSection("shapes", "By shape"));
  }
  return doc;
}

}  // namespace aiprof
