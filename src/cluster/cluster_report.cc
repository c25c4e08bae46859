#include "src/cluster/cluster_report.h"

#include <fmt/format.h>

#include <cmath>

#include "src/analysis/communication/collective_type.h"
#include "src/model/event_kind.h"
#include "src/render/escape.h"

namespace aiprof {
namespace {

const char* TypeName(uint8_t t) {
  return t < kCollectiveTypeCount ? CollectiveTypeName(static_cast<CollectiveType>(t)) : "other";
}

std::string Num(double v) {
  if (!std::isfinite(v)) return v > 0 ? "1e308" : (v < 0 ? "-1e308" : "null");
  return fmt::format("{}", v);
}

std::string Ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

std::string TestName(const ClusterResult& r) { return r.test_name; }

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
  j.Field("last_arrivals", s.last_arrivals);
  j.Key("ops");
  j.Open('[');
  for (const OpDifference& o : s.ops) {
    j.Open('{');
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
    j.Close('}');
  }
  j.Close(']');
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
  j.Field("missing_count", r.missing_count);
  j.Key("missing_ranks");
  j.Open('[');
  for (int32_t m : r.missing) j.Raw(std::to_string(m));
  j.Close(']');
  j.Key("broken");
  j.Open('[');
  for (const ProblemDigest& b : r.broken) {
    j.Open('{');
    j.Field("rank", b.rank);
    j.FieldStr("source", b.source);
    j.FieldStr("reason", b.reason);
    j.Close('}');
  }
  j.Close(']');
  j.Key("clocks");
  j.Open('{');
  j.Field("matched", r.matched);
  j.Field("unmatched", r.unmatched);
  j.Field("raw_end_spread_p50_ns", r.raw_end_spread_p50_ns);
  j.Field("raw_end_spread_share", r.raw_end_spread_share);
  j.Field("raw_clocks_agree", r.raw_clocks_agree);
  j.Field("aligned", r.aligned);
  j.Field("aligned_end_spread_p50_ns", r.aligned_end_spread_p50_ns);
  j.Field("aligned_end_spread_share", r.aligned_end_spread_share);
  j.Field("aligned_clocks_agree", r.aligned_clocks_agree);
  j.Field("max_abs_offset_ns", r.max_abs_offset_ns);
  j.Field("trusted", r.trusted);
  j.Close('}');
  j.Key("wait_ratio");
  if (r.wait_ratio) {
    j.Raw(Num(*r.wait_ratio));
  } else {
    j.Raw("null");
  }
  j.FieldStr("wait_ratio_source", r.wait_ratio_source);
  j.FieldStr("wait_ratio_unavailable", r.wait_ratio_unavailable);
  j.FieldStr("outlier_test", TestName(r));
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
  j.Key("ranks");
  j.Open('[');
  for (const ClusterRank& c : r.ranks) {
    j.Open('{');
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
    j.Field("device_utilization", c.device_span_ns > 0 ? static_cast<double>(c.device_busy_ns) / static_cast<double>(c.device_span_ns) : 0.0);
    j.Field("memory_peak_allocated_bytes", c.memory_peak_allocated);
    j.Field("memory_peak_reserved_bytes", c.memory_peak_reserved);
    j.Field("memory_capacity_bytes", c.memory_capacity);
    j.Field("matched", c.matched);
    j.Field("comm_ns", c.comm_ns);
    j.Field("wait_ns", c.wait_ns);
    j.Field("lateness_ns", c.lateness_ns);
    j.Field("transfer_ns", c.transfer_ns);
    j.Field("clock_offset_ns", c.clock_offset_ns);
    j.Field("aligned_wait_ns", c.aligned_wait_ns);
    j.Field("aligned_lateness_ns", c.aligned_lateness_ns);
    j.Field("aligned_transfer_ns", c.aligned_transfer_ns);
    j.Field("last_arrivals", c.last_arrivals);
    j.Field("lateness_z", c.lateness_z);
    j.Field("profiler_elapse_ns", c.profiler_elapse_ns);
    j.Field("profiler_wait_ns", c.profiler_wait_ns);
    j.Field("profiler_transit_ns", c.profiler_transit_ns);
    j.Close('}');
  }
  j.Close(']');
  j.Key("steps");
  j.Open('[');
  for (const ClusterStep& s : r.steps) {
    j.Open('{');
    j.Field("number", s.number);
    j.Field("ranks", s.ranks);
    j.Field("max_ns", s.max_ns);
    j.Field("median_ns", s.median_ns);
    j.Field("slowest_rank", s.slowest_rank);
    j.Field("collectives", s.collectives);
    j.Field("last_rank", s.last_rank);
    j.Field("last_late_by_ns", s.last_late_by_ns);
    j.FieldStr("last_collective", s.last_collective);
    j.Close('}');
  }
  j.Close(']');
  j.Key("collectives");
  j.Open('[');
  for (const ClusterInstance& in : r.instances) {
    j.Open('{');
    j.Field("step", in.step);
    j.FieldStr("group", in.group);
    j.FieldStr("type", TypeName(in.type));
    j.Field("ordinal", in.ordinal);
    j.Field("ranks", in.ranks);
    j.Field("last_rank", in.last_rank);
    j.Field("late_by_ns", in.late_by_ns);
    j.Field("late_by_next_ns", in.late_by_next_ns);
    j.Field("end_spread_ns", in.end_spread_ns);
    j.Close('}');
  }
  j.Close(']');
  j.Key("collective_types");
  j.Open('[');
  for (const ClusterTypeTime& t : r.type_times) {
    j.Open('{');
    j.Field("rank", t.rank);
    j.FieldStr("type", TypeName(t.type));
    j.Field("count", t.count);
    j.Field("total_ns", t.total_ns);
    j.Field("max_ns", t.max_ns);
    j.Field("bytes", t.bytes);
    j.Field("sized", t.sized);
    j.Field("sized_time_ns", t.sized_time_ns);
    j.Field("group_size", t.group_size);
    j.Close('}');
  }
  j.Close(']');
  j.Key("links");
  j.Open('[');
  for (const LinkBandwidth& l : r.links) {
    j.Open('{');
    j.Field("rank", l.rank);
    j.FieldStr("link", l.link);
    j.FieldStr("transport", l.transport);
    j.Field("bytes", l.bytes);
    j.Field("time_ns", l.time_ns);
    j.Field("bandwidth_bytes_per_second", l.bandwidth_bytes_per_second);
    j.Field("transport_median_bytes_per_second", l.transport_median_bytes_per_second);
    j.Field("judged", l.judged);
    j.Field("slow", l.slow);
    j.Close('}');
  }
  j.Close(']');
  j.Close('}');
  std::string s = j.Take();
  s += '\n';
  return s;
}

namespace {

// Findings shared by Markdown and HTML: (heading, rows of cells); `esc` escapes trace text.
template <typename Esc>
std::vector<std::string> Findings(const ClusterResult& r, Esc esc) {
  std::vector<std::string> f;
  f.push_back(fmt::format("{} digests, {} usable ranks, {} broken, {} missing", r.digests, r.usable, r.broken.size(),
                          r.missing_count));
  if (r.world_size_in_traces > 0 && static_cast<uint64_t>(r.world_size_in_traces) != r.digests) {
    f.push_back(fmt::format("the traces say the world has {} ranks", r.world_size_in_traces));
  }
  f.push_back(fmt::format("{} collectives matched, {} unmatched; raw clocks: ends differ by a median {} ({:.1f}% of a mean collective){}",
                          r.matched, r.unmatched, Ms(static_cast<double>(r.raw_end_spread_p50_ns)),
                          100 * r.raw_end_spread_share, r.raw_clocks_agree ? ", agree" : ", disagree"));
  if (r.aligned) {
    f.push_back(fmt::format("clocks aligned on the common ends of collectives: offsets up to {}, residual spread {} ({:.1f}%){}",
                            Ms(static_cast<double>(r.max_abs_offset_ns)), Ms(static_cast<double>(r.aligned_end_spread_p50_ns)),
                            100 * r.aligned_end_spread_share, r.aligned_clocks_agree ? "" : ": still disagree, figures not trusted"));
  }
  if (r.wait_ratio) {
    f.push_back(fmt::format("wait ratio {:.2f}% of collective time ({})", 100 * *r.wait_ratio, esc(r.wait_ratio_source)));
  } else {
    f.push_back("wait ratio unavailable: " + esc(r.wait_ratio_unavailable));
  }
  if (r.slowest) {
    const SlowRankReport& s = *r.slowest;
    std::string line = fmt::format("slowest rank {}: {} later than the median of the others ({:.2f}% of its device span), last to arrive {} times; ",
                                   s.rank, Ms(static_cast<double>(s.excess_ns)), 100 * s.excess_ratio, s.last_arrivals);
    if (TestName(r) == "none") {
      line += "too few ranks for an outlier test";
    } else {
      line += fmt::format("{} {:.3f} vs {:.3f}: {}", TestName(r), s.statistic, s.critical, s.outlier ? "an outlier" : "not an outlier");
    }
    f.push_back(line);
  } else {
    f.push_back("slow rank unavailable: " + esc(r.slow_rank_unavailable));
  }
  return f;
}

}  // namespace

std::string ClusterToMarkdown(const ClusterResult& r) {
  auto esc = [](std::string_view s) { return MarkdownEscape(s); };
  std::string o = "# aiprof cluster report\n\n";
  for (const std::string& line : Findings(r, esc)) o += "- " + line + "\n";
  for (const SlowRankReport& s : r.slow_ranks) {
    o += fmt::format("\n## Slow rank {}\n\nOps above its peers (the nearest half of the ranks by op totals; excess = its total − the peers' median, outliers among the peers first):\n\n", s.rank);
    o += "| op | category | count | total | median total | excess | z | p50 / p99 (rank) | p50 / p99 (all) |\n|---|---|---|---|---|---|---|---|---|\n";
    for (const OpDifference& d : s.ops) {
      o += fmt::format("| {} | {} | {} | {} | {} | {} | {:.1f} | {} / {} | {} / {} |\n", esc(d.name), esc(d.category), d.count,
                       Ms(static_cast<double>(d.total_ns)), Ms(d.median_total_ns), Ms(d.excess_ns), d.z, Ms(d.p50_ns),
                       Ms(d.p99_ns), Ms(d.cluster_p50_ns), Ms(d.cluster_p99_ns));
    }
  }
  o += "\n## Steps\n\n| step | ranks | job step time (max) | median | slowest rank | last to arrive | by (vs median arrival) | at |\n|---|---|---|---|---|---|---|---|\n";
  for (const ClusterStep& s : r.steps) {
    o += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", s.number, s.ranks, Ms(static_cast<double>(s.max_ns)),
                     Ms(static_cast<double>(s.median_ns)), s.slowest_rank, s.last_rank,
                     Ms(static_cast<double>(s.last_late_by_ns)), esc(s.last_collective));
  }
  o += "\n## Ranks\n\n| rank | host | wait | transfer | lateness | clock offset | last arrivals | device util | memory peak |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const ClusterRank& c : r.ranks) {
    o += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {:.1f}% | {:.1f} MiB |\n", c.rank, esc(c.host),
                     Ms(static_cast<double>(c.aligned_wait_ns)), Ms(static_cast<double>(c.aligned_transfer_ns)),
                     Ms(static_cast<double>(c.aligned_lateness_ns)), Ms(static_cast<double>(c.clock_offset_ns)),
                     c.last_arrivals,
                     c.device_span_ns > 0 ? 100.0 * static_cast<double>(c.device_busy_ns) / static_cast<double>(c.device_span_ns) : 0.0,
                     c.memory_peak_allocated / 1048576.0);
  }
  if (!r.broken.empty() || r.missing_count > 0) {
    o += "\n## Missing or broken digests\n\n";
    for (const ProblemDigest& b : r.broken) o += fmt::format("- rank {}: {} — {}\n", b.rank, esc(b.source), esc(b.reason));
    for (int32_t m : r.missing) o += fmt::format("- rank {}: missing\n", m);
  }
  size_t slow_links = 0;
  for (const LinkBandwidth& l : r.links) slow_links += l.slow;
  if (!r.links.empty()) {
    o += fmt::format("\n## Links\n\n{} (rank, link) pairs, {} slow (below 80% of their transport's median)\n\n", r.links.size(), slow_links);
    o += "| rank | link | transport | bandwidth | median | slow |\n|---|---|---|---|---|---|\n";
    size_t shown = 0;
    for (const LinkBandwidth& l : r.links) {
      if (!l.judged || (++shown > 10 && !l.slow)) continue;
      o += fmt::format("| {} | {} | {} | {:.2f} GB/s | {:.2f} GB/s | {} |\n", l.rank, esc(l.link), esc(l.transport),
                       l.bandwidth_bytes_per_second / 1e9, l.transport_median_bytes_per_second / 1e9, l.slow ? "yes" : "");
    }
  }
  return o;
}

