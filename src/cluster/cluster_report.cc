#include "src/cluster/cluster_report.h"

#include <fmt/format.h>

#include <cmath>

#include "src/analysis/communication/collective_pairing.h"
#include "src/analysis/communication/collective_type.h"
#include "src/model/event_kind.h"
#include "src/render/escape.h"
#include "src/render/renderers.h"
#include "src/render/units.h"

namespace aiprof {
namespace {

// Import diagnostics listed in the Markdown/HTML report (cluster.json has all).
constexpr size_t kDiagnosticRowsShown = 50;

// Busy over span of a rank's devices (each device's first to last activity
// in the whole trace, warm-up included), 0 without a span. Not analyze's
// device_util (GapsResult::device_util: of the steady steps' wall time): the
// per-rank digests hold no steady window, so it is named by its base.
double DeviceUtilization(const ClusterRank& c) {
  return c.device_span_ns > 0 ? static_cast<double>(c.device_busy_ns) / static_cast<double>(c.device_span_ns) : 0.0;
}

std::string Num(double v) {
  if (!std::isfinite(v)) return v > 0 ? "1e308" : (v < 0 ? "-1e308" : "null");
  return fmt::format("{}", v);
}


class Json {
 public:
  void Key(const char* k) {
    Sep();
    out_ += '"';
    out_ += k;
    out_ += "\":";
    fresh_ = true;
  }
  void Open(char c) {
    Sep();
    out_ += c;
    fresh_ = true;
  }
  void Close(char c) {
    out_ += c;
    fresh_ = false;
  }
  void Raw(const std::string& v) {
    Sep();
    out_ += v;
  }
  void Str(std::string_view v) { Raw(JsonString(v)); }
  template <typename T>
  void Field(const char* k, T v) {
    Key(k);
    if constexpr (std::is_same_v<T, bool>) {
      Raw(v ? "true" : "false");
    } else if constexpr (std::is_floating_point_v<T>) {
      Raw(Num(v));
    } else {
      Raw(std::to_string(v));
    }
  }
  void FieldStr(const char* k, std::string_view v) {
    Key(k);
    Str(v);
  }
  // "k": {...}, the members written by fields().
  template <typename Fn>
  void Object(const char* k, Fn&& fields) {
    Key(k);
    Open('{');
    fields();
    Close('}');
  }
  // "k": [{...}, ...], one object per item, its members written by fields(item).
  template <typename Range, typename Fn>
  void Objects(const char* k, const Range& items, Fn&& fields) {
    Key(k);
    Open('[');
    for (const auto& item : items) {
      Open('{');
      fields(item);
      Close('}');
    }
    Close(']');
  }
  std::string Take() { return std::move(out_); }

