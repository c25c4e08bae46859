#include "src/model/periodic_steps.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>
#include <unordered_map>

namespace aiprof {

namespace {

// A thread's busy time counted up to INT64_MAX.
int64_t AddSat(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

// The ops of an OpSequence, read through the accessors the finders use.
struct VectorOps {
  const OpSequence& seq;
  size_t size() const { return seq.name.size(); }
  uint32_t Name(size_t i) const { return seq.name[i]; }
  int64_t Start(size_t i) const { return seq.start_ns[i]; }
  int64_t End(size_t i) const { return seq.end_ns[i]; }
  bool Loader(size_t i) const { return !seq.data_loader.empty() && seq.data_loader[i]; }
};

// A thread's outermost ops read from the slice table in place: the row of
// each op and whether it is a DataLoader call, 5 bytes per op where copies of
// its name, start and end, its row and the end of its run of one name (the
// Finder's, now kept for the ops near m only) were 37; with the running sum
// of busy time, 13 bytes per op instead of 45 (13.5 M outermost ops on one
// thread: 600 MB above the slice table while the pattern was sought, now 200).
struct SliceOps {
  const SliceTable& s;
  const std::vector<uint32_t>& row;
  const std::vector<uint8_t>& data_loader;
  size_t size() const { return row.size(); }
  uint32_t Name(size_t i) const { return s.name[row[i]].raw; }
  int64_t Start(size_t i) const { return s.ts_ns[row[i]]; }
  int64_t End(size_t i) const { return s.ts_ns[row[i]] + std::max<int64_t>(0, s.dur_ns[row[i]]); }
  bool Loader(size_t i) const { return data_loader[i] != 0; }
};

template <typename Ops>
class Finder {
 public:
  explicit Finder(const Ops& seq) : seq_(seq), n_(seq.size()), budget_(32 * static_cast<int64_t>(n_) + 1'000'000) {
    cum_.resize(n_ + 1, 0);
    for (size_t i = 0; i < n_; ++i) cum_[i + 1] = AddSat(cum_[i], std::max<int64_t>(0, seq.End(i) - seq.Start(i)));
  }

  PeriodicPattern Run() {
    PeriodicPattern none;
    none.busy_ns = n_ > 0 ? cum_[n_] : 0;
    if (n_ < kMinRepetitions || cum_[n_] <= 0) return none;
    const int64_t total = cum_[n_];
    // m: the op holding the busy-time median (cum[m] <= total/2 < cum[m+1]).
    size_t m = static_cast<size_t>(std::upper_bound(cum_.begin(), cum_.end(), total / 2) - cum_.begin()) - 1;
    if (m >= n_) m = n_ - 1;
    const size_t max_p = std::min<size_t>(kMaxPeriod, n_ / kMinRepetitions);
    FillSameUntil(m - std::min(m, max_p), m);
    for (size_t p = 1; p <= max_p && budget_ > 0; ++p) {
      const bool right = m + p < n_ && seq_.Name(m + p) == seq_.Name(m);
      const bool left = m >= p && seq_.Name(m - p) == seq_.Name(m);
      // A run of >= 3 repetitions holding m has a match at m or at m - p
      // (both are tried: a match at m may belong to another, shorter run).
      if (right && !OneName(m, p)) {
        PeriodicPattern got = Try(p, m);
        if (got.found()) return got;
      }
      if (left && !OneName(m - p, p)) {
        PeriodicPattern got = Try(p, m - p);
        if (got.found()) return got;
      }
    }
    return none;
  }

 private:
  // True when the p ops from i all have one name: a repetition of one op
  // is no step (a run of one op name has every period, so each op, or each
  // pair, would be a "step"; the approximate pattern needs a mean gap of 2 too).
  // Asked at i = m and i = m - p (p <= max_p) only: same_until_ covers them.
  bool OneName(size_t i, size_t p) const { return same_until_[i - same_from_] >= i + p; }
  // The end of the run of equal names through i, for i in [from, to].
  void FillSameUntil(size_t from, size_t to) {
    same_from_ = from;
    same_until_.resize(to - from + 1);
    size_t end = to + 1;
    while (end < n_ && seq_.Name(end) == seq_.Name(to)) ++end;
    same_until_[to - from] = end;
    for (size_t i = to; i-- > from;) {
      same_until_[i - from] = seq_.Name(i + 1) == seq_.Name(i) ? same_until_[i + 1 - from] : i + 1;
    }
  }
  bool Match(size_t i, size_t p) const { return i + p < n_ && seq_.Name(i) == seq_.Name(i + p); }
  int64_t Gap(size_t i) const { return i == 0 ? 0 : std::max<int64_t>(0, seq_.Start(i) - seq_.End(i - 1)); }
  // The repetitions [s, s + reps*p) cover more than half the busy time
  // (kMinCoverage), also when the longest repetition is left out of both
  // (one outlier, such as a first CUDA call of 30 s in a loop of copies,
  // does not make a pattern).
  bool Covers(size_t s, size_t reps, size_t p) const {
    const int64_t covered = cum_[s + reps * p] - cum_[s];
    if (covered <= cum_[n_] - covered) return false;
    int64_t longest = 0;
    for (size_t k = 0; k < reps; ++k) longest = std::max(longest, cum_[s + (k + 1) * p] - cum_[s + k * p]);
    return covered - longest > cum_[n_] - covered;
  }

  // The run of period p through position `seed` (name[seed] == name[seed + p]).
  PeriodicPattern Try(size_t p, size_t seed) const {
    PeriodicPattern out;
    out.busy_ns = cum_[n_];
    size_t a = seed, b = seed + 1;
    while (a > 0 && Match(a - 1, p)) --a;
    while (Match(b, p)) ++b;
    const size_t e = b + p;  // [a, e) has period p
    budget_ -= static_cast<int64_t>(e - a);
    if (e - a < kMinRepetitions * p) return out;
    budget_ -= 2 * static_cast<int64_t>(e - a);  // the phases: O(reps) each, O(e - a) in all
    // Phase r: steps start at a + r + k*p. Only phases that keep
    // kMinRepetitions whole repetitions covering more than half the busy time.
    const size_t r_max = std::min(p - 1, e - a - kMinRepetitions * p);
    size_t best = SIZE_MAX;
    bool best_loader = false;
    double best_gap = -1;
    for (size_t r = 0; r <= r_max; ++r) {
      const size_t s = a + r, reps = (e - s) / p;
      if (!Covers(s, reps, p)) continue;
      const bool loader = seq_.Loader(s);
      // Mean idle gap before the phase's op, between repetitions (the gap
      // before the first one is start-up, not the loop's).
      double gap = 0;
      for (size_t k = 1; k < reps; ++k) gap += static_cast<double>(Gap(s + k * p));
      gap /= static_cast<double>(reps - 1);
      if (best == SIZE_MAX || (loader && !best_loader) || (loader == best_loader && gap > best_gap)) {
        best = r;
        best_loader = loader;
        best_gap = gap;
      }
    }
    if (best == SIZE_MAX) return out;
    const size_t s = a + best, reps = (e - s) / p;
    out.period = static_cast<uint32_t>(p);
    out.first = static_cast<uint32_t>(s);
    out.covered_ns = cum_[s + reps * p] - cum_[s];
    out.steps.reserve(reps);
    for (size_t k = 0; k < reps; ++k) {
      const size_t first = s + k * p, next = first + p;
      int64_t end;
      if (k + 1 < reps || next < e) {
        end = seq_.Start(next);  // the next repetition (whole or partial) starts
      } else {
        end = seq_.End(first);
        for (size_t i = first; i < next; ++i) end = std::max(end, seq_.End(i));
      }
      out.steps.push_back({seq_.Start(first), std::max<int64_t>(0, end - seq_.Start(first))});
    }
    return out;
  }

  const Ops& seq_;
  const size_t n_;
  std::vector<int64_t> cum_;
  // The end of the run of equal names through i, for i from same_from_ on
  // (the at most kMaxPeriod + 1 ops up to m that OneName asks about).
  size_t same_from_ = 0;
  std::vector<size_t> same_until_;
  // Work left for growing runs (ops visited). A run that fails is grown
  // again for each multiple of its period that matches at m (a long run of
  // one op name holding under half the busy time: up to kMaxPeriod times),
  // so the search gives up, finding nothing, past 32 n + 10^6 ops visited.
  mutable int64_t budget_ = 0;
};

bool ContainsDataLoader(std::string_view name) {
  constexpr std::string_view kWord = "dataloader";
  if (name.size() < kWord.size()) return false;
  for (size_t i = 0; i + kWord.size() <= name.size(); ++i) {
    size_t j = 0;
    while (j < kWord.size() && std::tolower(static_cast<unsigned char>(name[i + j])) == kWord[j]) ++j;
    if (j == kWord.size()) return true;
  }
  return false;
}

bool IsOp(EventKind k) {
  return k != EventKind::kPythonFunction && k != EventKind::kTraceSpan && k != EventKind::kGpuUserAnnotation;
}

int64_t EndOf(const SliceTable& s, size_t i) { return s.ts_ns[i] + std::max<int64_t>(0, s.dur_ns[i]); }

}  // namespace

namespace {

// Names of ops are not always the same from one iteration to the next: the
// profiler's own small ops (aten::zeros / aten::zero_ of record_function)
// nest inside a neighbour or not depending on microsecond rounding, a first
// iteration has an extra detach. The approximate pattern: an anchor name
// that occurs at regular distances (coefficient of variation of its gaps,
// in ops, at most 0.5; the 16 shortest such periods are tried), whose
// consecutive segments (anchor to next anchor) hold nearly the same ops
// besides the anchor: as multisets of names, equal in at least 80% of the
// longer segment's ops, or in at least 80% of each segment's busy time. A
// step starts at each anchor.
template <typename Ops>
PeriodicPattern FindApproximatePattern(const Ops& seq) {
  PeriodicPattern none;
  const size_t n = seq.size();
  std::vector<int64_t> cum(n + 1, 0);
  for (size_t i = 0; i < n; ++i) cum[i + 1] = AddSat(cum[i], std::max<int64_t>(0, seq.End(i) - seq.Start(i)));
  none.busy_ns = cum[n];
  if (n < 2 * kMinRepetitions || cum[n] <= 0) return none;
  struct Stat {
    uint32_t count = 0;
    size_t first = 0, last = 0;
    double sum = 0, sum2 = 0;
  };
  std::unordered_map<uint32_t, Stat> stats;
  for (size_t i = 0; i < n; ++i) {
    Stat& st = stats[seq.Name(i)];
    if (st.count > 0) {
      const double g = static_cast<double>(i - st.last);
      st.sum += g;
      st.sum2 += g * g;
    }
    if (st.count == 0) st.first = i;
    st.last = i;
    ++st.count;
  }
  struct Candidate {
    double mean_gap;
    size_t first;  // the name's first op: ties break by it (not by string id, which depends on parsing)
    uint32_t name;
  };
  std::vector<Candidate> candidates;
  for (const auto& [name, st] : stats) {
    if (st.count < kMinRepetitions) continue;
    const double gaps = st.count - 1, mean = st.sum / gaps;
    const double var = std::max(0.0, st.sum2 / gaps - mean * mean);
    if (mean < 2 || mean > kMaxPeriod || std::sqrt(var) > 0.5 * mean) continue;
    candidates.push_back({mean, st.first, name});
  }
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) {
              return a.mean_gap != b.mean_gap ? a.mean_gap < b.mean_gap : a.first < b.first;
            });
  if (candidates.size() > 16) candidates.resize(16);  // the 16 shortest periods

