#include "src/model/trace.h"

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

}  // namespace aiprof
