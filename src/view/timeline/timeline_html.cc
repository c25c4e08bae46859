#include "src/view/timeline/timeline_html.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>

#include "src/analysis/attribution/attribution.h"
#include "src/render/escape.h"
#include "src/render/page.h"
#include "src/render/svg_chart.h"
#include "src/view/timeline/timeline.css.h"
#include "src/view/timeline/timeline.js.h"

namespace aiprof {
namespace {


// Appends JSON to a string: numbers without locale, strings escaped.
class JsonOut {
 public:
  explicit JsonOut(std::string* out) : out_(out) {}
  void Raw(std::string_view s) { out_->append(s); }
  void Int(int64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_->append(buf, r.ptr);
  }
  void Double(double v) {
    if (!std::isfinite(v)) {
      out_->append("null");
      return;
    }
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out_->append(buf, r.ptr);
  }
  void Str(std::string_view s) {
    out_->push_back('"');
    AppendDisplayJsonEscaped(out_, s);  // the page shows it: invisible controls as \uXXXX
    out_->push_back('"');
  }
  void Key(std::string_view k) {
    Str(k);
    out_->push_back(':');
  }
  // [f(0), f(1), ...] for n items.
  template <typename F>
  void Array(size_t n, F&& f) {
    out_->push_back('[');
    for (size_t i = 0; i < n; ++i) {
      if (i) out_->push_back(',');
      f(i);
    }
    out_->push_back(']');
  }
  // Integers, each written as the difference to the one before (first: to 0).
  template <typename F>
  void DeltaArray(size_t n, F&& value) {
    int64_t prev = 0;
    Array(n, [&](size_t i) {
      int64_t v = value(i);
      Int(v - prev);
      prev = v;
    });
  }

 private:
  std::string* out_;
};

// Names of the shown slices and steps, interned into the page's own table,
// with each name's count and total time over all slices of the trace.
class NameTable {
 public:
  explicit NameTable(const Trace& t) : index_(t.strings.size(), -1) {}
  int32_t Add(StringId id) {
    int32_t& slot = index_[id.raw];
    if (slot < 0) {
      slot = int32_t(ids_.size());
      ids_.push_back(id);
    }
    return slot;
  }
  int32_t Find(StringId id) const { return index_[id.raw]; }
  const std::vector<StringId>& ids() const { return ids_; }

