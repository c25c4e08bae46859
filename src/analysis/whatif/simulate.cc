#include "src/analysis/whatif/simulate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_set>

#include "src/analysis/validation/trace_identity.h"
#include "src/analysis/whatif/whatif.h"

namespace aiprof {

void ApplySimulation(const SimulatedGain& sim, SuggestionOutcome* o) {
  o->simulation = sim;
  if (sim.measured_ns <= 0) return;
  // A scenario can predict a longer step (a negative gain, as long as the
  // interval's upper end says: a step 2.55x as long is -155%, x0.39, not
  // clamped to -100%, x0.50, which no figure beside it showed); never a step
  // shorter than nothing.
  auto gain = [&](double predicted) { return std::min(1 - predicted / sim.measured_ns, 0.999); };
  o->gain_min = gain(sim.predicted_hi_ns);
  o->gain_max = gain(sim.predicted_lo_ns);
  o->speedup_min = 1 / (1 - o->gain_min);
  o->speedup_max = 1 / (1 - o->gain_max);
  o->gain_source = kGainFromSimulation;
}

std::optional<HistoryCorrection> CorrectionFromLogErrors(const std::vector<double>& r) {
  if (r.empty()) return std::nullopt;
  const double n = static_cast<double>(r.size());
  double sum = 0;
  for (double x : r) sum += x;
  double ss = 0;
  for (double x : r) ss += (x - sum / n) * (x - sum / n);
  // The cases' variance moderated by kHistoryPriorDof prior cases at σ0: one
  // case (no spread to measure) reads σ0, and cases that agree by chance
  // shrink it only as their number outweighs the prior's.
  const double sigma2 = (kHistoryPriorDof * kHistoryCaseSd * kHistoryCaseSd + ss) / (kHistoryPriorDof + n - 1);
  const double precision = n / sigma2 + 1 / (kHistoryPriorSd * kHistoryPriorSd);
  HistoryCorrection c;
  c.cases = r.size();
  c.bias = sum / sigma2 / precision;
  c.spread = 1.96 * std::sqrt(1 / precision + sigma2);
  return c;
}

void ApplyCorrection(const HistoryCorrection& h, double* predicted, double* lo, double* hi) {
  *predicted *= std::exp(h.bias);
  *lo *= std::exp(h.bias - h.spread);
  *hi *= std::exp(h.bias + h.spread);
}

PastCases SelectPastCases(const std::vector<KnowledgeCard>& cards, const std::string& statistic,
                          const std::function<bool(const CardPrediction&)>& same_fix, const HistoryScope& scope) {
  PastCases out;
  std::set<std::string> pairs;
  auto checked = [&](const std::string& id) {
    return !id.empty() &&
           std::find(scope.checked_inputs.begin(), scope.checked_inputs.end(), id) != scope.checked_inputs.end();
  };
  for (const KnowledgeCard& c : cards) {  // newest first (FindCards, AllCards)
    if (!c.prediction) continue;
    const CardPrediction& p = *c.prediction;
    if (p.source != kGainFromSimulation || p.statistic != statistic) continue;
    if (!same_fix(p)) continue;
    if (p.predicted_ns <= 0 || p.measured_ns <= 0) continue;
    if (checked(p.before_input) || checked(p.after_input)) {
      ++out.checked;
      continue;
    }
    if (!scope.predicted_input.empty() && p.before_input == scope.predicted_input) {
      ++out.same_trace;
      continue;
    }
    if (!scope.workload.empty() && WorkloadSimilarity(scope.workload, p.workload) < kSameWorkloadSimilarity) {
      ++out.other_workload;
      continue;
    }
    if (!p.before_input.empty() && !p.after_input.empty() &&
        !pairs.insert(p.before_input + "|" + p.after_input).second) {
      ++out.repeats;
      continue;
    }
    out.r.push_back(std::log(p.measured_ns / p.predicted_ns));
    out.scenes.push_back(c.scene);
  }
  return out;
}

std::string DescribePastCases(const PastCases& cases) {
  std::string out;
  if (!cases.r.empty()) {
    std::map<std::string, size_t> by_scene;
    for (const std::string& s : cases.scenes) ++by_scene[s];
    out = std::to_string(cases.r.size()) + " past case(s) (scene";
    out += by_scene.size() > 1 ? "s: " : ": ";
    bool first = true;
    for (const auto& [scene, n] : by_scene) {
      out += (first ? "'" : ", '") + scene + "'" + (n > 1 ? " x" + std::to_string(n) : "");
      first = false;
    }
    out += ")";
  }
  std::vector<std::string> left;
  if (cases.repeats) left.push_back(std::to_string(cases.repeats) + " repeated card(s) of a pair already counted");
  if (cases.other_workload) {
    left.push_back(std::to_string(cases.other_workload) + " of another workload (or stored without one)");
  }
  if (cases.checked) left.push_back(std::to_string(cases.checked) + " of the very inputs being checked");
  if (cases.same_trace) {
    left.push_back(std::to_string(cases.same_trace) +
                   " measured from this very trace (its outcome, not a past case: its card holds what was measured)");
  }
  if (!left.empty()) {
    out += out.empty() ? "no past case counted; left out: " : "; left out: ";
    for (size_t i = 0; i < left.size(); ++i) out += (i ? ", " : "") + left[i];
  }
  return out;
}

std::vector<double> PastLogErrors(const std::vector<KnowledgeCard>& cards, const std::string& statistic,
                                  const std::function<bool(const CardPrediction&)>& same_fix) {
  return SelectPastCases(cards, statistic, same_fix, {}).r;
}

void CorrectByHistory(const std::vector<KnowledgeCard>& cards, SuggestionOutcome* o, const HistoryScope& scope) {
  if (!o->simulation || o->simulation->history_cases > 0) return;
  const std::string& id = o->suggestion->id;
  const PastCases cases = SelectPastCases(
      cards, o->simulation->mean ? "mean" : "median", [&](const CardPrediction& p) { return p.fix_id == id; }, scope);
  o->simulation->history_from = DescribePastCases(cases);
  std::optional<HistoryCorrection> h = CorrectionFromLogErrors(cases.r);
  if (!h) return;
  SimulatedGain g = *o->simulation;
  g.uncorrected_ns = g.predicted_ns;
  g.uncorrected_lo_ns = g.predicted_lo_ns;
  g.uncorrected_hi_ns = g.predicted_hi_ns;
  g.history_cases = h->cases;
  ApplyCorrection(*h, &g.predicted_ns, &g.predicted_lo_ns, &g.predicted_hi_ns);
  ApplySimulation(g, o);
}

void CorrectWhatIfByHistory(const std::vector<KnowledgeCard>& cards, WhatIfResult* r, const HistoryScope& scope) {
  r->history_asked = true;
  // Each card's scenario canonicalised once (it is parsed), not per statistic.
  const std::string key = CanonicalScenarioText(r->scenario);
  std::unordered_set<const CardPrediction*> same_scenario;
  for (const KnowledgeCard& c : cards) {
    if (c.prediction && CanonicalScenarioText(c.prediction->scenario) == key) same_scenario.insert(&*c.prediction);
  }
  auto same = [&](const CardPrediction& p) { return same_scenario.count(&p) > 0; };
  auto correct = [&](const char* statistic, double* predicted, double* lo, double* hi, WhatIfResult::History* out) {
    const PastCases cases = SelectPastCases(cards, statistic, same, scope);
    const std::string from = DescribePastCases(cases);
    if (!from.empty()) r->notes.push_back(std::string("history of the ") + statistic + ": " + from);
    std::optional<HistoryCorrection> h = CorrectionFromLogErrors(cases.r);
    if (!h || *predicted <= 0) return;
    out->cases = h->cases;
    out->uncorrected_ns = *predicted;
    out->uncorrected_lo_ns = *lo;
    out->uncorrected_hi_ns = *hi;
    ApplyCorrection(*h, predicted, lo, hi);
  };
  correct("median", &r->predicted_ns, &r->predicted_lo_ns, &r->predicted_hi_ns, &r->median_history);
  correct("mean", &r->predicted_mean_ns, &r->predicted_mean_lo_ns, &r->predicted_mean_hi_ns, &r->mean_history);
}

namespace {

// Without steps the "step" is the whole trace, start-up and idle between
// captures included: a scenario that removes idle would claim most of it.
bool HasSteps(const CriticalPathResult& path) {
  return std::any_of(path.steps.begin(), path.steps.end(), [](const StepPath& p) { return p.number >= 0; });
}

// Whether a scenario only shortens or stretches slices by name (remove,
// scale) and no slice's duration changed.
bool ChangesNothing(const Scenario& sc, const WhatIfResult& r) {
  return r.slices_changed == 0 && std::all_of(sc.clauses.begin(), sc.clauses.end(), [](const WhatIfClause& c) {
           return c.kind == WhatIfClause::Kind::kRemove || c.kind == WhatIfClause::Kind::kScale;
         });
}

// Each distinct scenario text replayed once per trace.
class ScenarioReplays {
 public:
  ScenarioReplays(const Trace& trace, const CriticalPathResult& path) : trace_(trace), path_(path) {}

