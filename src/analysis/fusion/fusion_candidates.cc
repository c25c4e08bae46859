#include "src/analysis/fusion/fusion_candidates.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "src/analysis/common/intervals.h"
#include "src/analysis/common/op_args.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/common/trace_index.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/roofline/kernel_class.h"
#include "src/analysis/window/analysis_window.h"
#include "src/base/ascii.h"

namespace aiprof {
namespace {

constexpr char kFusionSource[] = "fusion";

uint64_t Mix(uint64_t x) {  // splitmix64 finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Ops of all timelines, flattened, with runs of consecutive short ops.
struct FlatOps {
  std::vector<uint32_t> slice;
  std::vector<int64_t> dur_prefix{0}, gap_prefix{0};  // gap_prefix[k+1]: gap before op k (0 at a run start)
  std::vector<double> bytes_prefix{0};                 // input bytes of op k (boundary into k)
  std::vector<char> has_bytes;
  std::vector<char> in_window;  // op starts inside the analysis window
  std::vector<std::pair<size_t, size_t>> runs;
};

using TimeWindow = std::pair<int64_t, int64_t>;  // [start, end) ns

struct Acc {
  uint64_t occurrences = 0;
  int64_t total_ns = 0, gap_ns = 0;
  double bytes = 0;
  bool shapes = true;
  int64_t window_saving_ns = 0;
  uint64_t window_occurrences = 0;
  size_t first = 0, next_free = 0;
  uint8_t len = 0;
};

double FirstInputBytes(const OpArgReader& args, uint32_t s, bool* ok) {
  auto dims = args.InputDims(s);
  auto types = args.InputTypes(s);
  if (!dims || !types || dims->empty() || types->empty() || (*dims)[0].empty()) return *ok = false, 0;
  int b = BytesPerElement((*types)[0]);
  if (b == 0) return *ok = false, 0;
  *ok = true;
  return static_cast<double>(NumElements((*dims)[0])) * b;
}

class FusionFinder {
 public:
  FusionFinder(const Trace& t, const AnalysisWindow* w) : t_(t), args_(t), w_(w) {}

  FusionResult Run() {
    CollectTimelines();
    std::unordered_map<uint64_t, Acc> acc;
    acc.reserve(flat_.slice.size() * 2);
    ForEachWindow([&](uint64_t key, size_t i, size_t len) { Count(&acc[key], i, len); });
    std::vector<std::pair<uint64_t, const Acc*>> ranked;
    for (const auto& [key, a] : acc) {
      if (a.occurrences >= kFusionMinOccurrences) ranked.emplace_back(key, &a);
    }
    auto score = [](const Acc& a) { return a.occurrences * (a.len - 1u); };
    std::sort(ranked.begin(), ranked.end(), [&](const auto& x, const auto& y) {
      if (score(*x.second) != score(*y.second)) return score(*x.second) > score(*y.second);
      if (x.second->total_ns != y.second->total_ns) return x.second->total_ns > y.second->total_ns;
      return x.second->first < y.second->first;
    });
    std::unordered_map<uint64_t, size_t> top_keys;
    std::vector<std::pair<std::vector<StringId>, uint64_t>> examined;  // (ops, occurrences), better first
    for (size_t n = 0; n < ranked.size() && n < kFusionMaxExamined && result_.top.size() < kFusionTopReported; ++n) {
      const auto& [key, a] = ranked[n];
      std::vector<StringId> ops;
      for (size_t k = 0; k < a->len; ++k) ops.push_back(t_.slices.name[flat_.slice[a->first + k]]);
      bool redundant = false;
      for (const auto& [better, better_occurrences] : examined) {
        redundant = redundant || (3 * better_occurrences >= 2 * a->occurrences && SequencesOverlap(ops, better));
      }
      examined.emplace_back(ops, a->occurrences);
      if (redundant) continue;
      FusionCandidate c;
      c.ops = std::move(ops);
      c.occurrences = a->occurrences;
      c.total_ns = a->total_ns;
      c.gap_ns = a->gap_ns;
      c.boundaries_removed = score(*a);
      c.has_shapes = a->shapes && a->len > 1;
      c.intermediate_bytes = c.has_shapes ? 2 * a->bytes : 0;
      c.window_saving_ns = a->window_saving_ns;
      c.window_occurrences = a->window_occurrences;
      top_keys[key] = result_.top.size();
      result_.top.push_back(std::move(c));
    }
    MarkCoverage(top_keys);
    ClaimSavings(top_keys);
    return std::move(result_);
  }

 private:
  // Ops of one timeline in time order. `steps` (sorted windows of the
  // timeline's rank, possibly none) split runs: a run never holds ops of two
  // steps, and ops outside every step (the profiler's own step() work) break
  // runs when the rank has steps.
  void AddTimeline(const std::vector<uint32_t>& ops, int64_t short_ns, const std::vector<TimeWindow>& steps) {
    const SliceTable& s = t_.slices;
    bool in_run = false;
    bool prev_backward = false;
    int64_t prev_end = 0;
    size_t step = 0;
    size_t prev_step = SIZE_MAX;
    uint32_t prev_op = kNoSlice;
    for (uint32_t i : ops) {
      if (result_.device) {
        // GEMM / convolution library kernels and their epilogues end a run.
        uint8_t lib = LibraryClass(s.name[i]);
        bool epilogue = lib & kEpilogue;
        if (epilogue && prev_op != kNoSlice && (LibraryClass(s.name[prev_op]) & kMath)) {
          AddLibraryInternal(prev_op, i);
        }
        prev_op = i;
        if (lib & kCompiled) {
          ++result_.compiled_kernels;
          result_.compiled_ns += s.dur_ns[i];
        }
        if (epilogue || (lib & (kMath | kCompiled))) {
          ++result_.op_count;
          result_.op_time_ns += s.dur_ns[i];
          if (in_run) flat_.runs.back().second = flat_.slice.size();
          in_run = false;
          continue;
        }
      }
      ++result_.op_count;
      result_.op_time_ns += s.dur_ns[i];
      while (step < steps.size() && steps[step].second <= s.ts_ns[i]) ++step;
      const bool inside = step < steps.size() && steps[step].first <= s.ts_ns[i];
      const size_t this_step = inside ? step : SIZE_MAX - 1;
      if (in_run && this_step != prev_step) {
        flat_.runs.back().second = flat_.slice.size();
        in_run = false;
      }
      prev_step = this_step;
      // The data pipeline's ops (under a DataLoader span) are not the
      // model's: they end runs like ops outside the steps (the data_loading
      // finding owns that time).
      const bool loader = !result_.device && loader_op_[i];
      if ((!inside && !steps.empty()) || loader) {
        if (s.dur_ns[i] < short_ns) result_.short_op_ns += s.dur_ns[i];
        if (in_run && loader) flat_.runs.back().second = flat_.slice.size();
        in_run = in_run && !loader;
        continue;
      }
      if (s.dur_ns[i] >= short_ns) {
        if (in_run) flat_.runs.back().second = flat_.slice.size();
        in_run = false;
        continue;
      }
      result_.short_op_ns += s.dur_ns[i];
      // On a CPU timeline a stretch without any op as long as a long op is
      // host work of its own (Python, I/O: a file read, .tolist()), which
      // fusing the ops around it does not remove: it ends the run as a long
      // op does. The switch between the forward pass and the backward
      // pass's nodes (autograd::engine::evaluate_function) ends it too:
      // a compiler fuses each pass on its own.
      const int64_t gap_before = in_run ? std::max<int64_t>(0, s.ts_ns[i] - prev_end) : 0;
      const bool backward = !result_.device && IsBackwardNode(s.name[i]);
      if (in_run && !result_.device && (gap_before >= short_ns || backward != prev_backward)) {
        flat_.runs.back().second = flat_.slice.size();
        in_run = false;
        ++result_.host_work_breaks;
      }
      prev_backward = backward;
      if (!in_run) flat_.runs.emplace_back(flat_.slice.size(), flat_.slice.size());
      int64_t gap = in_run ? gap_before : 0;
      bool ok = false;
      double bytes = FirstInputBytes(args_, i, &ok);
      flat_.slice.push_back(i);
      flat_.dur_prefix.push_back(flat_.dur_prefix.back() + s.dur_ns[i]);
      flat_.gap_prefix.push_back(flat_.gap_prefix.back() + gap);
      flat_.bytes_prefix.push_back(flat_.bytes_prefix.back() + bytes);
      flat_.has_bytes.push_back(ok);
      flat_.in_window.push_back(!window_ || window_->Within(s.ts_ns[i], s.ts_ns[i] + 1) > 0);
      prev_end = s.ts_ns[i] + s.dur_ns[i];
      in_run = true;
    }
    if (in_run) flat_.runs.back().second = flat_.slice.size();
  }

  void CollectTimelines() {
    const SliceTable& s = t_.slices;
    for (size_t i = 0; i < s.size() && !result_.device; ++i) result_.device = s.kind[i] == EventKind::kKernel;
    // Kernels are counted over the device's window (its periods where it
    // runs behind the host), CPU ops over the host steps.
    if (w_) window_.emplace(result_.device ? w_->DeviceIntervals() : w_->intervals);
    std::vector<uint32_t> parent;
    std::vector<char> under_op;  // CPU timelines take top-level ops only (UnderCpuOp)
    if (!result_.device) {
      parent = ParentSlices(t_);
      MarkLoaderOps(parent);
      under_op = UnderCpuOp(t_, parent);
    }
    std::vector<uint32_t> ops;
    uint32_t track = kNoTrack;
    int64_t short_ns = result_.device ? kFusionShortKernelNs : kFusionShortCpuOpNs;
    const std::map<int32_t, std::vector<TimeWindow>> step_windows =
        result_.device ? decltype(step_windows){} : StepWindows();
    static const std::vector<TimeWindow> kNoSteps;
    auto cuts_of = [&](uint32_t tr) -> const std::vector<TimeWindow>& {
      auto it = tr == kNoTrack ? step_windows.end() : step_windows.find(t_.tracks.rank[tr]);
      return it == step_windows.end() ? kNoSteps : it->second;
    };
    for (uint32_t i = 0; i < s.size(); ++i) {
      if (s.track[i] != track) {
        AddTimeline(ops, short_ns, cuts_of(track));
        ops.clear();
        track = s.track[i];
      }
      if (result_.device ? s.kind[i] != EventKind::kKernel : s.kind[i] != EventKind::kCpuOp) continue;
      if (!result_.device && under_op[i]) continue;
      ops.push_back(i);
    }
    AddTimeline(ops, short_ns, cuts_of(track));
  }

  // loader_op_[i]: slice i lies under a DataLoader span (IsDataLoaderName:
  // "enumerate(DataLoader)#..."), at any depth. Parents precede children.
  void MarkLoaderOps(const std::vector<uint32_t>& parent) {
    const SliceTable& s = t_.slices;
    std::vector<int8_t> loader_name(t_.strings.size(), -1);
    loader_op_.assign(s.size(), 0);
    for (uint32_t i = 0; i < s.size(); ++i) {
      int8_t& c = loader_name[s.name[i].raw];
      if (c < 0) c = IsDataLoaderName(t_.Str(s.name[i])) ? 1 : 0;
      loader_op_[i] = c == 1 || (parent[i] != kNoSlice && loader_op_[parent[i]]);
    }
  }

  bool IsBackwardNode(StringId name) {
    if (backward_name_.empty()) backward_name_.assign(t_.strings.size(), -1);
    int8_t& c = backward_name_[name.raw];
    if (c < 0) c = t_.Str(name).starts_with("autograd::engine::evaluate_function") ? 1 : 0;
    return c == 1;
  }

  // Step windows [start, end) per rank, sorted by start.
  std::map<int32_t, std::vector<TimeWindow>> StepWindows() const {
    std::map<int32_t, std::vector<TimeWindow>> out;
    for (size_t k = 0; k < t_.steps.size(); ++k) {
      out[t_.steps.rank[k]].emplace_back(t_.steps.ts_ns[k], t_.steps.ts_ns[k] + t_.steps.dur_ns[k]);
    }
    for (auto& [rank, v] : out) std::sort(v.begin(), v.end());
    return out;
  }

  template <typename F>
  void ForEachWindow(F&& f) const {
    for (const auto& [b, e] : flat_.runs) {
      for (size_t i = b; i < e; ++i) {
        uint64_t h = 0x243f6a8885a308d3ULL;
        for (size_t len = 1; len <= kFusionMaxLength && i + len <= e; ++len) {
          h = Mix(h ^ (t_.slices.name[flat_.slice[i + len - 1]].raw + 0x9e3779b97f4a7c15ULL));
          if (len >= kFusionMinLength) f(Mix(h + len), i, len);
        }
      }
    }
  }

  void Count(Acc* a, size_t i, size_t len) {
    if (a->len == 0) {
      a->len = static_cast<uint8_t>(len);
      a->first = i;
    }
    if (i < a->next_free && a->occurrences > 0) return;
    ++a->occurrences;
    a->total_ns += flat_.dur_prefix[i + len] - flat_.dur_prefix[i];
    a->gap_ns += flat_.gap_prefix[i + len] - flat_.gap_prefix[i + 1];
    a->bytes += flat_.bytes_prefix[i + len] - flat_.bytes_prefix[i + 1];
    for (size_t k = i + 1; k < i + len; ++k) a->shapes = a->shapes && flat_.has_bytes[k];
    a->next_free = i + len;
    if (window_ && flat_.in_window[i]) {
      int64_t longest = 0;
      for (size_t k = i; k < i + len; ++k) longest = std::max(longest, t_.slices.dur_ns[flat_.slice[k]]);
      ++a->window_occurrences;
      a->window_saving_ns += (flat_.gap_prefix[i + len] - flat_.gap_prefix[i + 1]) +
                             (flat_.dur_prefix[i + len] - flat_.dur_prefix[i]) - longest;
    }
  }

  void MarkCoverage(const std::unordered_map<uint64_t, size_t>& top_keys) {
    std::vector<char> covered(flat_.slice.size(), 0);
    std::vector<size_t> next_free(top_keys.size(), 0);
    ForEachWindow([&](uint64_t key, size_t i, size_t len) {
      auto it = top_keys.find(key);
      if (it == top_keys.end() || i < next_free[it->second]) return;
      next_free[it->second] = i + len;
      for (size_t k = i; k < i + len; ++k) covered[k] = 1;
    });
    for (size_t k = 0; k < covered.size(); ++k) {
      if (covered[k]) result_.covered_ns += t_.slices.dur_ns[flat_.slice[k]];
    }
  }

  // window_saving_by_rank: the top candidates' savings with every op and
  // gap counted once. Candidates overlap (a chain of 6 ops and its repeating
  // 3-op half are both reported): best-ranked first, an occurrence counts
  // only where none of its ops is in one counted already.
  void ClaimSavings(const std::unordered_map<uint64_t, size_t>& top_keys) {
    if (!window_) return;
    std::vector<std::vector<size_t>> starts(top_keys.size());
    std::vector<size_t> next_free(top_keys.size(), 0);
    ForEachWindow([&](uint64_t key, size_t i, size_t len) {
      auto it = top_keys.find(key);
      if (it == top_keys.end() || i < next_free[it->second]) return;
      next_free[it->second] = i + len;
      starts[it->second].push_back(i);
    });
    std::vector<char> claimed(flat_.slice.size(), 0);
    for (size_t c = 0; c < result_.top.size(); ++c) {
      const size_t len = result_.top[c].ops.size();
      for (size_t i : starts[c]) {
        if (!flat_.in_window[i]) continue;
        bool free = true;
        for (size_t k = i; k < i + len && free; ++k) free = !claimed[k];
        if (!free) continue;
        int64_t longest = 0;
        for (size_t k = i; k < i + len; ++k) {
          claimed[k] = 1;
          longest = std::max(longest, t_.slices.dur_ns[flat_.slice[k]]);
        }
        const int64_t saving = (flat_.gap_prefix[i + len] - flat_.gap_prefix[i + 1]) +
                               (flat_.dur_prefix[i + len] - flat_.dur_prefix[i]) - longest;
        result_.window_saving_by_rank[t_.tracks.rank[t_.slices.track[flat_.slice[i]]]] += saving;
      }
    }
  }

  void AddLibraryInternal(uint32_t first, uint32_t second) {
    const SliceTable& s = t_.slices;
    auto key = std::make_pair(s.name[first].raw, s.name[second].raw);
    auto it = library_index_.find(key);
    if (it == library_index_.end()) {
      it = library_index_.emplace(key, result_.library_internal.size()).first;
      result_.library_internal.push_back({s.name[first], s.name[second], 0, 0});
    }
    LibraryInternalSequence& l = result_.library_internal[it->second];
    ++l.occurrences;
    l.total_ns += s.dur_ns[first] + s.dur_ns[second];
  }

  const Trace& t_;
  OpArgReader args_;
  const AnalysisWindow* w_;
  std::optional<CoveredTime> window_;
  // IsLibraryMathKernel / IsLibraryEpilogueKernel of a name, memoised per
  // string id (bit 0: known).
  static constexpr uint8_t kKnown = 1, kMath = 2, kEpilogue = 4, kCompiled = 8;
  uint8_t LibraryClass(StringId name) {
    if (library_class_.empty()) library_class_.assign(t_.strings.size(), 0);
    uint8_t& c = library_class_[name.raw];
    if (c == 0) {
      std::string_view text = t_.Str(name);
      // The kernel classes add the math kernels of other vendors' libraries
      // (ROCm's Tensile "Cijk_*" GEMMs, attention kernels such as attn_fwd)
      // that the name test does not know.
      const KernelClass cls = ClassifyKernel(EventKind::kKernel, text);
      const bool math = IsLibraryMathKernel(text) || cls == KernelClass::kGemm || cls == KernelClass::kConv ||
                        cls == KernelClass::kAttention;
      c = static_cast<uint8_t>(kKnown | (math ? kMath : 0) | (IsLibraryEpilogueKernel(text) ? kEpilogue : 0) |
                               (IsTritonClass(cls) ? kCompiled : 0));
    }
    return c;
  }

  FlatOps flat_;
  FusionResult result_;
  std::vector<char> loader_op_;
  std::vector<int8_t> backward_name_;
  std::map<std::pair<uint32_t, uint32_t>, size_t> library_index_;
  std::vector<uint8_t> library_class_;
};

double FusionRatio(double a, double b) { return b > 0 ? a / b : 0; }

}  // namespace

FusionResult ComputeFusionCandidates(const Trace& trace, const AnalysisWindow* window) {
  FusionResult r = FusionFinder(trace, window).Run();
  std::sort(r.library_internal.begin(), r.library_internal.end(),
            [](const LibraryInternalSequence& a, const LibraryInternalSequence& b) {
              return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.first.raw < b.first.raw;
            });
  return r;
}

bool IsLibraryMathKernel(std::string_view name) {
  for (std::string_view k : {"gemm", "cutlass", "xmma", "cublas", "cudnn", "convolve", "_fprop", "_dgrad", "_wgrad",
                             "implicit_conv", "winograd", "fft2d", "matmul"}) {
    if (ContainsIgnoreCase(name, k)) return true;
  }
  return false;
}

bool IsLibraryEpilogueKernel(std::string_view name) {
  return ContainsIgnoreCase(name, "splitkreduce") || ContainsIgnoreCase(name, "split_k_reduce") ||
         ContainsIgnoreCase(name, "splitk_reduce");
}

void PublishFusionImpact(const FusionResult& r, const AnalysisWindow& window, MetricSet* metrics) {
  if (r.op_time_ns <= 0) {
    metrics->SetUnavailable("fusion_saving_ns", "no kernels or cpu_op slices with duration in the trace");
    return;
  }
  // Each op and gap once, though the reported candidates overlap. Per rank:
  // per step their sum over the steps, per trace their mean (the ranks run
  // side by side over the one window).
  std::map<int32_t, double> saving;
  for (const auto& [rank, ns] : r.window_saving_by_rank) saving[rank] = static_cast<double>(ns);
  metrics->Set("fusion_saving_ns", r.device ? window.PerDeviceBase(saving) : window.PerBase(saving), kFusionSource);
}

bool SequencesOverlap(const std::vector<StringId>& x, const std::vector<StringId>& y) {
  const long nx = static_cast<long>(x.size()), ny = static_cast<long>(y.size());
  const long need = std::min(nx, ny) - 1;
  // x placed at offset `shift` of y; the aligned stretch [lo, hi) of y.
  for (long shift = -(nx - 1); shift <= ny - 1; ++shift) {
    const long lo = std::max(0L, shift), hi = std::min(ny, shift + nx);
    if (hi - lo < std::max(1L, need)) continue;
    bool agree = true;
    for (long k = lo; k < hi && agree; ++k) agree = y[static_cast<size_t>(k)] == x[static_cast<size_t>(k - shift)];
    if (agree) return true;
  }
  return false;
}

std::string DescribeSequence(const Trace& trace, const FusionCandidate& c) {
  std::string out;
  for (size_t i = 0; i < c.ops.size(); ++i) {
    if (i) out += " -> ";
    out += trace.Str(c.ops[i]);
  }
  return out;
}

void PublishFusionCandidates(const Trace& trace, const FusionResult& r, MetricSet* metrics) {
  if (r.op_time_ns <= 0) {
    const char* why = "no kernels or cpu_op slices with duration in the trace";
    metrics->SetUnavailable("fusion_candidate_ratio", why);
    metrics->SetUnavailable("small_op_ratio", why);
    metrics->SetUnavailable("fusion_candidate_occurrences_per_step", why);
    metrics->SetUnavailable("fusion_candidate_boundaries_per_step", why);
    return;
  }
  metrics->Set("fusion_candidate_ratio", FusionRatio(r.covered_ns, r.op_time_ns), kFusionSource);
  metrics->Set("small_op_ratio", FusionRatio(r.short_op_ns, r.op_time_ns), kFusionSource);
  if (trace.steps.size() == 0) {
    metrics->SetUnavailable("fusion_candidate_occurrences_per_step", "no steps in the trace");
    metrics->SetUnavailable("fusion_candidate_boundaries_per_step", "no steps in the trace");
  } else {
    double steps = static_cast<double>(trace.steps.size());
    double occ = r.top.empty() ? 0 : static_cast<double>(r.top[0].occurrences);
    double cut = r.top.empty() ? 0 : static_cast<double>(r.top[0].boundaries_removed);
    metrics->Set("fusion_candidate_occurrences_per_step", occ / steps, kFusionSource);
    metrics->Set("fusion_candidate_boundaries_per_step", cut / steps, kFusionSource);
  }
  for (const FusionCandidate& c : r.top) {
    std::string line = DescribeSequence(trace, c) + ": " + std::to_string(c.occurrences) + " occurrences, " +
                       FormatDurationNs(static_cast<double>(c.total_ns)) + " op time; fusing removes " +
                       std::to_string(c.boundaries_removed) + (r.device ? " launches" : " op dispatches") + ", " +
                       FormatDurationNs(static_cast<double>(c.gap_ns)) + " of gaps between them";
    line += c.has_shapes ? ", ~" + FormatBytes(c.intermediate_bytes) + " of intermediate memory traffic (from shapes)"
                         : ", intermediate traffic unknown (no shapes)";
    if (c.window_occurrences > 0) {
      line += "; in the steady state saves ~" + FormatDurationNs(static_cast<double>(c.window_saving_ns)) + " over " +
              std::to_string(c.window_occurrences) + " occurrences (gaps + op time beyond the longest op)";
    }
    metrics->AddEvidence("fusion_missing", line);
  }
  if (r.compiled_kernels > 0) {
    metrics->AddEvidence("fusion_library_internal",
                         std::to_string(r.compiled_kernels) + " kernels (" +
                             FormatDurationNs(static_cast<double>(r.compiled_ns)) +
                             ") a compiler generated by fusing ops (Triton: torch.compile / Inductor) are left out of "
                             "the candidates: their boundaries are the compiler's");
  }
  for (const LibraryInternalSequence& l : r.library_internal) {
    metrics->AddEvidence("fusion_library_internal",
                         std::string(trace.Str(l.first)) + " -> " + std::string(trace.Str(l.second)) + ": x" +
                             std::to_string(l.occurrences) + ", " + FormatDurationNs(static_cast<double>(l.total_ns)) +
                             "; library-internal (a GEMM and its own split-K reduction), not a fusion candidate");
  }
}

}  // namespace aiprof
