#include "src/analysis/page_faults/page_faults.h"
#include "src/analysis/page_faults/fault_slices.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "src/analysis/common/steps.h"
#include "src/analysis/metrics/metric_set.h"
#include "src/analysis/window/analysis_window.h"
#include "src/model/page_fault_records.h"

namespace aiprof {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

const std::string* Meta(const Trace& t, const char* key) {
  auto it = t.metadata.find(key);
  return it == t.metadata.end() ? nullptr : &it->second;
}

bool ParseUnsigned(const std::string& s, uint64_t* out) {
  if (s.empty() || s[0] == '-') return false;  // strtoull would wrap it
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != '\0') return false;
  *out = v;
  return true;
}

bool IsStepMarker(std::string_view name) { return name.rfind("ProfilerStep", 0) == 0; }

struct Fault {
  int64_t ts;
  int64_t pid, tid;
  uint32_t outer = kNone, inner = kNone;  // slices
};

// The fault records (instants of category kPageFaultCategory), in the
// instants table's order.
std::vector<Fault> ReadFaults(const Trace& t) {
  std::vector<Fault> faults;
  if (std::optional<StringId> cat = t.strings.Find(kPageFaultCategory)) {
    for (size_t i = 0; i < t.instants.size(); ++i) {
      if (t.instants.category[i] != *cat) continue;
      const TrackId track = t.instants.track[i];
      faults.push_back(Fault{t.instants.ts_ns[i], t.tracks.pid[track], t.tracks.tid[track]});
    }
  }
  return faults;
}

uint64_t ThreadKey(int64_t pid, int64_t tid) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | static_cast<uint32_t>(tid);
}

// Walks each thread track's slices in time order beside the faults of its
// thread (`by_thread`: indices into `faults`, each list in time order) and
// calls visit(fault, open): `open` the slices of that track begun before the
// fault, outermost first, those that ended popped from the top (a slice
// below the top may still have ended: visit checks). A thread with several
// tracks has its faults visited once per track.
template <typename Visit>
void SweepFaults(const Trace& t, std::vector<Fault>& faults,
                 const std::unordered_map<uint64_t, std::vector<size_t>>& by_thread, Visit visit) {
  const SliceTable& sl = t.slices;
  std::vector<uint32_t> open;
  auto pop_ended = [&](int64_t ts) {
    while (!open.empty() && sl.ts_ns[open.back()] + sl.dur_ns[open.back()] <= ts) open.pop_back();
  };
  for (size_t i = 0; i < sl.size() && !by_thread.empty();) {
    const TrackId track = sl.track[i];
    size_t end = i;
    while (end < sl.size() && sl.track[end] == track) ++end;
    auto it = t.tracks.kind[track] == TrackKind::kThread
                  ? by_thread.find(ThreadKey(t.tracks.pid[track], t.tracks.tid[track]))
                  : by_thread.end();
    if (it != by_thread.end()) {
      const std::vector<size_t>& fs = it->second;
      size_t j = 0;
      open.clear();
      for (size_t s = i; s < end; ++s) {
        for (; j < fs.size() && faults[fs[j]].ts < sl.ts_ns[s]; ++j) {
          pop_ended(faults[fs[j]].ts);
          visit(faults[fs[j]], open);
        }
        pop_ended(sl.ts_ns[s]);
        open.push_back(static_cast<uint32_t>(s));
      }
      for (; j < fs.size(); ++j) {
        pop_ended(faults[fs[j]].ts);
        visit(faults[fs[j]], open);
      }
    }
    i = end;
  }
}

std::string Ms(double ns) {
  char b[64];
  std::snprintf(b, sizeof(b), "%.2f ms", ns / 1e6);
  return b;
}

std::string Us(double ns) {
  char b[64];
  std::snprintf(b, sizeof(b), "%.1f us", ns / 1e3);
  return b;
}

std::string Pct(double r) {
  char b[64];
  std::snprintf(b, sizeof(b), "%.1f%%", 100 * r);
  return b;
}

}  // namespace

bool HasPageFaultData(const Trace& t) {
  if (t.metadata.count(kPageFaultsMeta)) return true;
  std::optional<StringId> cat = t.strings.Find(kPageFaultCategory);
  if (!cat) return false;
  for (size_t i = 0; i < t.instants.size(); ++i) {
    if (t.instants.category[i] == *cat) return true;
  }
  return false;
}

