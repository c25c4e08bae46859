// Dtype round trips as a result of the session (src/analysis/results.h),
// published by the layout analysis.
#ifndef AIPROF_SRC_ANALYSIS_CASTS_CASTS_ANALYSIS_H_
#define AIPROF_SRC_ANALYSIS_CASTS_CASTS_ANALYSIS_H_

#include "src/analysis/casts/cast_roundtrips.h"
#include "src/analysis/results.h"

namespace aiprof {

extern const ResultSpec<CastRoundtripResult> kCastRoundtrips;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_CASTS_CASTS_ANALYSIS_H_