  std::unordered_map<uint32_t, int32_t> counts;
  auto dur = [&](size_t i) { return std::max<int64_t>(0, seq.End(i) - seq.Start(i)); };
  // Ops of [b0, b1) whose names are in [a0, a1) (as multisets): how many,
  // and their summed durations.
  auto matched = [&](size_t a0, size_t a1, size_t b0, size_t b1) {
    counts.clear();
    for (size_t i = a0; i < a1; ++i) ++counts[seq.Name(i)];
    std::pair<size_t, int64_t> m{0, 0};
    for (size_t i = b0; i < b1; ++i) {
      auto it = counts.find(seq.Name(i));
      if (it != counts.end() && it->second > 0) {
        --it->second;
        ++m.first;
        m.second += dur(i);
      }
    }
    return m;
  };
  // Similar: the same ops in at least 80% of the longer segment (counted),
  // or in at least 80% of each segment's busy time (the profiler's own small
  // ops may outnumber an iteration's one record_function).
  auto similar = [&](size_t a0, size_t a1, size_t b0, size_t b1) {
    const size_t la = a1 - a0, lb = b1 - b0, longer = std::max(la, lb);
    const auto [in_b, time_b] = matched(a0, a1, b0, b1);
    if (5 * std::min(la, lb) >= 4 * longer && 5 * in_b >= 4 * longer) return true;
    const int64_t busy_a = cum[a1] - cum[a0], busy_b = cum[b1] - cum[b0];
    if (busy_a <= 0 || busy_b <= 0 || 5 * static_cast<double>(time_b) < 4 * static_cast<double>(busy_b)) return false;
    const auto [in_a, time_a] = matched(b0, b1, a0, a1);
    return 5 * static_cast<double>(time_a) >= 4 * static_cast<double>(busy_a);
  };
  PeriodicPattern best;
  best.busy_ns = cum[n];
  bool best_loader = false;
  double best_gap = 0, best_len = 0;
  std::vector<size_t> at;
  for (const Candidate& c : candidates) {
    at.clear();
    for (size_t i = 0; i < n; ++i) {
      if (seq.Name(i) == c.name) at.push_back(i);
    }
    at.push_back(n);  // the tail after the last anchor: a step only when similar to the one before
    // Runs of consecutive similar segments [at[j], at[j+1]).
    size_t run_begin = 0;
    for (size_t j = 1; j < at.size(); ++j) {
      // Segments are compared without their anchor (its own time would make
      // any two segments look alike).
      const bool extends = j + 1 < at.size() && similar(at[j - 1] + 1, at[j], at[j] + 1, at[j + 1]);
      if (extends) continue;
      const size_t segs = j - run_begin;  // segments run_begin .. j-1
      const size_t s0 = at[run_begin], s1 = at[j];
      if (segs >= kMinRepetitions) {
        const int64_t covered = cum[s1] - cum[s0];
        int64_t longest = 0;
        double gap = 0;
        for (size_t k = run_begin; k < j; ++k) {
          longest = std::max(longest, cum[at[k + 1]] - cum[at[k]]);
          if (k > run_begin && at[k] > 0) {
            gap += static_cast<double>(std::max<int64_t>(0, seq.Start(at[k]) - seq.End(at[k] - 1)));
          }
        }
        gap /= static_cast<double>(segs - 1);
        const bool loader = seq.Loader(s0);
        const double len = static_cast<double>(s1 - s0) / static_cast<double>(segs);
        const bool covers = covered > cum[n] - covered && covered - longest > cum[n] - covered;
        // Smallest period first; among periods within 20% of each other a
        // DataLoader anchor, then the anchor after the longest idle gap.
        const bool better = !best.found() || len < 0.8 * best_len ||
                            (len <= 1.25 * best_len && (loader != best_loader ? loader : gap > best_gap));
        if (covers && better) {
          best.period = static_cast<uint32_t>(std::lround(len));
          best.exact = false;
          best.first = static_cast<uint32_t>(s0);
          best.covered_ns = covered;
          best.steps.clear();
          for (size_t k = run_begin; k < j; ++k) {
            const size_t first = at[k], next = at[k + 1];
            int64_t end;
            if (next < n) {
              end = seq.Start(next);
            } else {
              end = seq.End(first);
              for (size_t i = first; i < next; ++i) end = std::max(end, seq.End(i));
            }
            best.steps.push_back({seq.Start(first), std::max<int64_t>(0, end - seq.Start(first))});
          }
          best_loader = loader;
          best_gap = gap;
          best_len = len;
        }
      }
      run_begin = j;
    }
  }
  return best.found() ? best : none;
}

// The exact pattern, unless the approximate one holds more busy time (the
// exact run stopped at an iteration whose small ops differ).
template <typename Ops>
PeriodicPattern FindPattern(const Ops& ops) {
  PeriodicPattern exact = Finder<Ops>(ops).Run();
  PeriodicPattern approximate = FindApproximatePattern(ops);
  return approximate.found() && (!exact.found() || approximate.covered_ns > exact.covered_ns) ? approximate : exact;
}

}  // namespace

