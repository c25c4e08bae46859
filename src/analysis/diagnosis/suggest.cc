#include "src/analysis/diagnosis/suggest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "src/analysis/common/text_format.h"

namespace aiprof {

int EffortRank(const std::string& effort) { return effort == "low" ? 0 : effort == "medium" ? 1 : 2; }

namespace {

bool Holds(double v, const std::string& op, double limit) {
  if (op == "<") return v < limit;
  if (op == "<=") return v <= limit;
  if (op == ">") return v > limit;
  return v >= limit;
}

StatusOr<double> ParseQuantity(const std::string& name, std::string text, const std::string& whole) {
  if (name == "effort") {
    if (text == "low" || text == "medium" || text == "high") return static_cast<double>(EffortRank(text));
    return ErrStatus("constraint '" + whole + "': effort must be low, medium or high");
  }
  struct Suffix {
    const char* s;
    double scale;
    bool bytes;
  };
  static const Suffix kSuffixes[] = {{"GiB", 1073741824.0, true}, {"MiB", 1048576.0, true}, {"KiB", 1024.0, true},
                                     {"GB", 1e9, true}, {"MB", 1e6, true}, {"KB", 1e3, true}, {"B", 1, true},
                                     {"%", 0.01, false}};
  double scale = 1;
  bool bytes = false, percent = false;
  for (const Suffix& s : kSuffixes) {
    std::string suf = s.s;
    if (text.size() > suf.size() && text.compare(text.size() - suf.size(), suf.size(), suf) == 0) {
      text.resize(text.size() - suf.size());
      scale = s.scale;
      bytes = s.bytes;
      percent = !s.bytes;
      break;
    }
  }
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) {
    return ErrStatus("constraint '" + whole + "': '" + text + "' is not a number");
  }
  if (name == "memory" && !bytes) return ErrStatus("constraint '" + whole + "': memory needs a unit (GB, MiB, ...)");
  if (name != "memory" && bytes) return ErrStatus("constraint '" + whole + "': " + name + " is not in bytes");
  if ((name == "precision_loss" || name == "memory_increase") && !percent && v > 1) {
    return ErrStatus("constraint '" + whole + "': write " + name + " as a percentage (e.g. 1%)");
  }
  return v * scale;
}

std::string ConstraintPercent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2g%%", f * 100);
  return buf;
}

// Why `s` breaks a constraint, or empty if it keeps them all.
std::string CheckConstraint(const Suggestion& s, const MetricSet& metrics, const Constraint& c) {
  {
    if (c.name == "precision_loss" && !Holds(s.risk.precision_loss, c.op, c.value)) {
      return "expected precision loss " + ConstraintPercent(s.risk.precision_loss) + " breaks " + c.text;
    }
    if (c.name == "memory_increase" && !Holds(s.risk.memory_increase, c.op, c.value)) {
      return "expected memory increase " + ConstraintPercent(s.risk.memory_increase) + " breaks " + c.text;
    }
    if (c.name == "effort" && !Holds(EffortRank(s.risk.effort), c.op, c.value)) {
      return "effort " + s.risk.effort + " breaks " + c.text;
    }
    if (c.name == "memory") {
      const MetricValue* peak = metrics.Get("memory_peak_reserved_bytes");
      if (!peak) peak = metrics.Get("memory_peak_allocated_bytes");
      if (!peak) {
        if (s.risk.memory_increase > 0) {
          return "raises memory by " + ConstraintPercent(s.risk.memory_increase) +
                 " and the trace has no memory figures to check " + c.text;
        }
        return "";
      }
      double predicted = peak->value * (1 + s.risk.memory_increase);
      if (!Holds(predicted, c.op, c.value)) {
        char buf[160];
        std::snprintf(buf, sizeof(buf), "predicted peak memory %.2f GB (peak %.2f GB + %s) breaks ", predicted / 1e9,
                      peak->value / 1e9, ConstraintPercent(s.risk.memory_increase).c_str());
        return buf + c.text;
      }
    }
  }
  return "";
}

// Every constraint `s` breaks, joined; empty if it keeps them all.
std::string CheckConstraints(const Suggestion& s, const MetricSet& metrics, const std::vector<Constraint>& cs) {
  std::string out;
  for (const Constraint& c : cs) {
    std::string why = CheckConstraint(s, metrics, c);
    if (!why.empty()) out += (out.empty() ? "" : "; ") + why;
  }
  return out;
}