 private:
  void Sep() {
    if (!fresh_) out_ += ',';
    fresh_ = false;
  }
  std::string out_;
  bool fresh_ = true;
};

void JsonSlow(Json& j, const SlowRankReport& s) {
  j.Open('{');
  j.Field("rank", s.rank);
  j.Field("outlier", s.outlier);
  j.Field("statistic", s.statistic);
  j.Field("critical", s.critical);
  j.Field("excess_ns", s.excess_ns);
  j.Field("excess_ratio", s.excess_ratio);
  j.FieldStr("excess_ratio_base", s.excess_ratio_base);
  j.Field("last_arrivals", s.last_arrivals);
  j.Objects("ops", s.ops, [&](const OpDifference& o) {
    j.FieldStr("name", o.name);
    j.FieldStr("category", o.category);
    j.FieldStr("kind", EventKindName(static_cast<EventKind>(o.kind)));
    j.Field("count", o.count);
    j.Field("total_ns", o.total_ns);
    j.Field("median_total_ns", o.median_total_ns);
    j.Field("excess_ns", o.excess_ns);
    j.Field("z", o.z);
    j.Field("p50_ns", o.p50_ns);
    j.Field("p99_ns", o.p99_ns);
    j.Field("cluster_p50_ns", o.cluster_p50_ns);
    j.Field("cluster_p99_ns", o.cluster_p99_ns);
  });
  j.Close('}');
}

}  // namespace

std::string ClusterToJson(const ClusterResult& r) {
  Json j;
  j.Open('{');
  j.Field("schema_version", 1);
  j.Field("digests", r.digests);
  j.Field("usable", r.usable);
  j.Field("world_size_in_traces", r.world_size_in_traces);
  j.Field("expected_ranks", r.expected_ranks);
  j.FieldStr("expected_ranks_from", r.expected_ranks_from);
  j.Field("implied_world_size", r.implied_world_size);
  j.FieldStr("implied_world_size_from", r.implied_world_size_from);
  j.Field("missing_count", r.missing_count);
  j.Key("missing_ranks");
  j.Open('[');
  for (int32_t m : r.missing) j.Raw(std::to_string(m));
  j.Close(']');
  j.Key("beyond_world_size");
  j.Open('[');
  for (int32_t m : r.beyond_world_size) j.Raw(std::to_string(m));
  j.Close(']');
  j.Field("transfer_includes_absent_wait", r.transfer_includes_absent_wait);
  j.Objects("broken", r.broken, [&](const ProblemDigest& b) {
    j.Field("rank", b.rank);
    j.FieldStr("source", b.source);
    j.FieldStr("reason", b.reason);
  });
  j.Object("clocks", [&] {
    j.Field("matched", r.matched);
    j.Field("unmatched", r.unmatched);
    j.Field("incomplete", r.incomplete);
    j.Field("stalled", r.stalled);
    j.Field("keys_by_step", r.keys_by_step);
    j.Field("keys_by_position", r.keys_by_position);
    j.Field("raw_end_spread_p50_ns", r.raw_end_spread_p50_ns);
    j.Field("raw_end_spread_share", r.raw_end_spread_share);
    j.Field("raw_clocks_agree", r.raw_clocks_agree);
    j.Field("aligned", r.aligned);
    j.Field("aligned_end_spread_p50_ns", r.aligned_end_spread_p50_ns);
    j.Field("aligned_end_spread_share", r.aligned_end_spread_share);
    j.Field("aligned_clocks_agree", r.aligned_clocks_agree);
    j.Field("max_abs_offset_ns", r.max_abs_offset_ns);
    j.Field("trusted", r.trusted);
  });
  j.Key("wait_ratio");
  if (r.wait_ratio) {
    j.Raw(Num(*r.wait_ratio));
  } else {
    j.Raw("null");
  }
  j.FieldStr("wait_ratio_source", r.wait_ratio_source);
  j.FieldStr("wait_ratio_unavailable", r.wait_ratio_unavailable);
  j.FieldStr("outlier_test", r.test_name);
  j.FieldStr("slow_rank_unavailable", r.slow_rank_unavailable);
  j.Key("slowest");
  if (r.slowest) {
    JsonSlow(j, *r.slowest);
  } else {
    j.Raw("null");
  }
  j.Key("slow_ranks");
  j.Open('[');
  for (const SlowRankReport& s : r.slow_ranks) JsonSlow(j, s);
  j.Close(']');
  j.Objects("ranks", r.ranks, [&](const ClusterRank& c) {
    j.Field("rank", c.rank);
    j.FieldStr("host", c.host);
    j.FieldStr("source", c.source);
    j.FieldStr("source_format", c.source_format);
    j.Field("slices", c.slices);
    j.Field("steps", c.steps);
    j.Field("diagnostics", c.diagnostics);
    j.Field("mean_step_ns", c.mean_step_ns);
    j.Field("span_ns", c.span_ns);
    j.Field("device_busy_ns", c.device_busy_ns);
    j.Field("device_span_ns", c.device_span_ns);
    j.Field("device_utilization", DeviceUtilization(c));
    j.Field("memory_peak_allocated_bytes", c.memory_peak_allocated);
    j.Field("memory_peak_reserved_bytes", c.memory_peak_reserved);
    j.Field("memory_capacity_bytes", c.memory_capacity);
    j.Field("matched", c.matched);
    j.Field("incomplete", c.incomplete);
    j.Field("comm_ns", c.comm_ns);
    j.Field("wait_ns", c.wait_ns);
    j.Field("lateness_ns", c.lateness_ns);
    j.Field("transfer_ns", c.transfer_ns);
    j.Field("stalled_wait_ns", c.stalled_wait_ns);
    j.Field("step_shift", c.step_shift);
    j.Field("clock_offset_ns", c.clock_offset_ns);
    j.Field("aligned_wait_ns", c.aligned_wait_ns);
    j.Field("aligned_lateness_ns", c.aligned_lateness_ns);
    j.Field("aligned_transfer_ns", c.aligned_transfer_ns);
    j.Field("last_arrivals", c.last_arrivals);
    j.Field("lateness_z", c.lateness_z);
    j.Field("profiler_elapse_ns", c.profiler_elapse_ns);
    j.Field("profiler_wait_ns", c.profiler_wait_ns);
    j.Field("profiler_transit_ns", c.profiler_transit_ns);
    j.Field("profiler_idle_ns", c.profiler_idle_ns);
    j.Field("absent_wait_ns", c.absent_wait_ns);
    j.Objects("import_diagnostics", c.import_diagnostics, [&](const DigestDiagnostic& g) {
      j.FieldStr("kind", g.kind);
      j.Field("count", g.count);
      j.FieldStr("first_where", g.first_where);
      j.FieldStr("description", g.description);
    });
  });
  j.Objects("steps", r.steps, [&](const ClusterStep& s) {
    j.Field("number", s.number);
    j.Field("ranks", s.ranks);
    j.Field("max_ns", s.max_ns);
    j.Field("median_ns", s.median_ns);
    j.Field("slowest_rank", s.slowest_rank);
    j.Field("collectives", s.collectives);
    j.Field("last_rank", s.last_rank);
    j.Field("last_late_by_ns", s.last_late_by_ns);
    j.FieldStr("last_collective", s.last_collective);
  });
  j.Objects("collectives", r.instances, [&](const ClusterInstance& in) {
    j.Field("step", in.step);
    j.FieldStr("group", in.group);
    j.FieldStr("type", CollectiveTypeNameOfByte(in.type));
    j.Field("ordinal", in.ordinal);
    j.Field("ranks", in.ranks);
    j.Field("last_rank", in.last_rank);
    j.Field("last_tied", in.last_tied);
    j.Field("late_by_ns", in.late_by_ns);
    j.Field("late_by_next_ns", in.late_by_next_ns);
    j.Field("end_spread_ns", in.end_spread_ns);
    j.FieldStr("state", in.state);
    j.Field("waited_ns", in.waited_ns);
    j.Key("late_after_end");
    j.Open('[');
    for (int32_t r : in.late_after_end) j.Raw(std::to_string(r));
    j.Close(']');
  });
  j.Objects("collective_types", r.type_times, [&](const ClusterTypeTime& t) {
    j.Field("rank", t.rank);
    j.FieldStr("type", CollectiveTypeNameOfByte(t.type));
    j.Field("count", t.count);
    j.Field("total_ns", t.total_ns);
    j.Field("max_ns", t.max_ns);
    j.Field("bytes", t.bytes);
    j.Field("sized", t.sized);
    j.Field("sized_time_ns", t.sized_time_ns);
    j.Field("group_size", t.group_size);
  });
  j.Objects("links", r.links, [&](const LinkBandwidth& l) {
    j.Field("rank", l.rank);
    j.FieldStr("link", l.link);
    j.FieldStr("transport", l.transport);
    j.Field("bytes", l.bytes);
    j.Field("time_ns", l.time_ns);
    j.Field("bandwidth_bytes_per_second", l.bandwidth_bytes_per_second);
    j.Field("transport_median_bytes_per_second", l.transport_median_bytes_per_second);
    j.Field("judged", l.judged);
    j.Field("slow", l.slow);
  });
  j.Close('}');
  std::string s = j.Take();
  s += '\n';
  return s;
}

namespace {

using render::Column;
using render::KeyValue;
using render::Section;
using render::Table;
using render::Unit;
using render::Value;

Value I(int64_t v) { return Value::Int(v); }
Value U(uint64_t v) { return Value::Int(static_cast<int64_t>(v)); }
Value D(double v) { return Value::Number(v); }
Value S(std::string v) { return Value::String(std::move(v)); }
// A rank number, or null when unknown.
Value Rank(int32_t r) { return r == kDigestNoRank ? Value::Null() : Value::Int(r); }
// A figure that is -1 when it could not be measured.
Value Measured(int64_t ns) { return ns < 0 ? Value::Null() : Value::Int(ns); }

std::string RankList(const std::vector<int32_t>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", ranks[i]);
  return out;
}

std::string ExpectedFrom(const ClusterResult& r) {
  const std::string& f = r.expected_ranks_from;
  if (f == "traces") return "the world size the traces state (--world-size to change)";
  if (f == "communication_matrix.json links") {
    return "the ranks communication_matrix.json's links name (largest + 1; --world-size to change)";
  }
  if (f == "collective group size") return "the largest group a collective names (--world-size to change)";
  return f;
}

void AddSummary(const ClusterResult& r, Section* s) {
  render::KeyValues& kv = s->Add(render::KeyValues{});
  kv.items = {{"digests", "Digests", U(r.digests), Unit::kCount},
              {"usable", "Usable ranks", U(r.usable), Unit::kCount},
              {"broken", "Broken digests", U(r.broken.size()), Unit::kCount},
              {"expected_ranks", "Expected ranks", I(r.expected_ranks), Unit::kCount},
              {"expected_ranks_from", "Expected ranks from", S(ExpectedFrom(r))},
              {"missing_count", "Missing ranks", U(r.missing_count), Unit::kCount}};
  if (!r.beyond_world_size.empty()) {
    kv.items.push_back(
        {"beyond_world_size", "Warning: ranks at or beyond --world-size",
         S(fmt::format("{} present, left out of the expected ranks 0..{} (--world-size {} is too small?)",
                       RankList(r.beyond_world_size), r.expected_ranks - 1, r.expected_ranks))});
  }
  if (r.expected_ranks_from == "--world-size" && r.implied_world_size > r.expected_ranks) {
    kv.items.push_back({"implied_world_size", "Warning: the inputs imply more ranks",
                        S(fmt::format("{} (from {})", r.implied_world_size, r.implied_world_size_from))});
  }
  if (r.world_size_in_traces > 0 && static_cast<uint64_t>(r.world_size_in_traces) != r.digests) {
    kv.items.push_back({"world_size_in_traces", "World size in the traces", I(r.world_size_in_traces), Unit::kCount});
  }
  kv.items.push_back({"matched", "Collectives matched", U(r.matched), Unit::kCount});
  kv.items.push_back({"unmatched", "Collectives unmatched", U(r.unmatched), Unit::kCount});
  if (r.stalled > 0) {
    kv.items.push_back({"stalled",
                        "Stalled (every rank present waited in it for a rank not in the inputs: crashed or hung; "
                        "a wait, not transfer)",
                        U(r.stalled), Unit::kCount});
  }
  if (r.incomplete > 0) {
    kv.items.push_back({"incomplete",
                        "Matched but not completed on every rank (a rank ended before the last arrived: a peer failed; "
                        "left out of wait, lateness and transfer)",
                        U(r.incomplete), Unit::kCount});
  }
  for (const ClusterRank& c : r.ranks) {
    if (c.step_shift == 0) continue;
    const int64_t n = c.step_shift < 0 ? -c.step_shift : c.step_shift;
    kv.items.push_back(
        {fmt::format("step_shift_{}", c.rank), fmt::format("Rank {}'s step numbers", c.rank),
         S(fmt::format("{} {} the others' (its profiler started {} step(s) {}): its step N is paired and shown as "
                       "step N {} {}, the same iteration (the ends agree so)",
                       n, c.step_shift > 0 ? "behind" : "ahead of", n, c.step_shift > 0 ? "later" : "earlier",
                       c.step_shift > 0 ? "+" : "−", n))});
  }
  if (r.keys_by_position > 0) {
    kv.items.push_back({"keys_by_position",
                        "Collective kinds paired by position, not within steps (a rank numbers no step)",
                        U(r.keys_by_position), Unit::kCount});
  }
  kv.items.push_back({"raw_end_spread_p50_ns", "Raw clocks: median end spread", Measured(r.raw_end_spread_p50_ns), Unit::kNs});
  kv.items.push_back({"raw_end_spread_share", "Raw clocks: spread of the median collective", D(r.raw_end_spread_share),
                      Unit::kFraction});
  kv.items.push_back({"raw_clocks_agree", "Raw clocks agree", Value::Bool(r.raw_clocks_agree)});
  if (r.aligned) {
    kv.items.push_back({"max_abs_offset_ns", "Aligned clocks: largest offset", I(r.max_abs_offset_ns), Unit::kNs});
    kv.items.push_back({"aligned_end_spread_p50_ns", "Aligned clocks: median end spread", Measured(r.aligned_end_spread_p50_ns), Unit::kNs});
    kv.items.push_back({"aligned_end_spread_share", "Aligned clocks: spread of the median collective",
                        D(r.aligned_end_spread_share), Unit::kFraction});
    kv.items.push_back({"aligned_clocks_agree", "Aligned clocks agree (figures trusted)", Value::Bool(r.aligned_clocks_agree)});
  }
  if (r.wait_ratio) {
    kv.items.push_back({"wait_ratio", "Wait ratio (of collective time)", D(*r.wait_ratio), Unit::kFraction});
    kv.items.push_back({"wait_ratio_source", "Wait ratio from", S(r.wait_ratio_source)});
  } else {
    kv.items.push_back({"wait_ratio_unavailable", "Wait ratio unavailable", S(r.wait_ratio_unavailable)});
  }
}

void AddSlowest(const ClusterResult& r, Section* s) {
  if (!r.slowest) {
    s->Add(render::Paragraph{"Slow rank unavailable: " + r.slow_rank_unavailable});
    return;
  }
  const SlowRankReport& w = *r.slowest;
  render::Finding f;
  f.key = "slowest_rank";
  // "Slowest" by arrival at collectives; the steps table's rank with the
  // longest step is another reading, so each is named by what it measures.
  f.title = fmt::format("Rank {} arrives last at collectives: later than the median of the others", w.rank);
  f.severity = w.outlier ? render::Severity::kHigh : render::Severity::kInfo;
  if (!w.excess_ratio_base.empty()) {
    f.impact = w.excess_ratio;
    f.impact_base = w.excess_ratio_base;
  } else {
    f.detail = "Its trace has neither device activity nor steps: no time to state the excess as a share of.";
  }
  uint64_t matched = 0;
  for (const ClusterRank& c : r.ranks) {
    if (c.rank == w.rank) matched = c.matched;
  }
  f.evidence = {{"excess_ns", "Later than the others' median by", I(w.excess_ns), Unit::kNs},
                {"last_arrivals", "Last to arrive (later than the median arrival)",
                 S(fmt::format("at {} of its {} matched collectives", w.last_arrivals, matched))},
                {"outlier_test", "Outlier test", S(r.test_name == "none" ? "none (too few ranks)" : r.test_name)}};
  if (r.test_name != "none") {
    f.evidence.push_back({"statistic", "Statistic", D(w.statistic)});
    f.evidence.push_back({"critical", "Critical value", D(w.critical)});
    f.evidence.push_back({"outlier", "An outlier", Value::Bool(w.outlier)});
  }
  s->Add(std::move(f));
}

void AddSlowRankOps(const SlowRankReport& w, Section* s) {
  s->Add(render::Paragraph{"Ops above its peers (the nearest half of the ranks by op totals; excess = its total − "
                           "the peers' median), outliers among the peers first."});
  Table& t = s->Add(Table{fmt::format("slow_rank_{}_ops", w.rank), "",
                          {{"name", "op", Unit::kNone}, {"category", "category", Unit::kNone},
                           {"count", "count", Unit::kCount}, {"total_ns", "total", Unit::kNs},
                           {"median_total_ns", "peers' median total", Unit::kNs}, {"excess_ns", "excess", Unit::kNs},
                           {"z", "z", Unit::kNone}, {"p50_ns", "p50 (rank)", Unit::kNs}, {"p99_ns", "p99 (rank)", Unit::kNs},
                           {"cluster_p50_ns", "p50 (all)", Unit::kNs}, {"cluster_p99_ns", "p99 (all)", Unit::kNs}},
                          {}, ""});
  if (!w.ops.empty() && std::isnan(w.ops.front().z)) {
    t.note = fmt::format("z: none, fewer than {} peers (a median and spread of one or two ranks say nothing).",
                         kSlowRankOpsMinPeersForZ);
  }
  for (const OpDifference& d : w.ops) {
    t.rows.push_back({S(d.name), S(d.category), U(d.count), I(d.total_ns), D(d.median_total_ns), D(d.excess_ns),
                      std::isnan(d.z) ? Value::Null() : D(std::round(d.z * 10) / 10), D(d.p50_ns), D(d.p99_ns),
                      D(d.cluster_p50_ns), D(d.cluster_p99_ns)});
  }
}

// Why cross-rank arrival figures (who arrived last, wait, lateness,
// transfer, clock offsets) are not shown: "" when the clocks used agree.
// cluster.json keeps the raw and aligned figures, with clocks.trusted.
std::string NotComparable(const ClusterResult& r) {
  if (r.trusted) return "";
  if (r.matched == 0) return "no collective is matched across 2 or more ranks: there are no arrivals to compare";
  return std::string("not comparable: the ranks' ends of matched collectives do not agree") +
         (r.aligned ? " even after aligning the clocks" : "") +
         ", so arrival times cannot be compared (Summary); cluster.json keeps the figures, with clocks.trusted false";
}

// Collectives that did not complete normally: stalled (a wait for a rank
// not in the inputs, named when the missing ranks are known) or incomplete
// with ranks that came after another had left. Their durations on the
// ranks' own clocks, so shown whatever the clocks' agreement.
void AddFailed(const ClusterResult& r, Section* s) {
  Table& t = s->Add(Table{"failed_collectives",
                          "",
                          {{"step", "step", Unit::kNone},
                           {"collective", "collective", Unit::kNone},
                           {"ranks", "ranks present", Unit::kCount},
                           {"waited_ns", "waited", Unit::kNs},
                           {"what", "what", Unit::kNone}},
                          {},
                          ""});
  std::string missing;
  if (!r.missing.empty() && r.missing.size() <= 8) missing = " (missing: " + RankList(r.missing) + ")";
  if (r.missing_count > 0 && missing.empty()) missing = fmt::format(" ({} ranks missing)", r.missing_count);
  for (const ClusterInstance& in : r.instances) {
    if (in.state == "complete" || (in.state == "incomplete" && in.late_after_end.empty())) continue;
    const std::string what =
        in.state == "stalled"
            ? "every rank present waited in it until it ended, for a rank not in the inputs" + missing +
                  ": it never arrived (crashed or hung); a wait, not transfer"
            : RankList(in.late_after_end) + " arrived after another rank had left it (gave up after a wait)";
    t.rows.push_back({I(in.step),
                      S(fmt::format("{} #{}{}", CollectiveTypeNameOfByte(in.type), in.ordinal,
                                    in.group.empty() ? "" : " (" + in.group + ")")),
                      U(in.ranks), I(in.waited_ns), S(what)});
  }
  if (r.stalled > 0) {
    t.note = fmt::format(
        "Stalled: the last collective every rank entered, each rank in it at least {:g}x its usual collective and {}; "
        "that time is the ranks' stalled wait (cluster.json ranks[].stalled_wait_ns), in none of wait, lateness or "
        "transfer.",
        kStalledFactor, render::FormatQuantity(static_cast<double>(kStalledMinNs), Unit::kNs));
  }
}

void AddSteps(const ClusterResult& r, Section* s) {
  Table& t = s->Add(Table{"steps", "",
                          {{"number", "step", Unit::kNone}, {"ranks", "ranks", Unit::kCount},
                           {"max_ns", "job step time (max)", Unit::kNs}, {"median_ns", "median", Unit::kNs},
                           {"slowest_rank", "longest step on rank", Unit::kNone}, {"last_rank", "last to arrive", Unit::kNone},
                           {"last_late_by_ns", "by (vs median arrival)", Unit::kNs},
                           {"last_collective", "at", Unit::kNone}},
                          {}, ""});
  const std::string not_comparable = NotComparable(r);
  for (const ClusterStep& c : r.steps) {
    if (!not_comparable.empty()) {
      // Step times are each rank's own durations; who arrived last is not known.
      t.rows.push_back({I(c.number), U(c.ranks), I(c.max_ns), I(c.median_ns), Rank(c.slowest_rank), Value::Null(),
                        Value::Null(), Value::Null()});
      continue;
    }
    t.rows.push_back({I(c.number), U(c.ranks), I(c.max_ns), I(c.median_ns), Rank(c.slowest_rank), Rank(c.last_rank),
                      I(c.last_late_by_ns), S(c.last_collective)});
  }
  if (!not_comparable.empty() && !r.steps.empty()) t.note = "Last to arrive: " + not_comparable + ".";
}

void AddRanks(const ClusterResult& r, Section* s) {
  bool absent = false;
  for (const ClusterRank& c : r.ranks) absent |= c.absent_wait_ns >= 0;
  std::vector<render::Column> columns = {{"rank", "rank", Unit::kNone},
                                         {"host", "host", Unit::kNone},
                                         {"aligned_wait_ns", "wait", Unit::kNs},
                                         {"aligned_transfer_ns", "transfer", Unit::kNs}};
  if (absent) columns.push_back({"absent_wait_ns", "waiting for ranks not in the inputs", Unit::kNs});
  for (render::Column c : std::vector<render::Column>{{"aligned_lateness_ns", "lateness", Unit::kNs},
                                                      {"clock_offset_ns", "clock offset", Unit::kNs},
                                                      {"last_arrivals", "last arrivals", Unit::kCount},
                                                      {"device_utilization", "device busy / span", Unit::kFraction},
                                                      {"memory_peak_allocated_bytes", "memory peak", Unit::kBytes}}) {
    columns.push_back(std::move(c));
  }
  Table& t = s->Add(Table{"ranks", "", std::move(columns), {}, ""});
  const std::string not_comparable = NotComparable(r);
  bool no_device = false, no_memory = false, any_device = false;
  for (const ClusterRank& c : r.ranks) {
    // A rank without device activity (CPU-only) or memory events has no
    // utilisation or peak to show: blank, not 0.
    const Value util = c.device_span_ns > 0 ? D(DeviceUtilization(c)) : Value::Null();
    const bool memory = c.memory_peak_allocated > 0 || c.memory_capacity > 0;
    const Value peak = memory ? D(c.memory_peak_allocated) : Value::Null();
    no_device |= c.device_span_ns <= 0;
    any_device |= c.device_span_ns > 0;
    no_memory |= !memory;
    std::vector<Value> row;
    if (!not_comparable.empty()) {
      row = {Rank(c.rank),  S(c.host),     Value::Null(), Value::Null(), Value::Null(),
             Value::Null(), Value::Null(), util,          peak};
    } else {
      row = {Rank(c.rank),
             S(c.host),
             I(c.aligned_wait_ns),
             I(c.aligned_transfer_ns),
             I(c.aligned_lateness_ns),
             I(c.clock_offset_ns),
             U(c.last_arrivals),
             util,
             peak};
    }
    // On the ranks' own durations (communication.json), whatever the clocks.
    if (absent) row.insert(row.begin() + 4, Measured(c.absent_wait_ns));
    t.rows.push_back(std::move(row));
  }
  if (!r.ranks.empty() && not_comparable.empty() && r.matched > 0) {
    t.note =
        "Wait, transfer and lateness: totals over the rank's completed matched collectives in the whole trace "
        "(every step profiled, warm-up included), not per step.";
  }
  auto add = [&](const std::string& line) { t.note += (t.note.empty() ? "" : " ") + line; };
  if (absent) {
    std::string runs;  // "2–7", "2, 5"
    for (size_t i = 0; i < r.missing.size() && i < 64;) {
      size_t j = i;
      while (j + 1 < r.missing.size() && r.missing[j + 1] == r.missing[j] + 1) ++j;
      runs += fmt::format("{}{}", runs.empty() ? "" : ", ", r.missing[i]) +
              (j > i ? fmt::format("–{}", r.missing[j]) : std::string());
      i = j + 1;
    }
    add(
        fmt::format("{} of the {} expected missing{}: the time after the last rank present arrived that "
                    "communication.json calls idle (neither transit nor a wait for a rank present) is the wait for "
                    "them, shown apart and not in transfer.",
                    r.missing_count == 1 ? "1 rank" : fmt::format("{} ranks", r.missing_count), r.expected_ranks,
                    runs.empty() ? "" : " (" + runs + ")"));
  }
  if (r.transfer_includes_absent_wait && not_comparable.empty()) {
    add(
        fmt::format("{} ranks missing: transfer (the time after the last rank present arrived) includes any wait for "
                    "them, which these traces cannot tell apart.",
                    r.missing_count));
  }
  if (!not_comparable.empty() && !r.ranks.empty()) {
    add("Wait, transfer, lateness, clock offset and last arrivals: " + not_comparable + ".");
  }
  if (any_device) {
    add("Device busy / span: the union of each device's activity over its span (first to last activity) in the "
        "whole trace, warm-up included, over the rank's devices; not analyze's device_util, which is of the steady "
        "steps' wall time.");
  }
  if (no_device || no_memory) {
    add(std::string("A blank device busy / span") + (no_memory ? " or memory peak" : "") +
        ": the rank's trace has no device activity" + (no_memory ? " or no memory events" : "") + ".");
  }
}

void AddProblems(const ClusterResult& r, Section* s) {
  Table& t = s->Add(Table{"problems", "",
                          {{"rank", "rank", Unit::kNone}, {"source", "digest", Unit::kNone},
                           {"reason", "problem", Unit::kNone}},
                          {}, ""});
  for (const ProblemDigest& b : r.broken) t.rows.push_back({Rank(b.rank), S(b.source), S(b.reason)});
  // Missing ranks one row per run of consecutive ranks ("2–127": 126 ranks
  // of a 128-rank job mapped from 2 traces), not one row each.
  for (size_t i = 0; i < r.missing.size();) {
    size_t j = i;
    while (j + 1 < r.missing.size() && r.missing[j + 1] == r.missing[j] + 1) ++j;
    if (j == i) {
      t.rows.push_back({Rank(r.missing[i]), Value::Null(), S("missing")});
    } else {
      t.rows.push_back({S(fmt::format("{}–{}", r.missing[i], r.missing[j])), Value::Null(),
                        S(fmt::format("missing ({} ranks)", j - i + 1))});
    }
    i = j + 1;
  }
  if (r.missing_count > r.missing.size()) {
    t.note = fmt::format("{} missing ranks in all (too many to list)", r.missing_count);
  }
}

// Records the importer could not read, per rank (a corrupt event skipped,
// ...): the rank is analysed without them.
void AddImportDiagnostics(const ClusterResult& r, Section* s) {
  s->Add(render::Paragraph{"Ranks analysed without part of their trace: what the import skipped or could not read."});
  Table& t = s->Add(Table{"import_diagnostics",
                          "",
                          {{"rank", "rank", Unit::kNone},
                           {"kind", "kind", Unit::kNone},
                           {"count", "count", Unit::kCount},
                           {"first_where", "first at", Unit::kNone},
                           {"description", "what", Unit::kNone}},
                          {},
                          ""});
  size_t left_out = 0;
  for (const ClusterRank& c : r.ranks) {
    for (const DigestDiagnostic& g : c.import_diagnostics) {
      if (t.rows.size() >= kDiagnosticRowsShown) {
        ++left_out;
        continue;
      }
      t.rows.push_back({Rank(c.rank), S(g.kind), U(g.count), S(g.first_where), S(g.description)});
    }
  }
  if (left_out > 0) t.note = fmt::format("{} more not shown (all are in cluster.json).", left_out);
}

void AddLinks(const ClusterResult& r, Section* s) {
  size_t slow_links = 0;
  for (const LinkBandwidth& l : r.links) slow_links += l.slow;
  s->Add(render::Paragraph{fmt::format("{} (rank, link) pairs, {} slow (below 80% of their transport's median).",
                                       r.links.size(), slow_links)});
  Table& t = s->Add(Table{"links", "",
                          {{"rank", "rank", Unit::kNone}, {"link", "link", Unit::kNone},
                           {"transport", "transport", Unit::kNone},
                           {"bandwidth_bytes_per_second", "bandwidth", Unit::kBytesPerSecond},
                           {"transport_median_bytes_per_second", "median", Unit::kBytesPerSecond},
                           {"slow", "slow", Unit::kNone}},
                          {}, ""});
  size_t shown = 0, left_out = 0;
  for (const LinkBandwidth& l : r.links) {
    if (!l.judged) continue;
    if (++shown > 10 && !l.slow) {
      ++left_out;
      continue;
    }
    t.rows.push_back({Rank(l.rank), S(l.link), S(l.transport), D(l.bandwidth_bytes_per_second),
                      D(l.transport_median_bytes_per_second), Value::Bool(l.slow)});
  }
  if (left_out > 0) t.note = fmt::format("{} more links that are not slow not shown (all are in cluster.json).", left_out);
}

}  // namespace

render::Document ClusterToDocument(const ClusterResult& r) {
  render::Document doc;
  doc.key = "cluster";
  doc.title = "aiprof cluster report";
  doc.generator = "aiprof cluster";
  doc.machine_json = ClusterToJson(r);
  AddSummary(r, &doc.AddSection("summary", "Summary"));
  AddSlowest(r, &doc.AddSection("slowest", "Last rank at collectives"));
  for (const SlowRankReport& w : r.slow_ranks) AddSlowRankOps(w, &doc.AddSection(fmt::format("slow_rank_{}", w.rank), fmt::format("Slow rank {}", w.rank)));
  bool failed = r.stalled > 0;
  for (const ClusterInstance& in : r.instances) failed |= !in.late_after_end.empty();
  if (failed) AddFailed(r, &doc.AddSection("failed_collectives", "Collectives that did not complete"));
  AddSteps(r, &doc.AddSection("steps", "Steps"));
  AddRanks(r, &doc.AddSection("ranks", "Ranks"));
  if (!r.broken.empty() || r.missing_count > 0) AddProblems(r, &doc.AddSection("problems", "Missing or broken digests"));
  bool diagnostics = false;
  for (const ClusterRank& c : r.ranks) diagnostics |= !c.import_diagnostics.empty();
  if (diagnostics) AddImportDiagnostics(r, &doc.AddSection("import_diagnostics", "Import diagnostics"));
  if (!r.links.empty()) AddLinks(r, &doc.AddSection("links", "Links"));
  return doc;
}

std::string ClusterToMarkdown(const ClusterResult& r) { return render::RenderMarkdown(ClusterToDocument(r)); }

std::string ClusterToHtml(const ClusterResult& r) { return render::RenderHtmlPage(ClusterToDocument(r)); }

std::vector<render::OutputFormat> ClusterFormats() {
  return {render::JsonFormat(), render::MarkdownFormat(), render::HtmlFormat(), render::TextFormat()};
}

StatusOr<std::string> RenderClusterReport(const ClusterResult& r, const std::string& path) {
  std::vector<render::OutputFormat> formats = ClusterFormats();
  ASSIGN_OR_RETURN(std::string format, render::ResolveFormat(formats, {"", path}, "json"));
  if (format == "json") return ClusterToJson(r);
  return render::RenderDocument(ClusterToDocument(r), format);
}

}  // namespace aiprof
