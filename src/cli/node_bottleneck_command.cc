// `aiprof node-bottleneck TRACE [--format text|json] [-o FILE]`: pipeline
// stages (src/analysis/pipeline/pipeline_stages.h): latency share, working
// versus waiting time, the stage that limits throughput, the stage graph.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "src/analysis/common/text_format.h"
#include "src/analysis/pipeline/pipeline_stages.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/render/escape.h"

namespace aiprof {
namespace {

double Ratio(int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0; }

std::string ToText(const PipelineResult& r) {
  if (r.stages.empty()) {
    return "no pipeline stage spans: name spans 'stage:<name>', 'node:<name>' or 'pipeline/<name>' "
           "(record_function, NVTX or mstx ranges)\n";
  }
  std::string out = "pipeline time (top-level stage spans): " + FormatDurationNs(static_cast<double>(r.pipeline_ns)) + "\n";
  for (size_t i = 0; i < r.stages.size(); ++i) {
    const PipelineStage& s = r.stages[i];
    out += "  " + TerminalSafe(s.name) + ": " + FormatPercent(s.latency_share) + " of latency, " +
           std::to_string(s.instances) + " spans, " + FormatDurationNs(static_cast<double>(s.total_ns)) +
           " (working " + FormatPercent(Ratio(s.working_ns, s.total_ns)) + ", waiting " +
           FormatPercent(Ratio(s.waiting_ns, s.total_ns)) + "), mean work " + FormatDurationNs(s.MeanWorkingNs()) +
           (s.top_level_instances == 0 ? ", nested" : "") + (r.top_stage == i ? "  <- largest share" : "") +
           (r.limiting_stage == i ? "  <- limits throughput" : "") + "\n";
  }
  out += "stage graph:\n";
  for (const StageEdge& e : r.edges) {
    out += "  " + TerminalSafe(r.stages[e.from].name) + " -" + StageEdgeKindName(e.kind) + "-> " +
           TerminalSafe(r.stages[e.to].name) + " x" + std::to_string(e.count) + "\n";
  }
  return out;
}

std::string ToJson(const PipelineResult& r) {
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

class NodeBottleneckCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("node-bottleneck", "Pipeline stages: latency share, working vs waiting, the limiting stage, the stage graph");
    in_.Add(sub, "Trace file or .aiprof with stage spans named stage:<name>, node:<name> or pipeline/<name>");
    out_.Add(sub, {render::TextFormat(), render::JsonFormat()}, "Write here (atomically) instead of standard output");
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(std::string format, out_.Resolve());
    SessionOptions options;
    options.input = in_.input;
    ASSIGN_OR_RETURN(std::unique_ptr<AnalysisSession> session, AnalysisSession::Open(std::move(options)));
    const PipelineResult& r = session->results().pipeline();
    return WriteOutput(out_.output, format == "json" ? ToJson(r) : ToText(r));
  }

 private:
  InputFlags in_;
  OutputFlags out_;
};

}  // namespace

std::unique_ptr<Command> NewNodeBottleneckCommand() { return std::make_unique<NodeBottleneckCommand>(); }

}  // namespace aiprof
