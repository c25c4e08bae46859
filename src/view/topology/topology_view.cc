#include "src/view/topology/topology_view.h"

#include "src/analysis/communication/communication.h"
#include "src/analysis/communication/communication_analysis.h"
#include "src/analysis/pipeline/pipeline_analysis.h"
#include "src/analysis/pipeline/pipeline_stages.h"
#include "src/model/trace.h"
#include "src/session/session.h"
#include "src/view/topology/topology_graph.h"
#include "src/view/topology/topology_render.h"

namespace aiprof {
namespace {

Status RenderTopology(const ViewContext& context, ViewSink* sink) {
  const ViewOptions& options = context.options;
  if (!options.thread.empty() || options.rank >= 0) {
    return ErrStatus("--topology shows the whole trace; --thread and --rank do not apply to it");
  }
  const CommunicationResult& communication = context.session.results().Get(kCommunication);
  const PipelineResult& pipeline = context.session.results().Get(kPipeline);
  Topology topology = BuildTopology(context.trace, communication, pipeline);
  std::string dot = TopologyToDot(topology, options.title);
  if (options.format == "dot") return sink->Append(dot);
  ASSIGN_OR_RETURN(std::string svg, LayoutSvg(dot));
  if (options.format == "svg") return sink->Append(svg);
  return sink->Append(TopologyToHtml(topology, svg, options.title));
}

}  // namespace

ViewSpec TopologyViewSpec() {
  ViewSpec spec;
  spec.name = "topology";
  spec.help = "Which component talks to which: ranks, processes, threads, devices, streams, pipeline stages, "
              "communication groups; launches, flows, collectives, links (Graphviz layout)";
  spec.formats = {
      {"html", {".html", ".htm"}},
      {"svg", {".svg"}},
      {"dot", {".dot", ".gv"}},
  };
  spec.render = &RenderTopology;
  return spec;
}

}  // namespace aiprof
