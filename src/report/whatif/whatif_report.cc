#include "src/report/whatif/whatif_report.h"

#include <string>

#include "src/analysis/common/text_format.h"
#include "src/render/escape.h"

namespace aiprof {
namespace {

using render::Unit;
using render::Value;

std::string Json(const WhatIfResult& r) {
  auto num = [](double v) { return std::to_string(static_cast<long long>(v)); };
  // whatif --db: the past cases each figure was corrected by (0: none found).
  auto hist = [&](const WhatIfResult::History& h) {
    return r.history_asked ? ",\"history\":{\"cases\":" + std::to_string(h.cases) +
                                 (h.cases ? ",\"uncorrected_ns\":" + num(h.uncorrected_ns) : std::string()) + "}"
                           : std::string();
  };
  std::string out =
      "{\"scenario\":" + JsonString(r.scenario) + ",\"time_base\":\"" +
      (r.time_base == WhatIfResult::TimeBase::kStepPeriod ? "step period (ns)" : "step wall time (ns)") + "\"" +
      ",\"statistic\":\"median of the steady steps\",\"steady_steps\":" + std::to_string(r.steady_steps) +
      ",\"measured_ns\":" + num(r.measured_ns) + ",\"predicted_ns\":" + num(r.predicted_ns) +
      ",\"predicted_interval_ns\":[" + num(r.predicted_lo_ns) + "," + num(r.predicted_hi_ns) + "]" +
      hist(r.median_history) +
      ",\"mean\":{\"statistic\":\"mean of the steady steps\",\"measured_ns\":" + num(r.measured_mean_ns) +
      ",\"predicted_ns\":" + num(r.predicted_mean_ns) + ",\"predicted_interval_ns\":[" + num(r.predicted_mean_lo_ns) +
      "," + num(r.predicted_mean_hi_ns) + "]" + hist(r.mean_history) +
      "},\"slices_changed\":" + std::to_string(r.slices_changed) +
      ",\"edges_changed\":" + std::to_string(r.edges_changed) +
      ",\"measured_fallbacks\":" + std::to_string(r.measured_fallbacks) + ",";
  if (!r.notes.empty()) {  // what fuse, overlap-comm and device did and assumed
    out += "\"notes\":[";
    for (size_t k = 0; k < r.notes.size(); ++k) out += std::string(k ? "," : "") + JsonString(r.notes[k]);
    out += "],";
  }
  out += "\"steps\":[";
  for (size_t k = 0; k < r.steps.size(); ++k) {
    const StepPrediction& s = r.steps[k];
    out += std::string(k ? "," : "") + "{\"rank\":" + std::to_string(s.rank) + ",\"step\":" + std::to_string(s.number) +
           ",\"steady\":" + (s.steady ? "true" : "false") + ",\"measured_ns\":" + std::to_string(s.measured_ns) +
           ",\"predicted_ns\":" + std::to_string(s.predicted_ns) + "}";
  }
  out += "],\"critical_path\":{\"time_base\":\"the path's time per steady step, mean (ns)\",\"by_class\":[";
  bool first = true;
  for (size_t c = 0; c < kPathClassCount; ++c) {
    if (r.measured_path_ns[c] == 0 && r.predicted_path_ns[c] == 0) continue;
    out += std::string(first ? "" : ",") + "{\"class\":\"" + PathClassName(static_cast<PathClass>(c)) +
           "\",\"measured_ns\":" + num(r.measured_path_ns[c]) + ",\"predicted_ns\":" + num(r.predicted_path_ns[c]) + "}";
    first = false;
  }
  out += "],\"moved\":[";
  for (size_t k = 0; k < r.moved.size(); ++k) {
    const WhatIfResult::Move& m = r.moved[k];
    out += std::string(k ? "," : "") + "{\"name\":" + JsonString(m.name) + ",\"class\":\"" + PathClassName(m.cls) +
           "\",\"measured_ns\":" + num(m.measured_ns) + ",\"predicted_ns\":" + num(m.predicted_ns) + "}";
  }
  return out + "]}}";
}

// What moved on the critical path: its time by class, and the slices whose
// time on it changed most; both the mean per steady step.
void AddMoves(const WhatIfResult& r, render::Section* sec) {
  render::Table by_class;
  by_class.key = "critical_path";
  by_class.title = "What moved on the critical path (time on the path, mean per steady step)";
  by_class.columns = {{"class", "Time class"}, {"measured_ns", "Measured", Unit::kNs},
                      {"predicted_ns", "Predicted", Unit::kNs}, {"change_ns", "Change", Unit::kNs}};
  for (size_t c = 0; c < kPathClassCount; ++c) {
    const double m = r.measured_path_ns[c], p = r.predicted_path_ns[c];
    if (m == 0 && p == 0) continue;
    by_class.rows.push_back({Value::String(PathClassName(static_cast<PathClass>(c))), Value::Number(m),
                             Value::Number(p), Value::Number(p - m)});
  }
  if (!by_class.rows.empty()) sec->Add(std::move(by_class));
  if (r.moved.empty()) return;
  render::Table moved;
  moved.key = "moved";
  moved.title = "Largest changes on the path, by slice (mean per steady step)";
  moved.columns = {{"name", "Slice"}, {"class", "Time class"}, {"measured_ns", "Measured", Unit::kNs},
                   {"predicted_ns", "Predicted", Unit::kNs}, {"change_ns", "Change", Unit::kNs}};
  for (const WhatIfResult::Move& m : r.moved) {
    moved.rows.push_back({Value::String(m.name.empty() ? "(no slice)" : m.name), Value::String(PathClassName(m.cls)),
                          Value::Number(m.measured_ns), Value::Number(m.predicted_ns),
                          Value::Number(m.predicted_ns - m.measured_ns)});
  }
  sec->Add(std::move(moved));
}

void AddScenario(const WhatIfResult& r, render::Section* sec) {
  sec->Add(render::KeyValues{{{"scenario", "Scenario", Value::String(r.scenario)},
                              {"time_base", "Time base",
                               Value::String(r.time_base == WhatIfResult::TimeBase::kStepPeriod
                                                 ? "step period: from the previous step's end to this step's end "
                                                   "(the host no longer paces the device); median and mean of the steady steps"
                                                 : "step wall time: step start to the end of the last work it launched; "
                                                   "median and mean of the steady steps")},
                              {"changed", "Changed",
                               Value::String(std::to_string(r.slices_changed) + " slice durations, " +
                                             std::to_string(r.edges_changed) + " dependency lags")}}});
  // What the replay assumed, after the prediction it qualifies (a reader
  // looks for the figures first).
  auto add_notes = [&] {
    for (const std::string& note : r.notes) sec->Add(render::Paragraph{note});
    if (r.measured_fallbacks > 0) {
      sec->Add(render::Paragraph{std::to_string(r.measured_fallbacks) +
                                 " predecessors past the replay's recursion bound kept their measured times"});
    }
  };
  if (r.steady_steps == 0) {
    sec->Add(render::Paragraph{"No step to predict."});
    add_notes();
    return;
  }
  const double change = r.measured_ns > 0 ? r.predicted_ns / r.measured_ns - 1 : 0;
  const double mean_change = r.measured_mean_ns > 0 ? r.predicted_mean_ns / r.measured_mean_ns - 1 : 0;
  // The median (robust to a stray slow step) and the mean: a fix acting on
  // one step in N moves the mean, not the median. Not a throughput: step
  // spans overlap where the device runs behind (docs/whatif.md).
  sec->Add(render::KeyValues{{{"steady_steps", "Steady steps", Value::Int(static_cast<int64_t>(r.steady_steps)), Unit::kCount},
                              {"measured", "Measured (median)", Value::Number(r.measured_ns), Unit::kNs},
                              {"predicted", "Predicted (median)", Value::Number(r.predicted_ns), Unit::kNs},
                              {"predicted_lo", "Interval from", Value::Number(r.predicted_lo_ns), Unit::kNs},
                              {"predicted_hi", "Interval to", Value::Number(r.predicted_hi_ns), Unit::kNs},
                              {"change", "Change of the step", Value::Number(change), Unit::kChange},
                              {"measured_mean", "Measured (mean)", Value::Number(r.measured_mean_ns), Unit::kNs},
                              {"predicted_mean", "Predicted (mean)", Value::Number(r.predicted_mean_ns), Unit::kNs},
                              {"predicted_mean_lo", "Mean's interval from", Value::Number(r.predicted_mean_lo_ns), Unit::kNs},
                              {"predicted_mean_hi", "Mean's interval to", Value::Number(r.predicted_mean_hi_ns), Unit::kNs},
                              {"mean_change", "Change of the mean", Value::Number(mean_change), Unit::kChange}}});
  if (r.median_history.cases == 0 && r.mean_history.cases == 0) {
    sec->Add(render::Paragraph{
        "The intervals hold the spread of this run's replayed steps; fresh runs of a program differ by more (on "
        "this project's CPU pairs a fresh after run's mean fell inside the mean's interval in 53 of 132 rounds). For "
        "an interval that includes run-to-run variation, store measured cases with `aiprof card --scenario` and "
        "pass --db (docs/whatif.md, \"Corrected by history\")."});
  }
  if (r.history_asked) {
    // Said for each statistic, also when no past case was found (a --db
    // that holds none of this scenario, or a mistyped path).
    auto say = [](const char* statistic, const WhatIfResult::History& h) {
      return h.cases == 0
                 ? std::string("the ") + statistic + " is not corrected (no past case of this scenario measured on it)"
                 : std::string("the ") + statistic + " is corrected by " + std::to_string(h.cases) +
                       " past case(s) of this scenario, from " + FormatDurationNs(h.uncorrected_ns);
    };
    sec->Add(render::Paragraph{"History: " + say("median", r.median_history) + "; " + say("mean", r.mean_history) +
                               ". The per-step figures below are the replay's own."});
  }
  add_notes();
  render::Table t;
  t.key = "steps";
  t.title = "Per step";
  t.columns = {{"rank", "Rank"}, {"step", "Step"}, {"steady", "Steady"}, {"measured_ns", "Measured", Unit::kNs},
               {"predicted_ns", "Predicted", Unit::kNs}};
  for (const StepPrediction& s : r.steps) {
    t.rows.push_back({s.rank != kNoRank ? Value::Int(s.rank) : Value::Null(),
                      s.number >= 0 ? Value::Int(s.number) : Value::String("trace"), Value::Bool(s.steady),
                      Value::Int(s.measured_ns), Value::Int(s.predicted_ns)});
  }
  sec->Add(std::move(t));
  AddMoves(r, sec);
}

}  // namespace

render::Document WhatIfToDocument(const std::vector<WhatIfResult>& results) {
  render::Document doc;
  doc.key = "whatif";
  doc.title = "aiprof whatif";
  doc.generator = "aiprof whatif";
  doc.machine_json = "{\"scenarios\":[";
  for (size_t k = 0; k < results.size(); ++k) {
    doc.machine_json += (k ? "," : "") + Json(results[k]);
    AddScenario(results[k], &doc.AddSection("scenario_" + std::to_string(k + 1), "Scenario: " + results[k].scenario));
  }
  doc.machine_json += "]}\n";
  return doc;
}

}  // namespace aiprof
