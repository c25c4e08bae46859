#include "src/view/flame/flame_view.h"

#include "src/model/trace.h"
#include "src/view/flame/flame_graph.h"
#include "src/view/flame/flame_html.h"
#include "src/view/flame/flame_speedscope.h"
#include "src/view/flame/flame_svg.h"

namespace aiprof {
namespace {

Status RenderFlame(const ViewContext& context, ViewSink* sink) {
  const ViewOptions& options = context.options;
  if (!options.color_by.empty()) {
    if (options.format != "html") return ErrStatus("--color-by: only the flame graph's html format has colours to choose");
    if (context.baseline) return ErrStatus("--color-by: a --diff flame graph is coloured by the change; drop one of them");
  }
  if (options.format == "speedscope") {
    if (context.baseline) return ErrStatus("--format speedscope has no differential form; use html, svg or folded with --diff");
    return WriteSpeedscope(context.trace, options, sink);
  }
  ASSIGN_OR_RETURN(FrameTree tree, BuildFrameTree(context.trace, options));
  FrameTree baseline;
  std::vector<uint32_t> match;
  if (context.baseline) {
    StatusOr<FrameTree> built = BuildFrameTree(*context.baseline, options);
    if (!built.ok()) return ErrStatus("--diff " + options.baseline_title + ": " + built.status().message());
    baseline = std::move(built).value();
    match = MatchFrames(tree, baseline);
  }
  const FrameTree* base = context.baseline ? &baseline : nullptr;
  if (options.format == "folded") return sink->Append(FoldedStacks(tree, base, base ? &match : nullptr));
  FlameDiff diff{base, base ? &match : nullptr};
  if (options.format == "svg") return sink->Append(FlameSvg(tree, diff, options));
  return WriteFlameHtml(tree, diff, options, sink);
}

}  // namespace

ViewSpec FlameViewSpec() {
  ViewSpec spec;
  spec.name = "flame";
  spec.help = "Flame graph of stack samples, else of the nesting of spans and ops on each thread";
  spec.formats = {
      {"html", {".html", ".htm"}},
      {"svg", {".svg"}},
      {"folded", {".folded", ".collapsed", ".txt"}},
      {"speedscope", {".speedscope.json", ".json"}},
  };
  spec.supports_diff = true;
  spec.colors_by_module = true;
  spec.render = &RenderFlame;
  return spec;
}

}  // namespace aiprof
