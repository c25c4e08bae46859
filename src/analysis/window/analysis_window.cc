#include "src/analysis/window/analysis_window.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "src/analysis/common/capture_windows.h"
#include "src/analysis/common/steps.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/llm/llm_phases.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/base/ascii.h"
#include "src/base/quantile.h"

namespace aiprof {
namespace {

constexpr char kWindowSource[] = "window";

// Calls that are initialisation when they are long: context creation, first
// allocations, library handles, module loading (CUDA, cuDNN, cuBLAS, ACL).
bool IsInitCallName(std::string_view n) {
  static constexpr std::string_view kPrefixes[] = {
      "cudaDeviceGetStreamPriorityRange", "cudaGetDevice", "cudaSetDevice", "cudaFree", "cudaMalloc",
      "cudaHostAlloc", "cudaStreamCreate", "cudaEventCreate", "cuInit", "cuDevicePrimaryCtx", "cuCtxCreate",
      "cuModuleLoad", "cuLibraryLoad", "cudnnCreate", "cublasCreate", "cublasLtCreate", "aclInit", "aclrtSetDevice",
      "aclrtCreateContext", "aclrtCreateStream", "aclrtMalloc"};
  for (std::string_view p : kPrefixes) {
    if (n.substr(0, p.size()) == p) return true;
  }
  return false;
}

// Copies and syncs: calls whose time is a wait when they are long (a pageable
// cudaMemcpy / hipMemcpyWithStream waits for the stream's work, then copies).
bool IsBlockingCopyOrSyncName(std::string_view n) { return ContainsIgnoreCase(n, "memcpy") || IsBlockingSyncName(n); }

// What the start-up test asks about a call's surroundings: device busy time
// and first device work of each rank (kNoRank: every rank's together), the
// steps and the enclosing slices.
class StartupContext {
 public:
  StartupContext(const Trace& trace, const StepList& steps) : trace_(trace), parent_(ParentSlices(trace)) {
    const SliceTable& s = trace.slices;
    std::map<int32_t, Intervals> busy;
    for (uint32_t i = 0; i < s.size(); ++i) {
      if (!IsDeviceActivity(s.kind[i])) continue;
      const int64_t a = s.ts_ns[i], b = a + s.dur_ns[i];
      if (s.correlation[i] != kNoCorrelation) own_[{trace.tracks.rank[s.track[i]], s.correlation[i]}] += b - a;
      busy[trace.tracks.rank[s.track[i]]].emplace_back(a, b);
      if (trace.tracks.rank[s.track[i]] != kNoRank) busy[kNoRank].emplace_back(a, b);
    }
    for (auto& [rank, iv] : busy) {
      Intervals merged = MergeIntervals(std::move(iv));
      first_device_ns_[rank] = merged.front().first;
      device_busy_.emplace(rank, CoveredTime(std::move(merged)));
    }
    for (const StepSpan& st : steps.steps) {
      if (st.has_start()) step_spans_.push_back({st.rank, st.start_ns, st.start_ns + st.dur_ns});
    }
  }

  // True when the call at row `i` is start-up work (see the header): not when
  // the device is busy through most of it (it waits on the device: a full
  // launch queue, an implicit sync), nor when it is a copy or sync issued from
  // a step or a user annotation after the device has started work.
  // The call's own device work (its copy, its kernel: the activities
  // correlated with it) is not what it waits on: a weight upload's call
  // lasts as long as its transfer (AlexNet's model.to(cuda): 16 pageable
  // copies, 55.5 ms, inside the [param|cuda] annotation), a blocked one far
  // longer (SGLang's hipMemcpyWithStream: 493 ms for a 4.7 us copy).
  bool MayBeStartup(uint32_t i) const {
    const SliceTable& s = trace_.slices;
    const int32_t rank = RankOf(i);
    const int64_t a = s.ts_ns[i], b = a + s.dur_ns[i];
    int64_t own = 0;
    if (s.correlation[i] != kNoCorrelation) {
      auto it = own_.find({trace_.tracks.rank[s.track[i]], s.correlation[i]});
      if (it != own_.end()) own = std::min(it->second, b - a);
    }
    auto busy = device_busy_.find(rank);
    if (busy != device_busy_.end() && static_cast<double>(busy->second.Within(a, b) - own) >=
                                          kStartupMaxDeviceBusyShare * static_cast<double>(b - a)) {
      return false;
    }
    if (!IsBlockingCopyOrSyncName(trace_.Str(s.name[i]))) return true;
    // A call that is mostly its own transfer did not wait.
    if (static_cast<double>(own) >= kStartupMaxDeviceBusyShare * static_cast<double>(b - a)) return true;
    auto first = first_device_ns_.find(rank);
    const bool device_started = first != first_device_ns_.end() && first->second < a;
    return !(device_started && (InStep(rank, a, b) || InAnnotation(i)));
  }

 private:
  struct Span {
    int32_t rank;
    int64_t start_ns, end_ns;
  };
  // The call's rank when its device work is known by rank, else kNoRank.
  int32_t RankOf(uint32_t i) const {
    const int32_t rank = trace_.tracks.rank[trace_.slices.track[i]];
    return device_busy_.count(rank) ? rank : kNoRank;
  }
  bool InStep(int32_t rank, int64_t a, int64_t b) const {
    return std::any_of(step_spans_.begin(), step_spans_.end(), [&](const Span& st) {
      return (st.rank == rank || st.rank == kNoRank || rank == kNoRank) && st.start_ns <= a && b <= st.end_ns;
    });
  }
  bool InAnnotation(uint32_t i) const {
    const SliceTable& s = trace_.slices;
    for (uint32_t p = parent_[i]; p != kNoSlice; p = parent_[p]) {
      if (s.kind[p] == EventKind::kUserAnnotation || trace_.Str(s.name[p]).starts_with("ProfilerStep#")) return true;
    }
    return false;
  }

