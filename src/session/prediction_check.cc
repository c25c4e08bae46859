#include "src/session/prediction_check.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "src/analysis/common/steps.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/critical_path/critical_path.h"
#include "src/analysis/critical_path/critical_path_analysis.h"
#include "src/analysis/fusion/fusion_analysis.h"
#include "src/analysis/fusion/fusion_candidates.h"
#include "src/analysis/roofline/device_peaks.h"
#include "src/analysis/summary/summary.h"
#include "src/analysis/summary/summary_analysis.h"
#include "src/analysis/validation/compare.h"
#include "src/analysis/validation/statistics.h"
#include "src/analysis/whatif/simulate.h"
#include "src/analysis/whatif/whatif.h"
#include "src/analysis/window/analysis_window.h"
#include "src/analysis/window/window_analysis.h"

namespace aiprof {
namespace {

// The ops a finding names, when it names them: the fusion candidates' ops.
std::vector<std::string> NamedOps(AnalysisSession& s, const Finding& f) {
  std::vector<std::string> out;
  if (f.rule->bottleneck != "fusion_missing") return out;
  for (const FusionCandidate& c : s.results().Get(kFusion).top) {
    for (StringId id : c.ops) {
      const std::string name(s.trace().Str(id));
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    }
  }
  return out;
}

// Time per step of the ops named `names` (their total time over the trace,
// divided by its steps).
double OpTimePerStep(AnalysisSession& s, const std::vector<std::string>& names) {
  const Summary& sum = s.results().Get(kSummary);
  double ns = 0;
  for (const OpStat& o : sum.ops) {
    const std::string_view n = s.trace().Str(o.name);
    if (std::find(names.begin(), names.end(), n) != names.end()) ns += static_cast<double>(o.total_ns);
  }
  return ns / static_cast<double>(std::max<size_t>(1, sum.steps.size()));
}

double ImpactNs(const Finding* f) { return f && f->impact.quantified ? f->impact.time_ns : 0; }

}  // namespace

std::optional<InferredFix> InferAppliedFix(AnalysisSession& before, AnalysisSession& after, const Diagnosis& db,
                                           const Diagnosis& da, std::string* why_not) {
  struct Candidate {
    const Finding* f;
    std::string change;
    double saved_ns;
  };
  std::vector<Candidate> candidates;
  std::vector<std::string> refused;
  for (const Finding& f : db.findings) {
    if (DescriptiveFinding(f.rule->bottleneck)) continue;  // what the step does, not a cause
    const Finding* now = nullptr;
    for (const Finding& g : da.findings) {
      if (g.rule->id == f.rule->id) now = &g;
    }
    std::string change;
    if (!now) {
      change = "finding '" + f.rule->id + "' of the before run is gone after";
    } else if (f.impact.quantified && now->impact.quantified && now->impact.share < f.impact.share / 2) {
      change = "finding '" + f.rule->id + "' fell from " + FormatPercent(f.impact.share) + " to " +
               FormatPercent(now->impact.share) + " of the " + f.impact.basis;
    } else {
      continue;
    }
    if (SpreadFinding(f.rule->bottleneck)) {
      refused.push_back("'" + f.rule->id + "' (the spread of step or op times, which any change moves)");
      continue;
    }
    const std::vector<std::string> ops = NamedOps(before, f);
    if (!ops.empty()) {
      const double was = OpTimePerStep(before, ops), is = OpTimePerStep(after, ops);
      if (is >= kNamedOpsFasterRatio * was) {
        refused.push_back("'" + f.rule->id + "' (the ops it names did not get faster: " + FormatDurationNs(was) +
                          " -> " + FormatDurationNs(is) + " per step)");
        continue;
      }
    }
    candidates.push_back({&f, change, ImpactNs(&f) - ImpactNs(now)});
  }
  std::string refused_text;
  for (const std::string& r : refused) refused_text += (refused_text.empty() ? "" : ", ") + r;
  if (candidates.empty()) {
    if (why_not) {
      *why_not =
          "the fix the after run applied could not be inferred: no finding of the before run went away or fell "
          "to less than half";
      if (!refused_text.empty()) *why_not += " that could name it (not credited: " + refused_text + ")";
    }
    return std::nullopt;
  }
  // An exclusive impact is a disjoint part of the step, measured directly;
  // other findings' time may lie inside it (a fusion chain of the data
  // loader's ops) and go with it. Then the most time per step no longer
  // spent.
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    const bool ea = ExclusiveImpact(a.f->rule->bottleneck), eb = ExclusiveImpact(b.f->rule->bottleneck);
    if (ea != eb) return ea;
    return a.saved_ns > b.saved_ns;
  });
  InferredFix out;
  out.finding = candidates.front().f;
  out.confidence = candidates.size() == 1 ? "medium" : "low";
  out.how = "inferred from what changed (confidence " + out.confidence + "): " + candidates.front().change;
  if (candidates.size() > 1) {
    std::string others;
    for (size_t i = 1; i < candidates.size(); ++i)
      others += (others.empty() ? "'" : ", '") + candidates[i].f->rule->id + "'";
    out.how +=
        "; also changed, ranked after it: " + others +
        (ExclusiveImpact(out.finding->rule->bottleneck)
             ? " ('" + out.finding->rule->id + "' is a disjoint part of the step, which their time may lie inside)"
             : std::string(" (less time per step no longer spent)"));
  }
  if (!refused_text.empty()) out.how += "; not credited: " + refused_text;
  return out;
}

