#include "src/analysis/casts/casts_analysis.h"

namespace aiprof {

const ResultSpec<CastRoundtripResult> kCastRoundtrips{
    "casts", [](AnalysisResults& in) { return ComputeCastRoundtrips(in.trace()); }};

}  // namespace aiprof
