#include "src/analysis/llm/llm_phases.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>
#include <utility>

#include "src/analysis/attribution/op_class.h"
#include "src/analysis/common/intervals.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/launches/launch_hold.h"
#include "src/analysis/roofline/kernel_class.h"
#include "src/base/ascii.h"

namespace aiprof {
namespace {

// The decimal number right after `key` in `s`, or nullopt.
std::optional<int64_t> NumberAfter(std::string_view s, std::string_view key) {
  size_t at = s.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + key.size();
  int64_t v = 0;
  size_t digits = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) && digits < 18; ++i, ++digits) {
    v = v * 10 + (s[i] - '0');
  }
  if (digits == 0) return std::nullopt;
  return v;
}

// "decode" or "decoding" in any case, but not "decoder": an encoder-decoder
// model's module annotation ("## decoder fp8 None ##" in HTA's training trace)
// is no step.
bool SaysDecode(std::string_view n) {
  constexpr std::string_view kStem = "decod";
  for (size_t i = 0; i + kStem.size() < n.size(); ++i) {
    if (!ContainsIgnoreCase(n.substr(i, kStem.size()), kStem)) continue;
    const std::string_view rest = n.substr(i + kStem.size());
    if (rest.size() >= 3 && ContainsIgnoreCase(rest.substr(0, 3), "ing")) return true;
    if (rest[0] != 'e' && rest[0] != 'E') continue;
    if (rest.size() > 1 && (rest[1] == 'r' || rest[1] == 'R')) continue;
    return true;
  }
  return false;
}

// A name that says what is decoded, and it is data, not the model's next
// token: a tokenizer's batch_decode or detokenize, an image, audio or video
// decoder in the data pipeline (torchvision's decode_jpeg), text bytes.
bool NamesDataDecoding(std::string_view n) {
  for (std::string_view what : {"tokeniz", "jpeg", "jpg", "png", "image", "video", "audio", "utf", "base64", "json"}) {
    if (ContainsIgnoreCase(n, what)) return true;
  }
  return false;
}

LlmWork WorkOf(KernelClass c) {
  switch (c) {
    case KernelClass::kAttention: return LlmWork::kAttention;
    case KernelClass::kGemm:
    case KernelClass::kTritonTemplate: return LlmWork::kGemm;
    case KernelClass::kCollective: return LlmWork::kCommunication;
    case KernelClass::kMemcpy:
    case KernelClass::kMemset: return LlmWork::kMemory;
    default: return LlmWork::kOther;
  }
}

LlmWork WorkOfOp(OpClass c) {
  switch (c) {
    case OpClass::kAttention: return LlmWork::kAttention;
    case OpClass::kGemm:
    case OpClass::kConvolution: return LlmWork::kGemm;
    case OpClass::kDataMovement: return LlmWork::kMemory;
    default: return LlmWork::kOther;
  }
}

struct EngineStep {
  int32_t rank;
  int64_t start, end;
  LlmStepLabel label;
  int64_t device_ns = 0;
  int64_t work_end = 0;  // the later of `end` and its device activity's last end
};

std::vector<EngineStep> FindEngineSteps(const Trace& trace) {
  std::vector<EngineStep> steps;
  for (const LlmStep& st : FindLlmSteps(trace)) steps.push_back({st.rank, st.start, st.end, st.label, 0, st.end});
  return steps;
}

}  // namespace

std::vector<LlmStep> FindLlmSteps(const Trace& trace) {
  const SliceTable& s = trace.slices;
  std::vector<LlmStep> steps;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] != EventKind::kUserAnnotation) continue;
    std::optional<LlmStepLabel> label = ParseLlmStepName(trace.Str(s.name[i]));
    if (!label) continue;
    steps.push_back({trace.tracks.rank[s.track[i]], s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i], *label});
  }
  std::sort(steps.begin(), steps.end(), [](const LlmStep& a, const LlmStep& b) {
    return std::make_tuple(a.rank, a.start, -a.end) < std::make_tuple(b.rank, b.start, -b.end);
  });
  // The nesting (sorted by start, outer first): each annotation's parent and
  // its number of direct children among the step annotations.
  std::vector<size_t> parent(steps.size(), SIZE_MAX);
  std::vector<uint32_t> children(steps.size(), 0);
  std::vector<size_t> open;  // the enclosing annotations of the current one, outermost first
  for (size_t i = 0; i < steps.size(); ++i) {
    while (!open.empty() && (steps[open.back()].rank != steps[i].rank || steps[i].start >= steps[open.back()].end)) {
      open.pop_back();
    }
    if (!open.empty()) {
      parent[i] = open.back();
      children[open.back()]++;
    }
    open.push_back(i);
  }
  // Kept: an annotation none of whose ancestors is kept, unless it holds two
  // or more step annotations (a loop over steps: its children are the
  // steps). Nested annotations of one step (SGLang writes both forms, one
  // inside the other): the outermost.
  std::vector<uint8_t> covered(steps.size(), 0);  // an ancestor is kept
  std::vector<LlmStep> kept;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (parent[i] != SIZE_MAX && covered[parent[i]]) {  // (a parent with < 2 children is kept, so covered)
      covered[i] = 1;
      continue;
    }
    if (children[i] < 2) {
      kept.push_back(steps[i]);
      covered[i] = 1;
    }
  }
  return kept;
}

