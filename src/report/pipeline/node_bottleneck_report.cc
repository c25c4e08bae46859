#include "src/report/pipeline/node_bottleneck_report.h"

#include <string>

#include "src/analysis/common/text_format.h"
#include "src/render/escape.h"

namespace aiprof {
namespace {

double Ratio(int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0; }

// The published JSON (docs: README "aiprof node-bottleneck").
std::string MachineJson(const PipelineResult& r) {
  std::string out = "{\"pipeline_ns\":" + std::to_string(r.pipeline_ns) + ",\"stages\":[";
  for (size_t i = 0; i < r.stages.size(); ++i) {
    const PipelineStage& s = r.stages[i];
    out += std::string(i ? "," : "") + "{\"name\":" + JsonString(s.name) + ",\"instances\":" +
           std::to_string(s.instances) + ",\"top_level_instances\":" + std::to_string(s.top_level_instances) +
           ",\"total_ns\":" + std::to_string(s.total_ns) + ",\"working_ns\":" + std::to_string(s.working_ns) +
           ",\"waiting_ns\":" + std::to_string(s.waiting_ns) + ",\"max_ns\":" + std::to_string(s.max_ns) +
           ",\"latency_share\":" + FormatFixed(s.latency_share, 6) + "}";
  }
  auto name = [&](const std::optional<size_t>& i) { return i ? JsonString(r.stages[*i].name) : std::string("null"); };
  out += "],\"top_stage\":" + name(r.top_stage) + ",\"limiting_stage\":" + name(r.limiting_stage) + ",\"edges\":[";
  for (size_t i = 0; i < r.edges.size(); ++i) {
    const StageEdge& e = r.edges[i];
    out += std::string(i ? "," : "") + "{\"from\":" + JsonString(r.stages[e.from].name) + ",\"to\":" +
           JsonString(r.stages[e.to].name) + ",\"kind\":\"" + StageEdgeKindName(e.kind) + "\",\"count\":" +
           std::to_string(e.count) + "}";
  }
  return out + "]}\n";
}


std::string StageRole(const PipelineResult& r, size_t i) {
  std::string role;
  if (r.stages[i].top_level_instances == 0) role = "nested";
  if (r.top_stage == i) role += std::string(role.empty() ? "" : ", ") + "largest share";
  if (r.limiting_stage == i) role += std::string(role.empty() ? "" : ", ") + "limits throughput";
  return role;
}

}  // namespace

render::Document NodeBottleneckToDocument(const PipelineResult& r, std::string_view source) {
  using render::Value;
  render::Document doc;
  doc.key = "node_bottleneck";
  doc.title = source.empty() ? "aiprof node-bottleneck" : "aiprof node-bottleneck: " + std::string(source);
  doc.generator = "aiprof node-bottleneck";
  doc.machine_json = MachineJson(r);
  render::Section& stages = doc.AddSection("stages", "Pipeline stages");
  // No stages is a result, not a failure: the table is there with no rows
  // (its CSV is the header; it was an error, exit 1).
  if (r.stages.empty()) {
    stages.Add(render::Paragraph{"No pipeline stage spans: name spans 'stage:<name>', 'node:<name>' or "
                                 "'pipeline/<name>' (record_function, NVTX or mstx ranges)."});
  } else {
    stages.Add(render::KeyValues{
        {{"pipeline_ns", "Pipeline time (top-level stage spans)", Value::Int(r.pipeline_ns), render::Unit::kNs}}});
    if (!r.limiting_stage) {
      stages.Add(render::Paragraph{
          "No stage span holds a recorded op or nested stage, so working time (ops and nested stages inside a "
          "span) is 0 everywhere and waiting is all the rest, untraced work included: no stage is named as "
          "limiting throughput. Record ops (torch.profiler) or nest stages to tell work from waiting."});
    }
  }
  render::Table& t = stages.Add(render::Table{"stages", "", {
      {"name", "Stage", render::Unit::kNone},
      {"latency_share", "Share of latency", render::Unit::kFraction},
      {"instances", "Spans", render::Unit::kCount},
      {"total_ns", "Total", render::Unit::kNs},
      {"working_share", "Working", render::Unit::kFraction},
      {"waiting_share", "Waiting", render::Unit::kFraction},
      {"mean_work_ns", "Mean work", render::Unit::kNs},
      {"role", "Role", render::Unit::kNone}}, {}, ""});
  for (size_t i = 0; i < r.stages.size(); ++i) {
    const PipelineStage& s = r.stages[i];
    t.rows.push_back({Value::String(s.name), Value::Number(s.latency_share), Value::Int(static_cast<int64_t>(s.instances)),
                      Value::Int(s.total_ns), Value::Number(Ratio(s.working_ns, s.total_ns)),
                      Value::Number(Ratio(s.waiting_ns, s.total_ns)), Value::Number(s.MeanWorkingNs()),
                      Value::String(StageRole(r, i))});
  }
  if (r.stages.empty()) return doc;
  render::Section& graph = doc.AddSection("graph", "Stage graph");
  render::Table& edges = graph.Add(render::Table{"edges", "", {
      {"from", "From", render::Unit::kNone},
      {"kind", "Edge", render::Unit::kNone},
      {"to", "To", render::Unit::kNone},
      {"count", "Count", render::Unit::kCount}}, {}, ""});
  for (const StageEdge& e : r.edges) {
    edges.rows.push_back({Value::String(r.stages[e.from].name), Value::String(StageEdgeKindName(e.kind)),
                          Value::String(r.stages[e.to].name), Value::Int(static_cast<int64_t>(e.count))});
  }
  return doc;
}

}  // namespace aiprof
