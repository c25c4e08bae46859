#include "src/analysis/whatif/whatif.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <unordered_map>

#include "src/analysis/common/intervals.h"
#include "src/analysis/common/steps.h"
#include "src/analysis/common/text_format.h"
#include "src/analysis/launches/launch_stats.h"
#include "src/analysis/page_faults/fault_slices.h"
#include "src/analysis/roofline/ops_to_roofline.h"
#include "src/analysis/validation/statistics.h"
#include "src/analysis/whatif/graph_edits.h"
#include "src/analysis/window/analysis_window.h"
#include "src/model/graph_capture_tracks.h"
#include "src/model/page_fault_records.h"

namespace aiprof {
namespace {

class Replay {
 public:
  Replay(const Trace& trace, const DependencyGraph& g, const std::vector<StepPath>& steps, const Scenario& sc,
         const AnalysisWindow* window, WhatIfResult* out)
      : s_(trace.slices),
        trace_(trace),
        g_(g),
        steps_(steps),
        out_(out),
        edits_(BuildGraphEdits(trace, g, sc)),
        startup_(window != nullptr ? &window->startup_work
                                   : &own_startup_.emplace(StartupWork::CaptureWindowsOnly(trace))) {
    const size_t n = s_.size();
    start_.assign(n, 0);
    end_.assign(n, 0);
    done_start_.assign(n, false);
    done_end_.assign(n, false);
    busy_.assign(n, false);
    factor_.assign(n, 1.0f);
    capture_.resize(trace.tracks.size());
    for (uint32_t tr = 0; tr < trace.tracks.size(); ++tr) capture_[tr] = IsGraphCaptureTrack(trace, tr);
    for (const WhatIfClause& c : sc.clauses) {
      if (c.kind == WhatIfClause::Kind::kOverlapDataLoading) {
        remove_[static_cast<size_t>(GapCause::kDataLoading)] = true;
      }
      if (c.kind == WhatIfClause::Kind::kRemoveComm) remove_comm_ = true;
      if (c.kind == WhatIfClause::Kind::kGraphLaunch) {
        graph_ = true;
        remove_[static_cast<size_t>(GapCause::kHostBound)] = true;
        remove_[static_cast<size_t>(GapCause::kOther)] = true;
      }
      if (c.kind != WhatIfClause::Kind::kRemoveIdle) continue;
      remove_[static_cast<size_t>(c.cause)] = true;
    }
    Factors(sc);
  }

  void Run() {
    struct Event {
      int64_t t;
      uint8_t phase;   // 0 end, 1 start: ends first at equal times
      uint16_t order;  // ends: deepest first; starts: shallowest first
      uint32_t slice;
    };
    std::vector<Event> ev;
    ev.reserve(2 * s_.size());
    for (uint32_t i = 0; i < s_.size(); ++i) {
      if (!Active(i)) continue;
      const uint16_t d = s_.depth[i];
      ev.push_back({s_.ts_ns[i], 1, d, i});
      ev.push_back({End(i), 0, static_cast<uint16_t>(UINT16_MAX - d), i});
    }
    std::sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) {
      return std::tie(a.t, a.phase, a.order, a.slice) < std::tie(b.t, b.phase, b.order, b.slice);
    });
    for (const Event& e : ev) e.phase == 1 ? StartOf(e.slice) : EndOf(e.slice);
  }

  int64_t NewStart(uint32_t i) const { return done_start_[i] ? start_[i] : s_.ts_ns[i]; }
  int64_t NewEnd(uint32_t i) const { return done_end_[i] ? end_[i] : End(i); }
  uint64_t fallbacks() const { return fallbacks_; }

  // Every slice's new times (measured where not replayed), moved out.
  void TakeTimes(std::vector<int64_t>* start, std::vector<int64_t>* end) {
    for (uint32_t i = 0; i < s_.size(); ++i) {
      if (!done_start_[i]) start_[i] = s_.ts_ns[i];
      if (!done_end_[i]) end_[i] = End(i);
    }
    *start = std::move(start_);
    *end = std::move(end_);
  }

 private:
  int64_t End(uint32_t i) const { return s_.ts_ns[i] + s_.dur_ns[i]; }
  // Host threads and device streams; a graph-capture merge's copies of the
  // captured ops are no host work (BuildDependencyGraph gives them no edge).
  bool Active(uint32_t i) const {
    return g_.on_device[i] || (trace_.tracks.kind[s_.track[i]] == TrackKind::kThread && !capture_[s_.track[i]]);
  }
  // Held to ±kMaxScaledNs (2^61 ns, the model's time range): a factor of
  // 1e6 on a long span would pass int64 (found by review: the overflow
  // predicted a shorter step).
  int64_t Scaled(int64_t ns, uint32_t i) const {
    constexpr double kMaxScaledNs = static_cast<double>(int64_t{1} << 61);
    const double v = std::clamp(static_cast<double>(ns) * factor_[i], -kMaxScaledNs, kMaxScaledNs);
    return static_cast<int64_t>(std::llround(v));
  }
  bool Removed(GapCause c) const { return remove_[static_cast<size_t>(c)]; }

