#include "src/analysis/common/capture_windows.h"

#include <climits>
#include <string_view>
#include <utility>

#include "src/model/graph_capture_tracks.h"

namespace aiprof {

std::vector<CaptureWindow> FindCaptureWindows(const Trace& trace) {
  const SliceTable& s = trace.slices;
  std::vector<CaptureWindow> out;
  std::vector<uint8_t> capture_track(trace.tracks.size(), 0);
  for (uint32_t t = 0; t < trace.tracks.size(); ++t) capture_track[t] = IsGraphCaptureTrack(trace, t);
  // Name tests memoised per string id: 0 unknown, 1 neither, 2 begin, 3 end.
  std::vector<uint8_t> name_class(trace.strings.size(), 0);
  auto classify = [&](StringId id) {
    uint8_t& c = name_class[id.raw];
    if (c == 0) {
      const std::string_view name = trace.Str(id);
      c = IsStreamBeginCaptureName(name) ? 2 : IsStreamEndCaptureName(name) ? 3 : 1;
    }
    return c;
  };
  uint32_t track = kNoTrack;
  int64_t open_since = -1;  // the open window's start on `track`; -1: none open
  auto stop_unclosed = [&](int64_t at) {
    if (open_since >= 0) out.push_back({track, open_since, at, false});
    open_since = -1;
  };
  // Slices are in (track, start) order: one pass, one open window per thread.
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != EventKind::kRuntime && s.kind[i] != EventKind::kDriver) continue;
    if (capture_track[s.track[i]]) continue;
    if (s.track[i] != track) {
      stop_unclosed(INT64_MAX);
      track = s.track[i];
    }
    const uint8_t c = classify(s.name[i]);
    if (c == 2) {
      stop_unclosed(s.ts_ns[i]);
      open_since = s.ts_ns[i] + s.dur_ns[i];
    } else if (c == 3) {
      if (open_since >= 0 && s.ts_ns[i] >= open_since) out.push_back({track, open_since, s.ts_ns[i], true});
      open_since = -1;
    }
  }
  stop_unclosed(INT64_MAX);
  return out;
}

std::map<int32_t, Intervals> CaptureWindowsByRank(const Trace& trace, const std::vector<CaptureWindow>& windows) {
  std::map<int32_t, Intervals> out;
  for (const CaptureWindow& w : windows) {
    if (w.closed && w.end_ns > w.start_ns) out[trace.tracks.rank[w.track]].emplace_back(w.start_ns, w.end_ns);
  }
  for (auto& [rank, iv] : out) iv = MergeIntervals(std::move(iv));
  return out;
}

}  // namespace aiprof