// A suggestion of a finding none of whose fixes fit the trace's platform.
SuggestionOutcome PlatformExclusion(const Finding& f, const Suggestion& s, const Platform& platform) {
  SuggestionOutcome o;
  o.finding = &f;
  o.suggestion = &s;
  o.excluded = true;
  o.exclusion_reason = "for platform '" + s.platform + "', the trace is '" + platform.Describe() +
                       "': the rule library has no fix of this finding for this platform";
  return o;
}

}  // namespace

std::string GainBasis(const SuggestionOutcome& o) {
  if (!o.simulation) return o.finding->impact.basis;
  const char* base = o.simulation->step_period ? "step period" : "step wall time";
  return o.simulation->mean ? std::string("mean ") + base : std::string(base);
}

std::string GainOrigin(const SuggestionOutcome& o) {
  if (o.simulation) {
    const SimulatedGain& s = *o.simulation;
    return "simulated '" + s.scenario + "': " + FormatDurationNs(s.measured_ns) + " -> " +
           FormatDurationNs(s.predicted_ns) + (s.step_period ? " step period (" : " per step (") +
           (s.mean ? "mean, as the scenario acts on one step in N; interval " : "median; interval ") +
           FormatDurationNs(s.predicted_lo_ns) + " .. " + FormatDurationNs(s.predicted_hi_ns) + ", " +
           std::to_string(s.steps) + (s.steps == 1 ? " step" : " steps") +
           (s.history_cases        ? "; corrected from " + FormatDurationNs(s.uncorrected_ns) + " by " + s.history_from
            : !s.history_from.empty() ? "; not corrected by history: " + s.history_from
                                      : std::string()) +
           ")";
  }
  if (o.gain_source == kGainFromCards) return "measured by knowledge cards";
  std::string prior = "prior: impact x efficacy";
  if (o.prior_cap && o.finding->impact.replayed) {
    // The bound is said whether or not it lowered the prior: a reader
    // comparing the fix with the removal's replay sees both.
    prior += std::string(o.prior_capped ? ", capped by" : ", within") + " the replay of '" +
             o.finding->impact.replayed->scenario + "' (the finding's cause removed): at most " +
             FormatPercent(*o.prior_cap);
  }
  if (o.suggestion->scenario.empty()) return prior + " (not simulated: the rule gives this fix no scenario)";
  return prior + " (the scenario is not replayed: " +
         (o.not_simulated.empty() ? std::string("the trace has no steady steps") : o.not_simulated) + ")";
}

std::optional<double> CentralSimulatedGain(const SuggestionOutcome& o) {
  if (!o.simulation || o.simulation->measured_ns <= 0) return std::nullopt;
  return 1 - o.simulation->predicted_ns / o.simulation->measured_ns;
}

bool MeasuredToPay(const SuggestionOutcome& o) {
  if (o.gain_source == kGainFromPrior) return false;
  if (!o.simulation || o.simulation->history_cases == 0) return o.gain_min > 0;
  const SimulatedGain& s = *o.simulation;
  return s.measured_ns > 0 && 1 - s.uncorrected_hi_ns / s.measured_ns > 0 && *CentralSimulatedGain(o) > 0;
}

void RankSuggestions(SuggestResult* result) {
  auto per_effort = [](const SuggestionOutcome& o) {
    const std::string& e = o.suggestion->risk.effort;
    const double weight = e == "high" ? 4 : e == "medium" ? 2 : 1;
    return (o.gain_min + o.gain_max) / 2 / weight;
  };
  auto tier = [](const SuggestionOutcome& o) {
    if (o.gain_source == kGainFromPrior) return 1;
    return MeasuredToPay(o) ? 0 : 2;
  };
  std::stable_sort(result->kept.begin(), result->kept.end(), [&](const SuggestionOutcome& a, const SuggestionOutcome& b) {
    if (tier(a) != tier(b)) return tier(a) < tier(b);
    return per_effort(a) > per_effort(b);
  });
}

void ApplyHistory(const HistoricalGain& h, SuggestionOutcome* o) {
  o->history = h;
  // A simulated gain stays: the cards' record is shown beside it.
  if (o->simulation || !o->finding || o->finding->rule->impact_on_memory || !o->finding->impact.quantified) return;
  double cap = std::min(o->finding->impact.share, 0.999);
  double lo = std::clamp(std::min(h.ci_low, h.ci_high), 0.0, cap);
  double hi = std::clamp(std::max(h.ci_low, h.ci_high), 0.0, cap);
  o->gain_min = lo;
  o->gain_max = hi;
  o->speedup_min = 1.0 / (1.0 - lo);
  o->speedup_max = 1.0 / (1.0 - hi);
  o->gain_source = kGainFromCards;
}