  // Each slice's factor: its own clause, else its parent's (host) or its
  // launching call's (device). Host slices first: launches precede kernels.
  void Factors(const Scenario& sc) {
    // (int32: an int8 index capped at 127 made clause 128 and on act as
    // clause 127, found by review.)
    std::vector<int32_t> name_clause(trace_.strings.size(), -2);  // -2 unknown, -1 none
    auto clause_of = [&](uint32_t i) -> int {
      int32_t& c = name_clause[s_.name[i].raw];
      if (c == -2) {
        c = -1;
        std::string_view name = trace_.Str(s_.name[i]);
        for (size_t k = 0; k < sc.clauses.size(); ++k) {
          const WhatIfClause& cl = sc.clauses[k];
          if ((cl.kind == WhatIfClause::Kind::kRemove || cl.kind == WhatIfClause::Kind::kScale ||
               cl.kind == WhatIfClause::Kind::kEvery) &&
              name.find(cl.pattern) != std::string_view::npos) {
            c = static_cast<int32_t>(k);
          }
        }
      }
      return c;
    };
    std::vector<uint64_t> matched(sc.clauses.size(), 0);  // slices each pattern clause took
    for (int pass = 0; pass < 2; ++pass) {
      for (uint32_t i = 0; i < s_.size(); ++i) {
        if (g_.on_device[i] != (pass == 1) || !Active(i)) continue;
        const int c = clause_of(i);
        float f = 1.0f;
        if (c >= 0) {
          ++matched[static_cast<size_t>(c)];
          const WhatIfClause& cl = sc.clauses[static_cast<size_t>(c)];
          f = cl.kind == WhatIfClause::Kind::kEvery ? (KeptOnItsStep(i, cl.every) ? 1.0f : 0.0f)
                                                    : static_cast<float>(cl.factor);
        } else if (pass == 0 && g_.parent[i] != kNoSlice) {
          f = factor_[g_.parent[i]];
        } else if (pass == 1 && g_.launch[i] != kNoSlice) {
          f = factor_[g_.launch[i]];
        }
        if (Removed(GapCause::kDataLoading) && g_.cls[i] == PathClass::kIdleDataLoading) f = 0.0f;
        if (remove_comm_ && g_.on_device[i] && g_.cls[i] == PathClass::kCollective) f = 0.0f;
        factor_[i] = f;
      }
    }
    // A captured graph: the host no longer dispatches (device work keeps
    // the factor its launch had before).
    for (uint32_t i = 0; graph_ && i < s_.size(); ++i) {
      if (!g_.on_device[i] && (g_.cls[i] == PathClass::kHostOp || g_.cls[i] == PathClass::kRuntime)) factor_[i] = 0.0f;
    }
    // fuse, overlap-comm, device (graph_edits.h): multipliers on top.
    for (uint32_t i = 0; i < s_.size() && !edits_.factor.empty(); ++i) factor_[i] *= edits_.factor[i];
    std::vector<std::string> fault_notes;
    for (const WhatIfClause& c : sc.clauses) {
      if (c.kind == WhatIfClause::Kind::kRemovePageFaults) {
        RemovePageFaults(&fault_notes);
        break;
      }
    }
    for (uint32_t i = 0; i < s_.size(); ++i) out_->slices_changed += factor_[i] != 1.0f ? 1 : 0;
    out_->notes = edits_.notes;
    // A pattern that names nothing (a typo, quotes, another framework's op
    // names) changes nothing: said per clause, or a typo reads as "this fix
    // gains nothing" (the predict trial's D3).
    for (size_t k = 0; k < sc.clauses.size(); ++k) {
      const WhatIfClause& cl = sc.clauses[k];
      const bool by_pattern = cl.kind == WhatIfClause::Kind::kRemove || cl.kind == WhatIfClause::Kind::kScale ||
                              cl.kind == WhatIfClause::Kind::kEvery;
      if (!by_pattern || matched[k] > 0) continue;
      out_->notes.push_back("'" + cl.pattern + "' (clause " + std::to_string(k + 1) +
                            ") is in no slice's name that a later clause does not take: that clause changes nothing "
                            "(patterns are case-sensitive substrings; quotes are part of the pattern)");
    }
    // Which steps an `every N` clause kept its work on (EveryKeep), said
    // per clause: a rule that picks no step, or one the reader did not
    // expect, is otherwise invisible in the figures.
    for (size_t k = 0; k < sc.clauses.size(); ++k) {
      const WhatIfClause& cl = sc.clauses[k];
      if (cl.kind != WhatIfClause::Kind::kEvery || matched[k] == 0) continue;
      const std::string& note = EveryKeep(cl.every).note;
      if (!note.empty())
        out_->notes.push_back("'" + cl.pattern + "' every " + std::to_string(cl.every) + " (clause " +
                              std::to_string(k + 1) + "): " + note);
    }
    for (std::string& n : fault_notes) out_->notes.push_back(std::move(n));
    // What the replay cannot see on a CPU trace without fault records: the
    // largest source of error on the CPU pairs (docs/whatif.md).
    if (out_->slices_changed > 0 && fault_notes.empty() && trace_.metadata.find(kPageFaultsMeta) == trace_.metadata.end() &&
        std::find(g_.on_device.begin(), g_.on_device.end(), true) == g_.on_device.end()) {
      out_->notes.push_back(
          "a CPU trace without page-fault records: first-touch faults that the change moves (memory the allocator "
          "returns to the kernel between rarer occurrences, or buffers freed and mapped again) are not modelled; on "
          "this project's CPU pairs they were the largest source of error (docs/whatif.md); aiprof trace records them");
    }
  }

  // remove-page-faults: each host slice's self time (its duration minus its
  // children's) loses the time of the faults charged to it (the innermost
  // slice enclosing each fault, FaultsBySlice), at most all of it; a
  // multiplier on top of the other clauses' factors, like graph edits.
  // Faults outside every slice are kept (the replay keeps thread gaps).
  void RemovePageFaults(std::vector<std::string>* notes) {
    const FaultsBySlice f = ComputeFaultsBySlice(trace_);
    if (!f.has_records) {
      notes->push_back("remove-page-faults: the trace has no page-fault records (aiprof trace records them): nothing changed");
      return;
    }
    if (!f.cost_known) {
      notes->push_back("remove-page-faults: cost unknown (the trace has no measured cost of a fault, "
                       "capture.page_fault_cost_ns): nothing changed");
      return;
    }
    std::vector<int64_t> children(s_.size(), 0);
    for (uint32_t i = 0; i < s_.size(); ++i) {
      if (!g_.on_device[i] && g_.parent[i] != kNoSlice) children[g_.parent[i]] += s_.dur_ns[i];
    }
    uint64_t faults = 0, slices = 0, kept = f.outside_slices;
    double removed_ns = 0;
    for (uint32_t i = 0; i < s_.size(); ++i) {
      if (f.faults[i] == 0) continue;
      const int64_t self = s_.dur_ns[i] - children[i];
      if (g_.on_device[i] || !Active(i) || self <= 0) {
        kept += f.faults[i];
        continue;
      }
      const double ns = std::min(static_cast<double>(self), static_cast<double>(f.faults[i]) * f.cost_ns);
      factor_[i] *= static_cast<float>(1.0 - ns / static_cast<double>(self));
      removed_ns += ns;
      faults += f.faults[i];
      ++slices;
    }
    char b[400];
    std::snprintf(b, sizeof(b),
                  "remove-page-faults: %llu faults in the self time of %llu slices taken off (%.2f ms in the whole "
                  "trace, at %.1f us a fault, the cost measured at capture); %llu faults outside any slice kept",
                  static_cast<unsigned long long>(faults), static_cast<unsigned long long>(slices), removed_ns / 1e6,
                  f.cost_ns / 1e3, static_cast<unsigned long long>(kept));
    notes->push_back(b);
  }
  uint32_t FusedAfter(uint32_t i) const { return edits_.after.empty() ? kNoSlice : edits_.after[i]; }

