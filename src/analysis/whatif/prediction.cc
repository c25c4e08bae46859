#include "src/analysis/whatif/prediction.h"

#include <cstdio>

#include "src/analysis/common/text_format.h"

namespace aiprof {

std::string DescribePredictionCheck(const PredictionCheck& c) {
  char err[32];
  std::snprintf(err, sizeof err, "%+.1f%%", c.error * 100);
  std::string out =
      "prediction for " + (c.fix_id.empty() ? std::string("the scenario") : c.fix_id) + " (" + c.source +
      (c.scenario.empty() ? "" : ": '" + c.scenario + "'") + "): " + FormatDurationNs(c.predicted_ns) + " (" +
      FormatDurationNs(c.predicted_lo_ns) + " .. " + FormatDurationNs(c.predicted_hi_ns) + ") vs measured " +
      FormatDurationNs(c.measured_ns) + " (" + FormatDurationNs(c.measured_lo_ns) + " .. " +
      FormatDurationNs(c.measured_hi_ns) + ") per step" + (c.mean ? " (steady steps' mean)" : "") +
      (c.before_runs > 1 || c.after_runs > 1 ? " (means over " + std::to_string(c.before_runs) + " before and " +
                                                   std::to_string(c.after_runs) + " after runs)"
                                             : std::string()) +
      ": " + err + ", " +
      (c.within   ? "inside the predicted interval"
       : c.agrees ? "intervals overlap"
                  : "outside: the prediction missed");
  if (c.history_cases > 0) {
    out += "; corrected from " + FormatDurationNs(c.uncorrected_ns) + " by " +
           (c.history_from.empty() ? std::to_string(c.history_cases) + " past case(s)" : c.history_from);
  } else if (!c.history_from.empty()) {
    out += "; not corrected by history: " + c.history_from;
  }
  return out;
}

}  // namespace aiprof
