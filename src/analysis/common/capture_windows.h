// Stream capture windows: on a host thread, the time from a
// *StreamBeginCapture call's end to its *StreamEndCapture call's start (cuda*,
// hip*). The work launch calls between them record nodes into a CUDA/HIP graph
// and run nothing (TraceLens's vLLM capture trace: 421 of its 431 launch calls,
// in one 54.98 ms window). One scan for every reader: the launch statistics
// (graph_capture_* metrics) and the host's start-up work
// (src/analysis/window/startup_work.h).
#ifndef AIPROF_SRC_ANALYSIS_COMMON_CAPTURE_WINDOWS_H_
#define AIPROF_SRC_ANALYSIS_COMMON_CAPTURE_WINDOWS_H_

#include <cstdint>
#include <map>
#include <vector>

#include "src/analysis/common/intervals.h"
#include "src/model/trace.h"

namespace aiprof {

struct CaptureWindow {
  uint32_t track = kNoTrack;
  int64_t start_ns = 0;  // the begin call's end
  // The end call's start when `closed`; otherwise where the window stopped
  // unclosed: the next begin call's start on the thread, or INT64_MAX when
  // the thread's calls end inside it (the recording stopped mid-capture).
  int64_t end_ns = 0;
  bool closed = false;
};

// Every window of every host thread, in (track, start) order. An end call
// that starts before its begin call ends closes no window; a begin call
// inside an open window starts a new one (the open one stops, unclosed).
// The tracks a graph-capture merge added (IsGraphCaptureTrack: copies of
// captured ops) are not host threads.
std::vector<CaptureWindow> FindCaptureWindows(const Trace& trace);

// The closed, non-empty windows merged per rank of their thread.
std::map<int32_t, Intervals> CaptureWindowsByRank(const Trace& trace, const std::vector<CaptureWindow>& windows);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMON_CAPTURE_WINDOWS_H_