std::string ClusterToHtml(const ClusterResult& r) {
  auto esc = [](std::string_view s) { return HtmlEscape(s); };
  std::string o =
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>aiprof cluster report</title>"
      "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
      "padding:2px 6px;text-align:right}td.l,th.l{text-align:left}</style></head><body>\n<h1>aiprof cluster report</h1>\n<ul>\n";
  for (const std::string& line : Findings(r, esc)) o += "<li>" + line + "</li>\n";
  o += "</ul>\n";
  for (const SlowRankReport& s : r.slow_ranks) {
    o += fmt::format("<h2>Slow rank {}</h2>\n<p>Ops above its peers (the nearest half of the ranks by op totals); outliers among the peers first.</p>\n<table><tr><th class=l>op</th><th class=l>category</th><th>count</th><th>total</th><th>peers' median total</th><th>excess</th><th>z</th></tr>\n", s.rank);
    for (const OpDifference& d : s.ops) {
      o += fmt::format("<tr><td class=l>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}</td></tr>\n",
                       esc(d.name), esc(d.category), d.count, Ms(static_cast<double>(d.total_ns)), Ms(d.median_total_ns),
                       Ms(d.excess_ns), d.z);
    }
    o += "</table>\n";
  }
  o += "<h2>Steps</h2>\n<table><tr><th>step</th><th>ranks</th><th>job step time</th><th>median</th><th>slowest rank</th><th>last to arrive</th><th>by</th><th class=l>at</th></tr>\n";
  for (const ClusterStep& s : r.steps) {
    o += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=l>{}</td></tr>\n", s.number,
                     s.ranks, Ms(static_cast<double>(s.max_ns)), Ms(static_cast<double>(s.median_ns)), s.slowest_rank,
                     s.last_rank, Ms(static_cast<double>(s.last_late_by_ns)), esc(s.last_collective));
  }
  o += "</table>\n<h2>Ranks</h2>\n<table><tr><th>rank</th><th class=l>host</th><th>wait</th><th>transfer</th><th>lateness</th><th>clock offset</th><th>last arrivals</th></tr>\n";
  for (const ClusterRank& c : r.ranks) {
    o += fmt::format("<tr><td>{}</td><td class=l>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", c.rank,
                     esc(c.host), Ms(static_cast<double>(c.aligned_wait_ns)), Ms(static_cast<double>(c.aligned_transfer_ns)),
                     Ms(static_cast<double>(c.aligned_lateness_ns)), Ms(static_cast<double>(c.clock_offset_ns)), c.last_arrivals);
  }
  o += "</table>\n";
  if (!r.broken.empty() || r.missing_count > 0) {
    o += "<h2>Missing or broken digests</h2>\n<ul>\n";
    for (const ProblemDigest& b : r.broken) o += fmt::format("<li>rank {}: {} — {}</li>\n", b.rank, esc(b.source), esc(b.reason));
    for (int32_t m : r.missing) o += fmt::format("<li>rank {}: missing</li>\n", m);
    o += "</ul>\n";
  }
  o += "</body></html>\n";
  return o;
}

StatusOr<std::string> RenderClusterReport(const ClusterResult& r, const std::string& path) {
  auto ends = [&](std::string_view suffix) { return path.size() >= suffix.size() && path.ends_with(suffix); };
  if (ends(".json") || path.empty() || path == "-") return ClusterToJson(r);
  if (ends(".md")) return ClusterToMarkdown(r);
  if (ends(".html") || ends(".htm")) return ClusterToHtml(r);
  return ErrStatus(path + ": unknown report format (use .json, .md or .html)");
}

}  // namespace aiprof
