#include "src/session/prediction_check.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "src/analysis/common/text_format.h"
#include "src/analysis/validation/statistics.h"

namespace aiprof {
namespace {

MeanInterval SteadyWallTime(AnalysisSession& s) {
  std::vector<double> v;
  for (const StepPath& p : s.results().critical_path().steps) {
    if (p.steady) v.push_back(static_cast<double>(p.length_ns()));
  }
  return MedianWithInterval(v);
}

const SuggestionOutcome* FindOutcome(const SuggestResult& r, const std::string& id) {
  for (const std::vector<SuggestionOutcome>* list : {&r.kept, &r.excluded}) {
    for (const SuggestionOutcome& o : *list) {
      if (o.suggestion->id == id) return &o;
    }
  }
  return nullptr;
}

// The before run's first finding that the after run no longer has (or has
// at less than half its impact share), and the reason in words.
const Finding* ChangedFinding(const Diagnosis& before, const Diagnosis& after, std::string* why) {
  for (const Finding& f : before.findings) {
    if (DescriptiveFinding(f.rule->bottleneck)) continue;  // what the step does, not a cause
    const Finding* now = nullptr;
    for (const Finding& g : after.findings) {
      if (g.rule->id == f.rule->id) now = &g;
    }
    if (!now) {
      *why = "finding '" + f.rule->id + "' of the before run is gone after";
      return &f;
    }
    if (f.impact.quantified && now->impact.quantified && now->impact.share < f.impact.share / 2) {
      *why = "finding '" + f.rule->id + "' fell from " + FormatPercent(f.impact.share) + " to " +
             FormatPercent(now->impact.share) + " of the " + f.impact.basis;
      return &f;
    }
  }
  return nullptr;
}

}  // namespace

StatusOr<std::optional<PredictionCheck>> CheckPrediction(AnalysisSession& before, AnalysisSession& after,
                                                         const std::string& fix_id) {
  ASSIGN_OR_RETURN(const SuggestResult* sug, before.suggestions());
  PredictionCheck c;
  const SuggestionOutcome* o = nullptr;
  if (!fix_id.empty()) {
    o = FindOutcome(*sug, fix_id);
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
    const Finding* f = ChangedFinding(*db, *da, &c.matched_by);
    if (!f) return std::optional<PredictionCheck>();
    for (const SuggestionOutcome& k : sug->kept) {
      if (k.finding->rule->id == f->rule->id) {
        o = &k;
        break;
      }
    }
    if (!o) return std::optional<PredictionCheck>();
  }
  const MeanInterval b = SteadyWallTime(before), a = SteadyWallTime(after);
  if (b.n == 0 || a.n == 0) return std::optional<PredictionCheck>();
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
    c.uncorrected_ns = o->simulation->uncorrected_ns;
  } else {
    // A prior's gain is a share of the finding's basis; taken here as a
    // share of the step wall time (the basis differs by the step's tail).
    const double mid = (o->gain_min + o->gain_max) / 2;
    c.predicted_ns = b.mean * (1 - mid);
    c.predicted_lo_ns = b.mean * (1 - o->gain_max);
    c.predicted_hi_ns = b.mean * (1 - o->gain_min);
  }
  c.measured_ns = a.mean;
  c.measured_lo_ns = a.lo;
  c.measured_hi_ns = a.hi;
  c.error = a.mean > 0 ? c.predicted_ns / a.mean - 1 : 0;
  c.within = a.mean >= c.predicted_lo_ns && a.mean <= c.predicted_hi_ns;
  c.agrees = a.lo <= c.predicted_hi_ns && a.hi >= c.predicted_lo_ns;
  return std::optional<PredictionCheck>(c);
}

}  // namespace aiprof