  const Trace& trace_;
  std::vector<uint32_t> parent_;
  std::map<int32_t, CoveredTime> device_busy_;
  std::map<std::pair<int32_t, int64_t>, int64_t> own_;  // (rank, correlation) -> device time
  std::map<int32_t, int64_t> first_device_ns_;
  std::vector<Span> step_spans_;
};

}  // namespace

namespace {

// How far a step must lie from the median of `ref` to be an outlier against
// it: max(3 x 1.4826 x MAD, 20% of the median); the median to `med`. One rule
// for a leading warm-up step (above) and a truncated last step (below).
double OutlierMargin(const std::vector<double>& ref, double* med) {
  *med = Median(ref);
  std::vector<double> dev;
  dev.reserve(ref.size());
  for (double d : ref) dev.push_back(std::fabs(d - *med));
  return std::max(kWarmupMadFactor * Median(dev), kWarmupMinExcess * *med);
}

}  // namespace

size_t LeadingWarmup(const std::vector<double>& durs, int forced) {
  if (forced >= 0) return durs.empty() ? 0 : std::min<size_t>(static_cast<size_t>(forced), durs.size() - 1);
  if (durs.size() < 4) return 0;
  size_t k = 0;
  const size_t max_k = std::min(durs.size() / 2, durs.size() - 3);
  while (k < max_k) {
    double med = 0;
    const double margin = OutlierMargin({durs.begin() + static_cast<long>(k) + 1, durs.end()}, &med);
    if (durs[k] <= med + margin) break;
    ++k;
  }
  return k;
}

size_t TrailingTruncated(const std::vector<double>& durs, const std::vector<char>& owns_device_work,
                         const std::vector<char>& holds_ops) {
  const size_t n = durs.size();
  if (owns_device_work.size() != n || holds_ops.size() != n) return 0;
  // Whether the step at `k` lacks what more than half of the steps before it have.
  auto lacks = [](const std::vector<char>& has, size_t k) {
    const auto with = std::count_if(has.begin(), has.begin() + static_cast<long>(k), [](char c) { return c != 0; });
    return !has[k] && 2 * static_cast<size_t>(with) > k;
  };
  size_t kept = n;
  while (kept > 1) {
    const size_t k = kept - 1;
    double med = 0;
    const double margin = OutlierMargin({durs.begin(), durs.begin() + static_cast<long>(k)}, &med);
    if (durs[k] >= med - margin) break;
    if (!lacks(owns_device_work, k) && !lacks(holds_ops, k)) break;
    --kept;
  }
  return n - kept;
}

namespace {

// Each rank's steps (indices into list.steps) in time order: by start where
// both have one, else by number.
std::map<int32_t, std::vector<size_t>> StepsByRank(const StepList& list) {
  std::map<int32_t, std::vector<size_t>> by_rank;
  for (size_t k = 0; k < list.steps.size(); ++k) by_rank[list.steps[k].rank].push_back(k);
  for (auto& [rank, idx] : by_rank) {
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      const StepSpan &x = list.steps[a], &y = list.steps[b];
      return x.has_start() && y.has_start() ? x.start_ns < y.start_ns : x.number < y.number;
    });
  }
  return by_rank;
}

}  // namespace

std::string CutLastStep(const std::vector<double>& durs, const std::vector<std::vector<std::string>>& names,
                        bool ends_recording) {
  const size_t n = durs.size();
  if (n < 3 || names.size() != n || !ends_recording) return "";
  const size_t k = n - 1;
  for (size_t j = 0; j < k; ++j) {
    if (!(durs[k] < durs[j])) return "";
  }
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  std::vector<std::string> common = sorted(names[0]);
  for (size_t j = 1; j < k && !common.empty(); ++j) {
    const std::vector<std::string> held = sorted(names[j]);
    std::vector<std::string> both;
    std::set_intersection(common.begin(), common.end(), held.begin(), held.end(), std::back_inserter(both));
    common = std::move(both);
  }
  const std::vector<std::string> last = sorted(names[k]);
  std::vector<std::string> missing;
  std::set_difference(common.begin(), common.end(), last.begin(), last.end(), std::back_inserter(missing));
  if (missing.empty()) return "";
  constexpr size_t kNamed = 3;
  std::string text = "the recording ends inside it, before ops every earlier step holds: ";
  for (size_t i = 0; i < missing.size() && i < kNamed; ++i) {
    text += (i == 0 ? "" : i + 1 == missing.size() ? " and " : ", ") + missing[i];
  }
  if (missing.size() > kNamed) text += " and " + std::to_string(missing.size() - kNamed) + " more";
  return text;
}