namespace {

// The value of NAME in "NAME=value; NAME=value" (capture.malloc.settings).
std::string Setting(const std::string& settings, std::string_view name) {
  size_t b = 0;
  while (b < settings.size()) {
    size_t e = settings.find("; ", b);
    if (e == std::string::npos) e = settings.size();
    const std::string_view kv = std::string_view(settings).substr(b, e - b);
    if (kv.size() > name.size() && kv.substr(0, name.size()) == name && kv[name.size()] == '=') {
      return std::string(kv.substr(name.size() + 1));
    }
    b = e + 2;
  }
  return "";
}

}  // namespace

bool GlibcThresholdsFixed(const std::string& settings) {
  const std::string tun = Setting(settings, "GLIBC_TUNABLES");
  return (tun.find("mmap_threshold") != std::string::npos && tun.find("trim_threshold") != std::string::npos) ||
         (!Setting(settings, "MALLOC_MMAP_THRESHOLD_").empty() && !Setting(settings, "MALLOC_TRIM_THRESHOLD_").empty());
}

std::string MallocNote(const std::string& malloc, const std::string& settings) {
  if (malloc == "jemalloc") {
    const std::string conf = Setting(settings, "MALLOC_CONF");
    if (conf.find("dirty_decay_ms:-1") != std::string::npos) {
      return "jemalloc with dirty_decay_ms:-1: freed memory stays mapped and is reused";
    }
    return "jemalloc with decay on (MALLOC_CONF " + (conf.empty() ? std::string("unset") : "=" + conf) +
           "): it returns freed memory to the kernel, blocks of 8 MiB or more at once (its oversize arena), the rest "
           "on a decay clock (dirty_decay_ms, 10 s by default), so a large buffer freed each step faults again each "
           "step; MALLOC_CONF with dirty_decay_ms:-1,muzzy_decay_ms:-1 keeps it";
  }
  if (malloc == "tcmalloc") {
    return "tcmalloc: keeps freed memory and returns it to the kernel gradually (TCMALLOC_RELEASE_RATE)";
  }
  if (malloc == "mimalloc") return "mimalloc: returns freed memory to the kernel after a delay (MIMALLOC_PURGE_DELAY)";
  if (malloc != "glibc") return "";
  const std::string tun = Setting(settings, "GLIBC_TUNABLES");
  if (GlibcThresholdsFixed(settings)) {
    return "glibc malloc with fixed mmap and trim thresholds: blocks under the mmap threshold come from a heap that is "
           "not trimmed; the heap still grows onto fresh pages when other allocations split a freed block";
  }
  return "glibc malloc" + std::string(tun.empty() ? " with its defaults" : " (GLIBC_TUNABLES=" + tun + ")") +
         ": a block above its dynamic mmap threshold (128 KiB at start, raised up to 32 MiB by the blocks freed) is "
         "mapped afresh and first-touched each time, and the heap's free top is trimmed back to the kernel";
}

bool MallocKeepsFreed(const std::string& malloc, const std::string& settings) {
  if (malloc == "tcmalloc") return true;
  return malloc == "jemalloc" && Setting(settings, "MALLOC_CONF").find("dirty_decay_ms:-1") != std::string::npos;
}

PageFaultMeta ReadPageFaultMeta(const Trace& t) {
  PageFaultMeta m;
  if (const std::string* v = Meta(t, kPageFaultPeriodMeta)) {
    uint64_t p = 0;
    m.period_known = ParseUnsigned(*v, &p) && p > 0;
    if (m.period_known) m.period = p;
  }
  if (const std::string* v = Meta(t, kPageFaultCostMeta)) {
    char* end = nullptr;
    const double c = std::strtod(v->c_str(), &end);
    m.cost_known = end != v->c_str() && *end == '\0' && std::isfinite(c) && c > 0;
    if (m.cost_known) m.cost_ns = c;
  }
  return m;
}