namespace {

// One device activity of a step: [start, end) ns.
struct StepActivity {
  uint32_t step;
  int64_t start, end;
  int64_t call_end;  // its launch call's end (a graph launch's for a replay); INT64_MAX: no launch call
  bool operator<(const StepActivity& o) const { return std::tie(step, start, end) < std::tie(o.step, o.start, o.end); }
};

// Per rank, the union of its host's synchronising calls (sync kinds:
// blocking syncs, cuda_sync records; synchronous copies, IsSyncCopyName):
// the host's own time on the critical path (sync_call) even while the device
// sits idle.
std::map<int32_t, CoveredTime> SyncCallsByRank(const Trace& trace) {
  const SliceTable& s = trace.slices;
  std::map<int32_t, Intervals> calls;
  for (uint32_t i = 0; i < s.size(); ++i) {
    const bool sync =
        s.kind[i] == EventKind::kSync || (s.kind[i] == EventKind::kRuntime && IsSyncCopyName(trace.Str(s.name[i])));
    if (sync && s.dur_ns[i] > 0) calls[trace.tracks.rank[s.track[i]]].push_back({s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i]});
  }
  std::map<int32_t, CoveredTime> out;
  for (auto& [rank, v] : calls) out.emplace(rank, CoveredTime(MergeIntervals(std::move(v))));
  return out;
}

// The step's device idle time in [from, to) outside activity[first, last)
// (one step's, sorted by start), split as the critical path splits it
// (src/analysis/critical_path/time_class.h): before an activity that started
// kMinLaunchHoldNs or more after its launch call returned, the time from the
// call's end is the device holding launched work (idle_other, *held), less
// the time the host spent in a synchronising call then (`sync`: sync_call,
// the host's: SGLang's prefill waits 493 ms in one hipMemcpyWithStream while
// its launched kernels wait); the rest is the host's (*host: host work,
// launch calls, waits before the launch).
void SplitIdle(const std::vector<StepActivity>& activity, size_t first, size_t last, int64_t from, int64_t to,
               const CoveredTime& sync, int64_t* host, int64_t* held) {
  int64_t covered = from;  // the union's end so far
  auto gap = [&](int64_t g0, int64_t g1, int64_t call_end) {
    if (g1 <= g0) return;
    int64_t h = 0;
    if (call_end != INT64_MAX && g1 - call_end >= kMinLaunchHoldNs) {
      const int64_t h0 = std::max(g0, call_end);
      h = g1 - h0 - sync.Within(h0, g1);
    }
    *held += h;
    *host += g1 - g0 - h;
  };
  for (size_t j = first; j < last; ++j) {
    const int64_t a = std::max(activity[j].start, from), b = std::min(activity[j].end, to);
    if (b <= a) continue;
    if (a > covered) gap(covered, a, activity[j].call_end);
    covered = std::max(covered, b);
  }
  gap(covered, to, INT64_MAX);  // after the last work: the step's host span
}

// The union of activity[first, last) (one step's, sorted by start) clipped
// to [from, to): the time some of the step's device work ran, streams
// overlapping counted once.
int64_t BusyWithin(const std::vector<StepActivity>& activity, size_t first, size_t last, int64_t from, int64_t to) {
  int64_t busy = 0, cur_start = 0, cur_end = INT64_MIN;
  for (size_t j = first; j < last; ++j) {
    const int64_t a = std::max(activity[j].start, from), b = std::min(activity[j].end, to);
    if (b <= a) continue;
    if (a > cur_end) {
      if (cur_end > cur_start) busy += cur_end - cur_start;
      cur_start = a;
      cur_end = b;
    } else {
      cur_end = std::max(cur_end, b);
    }
  }
  if (cur_end > cur_start) busy += cur_end - cur_start;
  return busy;
}