  // `every N`: whether slice i's step is one the work stays on (EveryKeep).
  // Work outside every step stays.
  bool KeptOnItsStep(uint32_t i, int64_t n) {
    SortStepsOnce();
    const int32_t rank = trace_.tracks.rank[s_.track[i]];
    const int64_t t = s_.ts_ns[i];
    auto it = std::upper_bound(by_rank_start_.begin(), by_rank_start_.end(), std::make_pair(rank, t),
                               [&](const std::pair<int32_t, int64_t>& key, size_t k) {
                                 return std::tie(key.first, key.second) < std::tie(steps_[k].rank, steps_[k].start_ns);
                               });
    if (it == by_rank_start_.begin()) return true;
    const StepPath& st = steps_[*(it - 1)];
    if (st.rank != rank || t >= st.start_ns + std::max(st.step_dur_ns, st.length_ns())) return true;
    return EveryKeep(n).keep[*(it - 1)] != 0;
  }
  void SortStepsOnce() {
    if (!by_rank_start_.empty() || steps_.empty()) return;
    for (size_t k = 0; k < steps_.size(); ++k) by_rank_start_.push_back(k);
    std::sort(by_rank_start_.begin(), by_rank_start_.end(), [&](size_t a, size_t b) {
      return std::tie(steps_[a].rank, steps_[a].start_ns) < std::tie(steps_[b].rank, steps_[b].start_ns);
    });
  }

  // The steps an `every N` clause keeps its work on, per rank: where the
  // rank's steps are numbered consecutively (in start order, each one more
  // than the last), those numbered a multiple of N (the program's own `step
  // % N == 0`); otherwise (numbers skipped, as in a profile that records
  // every other step, repeated or unknown) by position: the rank's 1st,
  // (N+1)-th, (2N+1)-th ... steady step (all its steps when none is steady),
  // its other steps keeping the work (they are outside the statistics). Found
  // by audit4: checkpoint_every_step's before run has steps #5, #7 ... #27,
  // none a multiple of 10, and `every 10` took the work off every step.
  struct EveryRule {
    std::vector<char> keep;  // per steps_ index
    std::string note;        // which steady steps keep it, and by which rule
  };
  const EveryRule& EveryKeep(int64_t n) {
    auto [found, fresh] = every_keep_.try_emplace(n);
    EveryRule& rule = found->second;
    if (!fresh) return rule;
    SortStepsOnce();
    rule.keep.assign(steps_.size(), 1);
    std::vector<std::string> per_rank;
    bool by_position = false, by_number = false;
    for (size_t a = 0; a < by_rank_start_.size();) {
      const int32_t rank = steps_[by_rank_start_[a]].rank;
      size_t b = a;
      bool consecutive = true, any_steady = false;
      for (; b < by_rank_start_.size() && steps_[by_rank_start_[b]].rank == rank; ++b) {
        const StepPath& st = steps_[by_rank_start_[b]];
        any_steady |= st.steady;
        if (st.number < 0 || (b > a && st.number != steps_[by_rank_start_[b - 1]].number + 1)) consecutive = false;
      }
      (consecutive ? by_number : by_position) = true;
      int64_t position = 0;
      size_t steady = 0, kept = 0;
      std::string list;
      for (size_t j = a; j < b; ++j) {
        const size_t k = by_rank_start_[j];
        const StepPath& st = steps_[k];
        const bool counted = st.steady || !any_steady;
        if (consecutive) {
          rule.keep[k] = st.number % n == 0 ? 1 : 0;
        } else if (counted) {
          rule.keep[k] = position++ % n == 0 ? 1 : 0;
        }
        if (!counted) continue;
        ++steady;
        if (rule.keep[k] == 0) continue;
        if (++kept <= kMaxListed) {
          list += (list.empty() ? "" : ", ") +
                  (st.number >= 0 ? "#" + std::to_string(st.number) : "the " + Ordinal(position) + " step");
        }
      }
      if (kept > kMaxListed) list += " and " + std::to_string(kept - kMaxListed) + " more";
      std::string line = kept == 0 ? "none of its " + std::to_string(steady) + " steps"
                                   : list + " (" + std::to_string(kept) + " of " + std::to_string(steady) + ")";
      if (rank != kNoRank) line = "rank " + std::to_string(rank) + ": " + line;
      per_rank.push_back(std::move(line));
      a = b;
    }
    if (per_rank.empty()) return rule;
    if (std::all_of(steps_.begin(), steps_.end(), [](const StepPath& st) { return st.step_index == SIZE_MAX; })) {
      rule.note = "the trace has no steps (each rank's whole trace is one window): the work stays where it is";
      return rule;
    }
    std::string steps;
    for (size_t r = 0; r < per_rank.size() && r < kMaxListed; ++r) steps += (r == 0 ? "" : "; ") + per_rank[r];
    if (per_rank.size() > kMaxListed) steps += "; " + std::to_string(per_rank.size() - kMaxListed) + " more ranks";
    const std::string ns = std::to_string(n);
    std::string why;
    if (by_number) why = "steps numbered a multiple of " + ns + " (the step numbers run consecutively)";
    if (by_position) {
      why += std::string(by_number ? "; elsewhere " : "") + "one in " + ns + " by position, the 1st, " +
             Ordinal(n + 1) + " ... (the step numbers are not consecutive: they do not say which steps the " +
             "program's own schedule would pick)";
    }
    rule.note = "the work stays on the steady steps " + steps + " and is taken off the others: " + why;
    return rule;
  }
  static constexpr size_t kMaxListed = 8;
  static std::string Ordinal(int64_t k) {
    const int64_t h = k % 100, t = k % 10;
    const char* suffix = (h >= 11 && h <= 13) ? "th" : t == 1 ? "st" : t == 2 ? "nd" : t == 3 ? "rd" : "th";
    return std::to_string(k) + suffix;
  }

  // A predecessor's new time, replayed first when the visiting order has
  // not reached it yet: a child starting at its parent's end, a zero-length
  // slice at a boundary, a collective's later rank. The recursion is bounded
  // (kMaxDepth); past it, or in a cycle of malformed nesting, the measured
  // time stands in and is counted.
  int64_t StartOf(uint32_t i) {
    if (!done_start_[i] && Enter(i)) Start(i), Leave(i);
    return NewStart(i);
  }
  int64_t EndOf(uint32_t i) {
    if (!done_end_[i] && Enter(i)) Finish(i), Leave(i);
    return NewEnd(i);
  }
  bool Enter(uint32_t i) {
    if (depth_ >= kMaxDepth || busy_[i]) {
      ++fallbacks_;
      return false;
    }
    busy_[i] = true;
    ++depth_;
    return true;
  }
  void Leave(uint32_t i) {
    busy_[i] = false;
    --depth_;
  }
  static constexpr int kMaxDepth = 256;

  // Latest (predecessor's new time + lag); `binding` keeps the measured lag.
  struct Latest {
    int64_t t = INT64_MIN;
    void Add(int64_t pred_new, int64_t lag) { t = std::max(t, pred_new + lag); }
  };