namespace {

// The after run's figure, and how the prediction compares with it.
void SetMeasured(const MeanInterval& a, PredictionCheck* c) {
  c->measured_ns = a.mean;
  c->measured_lo_ns = a.lo;
  c->measured_hi_ns = a.hi;
  const IntervalLabel l = c->mean ? MeanIntervalLabel(a.n) : MedianIntervalLabel(a.n);
  c->measured_interval_level = l.level;
  c->measured_interval_kind = l.kind;
}
void Compare(PredictionCheck* c) { JudgePrediction(c); }

// The predicted interval's level: the correction model's when history
// corrected it (not the replay's steps'), else the replay's statistic's.
void LabelInterval(PredictionCheck* c, const IntervalLabel& l) {
  c->predicted_interval_level = l.level;
  c->predicted_interval_kind = l.kind;
}
IntervalLabel ReplayLabel(size_t history_cases, bool mean, size_t steps) {
  if (history_cases > 0) return HistoryIntervalLabel(history_cases);
  return mean ? MeanIntervalLabel(steps) : MedianIntervalLabel(steps);
}

}  // namespace

const SuggestionOutcome* FindSuggestionOutcome(const SuggestResult& r, const std::string& id) {
  for (const std::vector<SuggestionOutcome>* list : {&r.kept, &r.excluded}) {
    for (const SuggestionOutcome& o : *list) {
      if (o.suggestion->id == id) return &o;
    }
  }
  return nullptr;
}

GainOnBase PredictGainOnBase(double base_ns, double gain_min, double gain_max) {
  GainOnBase out;
  out.predicted_ns = base_ns * (1 - (gain_min + gain_max) / 2);
  out.lo_ns = base_ns * (1 - gain_max);
  out.hi_ns = base_ns * (1 - gain_min);
  return out;
}

