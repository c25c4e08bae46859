#include "src/analysis/gaps/startup_idle.h"

#include <string_view>
#include <utility>
#include <vector>

#include "src/analysis/window/analysis_window.h"
#include "src/model/graph_capture_tracks.h"

namespace aiprof {

std::map<int32_t, Intervals> CaptureWindows(const Trace& trace) {
  const SliceTable& s = trace.slices;
  std::map<int32_t, Intervals> raw;
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
  // Slices are in (track, start) order: one pass, one open window per thread.
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != EventKind::kRuntime && s.kind[i] != EventKind::kDriver) continue;
    if (capture_track[s.track[i]]) continue;
    if (s.track[i] != track) track = s.track[i], open_since = -1;
    const uint8_t c = classify(s.name[i]);
    if (c == 2) {
      open_since = s.ts_ns[i] + s.dur_ns[i];
    } else if (c == 3) {
      if (open_since >= 0 && s.ts_ns[i] > open_since) {
        raw[trace.tracks.rank[s.track[i]]].emplace_back(open_since, s.ts_ns[i]);
      }
      open_since = -1;
    }
  }
  for (auto& [rank, iv] : raw) iv = MergeIntervals(std::move(iv));
  return raw;
}

StartupWork::StartupWork(const Trace& trace, const AnalysisWindow* window) {
  std::map<int32_t, Intervals> raw = CaptureWindows(trace);
  if (window != nullptr) {
    for (const auto& [rank, iv] : window->startup_by_rank) raw[rank].insert(raw[rank].end(), iv.begin(), iv.end());
  }
  for (auto& [rank, iv] : raw) by_rank_.emplace(rank, CoveredTime(MergeIntervals(std::move(iv))));
}

int64_t StartupWork::Within(int32_t rank, int64_t start_ns, int64_t end_ns) const {
  auto it = by_rank_.find(rank);
  return it == by_rank_.end() || end_ns <= start_ns ? 0 : it->second.Within(start_ns, end_ns);
}

bool StartupWork::Covers(int32_t rank, int64_t start_ns, int64_t end_ns) const {
  if (end_ns <= start_ns) return false;
  return static_cast<double>(Within(rank, start_ns, end_ns)) >=
         kStartupIdleMinShare * static_cast<double>(end_ns - start_ns);
}

}  // namespace aiprof