PeriodicPattern FindPeriodicPattern(const OpSequence& seq) { return FindPattern(VectorOps{seq}); }

TracePattern FindTracePeriodicSteps(const Trace& trace) {
  const SliceTable& s = trace.slices;
  const TrackTable& t = trace.tracks;
  TracePattern best;
  std::unordered_map<uint32_t, uint8_t> loader_by_name;
  std::vector<uint32_t> rows;  // the slice of each op
  std::vector<uint8_t> data_loader;
  const SliceOps ops{s, rows, data_loader};
  int64_t max_busy = 0;  // the busiest host thread's outermost ops' summed durations
  // Slices are sorted by (track, start, longest first): each track is one range.
  size_t i = 0;
  while (i < s.size()) {
    const uint32_t track = s.track[i];
    size_t end = i;
    while (end < s.size() && s.track[end] == track) ++end;
    const size_t range_begin = i;
    i = end;
    const bool host = t.kind[track] == TrackKind::kThread || t.kind[track] == TrackKind::kSpans;
    if (!host || t.layer[track] == Layer::kDevice) continue;
    // Outermost ops of [lo, hi). Without a pattern among them, an op that
    // holds more than half of their busy time (a wrapper: record_function
    // around the loop, a benchmark's phase) is replaced by the outermost ops
    // inside it, up to 8 times.
    size_t lo = range_begin, hi = end;
    for (int level = 0; level < 8; ++level) {
      rows.clear();
      data_loader.clear();
      int64_t outer_end = INT64_MIN, busy = 0, widest = -1;
      size_t widest_at = 0;
      for (size_t k = lo; k < hi; ++k) {
        if (!IsOp(s.kind[k]) || s.ts_ns[k] < outer_end) continue;
        outer_end = EndOf(s, k);
        auto [it, inserted] = loader_by_name.try_emplace(s.name[k].raw, 0);
        if (inserted) it->second = ContainsDataLoader(trace.Str(s.name[k])) ? 1 : 0;
        rows.push_back(static_cast<uint32_t>(k));
        data_loader.push_back(it->second);
        const int64_t d = std::max<int64_t>(0, s.dur_ns[k]);
        busy = AddSat(busy, d);
        if (d > widest) {
          widest = d;
          widest_at = k;
        }
      }
      if (rows.empty()) break;
      if (level == 0) max_busy = std::max(max_busy, busy);
      PeriodicPattern p = FindPattern(ops);
      if (p.found()) {
        if (best.track == kNoTrack || p.covered_ns > best.pattern.covered_ns) {
          best.track = track;
          best.pattern = std::move(p);
        }
        break;
      }
      const size_t w = widest_at;
      const bool has_children = w + 1 < hi && s.ts_ns[w + 1] < EndOf(s, w);
      if (widest <= busy - widest || !has_children) break;
      size_t k = w + 1;  // the slices after the wrapper that start inside it
      while (k < hi && s.ts_ns[k] < EndOf(s, w)) ++k;
      lo = w + 1;
      hi = k;
    }
  }
  // A pattern on a side thread (a pseudo-thread of sync events, a helper)
  // does not make the trace's steps: the steps must hold more than half of
  // the busiest host thread's busy time.
  if (best.track != kNoTrack && best.pattern.covered_ns <= max_busy - best.pattern.covered_ns) return TracePattern{};
  return best;
}

}  // namespace aiprof