StatusOr<std::optional<PredictionCheck>> CheckPrediction(AnalysisSession& before, AnalysisSession& after,
                                                         const std::string& fix_id, std::string* why_not) {
  ASSIGN_OR_RETURN(const SuggestResult* sug, before.suggestions());
  PredictionCheck c;
  const SuggestionOutcome* o = nullptr;
  if (!fix_id.empty()) {
    o = FindSuggestionOutcome(*sug, fix_id);
    if (!o) {
      std::string ids;
      for (const SuggestionOutcome& k : sug->kept) ids += (ids.empty() ? "" : ", ") + k.suggestion->id;
      return ErrStatus("--fix-id " + fix_id + ": the before run has no such suggestion (it has: " +
                       (ids.empty() ? std::string("none") : ids) + ")");
    }
    c.matched_by = "--fix-id";
  } else {
    ASSIGN_OR_RETURN(const Diagnosis* db, before.diagnosis());
    ASSIGN_OR_RETURN(const Diagnosis* da, after.diagnosis());
    const std::optional<InferredFix> inferred = InferAppliedFix(before, after, *db, *da, why_not);
    if (!inferred) return std::optional<PredictionCheck>();
    c.matched_by = inferred->how;
    for (const SuggestionOutcome& k : sug->kept) {
      if (k.finding->rule->id == inferred->finding->rule->id) {
        o = &k;
        break;
      }
    }
    if (!o) {
      if (why_not) *why_not = "no prediction check: " + inferred->how + ", but the before run suggests no fix for it";
      return std::optional<PredictionCheck>();
    }
  }
  c.mean = o->simulation && o->simulation->mean;
  // A replay on the step period (the device runs behind the host) is
  // checked against both runs' periods: the same trace's wall time counts
  // the queue the device runs behind by (MI300 ResNet: a prediction of
  // 18.77 ms against 51.23 ms measured on the very trace it came from).
  c.step_period = o->simulation && o->simulation->step_period;
  const MeanInterval b = SteadyStepTime(before, c), a = SteadyStepTime(after, c);
  if (b.n == 0 || a.n == 0) return std::optional<PredictionCheck>();
  if (c.step_period) {
    c.time_base = std::string("steady step period, ") + (c.mean ? "mean" : "median") +
                  ": end of the previous step's device work to the end of its own (the device runs behind the host; "
                  "both runs measured so)";
  } else {
    c.host_only = SteadyStepsAreHostOnly(before.results().Get(kCriticalPath));
    c.time_base = std::string("steady step wall time, ") +
                  (c.mean ? "mean (the scenario acts on one step in N)" : "median") + ": step start to " +
                  StepEndText(c.host_only);
  }
  c.fix_id = o->suggestion->id;
  c.fix_title = o->suggestion->title;
  c.bottleneck = o->finding->rule->bottleneck;
  c.source = o->gain_source;
  c.before_steps = b.n;
  c.after_steps = a.n;
  c.before_ns = b.mean;
  if (o->simulation) {
    c.scenario = o->simulation->scenario;
    c.predicted_ns = o->simulation->predicted_ns;
    c.predicted_lo_ns = o->simulation->predicted_lo_ns;
    c.predicted_hi_ns = o->simulation->predicted_hi_ns;
    c.history_cases = o->simulation->history_cases;
    c.history_from = o->simulation->history_from;
    LabelInterval(&c, ReplayLabel(c.history_cases, c.mean, o->simulation->steps));
  } else {
    // The gain suggest states is a share of the time per step: the check
    // restates that share on its own base (PredictGainOnBase). Subtracting
    // the share of the finding's basis (the mean steady host step) from the
    // median wall time put the central figure outside suggest's range
    // (cast_roundtrip: 32.66 - 27.57 x 31.6% = 23.96 ms, -26.6%, against
    // "28.0% to 35.1%").
    const GainOnBase p = PredictGainOnBase(b.mean, o->gain_min, o->gain_max);
    c.predicted_ns = p.predicted_ns;
    c.predicted_lo_ns = p.lo_ns;
    c.predicted_hi_ns = p.hi_ns;
    const std::string range = FormatPercent(o->gain_min) + " to " + FormatPercent(o->gain_max);
    const bool prior = o->gain_source == kGainFromPrior;
    const std::string base = FormatDurationNs(b.mean);
    c.time_base += std::string("; ") + (prior ? "the prior's gain" : "the expected gain") + " (" + range +
                   ", as suggest states it) taken as that share of this base: " + base + " x (1 - " +
                   FormatPercent(o->gain_max) + ") .. " + base + " x (1 - " + FormatPercent(o->gain_min) +
                   "), the prediction at the midpoint share (" + FormatPercent((o->gain_min + o->gain_max) / 2) + ")";
    const Impact& impact = o->finding->impact;
    if (impact.quantified && impact.basis == "per step" && impact.basis_ns > 0) {
      c.time_base += "; suggest's shares are of the finding's basis, the mean steady host step (" +
                     FormatDurationNs(impact.basis_ns) + "): the check keeps the share, not the milliseconds";
    }
    LabelInterval(&c, {0, std::string(prior ? "the prior's range of gains" : "the expected range of gains") + " (" +
                              range + " of the base), not a statistical interval"});
  }
  const bool corrected = o->simulation && o->simulation->history_cases > 0;
  c.uncorrected_ns = corrected ? o->simulation->uncorrected_ns : c.predicted_ns;
  c.uncorrected_lo_ns = corrected ? o->simulation->uncorrected_lo_ns : c.predicted_lo_ns;
  c.uncorrected_hi_ns = corrected ? o->simulation->uncorrected_hi_ns : c.predicted_hi_ns;
  SetMeasured(a, &c);
  Compare(&c);
  return std::optional<PredictionCheck>(c);
}

