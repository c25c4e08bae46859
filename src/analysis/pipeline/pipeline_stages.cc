#include "src/analysis/pipeline/pipeline_stages.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"

namespace aiprof {
namespace {

constexpr uint32_t kNoStage = UINT32_MAX;

struct StageScan {
  std::vector<uint32_t> stage_of_span;  // slice → stage index, or kNoStage
  std::vector<uint32_t> enclosing;      // slice → nearest enclosing stage span, or kNoSlice
  std::vector<PipelineStage> stages;
};

StageScan FindStageSpans(const Trace& trace, const std::vector<uint32_t>& parent) {
  const SliceTable& s = trace.slices;
  StageScan sc;
  sc.stage_of_span.assign(s.size(), kNoStage);
  sc.enclosing.assign(s.size(), kNoSlice);
  std::map<std::string_view, uint32_t> index;
  for (uint32_t i = 0; i < s.size(); ++i) {
    std::optional<std::string_view> name = StageName(trace.Str(s.name[i]));
    if (name && !IsDeviceActivity(s.kind[i])) {
      auto [it, added] = index.emplace(*name, static_cast<uint32_t>(sc.stages.size()));
      if (added) sc.stages.push_back(PipelineStage{std::string(*name)});
      sc.stage_of_span[i] = it->second;
    }
    // Parents precede children in slice order, so enclosing[parent] is known.
    uint32_t p = parent[i];
    if (p != kNoSlice) sc.enclosing[i] = sc.stage_of_span[p] != kNoStage ? p : sc.enclosing[p];
  }
  return sc;
}

// Working time per stage span: |∪ direct children| (children come in start order).
std::vector<int64_t> WorkingTimes(const Trace& trace, const std::vector<uint32_t>& parent, const StageScan& sc) {
  const SliceTable& s = trace.slices;
  std::vector<int64_t> working(s.size(), 0), covered(s.size(), INT64_MIN);
  for (uint32_t i = 0; i < s.size(); ++i) {
    uint32_t p = parent[i];
    if (p == kNoSlice || sc.stage_of_span[p] == kNoStage) continue;
    int64_t start = std::max(s.ts_ns[i], covered[p]), end = s.ts_ns[i] + s.dur_ns[i];
    if (end > start) working[p] += end - start;
    covered[p] = std::max(covered[p], end);
  }
  return working;
}

using EdgeKey = std::tuple<int, uint32_t, uint32_t>;  // kind, from, to

uint32_t StageAt(const StageScan& sc, uint32_t slice) {
  if (slice == kNoSlice) return kNoStage;
  if (sc.stage_of_span[slice] != kNoStage) return sc.stage_of_span[slice];
  uint32_t e = sc.enclosing[slice];
  return e == kNoSlice ? kNoStage : sc.stage_of_span[e];
}

void AddEdge(std::map<EdgeKey, uint64_t>* edges, StageEdgeKind kind, uint32_t from, uint32_t to) {
  if (from != kNoStage && to != kNoStage && from != to) (*edges)[{static_cast<int>(kind), from, to}]++;
}

}  // namespace

std::optional<std::string_view> StageName(std::string_view n) {
  for (std::string_view p : kStagePrefixes) {
    if (n.size() > p.size() && n.compare(0, p.size(), p) == 0) {
      std::string_view rest = n.substr(p.size());
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      if (!rest.empty()) return rest;
    }
  }
  return std::nullopt;
}

const char* StageEdgeKindName(StageEdgeKind k) {
  switch (k) {
    case StageEdgeKind::kContains: return "contains";
    case StageEdgeKind::kThen: return "then";
    case StageEdgeKind::kFlow: return "flow";
  }
  return "?";
}

PipelineResult ComputePipelineStages(const Trace& trace) {
  const SliceTable& s = trace.slices;
  std::vector<uint32_t> parent = ParentSlices(trace);
  StageScan sc = FindStageSpans(trace, parent);
  PipelineResult r;
  if (sc.stages.empty()) return r;
  std::vector<int64_t> working = WorkingTimes(trace, parent, sc);
  std::map<EdgeKey, uint64_t> edges;
  uint32_t track = kNoTrack, prev_top = kNoStage;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.track[i] != track) track = s.track[i], prev_top = kNoStage;
    uint32_t st = sc.stage_of_span[i];
    if (st == kNoStage) continue;
    PipelineStage& stage = sc.stages[st];
    int64_t d = s.dur_ns[i];
    stage.instances++;
    stage.total_ns += d;
    stage.working_ns += std::min(working[i], d);
    stage.waiting_ns += d - std::min(working[i], d);
    stage.max_ns = std::max(stage.max_ns, d);
    if (sc.enclosing[i] == kNoSlice) {
      stage.top_level_instances++;
      r.pipeline_ns += d;
      AddEdge(&edges, StageEdgeKind::kThen, prev_top, st);
      prev_top = st;
    } else {
      AddEdge(&edges, StageEdgeKind::kContains, sc.stage_of_span[sc.enclosing[i]], st);
    }
  }
  for (size_t f = 0; f < trace.flows.size(); ++f) {
    AddEdge(&edges, StageEdgeKind::kFlow, StageAt(sc, trace.flows.from_slice[f]), StageAt(sc, trace.flows.to_slice[f]));
  }
  // Order stages by total time; remap edge ends.
  std::vector<uint32_t> order(sc.stages.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return sc.stages[a].total_ns > sc.stages[b].total_ns; });
  std::vector<size_t> new_index(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    new_index[order[k]] = k;
    r.stages.push_back(sc.stages[order[k]]);
    PipelineStage& st = r.stages.back();
    st.latency_share = r.pipeline_ns > 0 ? static_cast<double>(st.total_ns) / static_cast<double>(r.pipeline_ns) : 0;
    if (st.top_level_instances > 0 && (!r.top_stage || st.latency_share > r.stages[*r.top_stage].latency_share)) {
      r.top_stage = k;
    }
    // Only a stage with recorded work inside it: where no span holds an op or
    // a nested stage (an SDK recording of spans alone) every stage reads
    // 0 of work, and naming one as the limit would be a tie broken by order.
    if (st.MeanWorkingNs() > 0 &&
        (!r.limiting_stage || st.MeanWorkingNs() > r.stages[*r.limiting_stage].MeanWorkingNs())) {
      r.limiting_stage = k;
    }
  }
  for (const auto& [key, count] : edges) {
    r.edges.push_back({new_index[std::get<1>(key)], new_index[std::get<2>(key)],
                       static_cast<StageEdgeKind>(std::get<0>(key)), count});
  }
  std::stable_sort(r.edges.begin(), r.edges.end(), [](const StageEdge& a, const StageEdge& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.count > b.count;
  });
  return r;
}

void PublishPipelineStages(const PipelineResult& r, MetricSet* m) {
  if (!r.top_stage || r.pipeline_ns <= 0) {
    m->SetUnavailable("pipeline_top_stage_share",
                      "no pipeline stage spans (name spans 'stage:<name>', 'node:<name>' or 'pipeline/<name>')");
    return;
  }
  const PipelineStage& top = r.stages[*r.top_stage];
  m->Set("pipeline_top_stage_share", top.latency_share, "pipeline");
  m->AddEvidence("pipeline", "stage " + top.name + " takes " + FormatPercent(top.latency_share) + " of pipeline time (" +
                                 std::to_string(top.instances) + " spans, working " +
                                 FormatPercent(top.total_ns > 0 ? static_cast<double>(top.working_ns) / top.total_ns : 0) +
                                 " of its time)");
  if (r.limiting_stage) {
    const PipelineStage& lim = r.stages[*r.limiting_stage];
    m->AddEvidence("pipeline", "stage " + lim.name + " limits throughput: " + FormatDurationNs(lim.MeanWorkingNs()) +
                                   " of work per span, the most of any stage");
  }
}

}  // namespace aiprof
