#include "src/analysis/common/trace_index.h"

#include <algorithm>
#include <optional>

#include "src/base/ascii.h"

namespace aiprof {

namespace {

// For every device-activity slice, the first flow source whose kind passes
// `source_kind`, or kNoSlice.
template <typename Pred>
std::vector<uint32_t> FlowSourcesOfDeviceActivity(const Trace& trace, Pred source_kind) {
  const SliceTable& s = trace.slices;
  std::vector<uint32_t> out(s.size(), kNoSlice);
  for (size_t i = 0; i < trace.flows.size(); ++i) {
    uint32_t from = trace.flows.from_slice[i], to = trace.flows.to_slice[i];
    if (from >= s.size() || to >= s.size()) continue;
    if (IsDeviceActivity(s.kind[to]) && source_kind(s.kind[from]) && out[to] == kNoSlice) out[to] = from;
  }
  return out;
}

}  // namespace

std::vector<uint32_t> LaunchingCalls(const Trace& trace) {
  return FlowSourcesOfDeviceActivity(
      trace, [](EventKind k) { return k == EventKind::kRuntime || k == EventKind::kDriver; });
}

std::vector<uint32_t> OpLaunchingCalls(const Trace& trace) {
  std::vector<uint32_t> out = LaunchingCalls(trace);
  std::optional<StringId> captured = trace.strings.Find(kGraphCaptureFlowCategory);
  if (!captured) return out;
  for (size_t i = 0; i < trace.flows.size(); ++i) {
    if (trace.flows.category[i] != *captured) continue;
    uint32_t from = trace.flows.from_slice[i], to = trace.flows.to_slice[i];
    if (from < out.size() && to < out.size()) out[to] = from;
  }
  return out;
}

std::vector<uint32_t> LaunchingOps(const Trace& trace) {
  return FlowSourcesOfDeviceActivity(trace, [](EventKind k) { return k == EventKind::kCpuOp; });
}

bool HasTorchOps(const Trace& trace) {
  const SliceTable& s = trace.slices;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] == EventKind::kCpuOp || s.kind[i] == EventKind::kPythonFunction) return true;
  }
  return false;
}

std::vector<std::pair<uint32_t, uint32_t>> TrackSliceRanges(const Trace& trace) {
  std::vector<std::pair<uint32_t, uint32_t>> ranges(trace.tracks.size(), {0, 0});
  const SliceTable& s = trace.slices;
  for (uint32_t i = 0; i < s.size(); ++i) {
    auto& range = ranges[s.track[i]];
    if (range.first == range.second) range.first = i;
    range.second = i + 1;
  }
  return ranges;
}

std::vector<uint32_t> ParentSlices(const Trace& trace) {
  const SliceTable& s = trace.slices;
  std::vector<uint32_t> out(s.size(), kNoSlice);
  std::vector<uint32_t> stack;  // open slices of the current track, by depth
  uint32_t track = kNoTrack;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.track[i] != track) {
      stack.clear();
      track = s.track[i];
    }
    int64_t start = s.ts_ns[i], end = start + s.dur_ns[i];
    while (!stack.empty()) {
      uint32_t top = stack.back();
      if (s.ts_ns[top] + s.dur_ns[top] >= end && s.ts_ns[top] <= start) break;
      stack.pop_back();
    }
    out[i] = stack.empty() ? kNoSlice : stack.back();
    stack.push_back(i);
  }
  return out;
}

std::vector<char> UnderCpuOp(const Trace& trace, const std::vector<uint32_t>& parent) {
  const SliceTable& s = trace.slices;
  std::vector<char> under(parent.size(), 0);
  for (uint32_t i = 0; i < parent.size(); ++i) {
    const uint32_t p = parent[i];
    under[i] = p != kNoSlice && (s.kind[p] == EventKind::kCpuOp || under[p]);
  }
  return under;
}

bool IsBlockingSyncName(std::string_view name) {
  if (ContainsIgnoreCase(name, "wait")) return false;
  return ContainsIgnoreCase(name, "synchronize") || name == "Stream Sync" || name == "Context Sync" ||
         name == "Event Sync" || ContainsIgnoreCase(name, "aclrtSynchronize");
}

bool IsSyncCopyName(std::string_view name) {
  return ContainsIgnoreCase(name, "memcpy") && !ContainsIgnoreCase(name, "async");
}

bool IsDataLoaderName(std::string_view name) { return ContainsIgnoreCase(name, "dataloader"); }

bool IsProfilerWrapperName(std::string_view name) {
  return name.starts_with("ProfilerStep#") || name.starts_with("PyTorch Profiler") || name.starts_with("## step") ||
         name == "record_param_comms" || name == "Trace";
}

}  // namespace aiprof