  void Start(uint32_t i) {
    if (done_start_[i]) return;
    const int64_t s = s_.ts_ns[i];
    Latest l;
    if (g_.on_device[i]) {
      DeviceStart(i, s, &l);
    } else {
      HostStart(i, s, &l);
    }
    start_[i] = l.t == INT64_MIN ? s : l.t;
    done_start_[i] = true;
  }

  // A work root that waited for another thread (a binding handoff) spent
  // the gap before it idle, not working: its own thread then adds no lag.
  void HostStart(uint32_t i, int64_t s, Latest* l) {
    const uint32_t p = g_.prev[i], u = g_.parent[i], h = g_.handoff[i];
    const bool idle_gap = u == kNoSlice || g_.cls[u] == PathClass::kIdleOther;
    const int64_t own = p != kNoSlice ? End(p) : u != kNoSlice ? s_.ts_ns[u] : INT64_MIN;
    const bool handed = h != kNoSlice && End(h) > own;
    if (handed) {
      int64_t gap = std::max<int64_t>(0, s - End(h));
      if (Removed(GapCause::kOther) && gap > 0) gap = 0, ++out_->edges_changed;
      l->Add(EndOf(h), gap);
    }
    if (p != kNoSlice && s < End(p)) {
      // i starts inside p and ends after it (they cross; neither encloses
      // the other: torch_npu's record_function ranges open inside the Python
      // frame of __enter__ and close inside __exit__'s). i starts at its
      // measured offset into p, scaled with p, as p's child would: "after
      // p's end" would delay it by the overlap with nothing changed.
      l->Add(StartOf(p), Scaled(s - s_.ts_ns[p], p));
    } else if (p != kNoSlice) {
      int64_t gap = std::max<int64_t>(0, s - End(p));
      if (u != kNoSlice) gap = Scaled(gap, u);
      if (idle_gap && (handed || Removed(GapCause::kOther)) && gap > 0) gap = 0, out_->edges_changed += handed ? 0 : 1;
      if (FusedAfter(i) == p && gap > 0) gap = 0, ++out_->edges_changed;  // fuse: no gap inside a chain
      l->Add(EndOf(p), gap);
    } else if (u != kNoSlice) {
      int64_t off = Scaled(s - s_.ts_ns[u], u);
      if (idle_gap && (handed || Removed(GapCause::kOther)) && off > 0) off = 0, out_->edges_changed += handed ? 0 : 1;
      l->Add(StartOf(u), off);
    }
  }

  void DeviceStart(uint32_t i, int64_t s, Latest* l) {
    const uint32_t L = g_.launch[i], p = g_.prev[i], w = g_.wait_on[i];
    // The device work that ended last before i could run: the stream's
    // previous activity or an event i waited on.
    uint32_t binder = kNoSlice;
    int64_t bind = INT64_MIN;
    if (p != kNoSlice) bind = End(p), binder = p;
    if (w != kNoSlice && End(w) > bind) bind = End(w), binder = w;
    // Queued: i had been launched (its call had returned) before that work
    // ended, so it waited in the stream; that work binds it, at the measured
    // dispatch gap after it (a microsecond or so on a busy stream), and the
    // launch at no more than the call's duration. Otherwise the launch binds
    // with its measured lag (call start to kernel start), and the work before
    // only holds i back if it now ends later. An activity with no launch call
    // keeps its gap after the work before it: nothing else explains it.
    // Before, only an activity that started the very nanosecond its
    // predecessor ended counted as queued; one a microsecond later kept its
    // whole measured lag, queueing included, so shorter kernels ahead of it
    // gained nothing (the predict trial's D1: `scale K 0.5` on kernels 0.5 us
    // apart predicted -5.5% instead of -48%).
    const bool queued = binder != kNoSlice && (L == kNoSlice || s <= bind || bind >= s_.ts_ns[L] + s_.dur_ns[L]);
    auto gap_after = [&](uint32_t x) { return queued && x == binder ? s - End(x) : std::min<int64_t>(0, s - End(x)); };
    if (const uint32_t a = FusedAfter(i); a != kNoSlice) {
      // fuse: part of the chain's one kernel, right after its previous part.
      l->Add(EndOf(a), 0);
      ++out_->edges_changed;
    } else if (L != kNoSlice) {
      const int64_t measured = s - s_.ts_ns[L];
      if (const int64_t held = s - End(L); !queued && held >= kMinLaunchHoldNs) {
        // Started kMinLaunchHoldNs or more after its call had returned:
        // the device, not the host, held it (the critical path's
        // unexplained idle after the call, not idle_host_bound), so it
        // starts that long after the call's new end, under remove-idle
        // host_bound too. Before, that clause took the whole lag: on the
        // vLLM decode replay 12.23 ms for 19.11 (-36%), its first copy
        // having started 7.83 ms after its call returned, every launch of
        // the step issued 6 ms before that.
        l->Add(EndOf(L), held);
      } else {
        int64_t lag = queued ? std::min(measured, s_.dur_ns[L]) : measured;
        // A launch wait the host's start-up work covers (the critical path's
        // idle_startup, StartupWork::Covers) is no launch overhead: remove-idle
        // host_bound keeps it, remove-idle startup takes it.
        const GapCause cause = startup_->Covers(trace_.tracks.rank[s_.track[i]], s_.ts_ns[L], s) ? GapCause::kStartup
                                                                                                 : GapCause::kHostBound;
        if (Removed(cause) && lag > 0) lag = 0, ++out_->edges_changed;
        l->Add(StartOf(L), lag);
      }
    }
    if (!edits_.comm.empty()) {  // overlap-comm: collectives skipped on the stream
      const uint32_t q = edits_.stream_prev[i];
      if (q != kNoSlice) l->Add(EndOf(q), q == p ? gap_after(q) : std::min<int64_t>(0, s - End(q)));
      if (const uint32_t c = edits_.comm_prev[i]; c != kNoSlice && edits_.comm[i]) l->Add(EndOf(c), 0);
      if (w != kNoSlice && !Removed(GapCause::kSync)) l->Add(EndOf(w), gap_after(w));
      out_->edges_changed += q != p ? 1 : 0;
      return;
    }
    if (p != kNoSlice) l->Add(EndOf(p), gap_after(p));
    if (w != kNoSlice && !Removed(GapCause::kSync)) l->Add(EndOf(w), gap_after(w));
  }