namespace {

// CutLastStep's names for `steps` (one rank's steps with a start, in time
// order, indices into list.steps, not overlapping): per step, the names of
// the host slices of `rank` (kNoRank: any) that start inside it, at any
// depth; ProfilerStep markers left out.
std::vector<std::vector<std::string>> StepSliceNames(const Trace& trace, const StepList& list,
                                                     const std::vector<size_t>& steps, int32_t rank) {
  const SliceTable& s = trace.slices;
  std::vector<int64_t> begins;
  for (size_t k : steps) begins.push_back(list.steps[k].start_ns);
  std::vector<std::set<StringId>> ids(steps.size());
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (trace.tracks.kind[s.track[i]] == TrackKind::kDeviceStream || IsDeviceActivity(s.kind[i])) continue;
    if (rank != kNoRank && trace.tracks.rank[s.track[i]] != rank) continue;
    auto a = std::upper_bound(begins.begin(), begins.end(), s.ts_ns[i]);
    if (a == begins.begin()) continue;
    const size_t j = static_cast<size_t>(a - begins.begin()) - 1;
    const StepSpan& st = list.steps[steps[j]];
    if (s.ts_ns[i] < st.start_ns + st.dur_ns) ids[j].insert(s.name[i]);
  }
  std::vector<std::vector<std::string>> names(steps.size());
  for (size_t j = 0; j < ids.size(); ++j) {
    for (StringId id : ids[j]) {
      const std::string_view name = trace.Str(id);
      if (!name.starts_with("ProfilerStep#")) names[j].emplace_back(name);
    }
  }
  return names;
}

}  // namespace

std::vector<size_t> FindTruncatedSteps(const Trace& trace, const StepList& list, const StepPeriods& periods,
                                       std::vector<std::string>* why) {
  std::vector<size_t> out;
  if (why) why->clear();
  if (list.source != "timeline" || periods.device_activities.size() != list.steps.size()) return out;
  std::map<size_t, std::string> reasons;  // by step index: CutLastStep's
  // The starts of each rank's host slices (not on device streams), sorted:
  // a step holds an op when one starts strictly inside it (its own marker
  // starts at its start). A step of no rank counts every rank's.
  const SliceTable& s = trace.slices;
  std::map<int32_t, std::vector<int64_t>> starts;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (trace.tracks.kind[s.track[i]] == TrackKind::kDeviceStream || IsDeviceActivity(s.kind[i])) continue;
    const int32_t rank = trace.tracks.rank[s.track[i]];
    starts[rank].push_back(s.ts_ns[i]);
    if (rank != kNoRank) starts[kNoRank].push_back(s.ts_ns[i]);
  }
  for (auto& [rank, v] : starts) std::sort(v.begin(), v.end());
  for (const auto& [rank, idx] : StepsByRank(list)) {
    std::vector<size_t> timed;
    for (size_t k : idx) {
      if (list.steps[k].has_start()) timed.push_back(k);
    }
    auto it = starts.find(rank);
    std::vector<double> durs;
    std::vector<char> owns, holds;
    for (size_t k : timed) {
      const StepSpan& st = list.steps[k];
      durs.push_back(static_cast<double>(st.dur_ns));
      owns.push_back(periods.device_activities[k] > 0 ? 1 : 0);
      bool any = false;
      if (it != starts.end()) {
        auto a = std::upper_bound(it->second.begin(), it->second.end(), st.start_ns);
        any = a != it->second.end() && *a < st.start_ns + st.dur_ns;
      }
      holds.push_back(any ? 1 : 0);
    }
    const size_t t = TrailingTruncated(durs, owns, holds);
    out.insert(out.end(), timed.end() - static_cast<long>(t), timed.end());
    if (t > 0 || timed.size() < 3) continue;
    // The last step cut inside (CutLastStep): the cheap tests first, the
    // names only for a step shorter than each before it that ends the recording.
    const StepSpan& last = list.steps[timed.back()];
    const bool ends = it != starts.end() && it->second.back() < last.start_ns + last.dur_ns;
    if (!ends || !std::all_of(durs.begin(), durs.end() - 1, [&](double d) { return durs.back() < d; })) continue;
    std::string reason = CutLastStep(durs, StepSliceNames(trace, list, timed, rank), ends);
    if (reason.empty()) continue;
    out.push_back(timed.back());
    reasons[timed.back()] = std::move(reason);
  }
  std::sort(out.begin(), out.end());
  if (why) {
    for (size_t k : out) why->push_back(reasons.count(k) ? reasons[k] : "");
  }
  return out;
}

double AnalysisWindow::PerBase(const std::map<int32_t, double>& per_rank_total_ns) const {
  double sum = 0;
  for (const auto& [rank, ns] : per_rank_total_ns) sum += ns;
  if (steps > 0) return sum / static_cast<double>(steps);
  return per_rank_total_ns.empty() ? 0 : sum / static_cast<double>(std::max(trace_ranks, per_rank_total_ns.size()));
}

double AnalysisWindow::PerDeviceBase(const std::map<int32_t, double>& per_rank_total_ns) const {
  if (!device_behind()) return PerBase(per_rank_total_ns);
  double sum = 0;
  for (const auto& [rank, ns] : per_rank_total_ns) sum += ns;
  return sum / static_cast<double>(periods);
}