  struct Replay {
    std::optional<SimulatedGain> gain;
    std::string why_not;  // no gain: why the rule's prior stays
  };

  const Replay& Get(const std::string& text) {
    auto it = done_.find(text);
    if (it != done_.end()) return it->second;
    Replay out;
    StatusOr<Scenario> sc = ParseScenario(text);
    if (!sc.ok()) {
      out.why_not = "the rule's scenario does not parse";
    } else if (!ResolveScenarioDevices(trace_, "", &*sc).ok()) {
      out.why_not = "the trace's device is not in data/devices.yaml";
    } else {
      WhatIfResult r = PredictWhatIf(trace_, path_, *sc);
      // A gain is the replay's measured over its predicted figure, both on
      // one base: the step wall time, or, where the device runs behind the
      // host, the step period (a wall time there counts the queue of earlier
      // steps' work; the trace's step time and impacts are on the period
      // too). The base goes with the gain (SimulatedGain::step_period) and
      // is said; a prediction check against an after run's wall time must
      // not read a period as one. A period only the scenario brings
      // (graph-launch, remove-idle sync on a host-paced trace) is another
      // base than the trace's step: the rule's prior stays until validate
      // measures periods too.
      // A scenario of name patterns that match nothing here (another
      // vendor's kernel names) simulates no fix: the rule's prior stays
      // rather than a "simulated" 0% gain.
      if (r.steady_steps == 0 || r.measured_ns <= 0) {
        out.why_not = "the trace has no steady steps";
      } else if (r.time_base == WhatIfResult::TimeBase::kStepPeriod && !r.device_behind) {
        out.why_not = "it predicts a step period, not the step wall time validate measures";
      } else if (ChangesNothing(*sc, r)) {
        out.why_not = "it changes no slice of this trace";
      } else {
        const bool mean = ScenarioNeedsMean(*sc);
        const WhatIfFigure f = FigureOf(r, mean);
        out.gain =
            SimulatedGain{text, r.steady_steps, f.measured_ns, f.predicted_ns, f.predicted_lo_ns, f.predicted_hi_ns};
        out.gain->mean = mean;
        out.gain->step_period = r.time_base == WhatIfResult::TimeBase::kStepPeriod;
        out.gain->host_only = r.host_only;
      }
    }
    return done_.emplace(text, std::move(out)).first->second;
  }