// The step of `rank` whose span holds `ts`, or nullptr.
EngineStep* StepAt(std::vector<EngineStep>& steps, int32_t rank, int64_t ts) {
  auto it = std::upper_bound(steps.begin(), steps.end(), std::make_pair(rank, ts),
                             [](const std::pair<int32_t, int64_t>& k, const EngineStep& x) {
                               return std::tie(k.first, k.second) < std::tie(x.rank, x.start);
                             });
  if (it == steps.begin()) return nullptr;
  --it;
  return it->rank == rank && ts < it->end ? &*it : nullptr;
}

}  // namespace

const char* LlmPhaseName(LlmPhase p) {
  switch (p) {
    case LlmPhase::kPrefill: return "prefill";
    case LlmPhase::kDecode: return "decode";
    case LlmPhase::kMixed: return "mixed";
  }
  return "prefill";
}

const char* LlmWorkName(LlmWork w) {
  switch (w) {
    case LlmWork::kAttention: return "attention";
    case LlmWork::kGemm: return "gemm";
    case LlmWork::kCommunication: return "communication";
    case LlmWork::kMemory: return "memory";
    case LlmWork::kOther: break;
  }
  return "other";
}

std::optional<LlmStepLabel> ParseLlmStepName(std::string_view n) {
  LlmStepLabel l;
  if (n.starts_with("step[")) {  // SGLang
    std::string_view mode = n.substr(5, n.find_first_of(" ]", 5) - 5);
    if (mode == "EXTEND" || mode == "PREFILL") {
      l.phase = LlmPhase::kPrefill;
    } else if (mode == "DECODE") {
      l.phase = LlmPhase::kDecode;
    } else if (mode == "MIXED") {
      l.phase = LlmPhase::kMixed;
    } else {
      return std::nullopt;  // IDLE, DUMMY_FIRST, ...
    }
    l.tokens = NumberAfter(n, "toks=");
    l.requests = NumberAfter(n, "bs=");
    return l;
  }
  if (n.starts_with("execute_")) {  // vLLM
    std::optional<int64_t> tokens = NumberAfter(n, "execute_");
    std::optional<int64_t> context = NumberAfter(n, "_context_");
    std::optional<int64_t> generation = NumberAfter(n, "_generation_");
    if (!context || !generation) return std::nullopt;
    if (*context > 0 && *generation > 0) {
      l.phase = LlmPhase::kMixed;
    } else if (*context > 0) {
      l.phase = LlmPhase::kPrefill;
    } else if (*generation > 0) {
      l.phase = LlmPhase::kDecode;
    } else {
      return std::nullopt;
    }
    l.tokens = tokens;
    l.requests = *context + *generation;
    return l;
  }
  bool prefill = ContainsIgnoreCase(n, "prefill") || ContainsIgnoreCase(n, "context_phase");
  bool decode = (SaysDecode(n) && !NamesDataDecoding(n)) || ContainsIgnoreCase(n, "generation_phase");
  if (!prefill && !decode) return std::nullopt;
  l.phase = prefill && decode ? LlmPhase::kMixed : prefill ? LlmPhase::kPrefill : LlmPhase::kDecode;
  return l;
}

std::optional<LlmPhase> AttentionKernelPhase(std::string_view n) {
  if (ContainsIgnoreCase(n, "prefill") || ContainsIgnoreCase(n, "extend") || ContainsIgnoreCase(n, "varlen")) {
    return LlmPhase::kPrefill;
  }
  if (ContainsIgnoreCase(n, "decode") || ContainsIgnoreCase(n, "paged_attention") ||
      ContainsIgnoreCase(n, "splitkv") || ContainsIgnoreCase(n, "split_kv")) {
    return LlmPhase::kDecode;
  }
  return std::nullopt;
}

