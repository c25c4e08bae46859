// The nesting of one track's slices, as every reader of it shares it:
// `aiprof query`'s slices.parent and slices.self_ns and the flame graph's
// frames and self times (docs/query.md, docs/views.md).
//
// Over a run of one track's rows (sorted by start, longest first, as
// TraceBuilder leaves them):
// - a slice's parent is the innermost open slice that encloses it (starts
//   at or before it, ends at or after its end). One that starts inside a
//   slice and outlives it is not that slice's child; it is kept whole under
//   the slice that encloses it (torch opens `ProfilerStep#N` and
//   record_function labels inside the short `_record_function_enter_new`
//   call that creates them);
// - each instant goes to the innermost (latest started) open slice, so self
//   times are never negative, a track's self times add up to the union of
//   its slices, and a slice's self time is its duration less its children's
//   wherever slices nest properly. A slice outlived by one that started in
//   it has no time after that start.
// The attribution applies the same parent rule with its own classes
// (src/analysis/attribution/attribution.cc, Builder::Sweep).
#ifndef AIPROF_SRC_MODEL_SLICE_NESTING_H_
#define AIPROF_SRC_MODEL_SLICE_NESTING_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "src/model/tables.h"

namespace aiprof {

// Walks rows [begin, end) of one track, the slices `keep(i)` accepts:
// `open(i, parent)` when slice i opens, `parent` being what `open` returned
// for its parent (nullptr: none), returns what its children see as parent
// and what its time is given to; `give(payload, ns)` hands out ns of self
// time. Returns how many kept slices outlived an open slice they started in.
template <typename Payload, typename Keep, typename Open, typename Give>
uint64_t SweepTrackNesting(const SliceTable& s, size_t begin, size_t end, Keep keep, Open open, Give give) {
  struct Entry {
    int64_t end_ns;
    Payload payload;
  };
  std::vector<Entry> stack;  // nested: each ends at or before the one below it
  int64_t now = std::numeric_limits<int64_t>::min();  // instants before `now` are given out
  // Gives the instants up to `t` to the innermost open slice, closing those
  // that end on the way.
  auto advance = [&](int64_t t) {
    while (!stack.empty()) {
      const Entry& top = stack.back();
      const int64_t upto = std::min(top.end_ns, t);
      if (upto > now) {
        give(top.payload, upto - now);
        now = upto;
      }
      if (top.end_ns > t) break;
      stack.pop_back();
    }
    now = std::max(now, t);
  };
  uint64_t outliving = 0;
  for (size_t i = begin; i < end; ++i) {
    if (!keep(i)) continue;
    const int64_t ts = s.ts_ns[i], slice_end = ts + std::max<int64_t>(s.dur_ns[i], 0);
    advance(ts);
    // Open slices it outlives are not its parent; their time ends here.
    if (!stack.empty() && stack.back().end_ns < slice_end) {
      ++outliving;
      while (!stack.empty() && stack.back().end_ns < slice_end) stack.pop_back();
    }
    Payload p = open(i, stack.empty() ? nullptr : &stack.back().payload);
    stack.push_back({slice_end, std::move(p)});
  }
  advance(std::numeric_limits<int64_t>::max());
  return outliving;
}

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_SLICE_NESTING_H_
