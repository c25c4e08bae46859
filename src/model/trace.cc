#include "src/model/trace.h"

#include <algorithm>

#include "src/base/ascii.h"
#include "src/model/graph_capture_tracks.h"

namespace aiprof {

const char* LayerName(Layer layer) {
  switch (layer) {
    case Layer::kUnknown: return "unknown";
    case Layer::kApplication: return "application";
    case Layer::kFramework: return "framework";
    case Layer::kRuntime: return "runtime";
    case Layer::kDevice: return "device";
    case Layer::kCommunication: return "communication";
    case Layer::kHost: return "host";
  }
  return "unknown";
}

const char* TrackKindName(TrackKind kind) {
  switch (kind) {
    case TrackKind::kThread: return "thread";
    case TrackKind::kDeviceStream: return "device_stream";
    case TrackKind::kCounter: return "counter";
    case TrackKind::kSpans: return "spans";
  }
  return "unknown";
}

const char* FrameKindName(FrameKind kind) {
  switch (kind) {
    case FrameKind::kUnknown: return "unknown";
    case FrameKind::kNative: return "native";
    case FrameKind::kPython: return "python";
    case FrameKind::kKernel: return "kernel";
  }
  return "unknown";
}

const Arg* Trace::FindSliceArg(uint32_t slice, StringId key) const {
  uint64_t begin = slices.arg_begin[slice];
  for (uint64_t i = begin; i < begin + slices.arg_count[slice]; ++i) {
    if (args[i].key == key) return &args[i];
  }
  return nullptr;
}

bool IsGraphCaptureTrack(const Trace& trace, uint32_t track) {
  return trace.tracks.tid[track] < 0 &&
         trace.Str(trace.tracks.tid_label[track]).starts_with(std::string_view(kGraphCaptureTrackLabel));
}

bool IsGraphLaunchName(std::string_view name) { return ContainsIgnoreCase(name, "graphlaunch"); }

bool IsWorkLaunchName(std::string_view name) {
  if (IsGraphLaunchName(name)) return false;
  return name.find("Launch") != std::string_view::npos || name.find("Memcpy") != std::string_view::npos ||
         name.find("Memset") != std::string_view::npos;
}

bool IsStreamBeginCaptureName(std::string_view name) {
  return name.find("StreamBeginCapture") != std::string_view::npos;
}
bool IsStreamEndCaptureName(std::string_view name) { return name.find("StreamEndCapture") != std::string_view::npos; }

Status CheckDurationSum(const Trace& trace, const std::string& source) {
  const SliceTable& s = trace.slices;
  int64_t sum = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!__builtin_add_overflow(sum, std::max<int64_t>(s.dur_ns[i], 0), &sum)) continue;
    size_t longest = 0;
    for (size_t j = 1; j < s.size(); ++j) {
      if (s.dur_ns[j] > s.dur_ns[longest]) longest = j;
    }
    return ErrStatus(source +
                     ": the slices' durations sum past 2^63 ns (292 years), more than aiprof's totals hold; "
                     "the longest, " +
                     std::string(trace.Str(s.name[longest])) + " at ts " + std::to_string(s.ts_ns[longest]) +
                     " ns, lasts " + std::to_string(s.dur_ns[longest]) + " ns");
  }
  return OkStatus();
}

}  // namespace aiprof