namespace {

// A rank's intervals with those of rank kNoRank (steps of no rank apply to
// every rank); `all` when it has none.
Intervals OfRank(const std::map<int32_t, Intervals>& by_rank, int32_t rank, const Intervals& all) {
  Intervals out;
  auto add = [&](int32_t r) {
    auto it = by_rank.find(r);
    if (it != by_rank.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  };
  add(rank);
  if (rank != kNoRank) add(kNoRank);
  return out.empty() ? all : MergeIntervals(std::move(out));
}

}  // namespace

Intervals AnalysisWindow::DeviceIntervalsOfRank(int32_t rank) const {
  if (!device_behind()) return IntervalsOfRank(rank);
  return OfRank(device_intervals_by_rank, rank, device_intervals);
}

Intervals AnalysisWindow::IntervalsOfRank(int32_t rank) const {
  if (!has_step_starts) return intervals;
  return OfRank(intervals_by_rank, rank, intervals);
}

std::string AnalysisWindow::Describe() const {
  std::string s = step_base == StepTimeBase::kDevicePeriod
                      ? DescribeDevicePeriodBase(steps, periods, base_ns, host_base_ns, warmup_only(),
                                                 warmup_prefill_steps, truncated.size())
                      : DescribeImpactBase(steps, steps_by_rank.size(), base_ns, warmup_only(), startup_ns,
                                           warmup_prefill_steps, truncated.size());
  s += SampledStepsText(torch_every, unprofiled.size(), unprofiled_mean_ns);
  s += WarmupForcedText(warmup_forced, steps, warmup_clamped_ranks, steps_by_rank.size());
  if (aiprof_overhead_ns > 0) {
    s += "; " + FormatDurationNs(static_cast<double>(aiprof_overhead_ns)) +
         " of aiprof's own work in the program (its torch exports) left out of impacts";
  }
  return s;
}

namespace {

std::string WarmupText(size_t warmup, size_t prefill) {
  std::string s = "; " + std::to_string(warmup) + " warm-up step" + (warmup == 1 ? "" : "s") + " left out";
  if (prefill == 0) return s;
  if (prefill == warmup) {
    s += warmup == 1 ? ", the LLM prefill" : ", each an LLM prefill";
  } else {
    s += ", " + std::to_string(prefill) + (prefill == 1 ? " of them the LLM prefill" : " of them LLM prefills");
  }
  return s + (prefill == 1 ? " (the llm section has it)" : " (the llm section has them)");
}

}  // namespace

std::string SampledStepsText(int torch_every, size_t unprofiled, double unprofiled_mean_ns) {
  if (unprofiled == 0) return "";
  const std::string n = std::to_string(torch_every);
  return "; ops recorded in 1 step in " + n + " (aiprof trace --torch-every " + n +
         "): impacts are per profiled step, over the steady steps that carry ops; " + std::to_string(unprofiled) +
         " steady step" + (unprofiled == 1 ? "" : "s") + " without ops (mean " +
         FormatFixed(unprofiled_mean_ns / 1e6, 3) + " ms) count in the step time only";
}

int TorchEvery(const Trace& trace) {
  constexpr std::string_view kKey = "capture.torch_every";
  long every = 1;
  for (const auto& [key, value] : trace.metadata) {
    const std::string_view k = key;
    if (k != kKey && !(k.ends_with(kKey) && k[k.size() - kKey.size() - 1] == '.')) continue;
    every = std::max(every, std::strtol(value.c_str(), nullptr, 10));
  }
  return static_cast<int>(std::min<long>(every, INT32_MAX));
}

std::vector<char> StepsCarryingOps(const Trace& trace, const StepList& list) {
  const SliceTable& s = trace.slices;
  const std::optional<StringId> overhead = trace.strings.Find("aiprof_overhead");
  std::map<int32_t, std::vector<int64_t>> starts;  // by rank, sorted; kNoRank: every rank's
  for (uint32_t i = 0; i < s.size(); ++i) {
    const EventKind k = s.kind[i];
    if (k != EventKind::kCpuOp && k != EventKind::kRuntime && k != EventKind::kDriver && k != EventKind::kSync &&
        !IsDeviceActivity(k)) {
      continue;
    }
    if (overhead && s.category[i] == *overhead) continue;
    const int32_t rank = trace.tracks.rank[s.track[i]];
    starts[rank].push_back(s.ts_ns[i]);
    if (rank != kNoRank) starts[kNoRank].push_back(s.ts_ns[i]);
  }
  for (auto& [rank, v] : starts) std::sort(v.begin(), v.end());
  std::vector<char> out(list.steps.size(), 0);
  for (size_t k = 0; k < list.steps.size(); ++k) {
    const StepSpan& st = list.steps[k];
    auto it = starts.find(st.rank);
    if (!st.has_start() || it == starts.end()) continue;
    auto a = std::upper_bound(it->second.begin(), it->second.end(), st.start_ns);
    out[k] = a != it->second.end() && *a < st.start_ns + st.dur_ns ? 1 : 0;
  }
  return out;
}

std::string TruncatedText(size_t truncated) {
  if (truncated == 0) return "";
  return "; " + std::to_string(truncated) + " truncated last step" + (truncated == 1 ? "" : "s") + " left out";
}

std::string WarmupForcedText(int forced, size_t steps, size_t clamped_ranks, size_t ranks) {
  if (forced < 0) return "";
  if (steps == 0) return "; --warmup-steps " + std::to_string(forced) + " does nothing here: the trace has no steps";
  if (clamped_ranks == 0) return "";
  return "; --warmup-steps " + std::to_string(forced) + " asks for every step" +
         (ranks <= 1 ? std::string(", so the last one stays")
                     : " of " + std::to_string(clamped_ranks) + " of " + std::to_string(ranks) +
                           " ranks, so each of them keeps its last");
}

std::string DescribeDevicePeriodBase(size_t steps, size_t periods, double base_ns, double host_base_ns, size_t warmup,
                                     size_t warmup_prefill, size_t truncated) {
  auto plural = [](size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
  auto ms = [](double ns) { return FormatFixed(ns / 1e6, 3) + " ms"; };
  std::string s =
      "per step (mean of " + plural(steps, "steady-state step") + ", " + ms(base_ns) +
      ": the device's period, end of one step's device work to the next's, mean of " + plural(periods, "period") +
      "; the device runs behind the host, whose steps take " + ms(host_base_ns) +
      "; device-side impacts are measured over the device's periods, host-side ones over the host steps' spans)";
  if (warmup > 0) s += WarmupText(warmup, warmup_prefill);
  return s + TruncatedText(truncated);
}

std::string DescribeImpactBase(size_t steps, size_t ranks, double base_ns, size_t warmup, int64_t startup_ns,
                               size_t warmup_prefill, size_t truncated) {
  auto plural = [](size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
  // Milliseconds to 3 decimals, as diagnose states impacts; seconds from 1 s.
  auto ms = [](double ns) {
    return std::fabs(ns) >= 1e9 ? FormatFixed(ns / 1e9, 3) + " s" : FormatFixed(ns / 1e6, 3) + " ms";
  };
  if (steps > 0) {
    std::string s = "per step (mean of " + plural(steps, "steady-state step");
    if (ranks > 1) {
      s += steps % ranks == 0 ? ", " + std::to_string(steps / ranks) + " on each of " + std::to_string(ranks) + " ranks"
                              : " over " + std::to_string(ranks) + " ranks";
    }
    s += ", " + ms(base_ns) + ")";
    if (warmup > 0) s += WarmupText(warmup, warmup_prefill);
    return s + TruncatedText(truncated);
  }
  std::string s = "per trace (" + ms(base_ns) + " of steady-state time";
  if (startup_ns > 0) s += "; " + ms(static_cast<double>(startup_ns)) + " of start-up left out";
  return s + ")";
}

namespace {

// The steady steps' device period as the base where the device runs behind
// (ChooseStepTimeBase); `w` holds the host-span base and the warm-up.
void SetStepTimeBase(const StepList& list, const StepPeriods& periods, AnalysisWindow* w) {
  if (list.source != "timeline") return;
  std::vector<char> warm(list.steps.size(), 0);
  for (size_t k : w->warmup) warm[k] = 1;
  std::vector<size_t> steady;
  for (size_t k = 0; k < list.steps.size(); ++k) {
    if (!warm[k]) steady.push_back(k);
  }
  std::vector<size_t> used;
  if (ChooseStepTimeBase(list, periods, steady, &used) != StepTimeBase::kDevicePeriod) return;
  double sum = 0;
  Intervals all;
  for (size_t k : used) {
    sum += static_cast<double>(periods.period_ns[k]);
    const int64_t end = periods.work_end_ns[k], begin = periods.work_end_ns[periods.previous[k]];
    w->device_intervals_by_rank[list.steps[k].rank].emplace_back(begin, end);
    all.emplace_back(begin, end);
    if (list.steps[k].row != kNoSlice) w->device_periods.push_back({list.steps[k].row, begin, end});
  }
  std::sort(w->device_periods.begin(), w->device_periods.end(),
            [](const AnalysisWindow::DevicePeriod& a, const AnalysisWindow::DevicePeriod& b) { return a.row < b.row; });
  for (auto& [rank, iv] : w->device_intervals_by_rank) iv = MergeIntervals(std::move(iv));
  w->device_intervals = MergeIntervals(std::move(all));
  w->step_base = StepTimeBase::kDevicePeriod;
  w->periods = used.size();
  w->base_ns = sum / static_cast<double>(used.size());
}

}  // namespace

std::map<int32_t, Intervals> AiprofOverheadByRank(const Trace& trace) {
  const std::optional<StringId> overhead = trace.strings.Find("aiprof_overhead");
  if (!overhead) return {};
  const SliceTable& s = trace.slices;
  std::map<int32_t, Intervals> by_rank;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if (s.category[i] == *overhead && s.dur_ns[i] > 0) {
      by_rank[trace.tracks.rank[s.track[i]]].emplace_back(s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i]);
    }
  }
  for (auto& [rank, iv] : by_rank) iv = MergeIntervals(std::move(iv));
  return by_rank;
}

namespace {

// aiprof's own work of every rank, as one union.
Intervals AiprofOverhead(const Trace& trace) {
  Intervals all;
  for (auto& [rank, iv] : AiprofOverheadByRank(trace)) all.insert(all.end(), iv.begin(), iv.end());
  return MergeIntervals(std::move(all));
}

// Cuts `overhead` out of every interval of the window and records how much
// of it was inside.
void CutAiprofOverhead(const Intervals& overhead, AnalysisWindow* w) {
  if (overhead.empty()) return;
  auto cut = [&](Intervals* iv) {
    if (!iv->empty()) *iv = IntersectIntervals(*iv, Complement(overhead, iv->front().first, iv->back().second));
  };
  w->aiprof_overhead_ns = IntersectionLength(w->intervals, overhead);
  cut(&w->intervals);
  for (auto& [rank, iv] : w->intervals_by_rank) cut(&iv);
  cut(&w->device_intervals);
  for (auto& [rank, iv] : w->device_intervals_by_rank) cut(&iv);
}

// The starts of the LLM steps that are prefill or mixed steps
// (FindLlmSteps), by rank, sorted.
class PrefillAnnotations {
 public:
  explicit PrefillAnnotations(const Trace& trace) {
    for (const LlmStep& st : FindLlmSteps(trace)) {
      if (st.label.phase != LlmPhase::kDecode) starts_[st.rank].push_back(st.start);  // sorted by (rank, start)
    }
  }
  // Whether a prefill step of the step's rank starts inside the step.
  bool Holds(int32_t rank, const StepSpan& st) const {
    auto it = starts_.find(rank);
    if (it == starts_.end() || !st.has_start()) return false;
    auto a = std::lower_bound(it->second.begin(), it->second.end(), st.start_ns);
    return a != it->second.end() && *a < st.start_ns + st.dur_ns;
  }