Status ResolveStatedScenarioDevices(const Trace& trace, const std::string& devices_file, Scenario* scenario) {
  Status st = ResolveScenarioDevices(trace, devices_file, scenario);
  if (st.ok() || !LoadDevices(devices_file).ok()) return st;
  return UsageStatus(st.message());
}

StatusOr<std::optional<PredictionCheck>> CheckScenarioPrediction(AnalysisSession& before, AnalysisSession& after,
                                                                 const std::string& scenario, bool mean,
                                                                 const std::string& devices_file,
                                                                 const std::vector<KnowledgeCard>& history) {
  ASSIGN_OR_RETURN(Scenario sc, ParseScenario(scenario));
  RETURN_IF_ERROR(ResolveStatedScenarioDevices(before.trace(), devices_file, &sc));
  WhatIfResult r = before.WhatIf(sc);
  if (r.time_base != WhatIfResult::TimeBase::kStepWallTime) {
    // A suggestion's replay on the period is checked on both runs' periods
    // (CheckPrediction); a stated scenario's cases are stored for history on
    // the wall time, so it is refused rather than mixed in.
    return ErrStatus(
        "scenario '" + scenario + "' predicts step periods (" +
        (r.device_behind ? "the device runs behind the host in this trace" : "graph-launch or remove-idle sync") +
        "), which a scenario's prediction check does not measure yet; name the suggestion with --fix-id");
  }
  if (!history.empty()) {
    // Both runs' inputs are checked inputs: no hash of the before run's is needed.
    HistoryScope scope = before.history_scope("");
    for (const std::string& id : after.options().history_checked_inputs) scope.checked_inputs.push_back(id);
    CorrectWhatIfByHistory(history, &r, scope);
  }
  const MeanInterval a = SteadyStepWallTime(after, mean);
  if (r.steady_steps == 0 || a.n == 0) return std::optional<PredictionCheck>();
  const WhatIfFigure f = FigureOf(r, mean);  // the before run's figure is the replay's measured one
  PredictionCheck c;
  c.mean = mean;
  c.matched_by = "--scenario";
  c.fix_title = "scenario '" + CanonicalScenarioText(scenario) + "'";
  c.source = kGainFromSimulation;
  c.scenario = CanonicalScenarioText(scenario);
  c.host_only = r.host_only;
  c.time_base = std::string("steady step wall time, ") + (mean ? "mean" : "median") + ": step start to " +
                StepEndText(c.host_only);
  c.before_steps = r.steady_steps;
  c.after_steps = a.n;
  c.before_ns = f.measured_ns;
  c.predicted_ns = f.predicted_ns;
  c.predicted_lo_ns = f.predicted_lo_ns;
  c.predicted_hi_ns = f.predicted_hi_ns;
  const WhatIfResult::History& h = mean ? r.mean_history : r.median_history;
  c.history_cases = h.cases;
  {
    // The scenes and what was left out, from the note CorrectWhatIfByHistory
    // adds for this statistic.
    const std::string prefix = std::string("history of the ") + (mean ? "mean" : "median") + ": ";
    for (const std::string& n : r.notes) {
      if (n.rfind(prefix, 0) == 0) c.history_from = n.substr(prefix.size());
    }
  }
  LabelInterval(&c, ReplayLabel(h.cases, mean, r.steady_steps));
  c.uncorrected_ns = h.cases ? h.uncorrected_ns : f.predicted_ns;
  c.uncorrected_lo_ns = h.cases ? h.uncorrected_lo_ns : f.predicted_lo_ns;
  c.uncorrected_hi_ns = h.cases ? h.uncorrected_hi_ns : f.predicted_hi_ns;
  SetMeasured(a, &c);
  Compare(&c);
  return std::optional<PredictionCheck>(c);
}