  void Finish(uint32_t i) {
    if (done_end_[i]) return;
    Start(i);
    const int64_t e = End(i);
    int64_t t;
    if (uint32_t c = g_.last_child[i]; c != kNoSlice && !g_.on_device[i]) {
      int64_t tail = Scaled(std::max<int64_t>(0, e - End(c)), i);
      // remove-idle other: a wrapper's own time after its last child goes
      // as its own time before and between children does (the predict
      // trial's D7: ProfilerStep's 30 us tail stayed on the path).
      if (Removed(GapCause::kOther) && g_.cls[i] == PathClass::kIdleOther && tail > 0) {
        tail = 0;
        ++out_->edges_changed;
      }
      t = EndOf(c) + tail;
    } else if (uint32_t q = g_.peer[i]; q != kNoSlice) {
      // A collective: its transfer after the last rank arrives.
      t = std::max(start_[i], StartOf(q)) + Scaled(std::max<int64_t>(0, e - std::max(s_.ts_ns[i], s_.ts_ns[q])), i);
    } else {
      t = start_[i] + Scaled(s_.dur_ns[i], i);
    }
    if (uint32_t w = g_.wait_on[i]; w != kNoSlice && !g_.on_device[i] && End(w) > s_.ts_ns[i] && End(w) <= e) {
      // A sync call that waited: its overhead after the work it waited for.
      // One that returned before that work ended did not wait for it (the
      // device's clock is off from the host's, or the link names other
      // work: the MTIA trace's syncs end up to 0.6 ms before it): binding it
      // there moved every later step in a replay with nothing changed.
      const int64_t post = std::max<int64_t>(0, e - End(w));
      int64_t waited = EndOf(w);
      // overlap-comm: a collective before w on its stream may now end later.
      if (!edits_.comm.empty() && !edits_.comm[w] && edits_.comm_prev[w] != kNoSlice) {
        waited = std::max(waited, EndOf(edits_.comm_prev[w]));
      }
      t = Removed(GapCause::kSync) ? start_[i] + post : std::max(start_[i] + post, waited + post);
    }
    end_[i] = std::max(t, start_[i]);
    done_end_[i] = true;
  }

  const SliceTable& s_;
  const Trace& trace_;
  const DependencyGraph& g_;
  const std::vector<StepPath>& steps_;
  std::vector<size_t> by_rank_start_;  // steps_ by (rank, start), built on first use
  std::map<int64_t, EveryRule> every_keep_;  // by N, built on first use
  WhatIfResult* out_;
  std::vector<int64_t> start_, end_;
  std::vector<bool> done_start_, done_end_, busy_;
  int depth_ = 0;
  uint64_t fallbacks_ = 0;
  std::vector<float> factor_;
  std::vector<bool> capture_;  // per track: IsGraphCaptureTrack
  bool remove_[kGapCauseCount] = {};
  bool graph_ = false;
  bool remove_comm_ = false;  // remove-comm: device collectives take no time
  GraphEdits edits_;
  // The host's start-up work (src/analysis/window/startup_work.h): the
  // window's, or the trace's capture windows alone without one.
  std::optional<StartupWork> own_startup_;
  const StartupWork* startup_;
};

// The path's time by class and by slice name, mean per steady step, before
// and after: what moved on the critical path.
constexpr uint32_t kStepSpanKey = UINT32_MAX;  // DescribeMoves: a step's own span, any number

void DescribeMoves(const Trace& trace, const CriticalPathResult& before, const CriticalPathResult& after,
                   WhatIfResult* r) {
  // Key: the class and the slice's name (none for time no slice holds).
  struct Both {
    int64_t before = 0, after = 0;
    PathClass cls = PathClass::kIdleOther;
    uint32_t name = 0;
  };
  std::unordered_map<uint64_t, Both> by_key;
  size_t steps = 0;
  auto add = [&](const CriticalPathResult& c, bool is_after) {
    for (const StepPath& p : c.steps) {
      if (!p.steady && c.window_steps != c.steps.size()) continue;
      steps += is_after ? 0 : 1;
      for (size_t k = p.first_segment; k < p.first_segment + p.segment_count; ++k) {
        const PathSegment& seg = c.segments[k];
        const int64_t d = seg.end_ns - seg.start_ns;
        (is_after ? r->predicted_path_ns : r->measured_path_ns)[static_cast<size_t>(seg.cls)] += static_cast<double>(d);
        // The step's own span (ProfilerStep#N) is one row, not one per step
        // number, each a share of one step (the predict trial's D6).
        const bool step_span = seg.slice != kNoSlice && seg.slice == p.start_slice && seg.slice == p.host_sink;
        const uint32_t name = seg.slice == kNoSlice ? 0 : step_span ? kStepSpanKey : trace.slices.name[seg.slice].raw;
        Both& b = by_key[static_cast<uint64_t>(seg.cls) << 32 | name];
        (is_after ? b.after : b.before) += d;
        b.cls = seg.cls;
        b.name = name;
      }
    }
  };
  add(before, false);
  add(after, true);
  if (steps == 0) return;
  const double per = 1.0 / static_cast<double>(steps);
  for (size_t c = 0; c < kPathClassCount; ++c) {
    r->measured_path_ns[c] *= per;
    r->predicted_path_ns[c] *= per;
  }
  std::vector<WhatIfResult::Move> moves;
  for (const auto& entry : by_key) {
    const Both& b = entry.second;
    if (b.before == b.after) continue;
    WhatIfResult::Move m;
    m.cls = b.cls;
    m.name = b.name == kStepSpanKey ? "(each step's own span)" : std::string(trace.Str(StringId{b.name}));
    m.measured_ns = static_cast<double>(b.before) * per;
    m.predicted_ns = static_cast<double>(b.after) * per;
    moves.push_back(std::move(m));
  }
  std::sort(moves.begin(), moves.end(), [](const WhatIfResult::Move& a, const WhatIfResult::Move& b) {
    const double da = std::abs(a.predicted_ns - a.measured_ns), db = std::abs(b.predicted_ns - b.measured_ns);
    return da != db ? da > db : a.name < b.name;
  });
  if (moves.size() > WhatIfResult::kMovedTop) moves.resize(WhatIfResult::kMovedTop);
  r->moved = std::move(moves);
}

}  // namespace

StatusOr<bool> JudgeOnMean(std::string_view scenario, std::string_view statistic) {
  if (!statistic.empty() && statistic != "median" && statistic != "mean") {
    return ErrStatus("statistic '" + std::string(statistic) + "' is not 'median' or 'mean'");
  }
  ASSIGN_OR_RETURN(Scenario sc, ParseScenario(scenario));
  return statistic.empty() ? ScenarioNeedsMean(sc) : statistic == "mean";
}

WhatIfFigure FigureOf(const WhatIfResult& r, bool mean) {
  return mean ? WhatIfFigure{r.measured_mean_ns, r.predicted_mean_ns, r.predicted_mean_lo_ns, r.predicted_mean_hi_ns}
              : WhatIfFigure{r.measured_ns, r.predicted_ns, r.predicted_lo_ns, r.predicted_hi_ns};
}