 private:
  std::map<int32_t, std::vector<int64_t>> starts_;
};

}  // namespace

AnalysisWindow ComputeAnalysisWindow(const Trace& trace, int warmup_steps) {
  AnalysisWindow w;
  w.warmup_forced = warmup_steps;
  const SliceTable& s = trace.slices;
  int64_t first = INT64_MAX, last = INT64_MIN;
  std::vector<int32_t> ranks;
  std::vector<char> track_seen(trace.tracks.size(), 0);
  for (size_t i = 0; i < s.size(); ++i) {
    first = std::min(first, s.ts_ns[i]);
    last = std::max(last, s.ts_ns[i] + s.dur_ns[i]);
    if (!track_seen[s.track[i]]) {
      track_seen[s.track[i]] = 1;
      ranks.push_back(trace.tracks.rank[s.track[i]]);
    }
  }
  // Tracks of no rank beside ranked ones (a process-wide track) are no rank
  // of their own.
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  if (ranks.size() > 1) ranks.erase(std::remove(ranks.begin(), ranks.end(), kNoRank), ranks.end());
  w.trace_ranks = std::max<size_t>(1, ranks.size());
  if (s.size() == 0) {
    // A capture without slices (a program without torch under `aiprof
    // trace`): the recording is the span of its samples, counters (page
    // faults) and instants, each point inside it (intervals are half-open).
    for (const ChunkedVector<int64_t>* ts : {&trace.samples.ts_ns, &trace.counters.ts_ns, &trace.instants.ts_ns}) {
      for (size_t i = 0; i < ts->size(); ++i) {
        first = std::min(first, (*ts)[i]);
        last = std::max(last, (*ts)[i] + 1);
      }
    }
  }
  if (first > last) first = last = 0;
  w.trace_start_ns = first;
  w.trace_span_ns = last - first;

  // Start-up calls: one-off long runtime/driver calls.
  std::unordered_map<uint32_t, std::vector<double>> by_name;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s.kind[i] == EventKind::kRuntime || s.kind[i] == EventKind::kDriver) {
      by_name[s.name[i].raw].push_back(static_cast<double>(s.dur_ns[i]));
    }
  }
  std::unordered_map<uint32_t, double> median;
  for (auto& [name, v] : by_name) median[name] = Median(v);
  // Built for the first candidate only: most traces have none, and the
  // context indexes every slice (parents, device busy time, correlations).
  // The steps serve the warm-up below as well.
  StepList list = FindSteps(trace);
  std::optional<StartupContext> context;
  Intervals startup;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if ((s.kind[i] != EventKind::kRuntime && s.kind[i] != EventKind::kDriver) || s.dur_ns[i] < kStartupCallMinNs) {
      continue;
    }
    double med = median[s.name[i].raw];
    bool outlier = static_cast<double>(s.dur_ns[i]) >= kStartupOutlierFactor * med;
    if (!outlier && !(IsInitCallName(trace.Str(s.name[i])) && by_name[s.name[i].raw].size() <= 2)) continue;
    if (!context) context.emplace(trace, list);
    if (!context->MayBeStartup(i)) continue;
    startup.emplace_back(s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i]);
    w.startup_by_rank[trace.tracks.rank[s.track[i]]].emplace_back(s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i]);
    w.startup_calls.push_back({i, med});
  }
  for (auto& [rank, iv] : w.startup_by_rank) iv = MergeIntervals(std::move(iv));
  w.capture_windows = FindCaptureWindows(trace);
  w.startup_work = StartupWork(w.startup_by_rank, CaptureWindowsByRank(trace, w.capture_windows));
  std::sort(w.startup_calls.begin(), w.startup_calls.end(), [&](const StartupCall& a, const StartupCall& b) {
    return s.dur_ns[a.slice] != s.dur_ns[b.slice] ? s.dur_ns[a.slice] > s.dur_ns[b.slice] : a.slice < b.slice;
  });
  if (w.startup_calls.size() > 8) w.startup_calls.resize(8);
  Intervals startup_u = MergeIntervals(std::move(startup));
  w.startup_ns = LengthOf(startup_u);
  w.startup_dominated = w.trace_span_ns > 0 &&
                        static_cast<double>(w.startup_ns) > kStartupDominatedShare * static_cast<double>(w.trace_span_ns);

  w.step_source = list.source;
  if (!list.steps.empty()) {
    const PrefillAnnotations prefill(trace);
    const StepPeriods periods = list.source == "timeline" ? ComputeStepPeriods(trace, list) : StepPeriods{};
    // Truncated trailing steps leave first; then warm-up per rank among the
    // rest (each rank's steps in time order), a forced count applying to each rank.
    w.truncated = FindTruncatedSteps(trace, list, periods, &w.truncated_why);
    std::vector<char> cut(list.steps.size(), 0);
    for (size_t k : w.truncated) cut[k] = 1;
    // Each rank's steps left after the cut, in time order, and how many of
    // them lead as warm-up.
    struct RankSteps {
      int32_t rank;
      std::vector<size_t> idx;
      size_t warm;
    };
    std::vector<RankSteps> ranks_steps;
    for (auto& [rank, all_idx] : StepsByRank(list)) {
      RankSteps r{rank, {}, 0};
      for (size_t k : all_idx) {
        if (!cut[k]) r.idx.push_back(k);
      }
      std::vector<double> durs;
      for (size_t k : r.idx) durs.push_back(static_cast<double>(list.steps[k].dur_ns));
      r.warm = LeadingWarmup(durs, warmup_steps);
      if (warmup_steps >= 0 && static_cast<size_t>(warmup_steps) > r.warm) ++w.warmup_clamped_ranks;
      ranks_steps.push_back(std::move(r));
    }
    // A capture with ops in 1 step in N: the window is the steady steps that
    // carry them (AnalysisWindow::unprofiled), where any does.
    w.torch_every = TorchEvery(trace);
    std::vector<char> carries;
    if (w.torch_every > 1 && list.source == "timeline") carries = StepsCarryingOps(trace, list);
    bool any_carries = false;
    for (const RankSteps& r : ranks_steps) {
      for (size_t j = r.warm; j < r.idx.size() && !carries.empty(); ++j) any_carries = any_carries || carries[r.idx[j]];
    }
    if (!any_carries) carries.clear();
    Intervals iv;
    double sum = 0, unprofiled_sum = 0;
    for (const auto& [rank, idx, warm] : ranks_steps) {
      size_t steady = 0;
      for (size_t j = 0; j < idx.size(); ++j) {
        const StepSpan& st = list.steps[idx[j]];
        if (j < warm) {
          w.warmup.push_back(idx[j]);
          w.warmup_prefill_steps += prefill.Holds(rank, st) ? 1 : 0;
          continue;
        }
        if (!carries.empty() && !carries[idx[j]]) {
          w.unprofiled.push_back(idx[j]);
          unprofiled_sum += static_cast<double>(st.dur_ns);
          continue;
        }
        ++steady;
        sum += static_cast<double>(st.dur_ns);
        if (st.has_start()) {
          iv.emplace_back(st.start_ns, st.start_ns + st.dur_ns);
          w.intervals_by_rank[rank].emplace_back(st.start_ns, st.start_ns + st.dur_ns);
        }
      }
      w.steps += steady;
      w.steps_by_rank.emplace_back(rank, steady);
    }
    w.warmup.insert(w.warmup.end(), w.truncated.begin(), w.truncated.end());
    w.warmup.insert(w.warmup.end(), w.unprofiled.begin(), w.unprofiled.end());
    if (!w.unprofiled.empty()) w.unprofiled_mean_ns = unprofiled_sum / static_cast<double>(w.unprofiled.size());
    w.has_step_starts = !iv.empty();
    for (auto& [rank, rank_iv] : w.intervals_by_rank) rank_iv = MergeIntervals(std::move(rank_iv));
    w.intervals = w.has_step_starts ? MergeIntervals(std::move(iv)) : Intervals{{first, last}};
    w.base_ns = w.steps > 0 ? sum / static_cast<double>(w.steps) : 0;
    w.host_base_ns = w.base_ns;
    w.base = "per step";
    SetStepTimeBase(list, periods, &w);
    CutAiprofOverhead(AiprofOverhead(trace), &w);
    return w;
  }
  w.intervals = Complement(startup_u, first, last);
  w.base_ns = static_cast<double>(LengthOf(w.intervals));
  w.base = "per trace";
  // Per trace the base is the window's length: without aiprof's work too.
  CutAiprofOverhead(AiprofOverhead(trace), &w);
  w.base_ns = static_cast<double>(LengthOf(w.intervals));
  return w;
}