StatusOr<std::optional<PredictionCheck>> PredictFixForRun(AnalysisSession& before, AnalysisSession& after,
                                                          const std::string& fix_id, bool mean, bool* suggested) {
  ASSIGN_OR_RETURN(const SuggestResult* sug, before.suggestions());
  *suggested = FindSuggestionOutcome(*sug, fix_id) != nullptr;
  if (*suggested) return CheckPrediction(before, after, fix_id);
  const MeanInterval b = SteadyStepWallTime(before, mean), a = SteadyStepWallTime(after, mean);
  if (b.n == 0 || a.n == 0) return std::optional<PredictionCheck>();
  PredictionCheck c;
  c.mean = mean;
  c.fix_id = fix_id;
  c.source = "not suggested by this run: no change predicted";
  c.before_steps = b.n;
  c.after_steps = a.n;
  c.before_ns = b.mean;
  c.predicted_ns = b.mean;
  c.predicted_lo_ns = b.lo;
  c.predicted_hi_ns = b.hi;
  c.uncorrected_ns = b.mean;
  c.uncorrected_lo_ns = b.lo;
  c.uncorrected_hi_ns = b.hi;
  // No change predicted: the before run's own interval.
  LabelInterval(&c, mean ? MeanIntervalLabel(b.n) : MedianIntervalLabel(b.n));
  SetMeasured(a, &c);
  Compare(&c);
  return std::optional<PredictionCheck>(c);
}

MeanInterval SteadyStepWallTime(AnalysisSession& s, bool mean) {
  std::vector<double> v;
  const CriticalPathResult& path = s.results().Get(kCriticalPath);
  // A trace without steps: each rank's whole trace on the analysis window's
  // per-trace base, start-up left out, as the before run's replay measures
  // it (WhatIfResult::per_trace).
  const bool per_trace =
      !path.steps.empty() &&
      std::all_of(path.steps.begin(), path.steps.end(), [](const StepPath& p) { return p.step_index == SIZE_MAX; }) &&
      s.results().Get(kWindow).steps == 0;
  for (const StepPath& p : path.steps) {
    if (p.steady) v.push_back(per_trace ? s.results().Get(kWindow).base_ns : static_cast<double>(p.length_ns()));
  }
  return mean ? DurationMeanWithInterval(v) : MedianWithInterval(v);
}

MeanInterval SteadyStepPeriod(AnalysisSession& s, bool mean) {
  const StepList list = FindSteps(s.trace());
  const StepPeriods periods = ComputeStepPeriods(s.trace(), list);
  std::vector<double> v;
  for (const StepPath& p : s.results().Get(kCriticalPath).steps) {
    if (!p.steady || p.step_index >= periods.period_ns.size()) continue;
    if (const int64_t period = periods.period_ns[p.step_index]; period > 0) v.push_back(static_cast<double>(period));
  }
  return mean ? DurationMeanWithInterval(v) : MedianWithInterval(v);
}

MeanInterval SteadyStepTime(AnalysisSession& s, const PredictionCheck& c) {
  return c.step_period ? SteadyStepPeriod(s, c.mean) : SteadyStepWallTime(s, c.mean);
}