PageFaultsResult ComputePageFaults(const Trace& t, const AnalysisWindow& w) {
  PageFaultsResult r;
  if (const std::string* v = Meta(t, kMallocMeta)) r.malloc = *v;
  if (const std::string* v = Meta(t, kMallocLibraryMeta)) r.malloc_library = *v;
  if (const std::string* v = Meta(t, kMallocSettingsMeta)) r.malloc_settings = *v;
  r.malloc_note = MallocNote(r.malloc, r.malloc_settings);
  if (const std::string* v = Meta(t, kPageFaultsMeta)) r.recording = *v;
  const PageFaultMeta meta = ReadPageFaultMeta(t);
  r.period = meta.period;
  r.period_known = meta.period_known;
  if (const std::string* v = Meta(t, kPageFaultLostMeta)) ParseUnsigned(*v, &r.lost_records);
  std::vector<Fault> faults = ReadFaults(t);
  r.records = faults.size();
  r.total_faults = r.records * r.period;
  r.has_data = r.records > 0 || r.recording == "on";
  if (!r.has_data) return r;  // recording off or blocked: PublishPageFaults says so
  r.cost_known = meta.cost_known;
  r.cost_ns = meta.cost_ns;
  if (const std::string* v = Meta(t, kPageFaultCostMethodMeta)) r.cost_method = *v;
  if (!r.cost_known && r.cost_method.empty()) {
    r.cost_method = "cost unknown: the trace has no measured cost of a fault (capture.page_fault_cost_ns)";
  } else if (!r.cost_known) {
    r.cost_method = "cost unknown: " + r.cost_method;
  }
  std::stable_sort(faults.begin(), faults.end(), [](const Fault& a, const Fault& b) { return a.ts < b.ts; });

  // Steps and the processes they belong to.
  const StepList list = FindSteps(t);
  std::set<size_t> warm(w.warmup.begin(), w.warmup.end());
  std::set<int64_t> step_pids;
  bool any_pid = false;
  struct StepRef {
    size_t index;
    int64_t pid;  // INT64_MIN: any
  };
  std::vector<StepRef> with_start;
  for (size_t k = 0; k < list.steps.size(); ++k) {
    const StepSpan& s = list.steps[k];
    int64_t pid = INT64_MIN;
    if (s.row != kNoSlice && s.row < t.steps.size()) {
      pid = t.tracks.pid[t.steps.track[s.row]];
      step_pids.insert(pid);
    } else {
      any_pid = true;
    }
    if (s.has_start()) with_start.push_back({k, pid});
  }
  if (step_pids.empty()) any_pid = true;
  std::sort(with_start.begin(), with_start.end(), [&](const StepRef& a, const StepRef& b) {
    return list.steps[a.index].start_ns < list.steps[b.index].start_ns;
  });
  auto lower = [&](int64_t ts) {
    return std::lower_bound(faults.begin(), faults.end(), ts, [](const Fault& f, int64_t v) { return f.ts < v; });
  };
  for (const StepRef& ref : with_start) {
    const StepSpan& s = list.steps[ref.index];
    PageFaultStep out;
    out.number = s.number;
    out.start_ns = s.start_ns;
    out.dur_ns = s.dur_ns;
    out.steady = !warm.count(ref.index);
    for (auto it = lower(s.start_ns); it != faults.end() && it->ts < s.start_ns + s.dur_ns; ++it) {
      if (ref.pid == INT64_MIN || it->pid == ref.pid) out.faults += r.period;
    }
    r.steps.push_back(out);
  }

  // Faults counted: in the window, of the steps' processes.
  std::vector<size_t> counted;
  for (const auto& [b, e] : w.intervals) {
    for (auto it = lower(b); it != faults.end() && it->ts < e; ++it) {
      if (any_pid || step_pids.count(it->pid)) counted.push_back(static_cast<size_t>(it - faults.begin()));
    }
  }
  r.base = w.base;
  r.steady_steps = w.steps;
  r.base_ns = w.base_ns;
  r.window_faults = counted.size() * r.period;
  r.faults_per_base = w.PerBase(static_cast<double>(r.window_faults));
  if (r.cost_known) {
    r.fault_ns_per_base = r.faults_per_base * r.cost_ns;
    r.share = r.base_ns > 0 ? r.fault_ns_per_base / r.base_ns : 0;
  }

  // The slices that enclose each counted fault on its thread.
  std::unordered_map<uint64_t, std::vector<size_t>> by_thread;  // in time order
  for (size_t i : counted) by_thread[ThreadKey(faults[i].pid, faults[i].tid)].push_back(i);
  const SliceTable& sl = t.slices;
  SweepFaults(t, faults, by_thread, [&](Fault& f, const std::vector<uint32_t>& open) {
    uint32_t outer = kNone, inner = kNone;
    for (uint32_t s : open) {
      if (sl.ts_ns[s] + sl.dur_ns[s] <= f.ts) continue;
      const std::string_view name = t.Str(sl.name[s]);
      if (name.empty() || IsStepMarker(name)) continue;
      if (outer == kNone) outer = s;
      inner = s;
    }
    if (outer == kNone) return;
    // Across tracks of one thread: the earliest-starting outer, the
    // latest-starting inner.
    if (f.outer == kNone || sl.ts_ns[outer] < sl.ts_ns[f.outer] ||
        (sl.ts_ns[outer] == sl.ts_ns[f.outer] && sl.dur_ns[outer] > sl.dur_ns[f.outer])) {
      f.outer = outer;
    }
    if (f.inner == kNone || sl.ts_ns[inner] > sl.ts_ns[f.inner] ||
        (sl.ts_ns[inner] == sl.ts_ns[f.inner] && sl.dur_ns[inner] < sl.dur_ns[f.inner])) {
      f.inner = inner;
    }
  });
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> by_op;
  for (size_t k : counted) {
    const Fault& f = faults[k];
    by_op[{f.outer == kNone ? kNone : sl.name[f.outer].raw, f.inner == kNone ? kNone : sl.name[f.inner].raw}] += r.period;
  }
  r.ops_total = by_op.size();
  for (const auto& [names, n] : by_op) {
    PageFaultOp op;
    if (names.first != kNone) op.outer = std::string(t.strings.Get(StringId{names.first}));
    if (names.second != kNone) op.inner = std::string(t.strings.Get(StringId{names.second}));
    op.faults = n;
    r.ops.push_back(std::move(op));
  }
  std::sort(r.ops.begin(), r.ops.end(), [](const PageFaultOp& a, const PageFaultOp& b) {
    return a.faults != b.faults ? a.faults > b.faults : std::tie(a.outer, a.inner) < std::tie(b.outer, b.inner);
  });
  if (r.ops.size() > kPageFaultOpsReported) r.ops.resize(kPageFaultOpsReported);
  return r;
}