 private:
  std::vector<int32_t> index_;
  std::vector<StringId> ids_;
};

int64_t Rel(const TimelineModel& m, int64_t ts) { return ts - m.start_ns; }

void WriteSliceRow(const Trace& t, const TimelineModel& m, const TimelineRow& row, NameTable* names,
                   NameTable* cats, JsonOut* j) {
  const SliceTable& s = t.slices;
  const auto& d = row.detailed;
  j->Key("ts");
  j->DeltaArray(d.size(), [&](size_t i) { return Rel(m, s.ts_ns[d[i]]); });
  j->Raw(",");
  j->Key("dur");
  j->Array(d.size(), [&](size_t i) { j->Int(s.dur_ns[d[i]]); });
  j->Raw(",");
  j->Key("d");
  j->Array(d.size(), [&](size_t i) { j->Int(s.depth[d[i]]); });
  j->Raw(",");
  j->Key("n");
  j->Array(d.size(), [&](size_t i) { j->Int(names->Add(s.name[d[i]])); });
  j->Raw(",");
  j->Key("c");
  j->Array(d.size(), [&](size_t i) { j->Int(cats->Add(s.category[d[i]])); });
  j->Raw(",");
  j->Key("id");
  j->DeltaArray(d.size(), [&](size_t i) { return int64_t(d[i]); });
  j->Raw(",");
  j->Key("lod");
  j->Array(row.density.size(), [&](size_t l) {
    const auto& level = row.density[l];
    j->Array(level.size(), [&](size_t k) {
      const DensityBins& db = level[k];
      j->Raw("{");
      j->Key("d");
      j->Int(db.depth);
      j->Raw(",");
      j->Key("b");
      j->DeltaArray(db.bin.size(), [&](size_t i) { return db.bin[i]; });
      j->Raw(",");
      j->Key("n");
      j->Array(db.count.size(), [&](size_t i) { j->Int(db.count[i]); });
      j->Raw(",");
      j->Key("t");
      j->Array(db.busy_ns.size(), [&](size_t i) { j->Int(db.busy_ns[i]); });
      j->Raw("}");
    });
  });
  if (!row.module.empty() || m.modules.present) {
    j->Raw(",");
    j->Key("m");
    j->Array(row.module.size(), [&](size_t i) { j->Int(row.module[i]); });
  }
  j->Raw(",");
  j->Key("sts");
  j->DeltaArray(row.samples.size(), [&](size_t i) { return Rel(m, t.samples.ts_ns[row.samples[i]]); });
  j->Raw(",");
  j->Key("stotal");
  j->Int(int64_t(row.sample_total));
  if (row.instants.empty()) return;
  // Instants by kind: each one's time (delta-encoded), or count bins per level.
  j->Raw(",");
  j->Key("inst");
  j->Array(row.instants.size(), [&](size_t g) {
    const InstantGroup& ig = row.instants[g];
    j->Raw("{");
    j->Key("k");
    j->Int(ig.kind);
    j->Raw(",");
    j->Key("total");
    j->Int(int64_t(ig.total));
    j->Raw(",");
    if (!m.instants_binned) {
      j->Key("ts");
      j->DeltaArray(ig.shown.size(), [&](size_t i) { return Rel(m, t.instants.ts_ns[ig.shown[i]]); });
    } else {
      j->Key("lod");
      j->Array(ig.lod.size(), [&](size_t l) {
        const InstantBins& ib = ig.lod[l];
        j->Raw("{");
        j->Key("b");
        j->DeltaArray(ib.bin.size(), [&](size_t i) { return ib.bin[i]; });
        j->Raw(",");
        j->Key("n");
        j->Array(ib.count.size(), [&](size_t i) { j->Int(ib.count[i]); });
        j->Raw("}");
      });
    }
    j->Raw("}");
  });
}

// The instants' kinds and figures; only for traces that have instants, so
// the page of a trace without any is as it was before instants were drawn.
void WriteInstants(const Trace& t, const TimelineModel& m, JsonOut* j) {
  j->Key("instants");
  j->Raw("{");
  j->Key("kinds");
  j->Array(m.instant_kinds.size(), [&](size_t k) {
    const TimelineInstantKind& ik = m.instant_kinds[k];
    j->Raw("{");
    j->Key("cat");
    j->Str(t.Str(ik.category));
    j->Raw(",");
    j->Key("name");
    j->Str(t.Str(ik.name));
    j->Raw(",");
    j->Key("fault");
    j->Int(ik.page_fault ? 1 : 0);
    j->Raw(",");
    j->Key("total");
    j->Int(int64_t(ik.total));
    if (!m.fault_sources.empty()) {
      j->Raw(",");
      j->Key("src");
      j->Int(ik.source);
    }
    j->Raw("}");
  });
  j->Raw(",");
  j->Key("total");
  j->Int(int64_t(m.instant_total));
  j->Raw(",");
  j->Key("hidden");
  j->Int(int64_t(m.instant_hidden));
  j->Raw(",");
  j->Key("unscoped");
  j->Int(int64_t(m.instant_unscoped));
  j->Raw(",");
  j->Key("binned");
  j->Int(m.instants_binned ? 1 : 0);
  j->Raw(",");
  j->Key("levels");
  j->Array(m.instant_level_ns.size(), [&](size_t i) { j->Int(m.instant_level_ns[i]); });
  j->Raw(",");
  j->Key("fault_period");
  j->Int(int64_t(m.fault_period));
  j->Raw(",");
  j->Key("fault_period_known");
  j->Int(m.fault_period_known ? 1 : 0);
  j->Raw(",");
  j->Key("fault_cost_ns");
  if (m.fault_cost_known) {
    j->Double(m.fault_cost_ns);
  } else {
    j->Raw("null");
  }
  // Pages of several captures: each one's label, period and cost; a fault
  // kind's "src" picks its own.
  if (!m.fault_sources.empty()) {
    j->Raw(",");
    j->Key("fault_sources");
    j->Array(m.fault_sources.size(), [&](size_t k) {
      const TimelineFaultSource& fs = m.fault_sources[k];
      j->Raw("{");
      j->Key("label");
      j->Str(fs.label);
      j->Raw(",");
      j->Key("fault_period");
      j->Int(int64_t(fs.meta.period));
      j->Raw(",");
      j->Key("fault_period_known");
      j->Int(fs.meta.period_known ? 1 : 0);
      j->Raw(",");
      j->Key("fault_cost_ns");
      if (fs.meta.cost_known) {
        j->Double(fs.meta.cost_ns);
      } else {
        j->Raw("null");
      }
      j->Raw("}");
    });
  }
  j->Raw("}");
}

void WriteCounterRow(const Trace& t, const TimelineModel& m, const TimelineRow& row, JsonOut* j) {
  const auto& p = row.counter_points;
  j->Key("cts");
  j->DeltaArray(p.size(), [&](size_t i) { return Rel(m, t.counters.ts_ns[p[i]]); });
  j->Raw(",");
  j->Key("cv");
  j->Array(p.size(), [&](size_t i) { j->Double(t.counters.value[p[i]]); });
  j->Raw(",");
  j->Key("ctotal");
  j->Int(int64_t(row.counter_total));
}

void WriteRows(const Trace& t, const TimelineModel& m, NameTable* names, NameTable* cats, JsonOut* j) {
  j->Key("rows");
  j->Array(m.rows.size(), [&](size_t r) {
    const TimelineRow& row = m.rows[r];
    j->Raw("{");
    j->Key("kind");
    j->Str(row.kind == TimelineRowKind::kCounter ? "counter" : "slices");
    j->Raw(",");
    j->Key("rank");
    j->Int(row.rank);
    j->Raw(",");
    j->Key("layer");
    j->Str(LayerName(row.layer));
    j->Raw(",");
    j->Key("label");
    j->Str(row.label);
    j->Raw(",");
    j->Key("depth");
    j->Int(row.depth_count);
    j->Raw(",");
    j->Key("slices");
    j->Int(int64_t(row.slice_count));
    j->Raw(",");
    if (row.kind == TimelineRowKind::kCounter) {
      WriteCounterRow(t, m, row, j);
    } else {
      WriteSliceRow(t, m, row, names, cats, j);
    }
    j->Raw("}");
  });
}

void WriteGaps(const TimelineModel& m, JsonOut* j) {
  j->Key("causes");
  j->Array(kGapCauseCount, [&](size_t c) { j->Str(GapCauseName(GapCause(c))); });
  j->Raw(",");
  // The report's colours for the causes (one page embeds both).
  j->Key("cause_colors");
  j->Array(kGapCauseCount, [&](size_t c) { j->Str(IdleCauseColor(c)); });
  j->Raw(",");
  j->Key("gaps");
  j->Array(m.gap_rows.size(), [&](size_t r) {
    const GapRow& g = m.gap_rows[r];
    j->Raw("{");
    j->Key("rank");
    j->Int(g.rank);
    j->Raw(",");
    j->Key("device");
    j->Int(g.device);
    j->Raw(",");
    j->Key("label");
    j->Str(g.label);
    j->Raw(",");
    j->Key("total");
    j->Int(int64_t(g.total));
    j->Raw(",");
    j->Key("by_cause");
    j->Array(kGapCauseCount, [&](size_t c) { j->Int(g.idle_by_cause_ns[c]); });
    j->Raw(",");
    j->Key("ts");
    j->DeltaArray(g.gaps.size(), [&](size_t i) { return Rel(m, g.gaps[i].start_ns); });
    j->Raw(",");
    j->Key("dur");
    j->Array(g.gaps.size(), [&](size_t i) { j->Int(g.gaps[i].end_ns - g.gaps[i].start_ns); });
    j->Raw(",");
    j->Key("cause");
    j->Array(g.gaps.size(), [&](size_t i) { j->Int(int(g.gaps[i].cause)); });
    j->Raw("}");
  });
}

void WriteSteps(const Trace& t, const TimelineModel& m, NameTable* names, JsonOut* j) {
  const StepTable& s = t.steps;
  const auto& st = m.steps;
  j->Key("steps");
  j->Raw("{");
  j->Key("rank");
  j->Array(st.size(), [&](size_t i) { j->Int(s.rank[st[i]]); });
  j->Raw(",");
  j->Key("n");
  j->Array(st.size(), [&](size_t i) { j->Int(names->Add(s.name[st[i]])); });
  j->Raw(",");
  j->Key("ts");
  j->Array(st.size(), [&](size_t i) { j->Int(Rel(m, s.ts_ns[st[i]])); });
  j->Raw(",");
  j->Key("dur");
  j->Array(st.size(), [&](size_t i) { j->Int(s.dur_ns[st[i]]); });
  j->Raw("}");
}

void WriteMarkers(const TimelineModel& m, JsonOut* j) {
  j->Key("markers");
  j->Array(m.markers.size(), [&](size_t i) {
    const TimelineMarker& k = m.markers[i];
    j->Raw("{");
    for (auto [key, val] : {std::pair<const char*, const std::string*>{"rule", &k.rule_id}, {"title", &k.title},
                            {"bottleneck", &k.bottleneck}, {"priority", &k.priority},
                            {"confidence", &k.confidence}, {"where", &k.where}, {"impact", &k.impact},
                            {"search", &k.search}}) {
      j->Key(key);
      j->Str(*val);
      j->Raw(",");
    }
    j->Key("rank");
    j->Int(k.rank);
    j->Raw(",");
    j->Key("ts");
    j->Int(Rel(m, k.ts_ns));
    j->Raw(",");
    j->Key("dur");
    j->Int(k.dur_ns);
    j->Raw("}");
  });
}

// The critical path overlay: the on-path slices (trace slice ids, delta
// encoded), the dependencies as [from, to, kind, ends] quadruples (ends: bit 0
// the arrow leaves `from`'s end, bit 1 it reaches `to`'s end), and the
// path's composition over the steady steps.
void WritePath(const TimelineModel& m, JsonOut* j) {
  const TimelinePath& p = m.path;
  j->Key("path");
  j->Raw("{");
  j->Key("slices");
  j->DeltaArray(p.slices.size(), [&](size_t i) { return int64_t(p.slices[i]); });
  j->Raw(",");
  j->Key("slices_total");
  j->Int(int64_t(p.slices_total));
  j->Raw(",");
  j->Key("edges");
  j->Array(p.edges.size(), [&](size_t i) {
    const TimelinePathEdge& e = p.edges[i];
    j->Int(e.from);
    j->Raw(",");
    j->Int(e.to);
    j->Raw(",");
    j->Int(int(e.kind));
    j->Raw(",");
    j->Int((e.from_end ? 1 : 0) | (e.to_end ? 2 : 0));
  });
  j->Raw(",");
  j->Key("edges_total");
  j->Int(int64_t(p.edges_total));
  j->Raw(",");
  j->Key("kinds");
  j->Array(kDepKindCount, [&](size_t k) { j->Str(DepKindName(DepKind(k))); });
  j->Raw(",");
  j->Key("steps");
  j->Int(int64_t(p.steps));
  j->Raw(",");
  j->Key("window_steps");
  j->Int(int64_t(p.window_steps));
  j->Raw(",");
  j->Key("window_path_ns");
  j->Int(p.window_path_ns);
  j->Raw(",");
  j->Key("classes");
  j->Array(kPathClassCount, [&](size_t c) { j->Str(PathClassName(PathClass(c))); });
  j->Raw(",");
  j->Key("by_class_ns");
  j->Array(kPathClassCount, [&](size_t c) { j->Int(p.window_by_class_ns[c]); });
  j->Raw("}");
}

// Count and total time of each name over every slice of the shown tracks,
// merged ones included, so search counts them too. Names of merged slices
// join the table up to kMaxNames; slices of names beyond it are "other".
constexpr size_t kMaxNames = 200'000;
void WriteNames(const Trace& t, const TimelineOptions& o, NameTable* names, JsonOut* j) {
  auto shown = [&](size_t i) { return o.track_shown.empty() || o.track_shown[t.slices.track[i]]; };
  for (size_t i = 0; i < t.slices.size() && names->ids().size() < kMaxNames; ++i) {
    if (shown(i)) names->Add(t.slices.name[i]);
  }
  std::vector<int64_t> count(names->ids().size()), total(names->ids().size());
  int64_t other_count = 0, other_total = 0;
  for (size_t i = 0; i < t.slices.size(); ++i) {
    if (!shown(i)) continue;
    int32_t k = names->Find(t.slices.name[i]);
    if (k < 0) {
      ++other_count, other_total += t.slices.dur_ns[i];
      continue;
    }
    ++count[k];
    total[k] += t.slices.dur_ns[i];
  }
  j->Key("names");
  j->Array(names->ids().size(), [&](size_t i) { j->Str(t.Str(names->ids()[i])); });
  j->Raw(",");
  j->Key("name_count");
  j->Array(count.size(), [&](size_t i) { j->Int(count[i]); });
  j->Raw(",");
  j->Key("name_total_ns");
  j->Array(total.size(), [&](size_t i) { j->Int(total[i]); });
  j->Raw(",");
  j->Key("other_names");
  j->Raw("{");
  j->Key("count");
  j->Int(other_count);
  j->Raw(",");
  j->Key("total_ns");
  j->Int(other_total);
  j->Raw("}");
}

}  // namespace

void AppendTimelineJson(const Trace& t, const TimelineModel& m, const TimelineOptions& o, std::string* out) {
  JsonOut j(out);
  NameTable names(t), cats(t);
  j.Raw("{");
  j.Key("version");
  j.Int(1);
  j.Raw(",");
  j.Key("title");
  j.Str(o.title);
  j.Raw(",");
  // The optional parts (aiprof diff --timeline), only when set.
  if (!o.rank_labels.empty()) {
    j.Key("rank_labels");
    j.Array(o.rank_labels.size(), [&](size_t i) { j.Str(o.rank_labels[i]); });
    j.Raw(",");
  }
  for (auto [key, value] : {std::pair{"markers_label", &o.markers_label}, std::pair{"note", &o.note}}) {
    if (value->empty()) continue;
    j.Key(key);
    j.Str(*value);
    j.Raw(",");
  }
  if (!o.color_as.empty()) {
    j.Key("color_as");
    j.Array(o.color_as.size(), [&](size_t i) {
      j.Raw("[");
      j.Str(o.color_as[i].first);
      j.Raw(",");
      j.Str(o.color_as[i].second);
      j.Raw("]");
    });
    j.Raw(",");
  }
  if (!o.boundaries_ns.empty()) {
    j.Key("boundaries");
    j.Array(o.boundaries_ns.size(), [&](size_t i) { j.Int(Rel(m, o.boundaries_ns[i])); });
    j.Raw(",");
  }
  j.Key("origin_ns");
  j.Str(std::to_string(m.start_ns));
  j.Raw(",");
  j.Key("span_ns");
  j.Int(m.end_ns - m.start_ns);
  j.Raw(",");
  j.Key("threshold_ns");
  j.Int(m.detail_threshold_ns == std::numeric_limits<int64_t>::max() ? -1 : m.detail_threshold_ns);
  j.Raw(",");
  j.Key("levels");
  j.Array(m.level_bin_ns.size(), [&](size_t i) { j.Int(m.level_bin_ns[i]); });
  j.Raw(",");
  j.Key("counts");
  j.Raw("{");
  std::pair<const char*, uint64_t> counts[] = {
      {"slices", m.slice_count},     {"detailed", m.detailed_count},  {"density_bins", m.density_bin_count},
      {"gaps", m.gaps_total},        {"gaps_shown", m.gaps_kept},     {"flows", m.flows_total},
      {"flows_shown", m.flows.size()}, {"sample_stride", m.sample_stride}, {"samples", t.samples.size()}};
  for (size_t i = 0; i < std::size(counts); ++i) {
    if (i) j.Raw(",");
    j.Key(counts[i].first);
    j.Int(int64_t(counts[i].second));
  }
  j.Raw("},");
  WriteRows(t, m, &names, &cats, &j);
  j.Raw(",");
  if (m.instant_total > 0 || m.instant_hidden > 0 || m.instant_unscoped > 0) {
    WriteInstants(t, m, &j);
    j.Raw(",");
  }
  WriteGaps(m, &j);
  j.Raw(",");
  WriteSteps(t, m, &names, &j);
  j.Raw(",");
  WriteMarkers(m, &j);
  j.Raw(",");
  j.Key("flows");
  j.Array(m.flows.size(), [&](size_t i) {
    j.Int(t.flows.from_slice[m.flows[i]]);
    j.Raw(",");
    j.Int(t.flows.to_slice[m.flows[i]]);
  });
  j.Raw(",");
  if (m.path.present) {
    WritePath(m, &j);
    j.Raw(",");
  }
  if (m.modules.present) {
    j.Key("modules");
    j.Raw("{");
    j.Key("names");
    j.Array(m.modules.names.size(), [&](size_t i) { j.Str(ModuleLabel(t.Str(m.modules.names[i]))); });
    j.Raw(",");
    j.Key("self_ns");
    j.Array(m.modules.self_ns.size(), [&](size_t i) { j.Int(m.modules.self_ns[i]); });
    j.Raw("},");
  }
  j.Key("cats");
  j.Array(cats.ids().size(), [&](size_t i) { j.Str(t.Str(cats.ids()[i])); });
  j.Raw(",");
  WriteNames(t, o, &names, &j);
  j.Raw("}");
}

void AppendTimelineHtml(const Trace& t, const TimelineModel& m, const TimelineOptions& o, std::string* out) {
  std::string title = o.title.empty() ? "aiprof timeline" : "aiprof timeline: " + o.title;
  render::PageSpec page;
  page.title = title;
  const std::string generator = o.generator.empty() ? "aiprof view --timeline" : o.generator;  // outlives `page`'s view
  page.generator = generator;
  page.styles = {embedded::kTimelineCss};
  page.scripts = {embedded::kTimelineJs};
  out->append(render::PageHead(page));
  out->append(
      "<div id=\"bar\"><b>aiprof timeline</b> <span id=\"title\"></span>"
      "<input id=\"search\" type=\"search\" placeholder=\"search slices by name\" autocomplete=\"off\">"
      "<span id=\"search-count\"></span><button id=\"reset\" title=\"Whole trace (0)\">reset</button>"
      "<span id=\"range\"></span><span id=\"lod\"></span>"
      "<span class=\"help\">wheel/W S: zoom · drag/A D: pan · shift+wheel/↑↓: scroll · shift+drag: select · "
      "click: details</span></div>\n"
      "<div id=\"main\"><canvas id=\"canvas\"></canvas></div>\n"
      "<div id=\"panel\"><div id=\"details\"></div><div id=\"selection\"></div><div id=\"legend\"></div></div>\n"
      "<script type=\"application/json\" id=\"aiprof-data\">");
  AppendTimelineJson(t, m, o, out);
  out->append("</script>\n");
  out->append(render::PageTail(page));
}

}  // namespace aiprof