namespace {

// A side's figure over its runs: each run's (figure, lo, hi).
MeanInterval PoolRuns(const std::vector<MeanInterval>& runs) {
  std::vector<double> v;
  for (const MeanInterval& r : runs) v.push_back(r.mean);
  MeanInterval out = DurationMeanWithInterval(v);
  // Runs that agree exactly (no spread between them) do not make a point
  // interval: their own intervals' span stands instead.
  if (runs.size() < kMinRunsForTest || !(out.hi > out.lo)) {
    out.lo = runs.front().lo;
    out.hi = runs.front().hi;
    for (const MeanInterval& r : runs) {
      out.lo = std::min(out.lo, r.lo);
      out.hi = std::max(out.hi, r.hi);
    }
  }
  out.n = runs.size();
  return out;
}

}  // namespace

PredictionCheck PoolPredictionRuns(const std::vector<PredictionCheck>& before, const std::vector<MeanInterval>& after) {
  PredictionCheck c = before.front();
  std::vector<MeanInterval> predicted, uncorrected, before_figure;
  c.before_steps = 0;
  for (const PredictionCheck& r : before) {
    predicted.push_back(MeanInterval{r.predicted_ns, r.predicted_lo_ns, r.predicted_hi_ns, 1});
    uncorrected.push_back(MeanInterval{r.uncorrected_ns, r.uncorrected_lo_ns, r.uncorrected_hi_ns, 1});
    before_figure.push_back(MeanInterval{r.before_ns, r.before_ns, r.before_ns, 1});
    c.before_steps += r.before_steps;
    c.history_cases = std::max(c.history_cases, r.history_cases);
    c.host_only = c.host_only && r.host_only;
  }
  const MeanInterval p = PoolRuns(predicted);
  c.before_runs = before.size();
  c.before_ns = PoolRuns(before_figure).mean;
  // The uncorrected prediction pooled as the prediction is, interval too
  // (it kept the first run's).
  const MeanInterval u = PoolRuns(uncorrected);
  c.uncorrected_ns = u.mean;
  c.uncorrected_lo_ns = u.lo;
  c.uncorrected_hi_ns = u.hi;
  c.predicted_ns = p.mean;
  c.predicted_lo_ns = p.lo;
  c.predicted_hi_ns = p.hi;
  if (!after.empty()) {
    const MeanInterval a = PoolRuns(after);
    c.after_runs = after.size();
    c.after_steps = 0;
    for (const MeanInterval& r : after) c.after_steps += r.n;
    c.measured_ns = a.mean;
    c.measured_lo_ns = a.lo;
    c.measured_hi_ns = a.hi;
    const bool after_spread =
        std::any_of(after.begin(), after.end(), [&](const MeanInterval& r) { return r.mean != after.front().mean; });
    if (c.after_runs >= kMinRunsForTest && after_spread) {
      c.measured_interval_level = 0.95;
      c.measured_interval_kind = MeanIntervalLabel(c.after_runs, "run").kind;
    } else {
      c.measured_interval_level = 0;
      c.measured_interval_kind = "the span of " + std::to_string(c.after_runs) + " run(s)' own intervals";
    }
  }
  auto interval = [](size_t runs) {
    return runs >= kMinRunsForTest ? "Student's t over " + std::to_string(runs) + " runs"
                                   : "the span of " + std::to_string(runs) + " run(s)' own intervals";
  };
  const bool spread = std::any_of(before.begin(), before.end(), [&](const PredictionCheck& r) {
    return r.predicted_ns != before.front().predicted_ns;
  });
  if (c.before_runs >= kMinRunsForTest && spread) {  // PoolRuns' t interval, not its fallback
    LabelInterval(&c, MeanIntervalLabel(c.before_runs, "run"));
  } else {
    // Each run's interval may have its own level; their span has none.
    LabelInterval(&c, {0, "the span of " + std::to_string(c.before_runs) + " run(s)' own intervals"});
  }
  c.time_base = std::string("mean over runs of each run's steady step ") + (c.mean ? "mean" : "median") +
                " wall time (step start to " + StepEndText(c.host_only) +
                "); interval of the prediction: " + interval(c.before_runs) +
                ", of the measurement: " + interval(c.after_runs);
  Compare(&c);
  return c;
}

}  // namespace aiprof