StatusOr<std::vector<Constraint>> ParseConstraints(const std::string& text) {
  std::vector<Constraint> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    part.erase(std::remove_if(part.begin(), part.end(), [](char c) { return c == ' ' || c == '\t'; }), part.end());
    if (!part.empty()) {
      size_t op_pos = part.find_first_of("<>");
      if (op_pos == std::string::npos || op_pos == 0) {
        return ErrStatus("constraint '" + part + "': expected NAME<VALUE, NAME<=VALUE, NAME>VALUE or NAME>=VALUE");
      }
      Constraint c;
      c.name = part.substr(0, op_pos);
      c.op = part.substr(op_pos, (op_pos + 1 < part.size() && part[op_pos + 1] == '=') ? 2 : 1);
      c.text = part;
      if (c.name != "memory" && c.name != "memory_increase" && c.name != "precision_loss" && c.name != "effort") {
        return ErrStatus("constraint '" + part + "': unknown name '" + c.name +
                         "' (known: memory, memory_increase, precision_loss, effort)");
      }
      ASSIGN_OR_RETURN(c.value, ParseQuantity(c.name, part.substr(op_pos + c.op.size()), part));
      out.push_back(c);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

SuggestResult Suggest(const Diagnosis& diagnosis, const MetricSet& metrics, const SuggestOptions& options) {
  SuggestResult result;
  for (const Finding& f : diagnosis.findings) {
    const bool any_for_platform =
        std::any_of(f.rule->suggestions.begin(), f.rule->suggestions.end(),
                    [&](const Suggestion& s) { return diagnosis.platform.Matches(s.platform); });
    for (const Suggestion& s : f.rule->suggestions) {
      if (!diagnosis.platform.Matches(s.platform)) {
        // Advice for another platform is left out; listed only where the
        // finding would otherwise have no fix and no word on why.
        if (!any_for_platform) result.excluded.push_back(PlatformExclusion(f, s, diagnosis.platform));
        continue;
      }
      SuggestionOutcome o;
      o.finding = &f;
      o.suggestion = &s;
      // For memory findings the gain is a share of device memory, not time.
      o.gain_min = f.impact.share * s.efficacy_min;
      o.gain_max = f.impact.share * s.efficacy_max;
      // A prior is the rule's belief; the finding's cause removed in the
      // replay (its rule's `removal`, SimulateRemovals) measures the most any
      // fix of that cause can gain here. Found by audit4: on MI300 ResNet
      // act-checkpoint "Overlap communication" was the best fix at
      // 24.9%-49.9% while remove-comm replayed -12.65%.
      if (!f.rule->impact_on_memory) {
        if (const std::optional<double> bound = ReplayedGain(f.impact)) {
          o.prior_cap = std::clamp(*bound, 0.0, 0.999);
          o.prior_capped = o.gain_max > *o.prior_cap;
          o.gain_min = std::min(o.gain_min, *o.prior_cap);
          o.gain_max = std::min(o.gain_max, *o.prior_cap);
        }
      }
      o.speedup_min = 1.0 / (1.0 - std::min(o.gain_min, 0.999));
      o.speedup_max = 1.0 / (1.0 - std::min(o.gain_max, 0.999));
      EvalResult applies;
      if (s.when) applies = s.when->Evaluate(metrics);
      if (s.when && applies.truth == Truth::kFalse) {
        o.excluded = true;
        o.exclusion_reason = "does not apply here:";
        const char* sep = " ";
        for (const ComparisonOutcome& c : applies.comparisons) {
          if (c.holds) continue;
          o.exclusion_reason += sep + DescribeComparison(c) + " is false";
          sep = "; ";
        }
      } else if (std::find(s.targets.begin(), s.targets.end(), options.target) == s.targets.end()) {
        o.excluded = true;
        o.exclusion_reason = "does not serve the target '" + options.target + "'";
      } else if (std::string why = CheckConstraints(s, metrics, options.constraints); !why.empty()) {
        o.excluded = true;
        o.exclusion_reason = why;
      }
      (o.excluded ? result.excluded : result.kept).push_back(o);
    }
  }
  RankSuggestions(&result);
  return result;
}

}  // namespace aiprof
