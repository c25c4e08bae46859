// The loop closed: the prediction made for a before run, for the fix the
// after run applied, against what the after run measured. Both on one time
// base: the steady steps' median wall time (step start to the end of its last
// device work, the critical path's length), each with a distribution-free
// interval of the median (MedianWithInterval: order statistics of the
// before run's predicted steps, and of the after run's measured steps).
//
// The fix: `--fix-id ID` (a suggestion id of the before run), else matched by
// what changed: the before run's first finding (in the diagnosis' order)
// that is gone after, or whose impact fell to less than half, and its best
// ranked suggestion.
#ifndef AIPROF_SRC_SESSION_PREDICTION_CHECK_H_
#define AIPROF_SRC_SESSION_PREDICTION_CHECK_H_

#include <optional>
#include <string>

#include "src/analysis/whatif/prediction.h"
#include "src/base/status.h"
#include "src/session/session.h"

namespace aiprof {


// nullopt when no fix is named and no finding of the before run went away,
// or a run has no steady step. An unknown --fix id is an error listing the
// before run's suggestion ids.
StatusOr<std::optional<PredictionCheck>> CheckPrediction(AnalysisSession& before, AnalysisSession& after,
                                                         const std::string& fix_id);


}  // namespace aiprof

#endif  // AIPROF_SRC_SESSION_PREDICTION_CHECK_H_
