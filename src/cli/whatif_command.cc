#include <CLI/CLI.hpp>

#include "src/analysis/common/text_format.h"
#include "src/analysis/whatif/whatif.h"
#include "src/cli/command.h"
#include "src/cli/flags.h"
#include "src/render/escape.h"
#include "src/session/session.h"

namespace aiprof {
namespace {

// aiprof whatif IN --scenario "..." [--scenario ...]: replays the critical
// path's dependency graph under each scenario (docs/whatif.md) and prints
// the predicted step time per step and for the steady state.
class WhatIfCommand : public Command {
 public:
  CLI::App* Register(CLI::App* app) override {
    CLI::App* sub = app->add_subcommand("whatif", "Predict the step time if idle, ops or kernels changed (replays the dependency graph)");
    in_.Add(sub, "Trace file (Chrome/Kineto JSON, .gz, .zst) or .aiprof");
    out_.Add(sub, {render::TextFormat(), render::JsonFormat()}, "Write here (atomically) instead of standard output");
    sub->add_option("--scenario", scenarios_, "Scenario: clauses separated by ';' (docs/whatif.md); repeatable")->required();
    return sub;
  }

  Status Run() override {
    std::vector<Scenario> parsed;
    for (const std::string& text : scenarios_) {
      ASSIGN_OR_RETURN(Scenario sc, ParseScenario(text));
      parsed.push_back(std::move(sc));
    }
    ASSIGN_OR_RETURN(std::string format, out_.Resolve());
    options_.input = in_.input;
    ASSIGN_OR_RETURN(std::unique_ptr<AnalysisSession> session, AnalysisSession::Open(options_));
    const CriticalPathResult& path = session->results().critical_path();
    std::string text, json = "{\"scenarios\":[";
    for (size_t k = 0; k < parsed.size(); ++k) {
      WhatIfResult r = PredictWhatIf(session->trace(), path, parsed[k]);
      text += Describe(r);
      json += (k ? "," : "") + Json(r);
    }
    json += "]}\n";
    return WriteOutput(out_.output, format == "json" ? json : text);
  }

 private:
  static std::string Ns(double ns) { return FormatDurationNs(ns); }

  static std::string Describe(const WhatIfResult& r) {
    std::string out = "scenario: " + TerminalSafe(r.scenario) + "\n";
    out += "  changed: " + std::to_string(r.slices_changed) + " slice durations, " + std::to_string(r.edges_changed) +
           " dependency lags\n";
    if (r.steady_steps == 0) return out + "  no step to predict\n";
    const double gain = r.measured_mean_ns > 0 ? 1 - r.predicted_mean_ns / r.measured_mean_ns : 0;
    out += "  steady state (" + std::to_string(r.steady_steps) + " steps; time base: step wall time, step start to the end "
           "of the last work it launched): measured " + Ns(r.measured_mean_ns) + ", predicted " +
           Ns(r.predicted_mean_ns) + " (95% interval " + Ns(r.predicted_lo_ns) + " .. " + Ns(r.predicted_hi_ns) +
           ", from the step-to-step variation), " + FormatPercent(gain) + " shorter\n";
    for (const StepPrediction& s : r.steps) {
      out += "  " + (s.rank != kNoRank ? "rank " + std::to_string(s.rank) + " " : std::string()) +
             (s.number >= 0 ? "step " + std::to_string(s.number) : std::string("trace")) +
             (s.steady ? "" : " (warm-up)") + ": measured " + Ns(static_cast<double>(s.measured_ns)) + ", predicted " +
             Ns(static_cast<double>(s.predicted_ns)) + "\n";
    }
    return out;
  }

  static std::string Json(const WhatIfResult& r) {
    auto num = [](double v) { return std::to_string(static_cast<long long>(v)); };
    std::string out = "{\"scenario\":" + JsonString(r.scenario) + ",\"time_base\":\"step wall time (ns)\"" +
                      ",\"steady_steps\":" + std::to_string(r.steady_steps) +
                      ",\"measured_mean_ns\":" + num(r.measured_mean_ns) + ",\"predicted_mean_ns\":" +
                      num(r.predicted_mean_ns) + ",\"predicted_interval_ns\":[" + num(r.predicted_lo_ns) + "," +
                      num(r.predicted_hi_ns) + "],\"steps\":[";
    for (size_t k = 0; k < r.steps.size(); ++k) {
      const StepPrediction& s = r.steps[k];
      out += std::string(k ? "," : "") + "{\"rank\":" + std::to_string(s.rank) + ",\"step\":" +
             std::to_string(s.number) + ",\"steady\":" + (s.steady ? "true" : "false") +
             ",\"measured_ns\":" + std::to_string(s.measured_ns) + ",\"predicted_ns\":" +
             std::to_string(s.predicted_ns) + "}";
    }
    return out + "]}";
  }

  InputFlags in_;
  OutputFlags out_;
  SessionOptions options_;
  std::vector<std::string> scenarios_;
};

}  // namespace

std::unique_ptr<Command> NewWhatIfCommand() { return std::make_unique<WhatIfCommand>(); }

}  // namespace aiprof