LlmPhasesResult ComputeLlmPhases(const Trace& trace) {
  const SliceTable& s = trace.slices;
  LlmPhasesResult r;
  std::vector<EngineStep> steps = FindEngineSteps(trace);
  // Which step launched an activity: only needed where there are steps (most
  // traces have none, and these are passes over every slice).
  std::vector<uint32_t> launcher, launching_op;
  if (!steps.empty()) launcher = LaunchingCalls(trace), launching_op = LaunchingOps(trace);
  std::vector<StepActivity> activity;  // each step's device activity, for its busy time
  KernelClassifier classes(trace);
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (!IsDeviceActivity(s.kind[i])) continue;
    const KernelClass c = classes.Of(i);
    if (c == KernelClass::kAttention) {
      if (std::optional<LlmPhase> p = AttentionKernelPhase(trace.Str(s.name[i]))) {
        r.attention_family_ns[static_cast<size_t>(*p)] += s.dur_ns[i];
        r.attention_family_kernels[static_cast<size_t>(*p)]++;
      }
    }
    if (steps.empty()) continue;
    uint32_t from = launcher[i] != kNoSlice ? launcher[i] : launching_op[i];
    if (from == kNoSlice) continue;
    EngineStep* step = StepAt(steps, trace.tracks.rank[s.track[from]], s.ts_ns[from]);
    if (step == nullptr) continue;
    LlmPhaseTotals& t = r.phases[static_cast<size_t>(step->label.phase)];
    t.device_ns += s.dur_ns[i];
    t.work_ns[static_cast<size_t>(WorkOf(c))] += s.dur_ns[i];
    step->device_ns += s.dur_ns[i];
    step->work_end = std::max(step->work_end, s.ts_ns[i] + s.dur_ns[i]);
    const int64_t call_end = launcher[i] != kNoSlice ? s.ts_ns[launcher[i]] + s.dur_ns[launcher[i]] : INT64_MAX;
    activity.push_back({static_cast<uint32_t>(step - steps.data()), s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i], call_end});
  }
  if (!steps.empty()) {  // the steps' top-level torch ops
    std::vector<uint32_t> parent = ParentSlices(trace);
    for (uint32_t i = 0; i < s.size(); ++i) {
      if (s.kind[i] != EventKind::kCpuOp) continue;
      uint32_t up = parent[i];
      while (up != kNoSlice && s.kind[up] != EventKind::kCpuOp) up = parent[up];
      if (up != kNoSlice) continue;  // inside another op: counted with it
      EngineStep* step = StepAt(steps, trace.tracks.rank[s.track[i]], s.ts_ns[i]);
      if (step == nullptr) continue;
      LlmPhaseTotals& t = r.phases[static_cast<size_t>(step->label.phase)];
      t.host_op_ns += s.dur_ns[i];
      t.host_op_work_ns[static_cast<size_t>(WorkOfOp(ClassifyOpName(trace.Str(s.name[i]))))] += s.dur_ns[i];
    }
  }
  std::sort(activity.begin(), activity.end());
  const std::map<int32_t, CoveredTime> sync_calls =
      steps.empty() ? std::map<int32_t, CoveredTime>() : SyncCallsByRank(trace);
  static const CoveredTime kNoIntervals{Intervals{}};
  size_t next = 0;  // into `activity`, which is grouped by step
  for (size_t k = 0; k < steps.size(); ++k) {
    const EngineStep& st = steps[k];
    LlmPhaseTotals& t = r.phases[static_cast<size_t>(st.label.phase)];
    t.steps++;
    t.span_ns += st.end - st.start;
    // From its start, or the previous step's work end if the device was
    // still on that, to its own work end.
    const bool after_previous = k > 0 && steps[k - 1].rank == st.rank;
    const int64_t from = after_previous ? std::max(st.start, steps[k - 1].work_end) : st.start;
    const int64_t wall = std::max<int64_t>(0, st.work_end - from);
    t.wall_ns += wall;
    const size_t first = next;
    while (next < activity.size() && activity[next].step == k) ++next;
    const int64_t idle = wall - BusyWithin(activity, first, next, from, st.work_end);
    int64_t host = 0, held = 0;  // the same union's complement, split: host + held == idle
    auto sync = sync_calls.find(st.rank);
    SplitIdle(activity, first, next, from, st.work_end, sync == sync_calls.end() ? kNoIntervals : sync->second, &host,
              &held);
    t.host_ns += idle - held;
    t.device_held_ns += held;
    if (st.label.tokens) {
      t.tokens += *st.label.tokens;
      t.steps_with_tokens++;
    }
    if (st.label.requests) t.requests += *st.label.requests;
  }
  if (!steps.empty()) {
    r.source = "annotations";
  } else if (r.attention_family_kernels[0] + r.attention_family_kernels[1] > 0) {
    r.source = "attention kernels";
  }
  return r;
}

}  // namespace aiprof
