// The structural diff of two runs (src/analysis/diff) as a document: the
// step's time in both runs with validate's statistics, the time classes, the
// largest changes (with per-node statistics where there are enough steps)
// and the pairs matched under different names. Every format comes from the
// shared renderers (src/render).
#ifndef AIPROF_SRC_REPORT_DIFF_DIFF_REPORT_H_
#define AIPROF_SRC_REPORT_DIFF_DIFF_REPORT_H_

#include <string>

#include "src/analysis/diff/attribution_diff.h"
#include "src/render/document.h"

namespace aiprof {

struct DiffRun {
  std::string label;  // the file, as shown
  const Trace* trace = nullptr;
  const AttributionResult* attribution = nullptr;
  int warmup_steps = -1;  // as the run's session was asked (--warmup-steps); -1: detected
  // No steady step launched device work (SteadyStepsAreHostOnly of the run's
  // critical path, whatif's own test): whatif's step wall time ends on the host.
  bool host_only = false;
};

// `top_n`: rows of the changes and renamed tables.
render::Document DiffToDocument(const DiffRun& a, const DiffRun& b, const AttributionDiff& d, size_t top_n);

}  // namespace aiprof

#endif  // AIPROF_SRC_REPORT_DIFF_DIFF_REPORT_H_