void PublishPageFaults(const PageFaultsResult& r, MetricSet* m) {
  // Which malloc, for the allocator suggestions' `when` (rules/page_faults.yaml).
  if (r.malloc.empty()) {
    for (const char* name : {"malloc_glibc", "malloc_glibc_fixed", "malloc_keeps_freed"}) {
      m->SetUnavailable(name, "the trace does not say which malloc its process used (aiprof trace records capture.malloc)");
    }
  } else {
    m->Set("malloc_glibc", r.malloc == "glibc" ? 1 : 0, "page_faults");
    m->Set("malloc_glibc_fixed", r.malloc == "glibc" && GlibcThresholdsFixed(r.malloc_settings) ? 1 : 0, "page_faults");
    m->Set("malloc_keeps_freed", MallocKeepsFreed(r.malloc, r.malloc_settings) ? 1 : 0, "page_faults");
  }
  if (!r.has_data) {
    const std::string why = r.recording == "blocked" ? "page faults were not recorded: perf_event_open was refused"
                            : r.recording == "off"   ? "page faults were not recorded (aiprof trace --no-page-faults)"
                                                     : "the trace holds no page-fault records (aiprof trace records them)";
    for (const char* name : {"page_faults_per_step", "page_fault_ns", "page_fault_ratio"}) m->SetUnavailable(name, why);
    return;
  }
  m->Set("page_faults_per_step", r.faults_per_base, "page_faults");
  if (r.cost_known) {
    // An estimate: the count is measured, the time is count x the cost of
    // one first-touch fault measured at capture start.
    m->Set("page_fault_ns", r.fault_ns_per_base, "page_faults", /*measured=*/false);
    if (r.base_ns > 0) {
      m->Set("page_fault_ratio", r.share, "page_faults", /*measured=*/false);
    } else {
      m->SetUnavailable("page_fault_ratio", "no steady-state time to divide by");
    }
  } else {
    m->SetUnavailable("page_fault_ns", r.cost_method);
    m->SetUnavailable("page_fault_ratio", r.cost_method);
  }
  char line[512];
  std::snprintf(line, sizeof(line), "%.0f minor page faults %s (%llu in the window, %llu in the trace)",
                r.faults_per_base, r.base.c_str(), static_cast<unsigned long long>(r.window_faults),
                static_cast<unsigned long long>(r.total_faults));
  m->AddEvidence("page_faults", line);
  if (r.cost_known) {
    m->AddEvidence("page_faults", "estimated fault time " + Ms(r.fault_ns_per_base) + " " + r.base + " (" +
                                      Pct(r.share) + " of it), at " + Us(r.cost_ns) + " per fault measured at capture start");
  } else {
    m->AddEvidence("page_faults", r.cost_method);
  }
  // Before the ops: a finding shows its evidence's first lines.
  if (!r.malloc_note.empty()) m->AddEvidence("page_faults", "allocator: " + r.malloc_note);
  for (size_t k = 0; k < r.ops.size() && k < 3; ++k) {
    const PageFaultOp& op = r.ops[k];
    std::snprintf(line, sizeof(line), "%.0f faults %s in %s%s%s", r.steady_steps > 0 ? static_cast<double>(op.faults) / static_cast<double>(r.steady_steps) : static_cast<double>(op.faults),
                  r.base.c_str(), op.outer.empty() ? "(no op)" : op.outer.c_str(),
                  op.inner.empty() || op.inner == op.outer ? "" : " > ", op.inner == op.outer ? "" : op.inner.c_str());
    m->AddEvidence("page_faults", line);
  }
  if (r.lost_records > 0) {
    m->AddEvidence("page_faults", std::to_string(r.lost_records) + " page-fault records were lost: the counts are low");
  }
}

