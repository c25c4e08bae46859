// `aiprof diff A B [--map FILE] [--warmup-steps N] [--format text|md|html|json|yaml|csv] [-o FILE] [--top N]
//   [--flame FILE.html] [--flame-device FILE.html] [--timeline FILE.html]`:
// the two runs' attribution trees aligned node by node (src/analysis/diff,
// docs/diff.md): what was added, removed, got slower or faster, per steady
// step, with validate's statistics where both runs have enough steps.
#include <CLI/CLI.hpp>
#include <cstdint>

#include "src/analysis/attribution/attribution_analysis.h"
#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/critical_path/critical_path_analysis.h"
#include "src/analysis/diff/attribution_diff.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/render/renderers.h"
#include "src/report/diff/diff_report.h"
#include "src/session/session.h"
#include "src/view/flame/flame_from_diff.h"
#include "src/view/timeline/timeline_from_diff.h"
#include "src/view/view_sink.h"

namespace aiprof {
namespace {

constexpr size_t kDefaultTop = 20;

class DiffCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("diff", "Structural diff of two runs: attribution trees aligned (module → op → kernel), what was added, removed, slower, faster, or called fewer or more times per step");
    in_.Add(sub, "Run A (before): trace file or folder, or .aiprof", /*several=*/false);
    sub->add_option("b", input_b_, "Run B (after): trace file or folder, or .aiprof");
    // Both runs checked here, not by CLI11's `required`, whose message named
    // the argument ("b is required") and not what diff needs.
    sub->get_option("input")->required(false);
    sub->callback([this] {
      if (in_.input.empty() || input_b_.empty()) {
        throw CLI::ValidationError(std::string("diff needs two runs: aiprof diff A B (A the run before, B the run "
                                               "after; each a trace file or folder, or .aiprof); ") +
                                   (in_.input.empty() ? "none was given" : "only A was given"));
      }
    });
    out_.AddDocument(sub, {.yaml = true, .tables = true}, "Write here (atomically) instead of standard output");
    sub->add_option("--map", map_path_, "Name map (YAML): op, module or kernel names of A → names of B, /regex/ allowed (docs/diff.md)");
    AddTopFlag(sub, &top_, "Changes and renamed pairs to list (default 20, 0 = all); per-node statistics for as many");
    stats_.Add(sub, /*resamples_flag=*/true);
    AddWarmupFlag(sub, &warmup_steps_);  // both runs: one window for the two
    sub->add_option("--flame", flame_path_,
                    "Also write the differential flame graph (HTML) of host time per step on the same alignment: "
                    "B's tree coloured by the change against A");
    sub->add_option("--flame-device", flame_device_path_,
                    "Also write the differential flame graph (HTML) of device time per step (kernels as leaves)");
    sub->add_option("--timeline", timeline_path_,
                    "Also write a timeline (HTML) of both runs aligned on steps: steady step k of A and of B start "
                    "together, in a slot as long as the longer of the two; the diff's largest changes marked");
    return sub;
  }

  Status Run() override {
    ASSIGN_OR_RETURN(std::string format, out_.Resolve());
    DiffOptions options;
    RETURN_IF_ERROR(stats_.Apply(&options.stats));
    options.top_n = top_.value_or(kDefaultTop);
    if (options.top_n == 0) options.top_n = SIZE_MAX;  // --top 0: every changed node
    DiffNameMap map;
    if (!map_path_.empty()) {
      ASSIGN_OR_RETURN(map, DiffNameMap::Load(map_path_));
      options.map = &map;
    }
    SessionOptions sa, sb;
    sa.input = in_.input;
    sb.input = input_b_;
    sa.analyze.warmup_steps = sb.analyze.warmup_steps = warmup_steps_;
    ASSIGN_OR_RETURN(std::unique_ptr<AnalysisSession> a, AnalysisSession::Open(std::move(sa)));
    ASSIGN_OR_RETURN(std::unique_ptr<AnalysisSession> b, AnalysisSession::Open(std::move(sb)));
    WarnImportDiagnostics(a->trace());
    WarnImportDiagnostics(b->trace());
    // The tree with its ops by input shape (docs/diff.md "Repeated ops by shape").
    const AttributionResult& ra = a->results().Get(kAttributionByShape);
    const AttributionResult& rb = b->results().Get(kAttributionByShape);
    if (!ra.available) return ErrStatus(in_.input + ": no attribution tree to diff: " + ra.problem);
    if (!rb.available) return ErrStatus(input_b_ + ": no attribution tree to diff: " + rb.problem);
    AttributionDiff d = DiffAttribution(a->trace(), ra, b->trace(), rb, options);
    render::Document doc = DiffToDocument(
        {in_.input, &a->trace(), &ra, warmup_steps_, SteadyStepsAreHostOnly(a->results().Get(kCriticalPath))},
        {input_b_, &b->trace(), &rb, warmup_steps_, SteadyStepsAreHostOnly(b->results().Get(kCriticalPath))}, d,
        options.top_n);
    ASSIGN_OR_RETURN(std::string text, render::RenderDocument(doc, format));
    for (const auto& [path, base] : {std::pair{flame_path_, DiffFlameBase::kHost},
                                     std::pair{flame_device_path_, DiffFlameBase::kDevice}}) {
      if (path.empty()) continue;
      FileViewSink sink;
      RETURN_IF_ERROR(sink.Open(path));
      RETURN_IF_ERROR(WriteDiffFlameHtml(BuildDiffFlame(a->trace(), ra, b->trace(), rb, d, base), in_.input, input_b_, &sink));
      RETURN_IF_ERROR(sink.Commit());
    }
    if (!timeline_path_.empty()) {
      DiffTimeline t = BuildDiffTimeline(a->trace(), ra, b->trace(), rb, d);
      if (!t.available) return ErrStatus("--timeline: " + t.problem);
      std::string page;
      AppendDiffTimelineHtml(t, in_.input, input_b_, &page);
      FileViewSink sink;
      RETURN_IF_ERROR(sink.Open(timeline_path_));
      RETURN_IF_ERROR(sink.Append(page));
      RETURN_IF_ERROR(sink.Commit());
    }
    return WriteOutput(out_.output, text);
  }

 private:
  InputFlags in_;
  OutputFlags out_;
  StatsFlags stats_;
  std::string input_b_, map_path_, flame_path_, flame_device_path_, timeline_path_;
  std::optional<size_t> top_;
  int warmup_steps_ = -1;
};

}  // namespace

std::unique_ptr<Command> NewDiffCommand() { return std::make_unique<DiffCommand>(); }

}  // namespace aiprof