 private:
  const Trace& trace_;
  const CriticalPathResult& path_;
  std::map<std::string, Replay> done_;
};

}  // namespace

void SimulateSuggestions(const Trace& trace, const CriticalPathResult& path, SuggestResult* result) {
  if (!HasSteps(path)) return;
  ScenarioReplays replays(trace, path);
  for (std::vector<SuggestionOutcome>* list : {&result->kept, &result->excluded}) {
    for (SuggestionOutcome& o : *list) {
      if (o.suggestion->scenario.empty() || o.finding->rule->impact_on_memory) continue;
      const auto& replay = replays.Get(o.suggestion->scenario);
      if (replay.gain) {
        ApplySimulation(*replay.gain, &o);
      } else {
        o.not_simulated = replay.why_not;
      }
    }
  }
  RankSuggestions(result);
}

bool NeedsRemovalReplays(const Diagnosis& diagnosis) {
  return std::any_of(diagnosis.findings.begin(), diagnosis.findings.end(), [](const Finding& f) {
    return !f.rule->removal.empty() && f.impact.quantified && f.impact.basis == "per step";
  });
}

void SimulateRemovals(const Trace& trace, const CriticalPathResult& path, Diagnosis* diagnosis) {
  if (!HasSteps(path)) return;
  ScenarioReplays replays(trace, path);
  for (Finding& f : diagnosis->findings) {
    // Per step only: a replay measures steps, and an impact per trace (no
    // steps) or on memory is another base.
    if (f.rule->removal.empty() || !f.impact.quantified || f.impact.basis != "per step") continue;
    f.impact.replayed = replays.Get(f.rule->removal).gain;
  }
}

}  // namespace aiprof
