// `aiprof node-bottleneck TRACE [--format text|md|html|json|csv] [-o FILE]`: pipeline
// stages (src/analysis/pipeline/pipeline_stages.h): latency share, working
// versus waiting time, the stage that limits throughput, the stage graph.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "src/analysis/pipeline/pipeline_analysis.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/render/renderers.h"
#include "src/report/pipeline/node_bottleneck_report.h"

namespace aiprof {
namespace {

class NodeBottleneckCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("node-bottleneck", "Pipeline stages: latency share, working vs waiting, the limiting stage, the stage graph");
    in_.Add(sub, "Trace file or .aiprof with stage spans named stage:<name>, node:<name> or pipeline/<name>");
    out_.AddDocument(sub, {.yaml = false, .tables = true}, "Write here (atomically) instead of standard output");
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(std::string format, out_.Resolve());
    SessionOptions options;
    options.input = in_.input;
    ASSIGN_OR_RETURN(std::unique_ptr<AnalysisSession> session, in_.Open(std::move(options)));
    WarnImportDiagnostics(session->trace());
    return out_.WriteDocument(NodeBottleneckToDocument(session->results().Get(kPipeline), in_.input), format);
  }

 private:
  InputFlags in_;
  OutputFlags out_;
};

}  // namespace

std::unique_ptr<Command> NewNodeBottleneckCommand() { return std::make_unique<NodeBottleneckCommand>(); }

}  // namespace aiprof