void PublishAnalysisWindow(const Trace& trace, const AnalysisWindow& w, MetricSet* metrics) {
  metrics->Set("trace_span_ns", static_cast<double>(w.trace_span_ns), kWindowSource);
  metrics->Set("impact_base_ns", w.base_ns, kWindowSource);
  metrics->Set("impact_steps", static_cast<double>(w.steps), kWindowSource);
  if (w.step_base == StepTimeBase::kDevicePeriod) {
    metrics->Set("impact_device_periods", static_cast<double>(w.periods), kWindowSource);
    metrics->Set("impact_host_base_ns", w.host_base_ns, kWindowSource);
  }
  metrics->Set("impact_ranks", static_cast<double>(w.steps_by_rank.size()), kWindowSource);
  metrics->Set("warmup_steps", static_cast<double>(w.warmup_only()), kWindowSource);
  // Only where it happened: a trailing step cut short where the recording stopped.
  if (!w.truncated.empty()) metrics->Set("truncated_steps", static_cast<double>(w.truncated.size()), kWindowSource);
  // Only where asked (--warmup-steps) and where it did not hold.
  if (w.warmup_forced >= 0) metrics->Set("warmup_forced", w.warmup_forced, kWindowSource);
  if (w.warmup_clamped_ranks > 0) {
    metrics->Set("warmup_clamped_ranks", static_cast<double>(w.warmup_clamped_ranks), kWindowSource);
  }
  // Only where it happened: an LLM prefill left with the warm-up.
  if (w.warmup_prefill_steps > 0) {
    metrics->Set("warmup_prefill_steps", static_cast<double>(w.warmup_prefill_steps), kWindowSource);
  }
  metrics->Set("startup_ns", static_cast<double>(w.startup_ns), kWindowSource);
  metrics->Set("startup_ratio",
               w.trace_span_ns > 0 ? static_cast<double>(w.startup_ns) / static_cast<double>(w.trace_span_ns) : 0,
               kWindowSource);
  const SliceTable& s = trace.slices;
  for (const StartupCall& c : w.startup_calls) {
    metrics->AddEvidence("startup", std::string(trace.Str(s.name[c.slice])) + " took " +
                                        FormatDurationNs(static_cast<double>(s.dur_ns[c.slice])) + " at +" +
                                        FormatDurationNs(static_cast<double>(s.ts_ns[c.slice] - w.trace_start_ns)) +
                                        " (median of its calls " + FormatDurationNs(c.name_median_ns) + ")");
  }
  if (w.startup_ns > 0) {
    metrics->AddEvidence("startup", "start-up calls take " + FormatDurationNs(static_cast<double>(w.startup_ns)) +
                                        " of the " + FormatDurationNs(static_cast<double>(w.trace_span_ns)) +
                                        " trace span; impacts are measured " + w.Describe());
  }
  if (!w.warmup.empty()) {
    StepList list = FindSteps(trace);
    std::map<size_t, std::string> truncated;  // step -> CutLastStep's reason, or ""
    for (size_t j = 0; j < w.truncated.size(); ++j) {
      truncated[w.truncated[j]] = j < w.truncated_why.size() ? w.truncated_why[j] : "";
    }
    const std::set<size_t> unprofiled(w.unprofiled.begin(), w.unprofiled.end());
    for (size_t k : w.warmup) {
      if (unprofiled.count(k)) continue;  // said once, below
      const StepSpan& st = list.steps[k];
      std::string name = st.name.raw ? std::string(trace.Str(st.name)) : "step " + std::to_string(st.number);
      auto cut = truncated.find(k);
      const std::string why = cut == truncated.end() ? ""
                              : cut->second.empty() ? "cut short where the recording stopped"
                                                    : "cut short: " + cut->second;
      metrics->AddEvidence("warmup", name + (st.rank == kNoRank ? "" : " rank " + std::to_string(st.rank)) + ": " +
                                         FormatDurationNs(static_cast<double>(st.dur_ns)) +
                                         (cut != truncated.end()
                                              ? ", left out of impacts as a truncated last step (" + why +
                                                    "; mean steady step "
                                              : std::string(", left out of impacts as warm-up (mean steady step ")) +
                                         FormatDurationNs(w.base_ns) + ")");
    }
    if (!w.unprofiled.empty()) {
      metrics->AddEvidence("warmup", std::to_string(w.unprofiled.size()) + " steady step" +
                                         (w.unprofiled.size() == 1 ? "" : "s") + " without ops (mean " +
                                         FormatDurationNs(w.unprofiled_mean_ns) +
                                         ") left out of impacts: the capture recorded ops in 1 step in " +
                                         std::to_string(w.torch_every) + "; impacts are per profiled step (mean " +
                                         FormatDurationNs(w.base_ns) + ")");
    }
  }
}