bool ScenarioNeedsMean(const Scenario& scenario) {
  return std::any_of(scenario.clauses.begin(), scenario.clauses.end(),
                     [](const WhatIfClause& c) { return c.kind == WhatIfClause::Kind::kEvery; });
}

Status ResolveScenarioDevices(const Trace& trace, const std::string& devices_file, Scenario* scenario) {
  for (const WhatIfClause& c : scenario->clauses) {
    if (c.kind != WhatIfClause::Kind::kDevice) continue;
    const std::string where =
        "scenario clause 'device " + c.device + (c.from_device.empty() ? "" : " from " + c.from_device) + "': ";
    std::string problem;
    scenario->device_to = ResolveDevice(trace, c.device, devices_file, &problem);
    if (!scenario->device_to) return ErrStatus(where + problem);
    scenario->device_from = ResolveDevice(trace, c.from_device, devices_file, &problem);
    if (!scenario->device_from && !c.from_device.empty()) return ErrStatus(where + problem);
    if (!scenario->device_from) {
      return ErrStatus(where + "the trace's own device is not known (its metadata names none of data/devices.yaml; a "
                               "CPU-only trace needs `aiprof calibrate`): say which it ran on with 'device " +
                       c.device + " from NAME'");
    }
  }
  return OkStatus();
}

namespace {

// The steady steps' device activities (every window's when none is steady),
// and those whose launching call is a graph launch (IsGraphLaunchName).
struct GraphReplayed {
  uint64_t activities = 0, replayed = 0;
  std::string call_name;  // the first graph launch call's name
};
GraphReplayed CountGraphReplayed(const Trace& trace, const CriticalPathResult& path) {
  GraphReplayed out;
  const DependencyGraph& g = path.graph;
  const bool any_steady = std::any_of(path.steps.begin(), path.steps.end(), [](const StepPath& p) { return p.steady; });
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    if (!g.on_device[i] || i >= path.step_of.size() || path.step_of[i] >= path.steps.size()) continue;
    if (any_steady && !path.steps[path.step_of[i]].steady) continue;
    ++out.activities;
    const uint32_t l = g.launch[i];
    if (l == kNoSlice || !IsGraphLaunchName(trace.Str(trace.slices.name[l]))) continue;
    ++out.replayed;
    if (out.call_name.empty()) out.call_name = std::string(trace.Str(trace.slices.name[l]));
  }
  return out;
}

// Whether the steady steps of `path` have the device period as their step
// time's base (src/analysis/common/steps.h).
bool DeviceRunsBehind(const Trace& trace, const CriticalPathResult& path) {
  const StepList list = FindSteps(trace);
  std::vector<size_t> steady;
  for (const StepPath& p : path.steps) {
    if (p.steady && p.step_index < list.steps.size()) steady.push_back(p.step_index);
  }
  if (steady.empty()) return false;
  return ChooseStepTimeBase(list, ComputeStepPeriods(trace, list), steady, nullptr) == StepTimeBase::kDevicePeriod;
}

// Whole-trace windows (no steps): the host runtime and driver calls of at
// least kStartupCallMinNs that lie inside the analysis window's start-up
// (the trace span outside the window, less aiprof's own work), by rank:
// the window's start-up calls (AnalysisWindow keeps only the eight longest
// of them) and any such call inside them on another thread.
std::map<int32_t, std::vector<uint32_t>> StartupCallsByRank(const Trace& trace, const AnalysisWindow& w) {
  std::map<int32_t, std::vector<uint32_t>> out;
  if (w.startup_ns <= 0) return out;
  const Intervals outside = Complement(w.intervals, w.trace_start_ns, w.trace_start_ns + w.trace_span_ns);
  std::map<int32_t, Intervals> overhead;
  if (w.aiprof_overhead_ns > 0) overhead = AiprofOverheadByRank(trace);
  auto within = [](const Intervals& iv, int64_t a, int64_t b) {
    auto it = std::upper_bound(iv.begin(), iv.end(), std::make_pair(a, INT64_MAX));
    return it != iv.begin() && std::prev(it)->first <= a && b <= std::prev(it)->second;
  };
  const SliceTable& s = trace.slices;
  for (uint32_t i = 0; i < s.size(); ++i) {
    if ((s.kind[i] != EventKind::kRuntime && s.kind[i] != EventKind::kDriver) || s.dur_ns[i] < kStartupCallMinNs ||
        trace.tracks.kind[s.track[i]] != TrackKind::kThread || IsGraphCaptureTrack(trace, s.track[i])) {
      continue;
    }
    const int64_t a = s.ts_ns[i], b = a + s.dur_ns[i];
    if (!within(outside, a, b)) continue;
    const int32_t rank = trace.tracks.rank[s.track[i]];
    if (auto it = overhead.find(rank); it != overhead.end() && within(it->second, a, b)) continue;
    out[rank].push_back(i);
  }
  return out;
}

// The time `calls` cover inside [from, to) (their union), at the times
// `start` and `end` give (measured or replayed).
template <typename StartOf, typename EndOf>
int64_t CoveredInside(const std::vector<uint32_t>& calls, StartOf start, EndOf end, int64_t from, int64_t to) {
  Intervals iv;
  for (uint32_t i : calls) {
    const int64_t a = std::max(start(i), from), b = std::min(end(i), to);
    if (a < b) iv.emplace_back(a, b);
  }
  return LengthOf(MergeIntervals(std::move(iv)));
}

// notes[0] of a per-trace result (WhatIfResult::per_trace).
std::string PerTraceNote(const WhatIfResult& r) {
  const std::string base = FormatDurationNs(r.per_trace_base_ns);
  if (r.startup_left_out_ns <= 0) {
    return "per trace (no steps found): each rank's whole trace is one step, on the analysis window's base as "
           "diagnose's impacts (the trace span; no start-up calls found): " +
           base;
  }
  return "per trace, start-up (" + FormatDurationNs(static_cast<double>(r.startup_left_out_ns)) +
         ") left out: no steps found, so each rank's whole trace is one step, on the analysis window's base as "
         "diagnose's impacts (the trace span minus its start-up calls: context creation, first allocations, module "
         "loading): " +
         base +
         " measured; the prediction adds the replay's change of the whole trace less its "
         "start-up calls' own change. The critical path's tables below are over the whole trace, start-up included";
}

}  // namespace

std::optional<ScenarioTarget> ScenarioBottleneck(const WhatIfResult& r) {
  // `moved` is sorted by |change|, largest first; the step's own span
  // (ProfilerStep#N, no op of its own) names no target.
  for (const WhatIfResult::Move& m : r.moved) {
    if (m.name == "(each step's own span)") continue;
    ScenarioTarget t;
    t.name = m.name;
    t.cls = m.cls;
    t.measured_ns = m.measured_ns;
    t.predicted_ns = m.predicted_ns;
    t.bottleneck = m.name.empty() ? std::string(PathClassName(m.cls)) : "op:" + m.name;
    return t;
  }
  return std::nullopt;
}

