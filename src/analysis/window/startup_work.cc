#include "src/analysis/window/startup_work.h"

#include <utility>

#include "src/analysis/common/capture_windows.h"

namespace aiprof {

StartupWork::StartupWork(const std::map<int32_t, Intervals>& startup_calls,
                         const std::map<int32_t, Intervals>& capture_windows) {
  std::map<int32_t, Intervals> raw = capture_windows;
  for (const auto& [rank, iv] : startup_calls) raw[rank].insert(raw[rank].end(), iv.begin(), iv.end());
  for (auto& [rank, iv] : raw) by_rank_.emplace(rank, CoveredTime(MergeIntervals(std::move(iv))));
}

StartupWork StartupWork::CaptureWindowsOnly(const Trace& trace) {
  return StartupWork({}, CaptureWindowsByRank(trace, FindCaptureWindows(trace)));
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