void PublishConsumers(const Trace& trace, const AnalysisWindow& w, MetricSet* metrics) {
  const SliceTable& s = trace.slices;
  // Device activity over the device's window (its periods where it runs
  // behind the host), host work over the host steps.
  CoveredTime in_window(w.intervals), on_device(w.DeviceIntervals());
  std::unordered_map<uint32_t, double> device_ops, host_ops;
  std::unordered_map<uint32_t, double> threads;  // track -> depth-0 host time
  for (uint32_t i = 0; i < s.size(); ++i) {
    const bool device = IsDeviceActivity(s.kind[i]);
    double ns = static_cast<double>((device ? on_device : in_window).Within(s.ts_ns[i], s.ts_ns[i] + s.dur_ns[i]));
    if (ns <= 0) continue;
    if (device) {
      device_ops[s.name[i].raw] += ns;
    } else if (s.depth[i] == 0 && s.kind[i] != EventKind::kUserAnnotation && s.kind[i] != EventKind::kOther) {
      host_ops[s.name[i].raw] += ns;
      threads[s.track[i]] += ns;
    }
  }
  auto top = [&](const std::unordered_map<uint32_t, double>& m, const char* kind, bool track, bool device) {
    std::vector<std::pair<double, uint32_t>> v;
    for (const auto& [k, ns] : m) v.emplace_back(ns, k);
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    for (size_t k = 0; k < std::min<size_t>(5, v.size()); ++k) {
      std::string name = track ? std::string(trace.Str(trace.tracks.name[v[k].second])) +
                                     " (track " + std::to_string(v[k].second) + ")"
                               : std::string(trace.Str(StringId{v[k].second}));
      // Summed over ranks and devices: divide like every impact.
      metrics->AddConsumer({kind, name, device ? w.PerDeviceBase(v[k].first) : w.PerBase(v[k].first)});
    }
  };
  top(device_ops, "device op", false, true);
  top(host_ops, "host op", false, false);
  top(threads, "thread", true, false);
}

}  // namespace aiprof