std::string PageFaultWhatIfNote(const PageFaultsResult& r) {
  if (!r.has_data) return "";
  char b[512];
  const char* per = r.steady_steps > 0 ? "per step" : "per trace";
  const char* of = r.steady_steps > 0 ? "of the step" : "of the steady time";
  if (r.cost_known) {
    std::snprintf(b, sizeof(b), "%.0f page faults %s, ~%.2f ms (%.1f%% %s)", r.faults_per_base, per,
                  r.fault_ns_per_base / 1e6, 100 * r.share, of);
  } else {
    std::snprintf(b, sizeof(b), "%.0f page faults %s (time per fault unknown: the trace has no measured cost)",
                  r.faults_per_base, per);
  }
  return std::string(b) +
         "; the replay keeps them in the ops that took them; a change of allocation can move or remove them";
}

}  // namespace aiprof

namespace aiprof {

FaultsBySlice ComputeFaultsBySlice(const Trace& t) {
  FaultsBySlice out;
  const PageFaultMeta meta = ReadPageFaultMeta(t);
  out.period = meta.period;
  out.cost_known = meta.cost_known;
  out.cost_ns = meta.cost_ns;
  std::vector<Fault> faults = ReadFaults(t);
  out.has_records = !faults.empty();
  if (!out.has_records) return out;
  std::stable_sort(faults.begin(), faults.end(), [](const Fault& a, const Fault& b) { return a.ts < b.ts; });
  std::unordered_map<uint64_t, std::vector<size_t>> by_thread;
  for (size_t i = 0; i < faults.size(); ++i) by_thread[ThreadKey(faults[i].pid, faults[i].tid)].push_back(i);
  const SliceTable& sl = t.slices;
  SweepFaults(t, faults, by_thread, [&](Fault& f, const std::vector<uint32_t>& open) {
    for (size_t k = open.size(); k-- > 0;) {
      const uint32_t s = open[k];
      if (sl.ts_ns[s] + sl.dur_ns[s] <= f.ts || IsStepMarker(t.Str(sl.name[s]))) continue;
      if (f.inner == kNone || sl.ts_ns[s] > sl.ts_ns[f.inner] ||
          (sl.ts_ns[s] == sl.ts_ns[f.inner] && sl.dur_ns[s] < sl.dur_ns[f.inner])) {
        f.inner = s;
      }
      return;
    }
  });
  out.faults.assign(sl.size(), 0);
  for (const Fault& f : faults) {
    if (f.inner == kNone) {
      out.outside_slices += out.period;
    } else {
      out.faults[f.inner] += static_cast<uint32_t>(out.period);
    }
  }
  return out;
}

}  // namespace aiprof
