#ifndef AIPROF_MODEL_GRAPH_CAPTURE_TRACKS_H_
#define AIPROF_MODEL_GRAPH_CAPTURE_TRACKS_H_

#include <cstdint>

#include "src/model/trace.h"

namespace aiprof {

// True for a track a graph-capture merge added (kGraphCaptureTrackLabel):
// its slices are captured ops placed at their replayed kernels' times, so
// they give the attribution tree its ops but are no host time: the op
// statistics leave them out.
bool IsGraphCaptureTrack(const Trace& trace, uint32_t track);

}  // namespace aiprof

#endif  // AIPROF_MODEL_GRAPH_CAPTURE_TRACKS_H_
