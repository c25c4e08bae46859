#include "src/report/whatif/whatif_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "src/analysis/common/text_format.h"
#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/validation/prediction.h"
#include "src/analysis/validation/statistics.h"
#include "src/render/escape.h"
#include "src/render/units.h"

namespace aiprof {
namespace {

using render::Unit;
using render::Value;

// What the document says of one result beyond the result itself: the
// statistic its scenario is judged on, the level of each interval, and
// whether its "steps" are whole traces.
struct Reading {
  bool mean = false;         // judged on the steady steps' mean (an `every N` scenario), else their median
  bool whole_trace = false;  // no steps found: each rank's whole trace is one step
  // The intervals' levels: the median's order-statistic interval covers the
  // true median with probability median_level (≥ 95% from 6 steps, [min,
  // max] below: 1 − 2^(1−n)); the mean's is Student's t at 95%; a statistic
  // corrected by history has the correction model's (HistoryIntervalLabel).
  // 0: one step (a zero-width interval).
  double median_level = 0, mean_level = 0;
  std::string median_how, mean_how;  // how each interval was made, for people
};

Reading Read(const WhatIfResult& r, bool whole_trace) {
  Reading g;
  StatusOr<bool> mean = JudgeOnMean(r.scenario, "");
  g.mean = mean.ok() && *mean;
  g.whole_trace = whole_trace;
  // The replay's intervals (MedianIntervalLabel, MeanIntervalLabel), or,
  // for a statistic corrected by history (whatif --db), the correction
  // model's: its interval is no longer the steps' order statistics.
  const IntervalLabel median =
      r.median_history.cases > 0 ? HistoryIntervalLabel(r.median_history.cases) : MedianIntervalLabel(r.steady_steps);
  const IntervalLabel mean_label =
      r.mean_history.cases > 0 ? HistoryIntervalLabel(r.mean_history.cases) : MeanIntervalLabel(r.steady_steps);
  g.median_level = median.level;
  g.median_how = median.kind;
  g.mean_level = mean_label.level;
  g.mean_how = mean_label.kind;
  return g;
}

// A result on the analysis window's per-trace base (WhatIfResult::per_trace)
// leaves start-up out; the next note (the analysis') gives both figures.
std::string WholeTraceNote(const WhatIfResult& r) {
  if (r.per_trace) {
    return "no steps found (no ProfilerStep#N, step annotation or repeating op pattern): each rank's whole trace is "
           "one step, predicted per trace on the analysis window's base (the trace span minus start-up, as "
           "diagnose's impacts), not a step time";
  }
  return "no steps found (no ProfilerStep#N, step annotation or repeating op pattern): each rank's whole trace is "
         "one step, start-up and tear-down included, so these figures are the trace's wall time, not a step time";
}

// JSON's time_base.
std::string TimeBaseJson(const WhatIfResult& r) {
  if (r.time_base == WhatIfResult::TimeBase::kStepPeriod) return "step period (ns)";
  return r.per_trace ? "per trace: trace span minus start-up (ns)" : "step wall time (ns)";
}

// The critical path's per-class figures are over each step's path, its
// start to the end of its work: on a step-period base that is said, not
// implied (a period is not a path's length).
std::string PathBaseText(const WhatIfResult& r) {
  if (r.time_base == WhatIfResult::TimeBase::kStepPeriod) {
    return "the path's time per steady step, mean (ns), on the step's wall time (its start to the end of its "
           "work), not on the step period";
  }
  return "the path's time per steady step, mean (ns)";
}

std::string Json(const WhatIfResult& r, const Reading& g) {
  auto num = [](double v) { return std::to_string(static_cast<long long>(v)); };
  // whatif --db: the past cases each figure was corrected by (0: none found).
  auto hist = [&](const WhatIfResult::History& h) {
    return r.history_asked ? ",\"history\":{\"cases\":" + std::to_string(h.cases) +
                                 (h.cases ? ",\"uncorrected_ns\":" + num(h.uncorrected_ns) +
                                                ",\"uncorrected_interval_ns\":[" + num(h.uncorrected_lo_ns) + "," +
                                                num(h.uncorrected_hi_ns) + "]"
                                          : std::string()) +
                                 "}"
                           : std::string();
  };
  std::string out =
      "{\"scenario\":" + JsonString(r.scenario) + ",\"time_base\":\"" + TimeBaseJson(r) + "\"" +
      ",\"statistic\":\"median of the steady steps\",\"judged_on\":\"" + (g.mean ? "mean" : "median") + "\"" +
      ",\"whole_trace\":" + (g.whole_trace ? "true" : "false") +
      (r.per_trace ? ",\"per_trace_base_ns\":" + num(r.per_trace_base_ns) +
                         ",\"startup_left_out_ns\":" + std::to_string(r.startup_left_out_ns)
                   : std::string()) +
      ",\"steady_steps\":" + std::to_string(r.steady_steps) + ",\"measured_ns\":" + num(r.measured_ns) +
      ",\"predicted_ns\":" + num(r.predicted_ns) + ",\"predicted_interval_ns\":[" + num(r.predicted_lo_ns) + "," +
      num(r.predicted_hi_ns) + "]" + ",\"predicted_interval_level\":" + fmt::format("{}", g.median_level) +
      ",\"predicted_interval_kind\":" + JsonString(g.median_how) + hist(r.median_history) +
      ",\"mean\":{\"statistic\":\"mean of the steady steps\",\"measured_ns\":" + num(r.measured_mean_ns) +
      ",\"predicted_ns\":" + num(r.predicted_mean_ns) + ",\"predicted_interval_ns\":[" + num(r.predicted_mean_lo_ns) +
      "," + num(r.predicted_mean_hi_ns) + "]" + ",\"predicted_interval_level\":" + fmt::format("{}", g.mean_level) +
      ",\"predicted_interval_kind\":" + JsonString(g.mean_how) + hist(r.mean_history) +
      "},\"slices_changed\":" + std::to_string(r.slices_changed) +
      ",\"edges_changed\":" + std::to_string(r.edges_changed) +
      ",\"measured_fallbacks\":" + std::to_string(r.measured_fallbacks) + ",";
  std::vector<std::string> notes = r.notes;  // what fuse, overlap-comm and device did and assumed
  if (g.whole_trace) notes.insert(notes.begin(), WholeTraceNote(r));
  if (!notes.empty()) {
    out += "\"notes\":[";
    for (size_t k = 0; k < notes.size(); ++k) out += std::string(k ? "," : "") + JsonString(notes[k]);
    out += "],";
  }
  out += "\"steps\":[";
  for (size_t k = 0; k < r.steps.size(); ++k) {
    const StepPrediction& s = r.steps[k];
    out += std::string(k ? "," : "") + "{\"rank\":" + std::to_string(s.rank) + ",\"step\":" + std::to_string(s.number) +
           ",\"steady\":" + (s.steady ? "true" : "false") +
           (s.no_period ? std::string(",\"measured_ns\":null,\"predicted_ns\":null,\"no_period\":true")
                        : ",\"measured_ns\":" + std::to_string(s.measured_ns) +
                              ",\"predicted_ns\":" + std::to_string(s.predicted_ns)) +
           "}";
  }
  out += "],\"critical_path\":{\"time_base\":" + JsonString(PathBaseText(r)) + ",\"by_class\":[";
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
  by_class.title = r.time_base == WhatIfResult::TimeBase::kStepPeriod
                       ? "What moved on the critical path (time on the path, mean per steady step, on the step's "
                         "wall time: its path runs from its start to the end of its work; not on the step period, "
                         "which the path is not split by)"
                       : "What moved on the critical path (time on the path, mean per steady step)";
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
  moved.title = r.time_base == WhatIfResult::TimeBase::kStepPeriod
                    ? "Largest changes on the path, by slice (mean per steady step, on the step's wall time, not on "
                      "the step period)"
                    : "Largest changes on the path, by slice (mean per steady step)";
  moved.columns = {{"name", "Slice"}, {"class", "Time class"}, {"measured_ns", "Measured", Unit::kNs},
                   {"predicted_ns", "Predicted", Unit::kNs}, {"change_ns", "Change", Unit::kNs}};
  for (const WhatIfResult::Move& m : r.moved) {
    moved.rows.push_back({Value::String(m.name.empty() ? "(no slice)" : m.name), Value::String(PathClassName(m.cls)),
                          Value::Number(m.measured_ns), Value::Number(m.predicted_ns),
                          Value::Number(m.predicted_ns - m.measured_ns)});
  }
  sec->Add(std::move(moved));
}

// The time base of every figure, for people and (short) for CSV.
std::string TimeBaseText(const WhatIfResult& r, const Reading& g) {
  if (r.time_base == WhatIfResult::TimeBase::kStepPeriod) {
    return "step period: from the previous step's end to this step's end (the host no longer paces the device); "
           "median and mean of the steady steps";
  }
  if (g.whole_trace && r.per_trace) {
    return "per trace (no steps found): " +
           (r.startup_left_out_ns > 0
                ? "the trace span minus start-up (" + FormatDurationNs(static_cast<double>(r.startup_left_out_ns)) +
                      " left out), diagnose's impact base; predicted: the replay's change of each rank's whole trace, "
                      "its start-up calls' own change left out"
                : std::string("the trace span (no start-up calls found), diagnose's impact base; predicted: the "
                              "replay's change of each rank's whole trace"));
  }
  if (g.whole_trace) {
    return "the whole trace's wall time (no steps found): its start to the end of the last work in it, per rank";
  }
  if (r.host_only)
    return "step wall time: step start to its end on the host (no device work); median and mean of the steady steps";
  return "step wall time: step start to the end of the last work it launched (its last device work); median and "
         "mean of the steady steps";
}
std::string TimeBaseShort(const WhatIfResult& r, const Reading& g) {
  if (r.time_base == WhatIfResult::TimeBase::kStepPeriod) return "step period";
  if (g.whole_trace && r.per_trace) return "per trace (no steps found)";
  return g.whole_trace ? "whole trace wall time (no steps found)" : "step wall time";
}

Value StepCell(const StepPrediction& s, const Reading& g) {
  if (s.number >= 0) return Value::Int(s.number);
  return g.whole_trace ? Value::String("whole trace") : Value::Null();  // else: a step without a number
}

// A step's figure; none for a step without a period (not its wall time).
Value StepFigure(const StepPrediction& s, int64_t ns) { return s.no_period ? Value::Null() : Value::Int(ns); }

void AddScenario(const WhatIfResult& r, const Reading& g, render::Section* sec) {
  sec->Add(render::KeyValues{{{"scenario", "Scenario", Value::String(r.scenario)},
                              {"time_base", "Time base", Value::String(TimeBaseText(r, g))},
                              {"changed", "Changed",
                               Value::String(std::to_string(r.slices_changed) + " slice durations, " +
                                             std::to_string(r.edges_changed) + " dependency lags")}}});
  // What the replay assumed, after the prediction it qualifies (a reader
  // looks for the figures first); no steps found comes first of them.
  auto add_notes = [&] {
    if (g.whole_trace) sec->Add(render::Paragraph{"Note: " + WholeTraceNote(r) + "."});
    for (const std::string& note : r.notes) sec->Add(render::Paragraph{note});
    if (r.measured_fallbacks > 0) {
      sec->Add(render::Paragraph{std::to_string(r.measured_fallbacks) +
                                 " predecessors past the replay's recursion bound kept their measured times"});
    }
  };
  if (r.steady_steps == 0) {
    // A note that says why (already graph-launched, no period) is the answer.
    if (!r.no_step_said) sec->Add(render::Paragraph{"No step to predict."});
    add_notes();
    return;
  }
  const double change = r.measured_ns > 0 ? r.predicted_ns / r.measured_ns - 1 : 0;
  const double mean_change = r.measured_mean_ns > 0 ? r.predicted_mean_ns / r.measured_mean_ns - 1 : 0;
  // The median (robust to a stray slow step) and the mean: a fix acting on
  // one step in N moves the mean, not the median, so an `every N` scenario
  // leads with the mean it is judged on. Not a throughput: step spans
  // overlap where the device runs behind (docs/whatif.md).
  const Value median_level = r.steady_steps > 1 ? Value::Number(g.median_level) : Value::Null();
  const Value mean_level = r.steady_steps > 1 ? Value::Number(g.mean_level) : Value::Null();
  std::vector<render::KeyValue> median = {
      {"measured", "Measured (median)", Value::Number(r.measured_ns), Unit::kNs},
      {"predicted", "Predicted (median)", Value::Number(r.predicted_ns), Unit::kNs},
      {"predicted_lo", "Median's interval from", Value::Number(r.predicted_lo_ns), Unit::kNs},
      {"predicted_hi", "Median's interval to", Value::Number(r.predicted_hi_ns), Unit::kNs},
      {"predicted_level", "Median's interval coverage", median_level, Unit::kFraction, g.median_how},
      {"change", "Change of the median", Value::Number(change), Unit::kChange}};
  std::vector<render::KeyValue> mean = {
      {"measured_mean", "Measured (mean)", Value::Number(r.measured_mean_ns), Unit::kNs},
      {"predicted_mean", "Predicted (mean)", Value::Number(r.predicted_mean_ns), Unit::kNs},
      {"predicted_mean_lo", "Mean's interval from", Value::Number(r.predicted_mean_lo_ns), Unit::kNs},
      {"predicted_mean_hi", "Mean's interval to", Value::Number(r.predicted_mean_hi_ns), Unit::kNs},
      {"predicted_mean_level", "Mean's interval level", mean_level, Unit::kFraction, g.mean_how},
      {"mean_change", "Change of the mean", Value::Number(mean_change), Unit::kChange}};
  render::KeyValues figures;
  figures.items.push_back(
      {"steady_steps", "Steady steps", Value::Int(static_cast<int64_t>(r.steady_steps)), Unit::kCount});
  figures.items.push_back({"judged_on", "Judged on",
                           Value::String(g.mean ? "the mean: an every-N clause changes one step in N, which the "
                                                  "median step does not see (docs/whatif.md)"
                                                : "the median of the steady steps")});
  for (auto* part : g.mean ? std::vector{&mean, &median} : std::vector{&median, &mean}) {
    figures.items.insert(figures.items.end(), part->begin(), part->end());
  }
  sec->Add(std::move(figures));
  if (r.median_history.cases == 0 && r.mean_history.cases == 0) {
    sec->Add(render::Paragraph{
        "The intervals hold the spread of this run's replayed steps; fresh runs of a program differ by more (on "
        "this project's CPU pairs a fresh after run's mean fell inside the mean's interval in 53 of 132 rounds). For "
        "an interval that includes run-to-run variation, store measured cases with 'aiprof card --scenario' and "
        "pass --db (docs/whatif.md, \"Corrected by history\")."});
  }
  if (r.history_asked) {
    // Said for each statistic, also when no past case was found (a --db
    // that holds none of this scenario, or a mistyped path).
    auto say = [](const char* statistic, const WhatIfResult::History& h) {
      return h.cases == 0
                 ? std::string("the ") + statistic + " is not corrected (no past case of this scenario counts for it)"
                 : std::string("the ") + statistic + " is corrected by " + std::to_string(h.cases) +
                       " past case(s) of this scenario, from " + FormatDurationNs(h.uncorrected_ns);
    };
    sec->Add(render::Paragraph{"History: " + say("median", r.median_history) + "; " + say("mean", r.mean_history) +
                               ". The per-step figures below are the replay's own."});
  }
  add_notes();
  render::Table t;
  t.key = "steps";
  t.title = r.time_base == WhatIfResult::TimeBase::kStepPeriod
                ? "Per step (step periods; a rank's first step has none, its figures are empty)"
                : "Per step";
  t.columns = {{"rank", "Rank"}, {"step", "Step"}, {"steady", "Steady"}, {"measured_ns", "Measured", Unit::kNs},
               {"predicted_ns", "Predicted", Unit::kNs}};
  for (const StepPrediction& s : r.steps) {
    t.rows.push_back({s.rank != kNoRank ? Value::Int(s.rank) : Value::Null(), StepCell(s, g), Value::Bool(s.steady),
                      StepFigure(s, s.measured_ns), StepFigure(s, s.predicted_ns)});
  }
  sec->Add(std::move(t));
  AddMoves(r, sec);
}

// CSV: every scenario's steps in one table, each row with its scenario,
// time base and the statistic the scenario is judged on (over the rows
// whose `steady` is true).
render::Table CsvTable(const std::vector<WhatIfResult>& results, const std::vector<Reading>& readings) {
  render::Table t;
  t.key = "steps";
  t.columns = {{"scenario", "Scenario"},
               {"time_base", "Time base"},
               {"judged_on", "Judged on"},
               {"rank", "Rank"},
               {"step", "Step"},
               {"steady", "Steady"},
               {"measured_ns", "Measured", Unit::kNs},
               {"predicted_ns", "Predicted", Unit::kNs}};
  for (size_t k = 0; k < results.size(); ++k) {
    const WhatIfResult& r = results[k];
    const Reading& g = readings[k];
    for (const StepPrediction& s : r.steps) {
      t.rows.push_back({Value::String(r.scenario), Value::String(TimeBaseShort(r, g)),
                        Value::String(g.mean ? "mean" : "median"),
                        s.rank != kNoRank ? Value::Int(s.rank) : Value::Null(), StepCell(s, g), Value::Bool(s.steady),
                        StepFigure(s, s.measured_ns), StepFigure(s, s.predicted_ns)});
    }
  }
  return t;
}

}  // namespace

bool WholeTraceWindows(const CriticalPathResult& path) {
  return !path.steps.empty() &&
         std::all_of(path.steps.begin(), path.steps.end(), [](const StepPath& p) { return p.step_index == SIZE_MAX; });
}

render::Document WhatIfToDocument(const std::vector<WhatIfResult>& results, bool whole_trace, std::string_view source) {
  render::Document doc;
  doc.key = "whatif";
  // Named by its trace, as the other commands' pages are (two pages from two
  // traces told apart).
  doc.title = source.empty() ? "aiprof whatif" : "aiprof whatif: " + std::string(source);
  doc.generator = "aiprof whatif";
  doc.machine_json = "{\"scenarios\":[";
  std::vector<Reading> readings;
  for (size_t k = 0; k < results.size(); ++k) {
    readings.push_back(Read(results[k], whole_trace));
    doc.machine_json += (k ? "," : "") + Json(results[k], readings.back());
    AddScenario(results[k], readings.back(),
                &doc.AddSection("scenario_" + std::to_string(k + 1), "Scenario: " + results[k].scenario));
  }
  doc.machine_json += "]}\n";
  doc.csv = CsvTable(results, readings);
  return doc;
}

}  // namespace aiprof
