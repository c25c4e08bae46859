#ifndef AIPROF_MODEL_GRAPH_CAPTURE_TRACKS_H_
#define AIPROF_MODEL_GRAPH_CAPTURE_TRACKS_H_

#include <cstdint>
#include <string_view>

#include "src/model/trace.h"

namespace aiprof {

// True for a track a graph-capture merge added (kGraphCaptureTrackLabel):
// its slices are captured ops placed at their replayed kernels' times, so
// they give the attribution tree its ops but are no host time: the op
// statistics leave them out.
bool IsGraphCaptureTrack(const Trace& trace, uint32_t track);

// A runtime/driver call that replays a captured graph (cudaGraphLaunch,
// hipGraphLaunch, cuGraphLaunch and their versioned names; any case).
bool IsGraphLaunchName(std::string_view name);

// A runtime/driver call that launches device work one item at a time, and so
// is recorded into the graph, not run, inside a stream capture: kernel
// launches, copies and sets (hipLaunchKernel, hipModuleLaunchKernel,
// cudaLaunchKernel, cuLaunchKernel, hipMemcpyAsync, cudaMemsetAsync, ...),
// never a graph launch.
bool IsWorkLaunchName(std::string_view name);

// The calls that open and close a stream capture (cudaStreamBeginCapture,
// hipStreamEndCapture, ...).
bool IsStreamBeginCaptureName(std::string_view name);
bool IsStreamEndCaptureName(std::string_view name);

}  // namespace aiprof

#endif  // AIPROF_MODEL_GRAPH_CAPTURE_TRACKS_H_