WhatIfResult PredictWhatIf(const Trace& trace, const CriticalPathResult& path, const Scenario& scenario,
                           const AnalysisWindow* window) {
  WhatIfResult r;
  r.scenario = scenario.text;
  if (path.graph.parent.size() != trace.slices.size()) return r;  // graph not kept
  // graph-launch on steps whose device work graph launches already replay:
  // nothing to capture, and replaying the host's own work (input
  // preparation, scheduling) as free would claim a gain no graph gives.
  if (std::any_of(scenario.clauses.begin(), scenario.clauses.end(),
                  [](const WhatIfClause& c) { return c.kind == WhatIfClause::Kind::kGraphLaunch; })) {
    const GraphReplayed gr = CountGraphReplayed(trace, path);
    if (gr.activities > 0 && 2 * gr.replayed >= gr.activities) {
      r.time_base = WhatIfResult::TimeBase::kStepPeriod;
      char b[200];
      std::snprintf(b, sizeof(b),
                    "Nothing to batch: the steps are already graph-launched. %llu of the %llu device activities of "
                    "the steady steps (%.1f%%) were replayed by graph launches (",
                    static_cast<unsigned long long>(gr.replayed), static_cast<unsigned long long>(gr.activities),
                    100.0 * static_cast<double>(gr.replayed) / static_cast<double>(gr.activities));
      r.notes.push_back(b + gr.call_name +
                        "), so the scenario is not replayed: graph-launch models capturing one-by-one launches, and "
                        "would count the host's own work between replays (input preparation, scheduling) as "
                        "captured. For that host work, see 'remove-idle host_bound' and the critical path's "
                        "idle_host_bound");
      r.no_step_said = true;
      return r;
    }
  }
  Replay replay(trace, path.graph, path.steps, scenario, window, &r);
  replay.Run();
  const bool host_bound = std::any_of(scenario.clauses.begin(), scenario.clauses.end(), [](const WhatIfClause& c) {
    return c.kind == WhatIfClause::Kind::kGraphLaunch ||
           (c.kind == WhatIfClause::Kind::kRemoveIdle && c.cause == GapCause::kHostBound);
  });
  if (host_bound && path.window_steps > 0 && path.window_device_idle_unexplained_ns > 0) {
    // What the clause leaves on the path, said where a reader compares the
    // gain with the path's idle (the vLLM decode replay: 7.83 ms).
    char b[500];
    std::snprintf(
        b, sizeof(b),
        "%.2f ms per steady step of the measured path is device idle no recorded dependency explains: "
        "launched work that started %.0f us or more after its launch call returned, or %.0f us or more "
        "after both that and the stream's previous work ended. The device held work the host had "
        "launched, so removing launch delay keeps it (docs/whatif.md)",
        static_cast<double>(path.window_device_idle_unexplained_ns) / static_cast<double>(path.window_steps) / 1e6,
        static_cast<double>(kMinLaunchHoldNs) / 1e3, static_cast<double>(kMinStreamIdleGapNs) / 1e3);
    r.notes.push_back(b);
  }
  r.measured_fallbacks = replay.fallbacks();
  std::vector<int64_t> new_start, new_end;
  replay.TakeTimes(&new_start, &new_end);
  const CriticalPathResult replayed = RewalkCriticalPath(trace, path, new_start, new_end);
  const SliceTable& s = trace.slices;
  // overlap-comm: a step also ends after its collectives, which may now end
  // after the activity that was its last (the rewalk keeps that sink).
  bool overlap_comm = false;
  for (const WhatIfClause& c : scenario.clauses) overlap_comm |= c.kind == WhatIfClause::Kind::kOverlapComm;
  std::vector<uint32_t> comms;  // device collectives, by measured start
  for (uint32_t i = 0; overlap_comm && i < s.size(); ++i) {
    if (path.graph.on_device[i] && path.graph.cls[i] == PathClass::kCollective) comms.push_back(i);
  }
  std::sort(comms.begin(), comms.end(), [&](uint32_t a, uint32_t b) { return s.ts_ns[a] < s.ts_ns[b]; });
  auto comm_end_in = [&](const StepPath& p) {
    int64_t end = INT64_MIN;
    auto it = std::lower_bound(comms.begin(), comms.end(), p.start_ns, [&](uint32_t i, int64_t t) { return s.ts_ns[i] < t; });
    for (; it != comms.end() && s.ts_ns[*it] < p.end_ns; ++it) {
      if (trace.tracks.rank[s.track[*it]] == p.rank || p.rank == kNoRank) end = std::max(end, new_end[*it]);
    }
    return end;
  };
  // overlap-data-loading N: a step is never shorter than the loading it
  // held divided by the workers (they deliver a batch that often at best).
  double workers = 0;
  for (const WhatIfClause& c : scenario.clauses) {
    if (c.kind == WhatIfClause::Kind::kOverlapDataLoading) workers = c.factor;
  }
  std::vector<uint32_t> loads;  // outermost data-loading spans, by start
  if (workers > 0) {
    const DependencyGraph& g = path.graph;
    for (uint32_t i = 0; i < s.size(); ++i) {
      const uint32_t u = g.parent[i];
      if (!g.on_device[i] && g.cls[i] == PathClass::kIdleDataLoading &&
          (u == kNoSlice || g.cls[u] != PathClass::kIdleDataLoading)) {
        loads.push_back(i);
      }
    }
    std::sort(loads.begin(), loads.end(), [&](uint32_t a, uint32_t b) { return s.ts_ns[a] < s.ts_ns[b]; });
  }
  auto loading_in = [&](const StepPath& p) {
    int64_t sum = 0;
    auto it = std::lower_bound(loads.begin(), loads.end(), p.start_ns,
                               [&](uint32_t i, int64_t t) { return s.ts_ns[i] < t; });
    for (; it != loads.end() && s.ts_ns[*it] < p.end_ns; ++it) {
      if (trace.tracks.rank[s.track[*it]] == p.rank || p.rank == kNoRank) sum += s.dur_ns[*it];
    }
    return sum;
  };
  // No steps: the analysis window's per-trace base, start-up left out
  // (WhatIfResult::per_trace).
  std::optional<AnalysisWindow> own_window;
  std::map<int32_t, std::vector<uint32_t>> startup_calls;
  if (!path.steps.empty() &&
      std::all_of(path.steps.begin(), path.steps.end(), [](const StepPath& p) { return p.step_index == SIZE_MAX; })) {
    if (window == nullptr) window = &own_window.emplace(ComputeAnalysisWindow(trace));
    if (window->steps == 0) {
      r.per_trace = true;
      r.per_trace_base_ns = window->base_ns;
      r.startup_left_out_ns = window->startup_ns;
      startup_calls = StartupCallsByRank(trace, *window);
    }
  }
  std::vector<double> predicted, measured;
  // graph-launch: the step period, from the previous step's end on the same
  // rank to this step's (a host that no longer paces the device runs ahead,
  // and a step's wall time would count the device queue it runs into).
  // remove-idle sync as well: without its waits the host is no longer held
  // to the device (on nsys CloverLeaf each step's wall time grew by 25 ms,
  // the device queue the host had run ahead into).
  bool period = false;
  for (const WhatIfClause& c : scenario.clauses) {
    period |= c.kind == WhatIfClause::Kind::kGraphLaunch ||
              (c.kind == WhatIfClause::Kind::kRemoveIdle && c.cause == GapCause::kSync);
  }
  // The device running behind the host (ChooseStepTimeBase, the step
  // analysis' base): a step's wall time counts the queue of earlier steps'
  // work it runs into; the steps' rate is the device's period.
  r.device_behind = DeviceRunsBehind(trace, path);
  period |= r.device_behind;
  r.time_base = period ? WhatIfResult::TimeBase::kStepPeriod : WhatIfResult::TimeBase::kStepWallTime;
  std::vector<size_t> prev(path.steps.size(), SIZE_MAX);  // the rank's previous step
  if (period) {
    std::vector<size_t> order(path.steps.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::tie(path.steps[a].rank, path.steps[a].start_ns) < std::tie(path.steps[b].rank, path.steps[b].start_ns);
    });
    for (size_t j = 1; j < order.size(); ++j) {
      if (path.steps[order[j]].rank == path.steps[order[j - 1]].rank) prev[order[j]] = order[j - 1];
    }
  }
  for (size_t k = 0; k < path.steps.size(); ++k) {
    const StepPath& p = path.steps[k];
    StepPrediction sp{p.rank, p.number, p.steady, p.length_ns(), p.length_ns()};
    if (k < replayed.steps.size()) sp.predicted_ns = replayed.steps[k].length_ns();
    if (overlap_comm && k < replayed.steps.size()) {
      if (const int64_t end = comm_end_in(p); end != INT64_MIN) {
        sp.predicted_ns = std::max(sp.predicted_ns, end - replayed.steps[k].start_ns);
      }
    }
    if (period) {
      const size_t q = prev[k];
      if (q == SIZE_MAX || k >= replayed.steps.size() || q >= replayed.steps.size()) {
        // No previous step: no period (its wall time is another base).
        sp.steady = false;
        sp.no_period = true;
        sp.measured_ns = sp.predicted_ns = 0;
      } else {
        sp.measured_ns = p.end_ns - path.steps[q].end_ns;
        // Not below the replayed host's own step spacing: a replay that
        // shortens the device's work drains the queue the trace began with
        // (work launched before the first step), its ends closer together
        // than the host issues steps, which no steady state does (MI300
        // ResNet remove-comm: 7.8 ms periods against the host's 16 ms steps,
        // past the finding's Amdahl bound). The floor never exceeds the
        // measured period: a replay of nothing changed stays the trace (on
        // HTA ns_resolution a measured period is 64 us below its spacing).
        const int64_t ends = replayed.steps[k].end_ns - replayed.steps[q].end_ns;
        const int64_t spacing = replayed.steps[k].start_ns - replayed.steps[q].start_ns;
        sp.predicted_ns = std::max<int64_t>({0, ends, std::min(spacing, sp.measured_ns)});
      }
    }
    if (workers > 0 && !sp.no_period) {
      sp.predicted_ns = std::max(sp.predicted_ns, static_cast<int64_t>(static_cast<double>(loading_in(p)) / workers));
    }
    if (r.per_trace && !sp.no_period) {
      // The whole trace's change less its start-up calls' own change, on
      // the window's base (start-up left out of both figures alike).
      int64_t startup_measured = 0, startup_predicted = 0;
      if (auto it = startup_calls.find(p.rank); it != startup_calls.end()) {
        startup_measured = CoveredInside(
            it->second, [&](uint32_t i) { return s.ts_ns[i]; }, [&](uint32_t i) { return s.ts_ns[i] + s.dur_ns[i]; },
            p.start_ns, p.end_ns);
        const int64_t from = k < replayed.steps.size() ? replayed.steps[k].start_ns : p.start_ns;
        startup_predicted = CoveredInside(
            it->second, [&](uint32_t i) { return new_start[i]; }, [&](uint32_t i) { return new_end[i]; }, from,
            from + sp.predicted_ns);
      }
      const int64_t change = (sp.predicted_ns - startup_predicted) - (sp.measured_ns - startup_measured);
      sp.measured_ns = std::llround(r.per_trace_base_ns);
      sp.predicted_ns = std::max<int64_t>(0, sp.measured_ns + change);
    }
    if (sp.steady) {
      predicted.push_back(static_cast<double>(sp.predicted_ns));
      measured.push_back(static_cast<double>(sp.measured_ns));
    }
    r.steps.push_back(sp);
  }
  r.steady_steps = predicted.size();
  r.host_only = SteadyStepsAreHostOnly(path);
  if (predicted.empty() && period && !r.steps.empty() &&
      std::all_of(r.steps.begin(), r.steps.end(), [](const StepPrediction& sp) { return sp.no_period; })) {
    // Said, not only "no step": a one-step trace has no period to predict.
    const bool whole =
        std::all_of(path.steps.begin(), path.steps.end(), [](const StepPath& p) { return p.step_index == SIZE_MAX; });
    r.notes.insert(r.notes.begin(),
                   std::string("No step has a period: this scenario is judged on the step period, from the "
                               "previous step's end on a rank to this step's end (docs/whatif.md), and each rank's "
                               "first step has none; here each rank has one step") +
                       (whole ? " (no steps found: the whole trace is one)" : ""));
    r.no_step_said = true;
  }
  if (predicted.empty()) return r;
  if (r.per_trace) r.notes.insert(r.notes.begin(), PerTraceNote(r));
  DescribeMoves(trace, path, replayed, &r);
  const MeanInterval m = MedianWithInterval(predicted);
  r.measured_ns = MedianWithInterval(measured).mean;
  r.predicted_ns = m.mean;
  r.predicted_lo_ns = m.lo;
  r.predicted_hi_ns = m.hi;
  const MeanInterval mean = DurationMeanWithInterval(predicted);
  r.measured_mean_ns = MeanWithInterval(measured).mean;
  r.predicted_mean_ns = mean.mean;
  r.predicted_mean_lo_ns = mean.lo;
  r.predicted_mean_hi_ns = mean.hi;
  return r;
}

}  // namespace aiprof
