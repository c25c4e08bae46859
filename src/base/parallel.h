// Small fork-join helpers for the coarse parallel phases (sorting a table's
// keys, permuting its columns, running independent analyses). Threads are
// started per call: these calls last milliseconds, so a pool buys nothing.
#ifndef AIPROF_SRC_BASE_PARALLEL_H_
#define AIPROF_SRC_BASE_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace aiprof {

// Runs fn(i) for every i in [0, n) on up to `threads` threads, the calling
// one included; returns when all are done. Items are taken in order from a
// shared counter, so uneven items balance themselves.
template <typename F>
void ParallelFor(size_t n, size_t threads, F&& fn) {
  size_t workers = std::min(threads, n);
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto loop = [&] {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(loop);
  loop();
  for (std::thread& t : pool) t.join();
}

namespace parallel_internal {

// Merges sorted [a, a_end) and [b, b_end) into out, in up to `pieces`
// independent parts: the larger input is split at its middle and the other
// at the matching lower bound, recursively.
template <typename T, typename Less>
void SplitMerge(const T* a, const T* a_end, const T* b, const T* b_end, T* out, size_t pieces, Less less,
                std::vector<std::pair<std::pair<const T*, const T*>, std::pair<std::pair<const T*, const T*>, T*>>>* jobs) {
  size_t na = static_cast<size_t>(a_end - a), nb = static_cast<size_t>(b_end - b);
  if (pieces <= 1 || na + nb < 4096) {
    jobs->push_back({{a, a_end}, {{b, b_end}, out}});
    return;
  }
  if (na < nb) {
    std::swap(a, b);
    std::swap(a_end, b_end);
    std::swap(na, nb);
  }
  const T* am = a + na / 2;
  const T* bm = std::lower_bound(b, b_end, *am, less);
  SplitMerge(a, am, b, bm, out, pieces / 2, less, jobs);
  SplitMerge(am, a_end, bm, b_end, out + (am - a) + (bm - b), pieces - pieces / 2, less, jobs);
}

}  // namespace parallel_internal

// Sorts `v` by `less`, which must be a strict total order (no two distinct
// elements equivalent), so the result is the one std::sort gives whatever
// the thread count. Runs already in the data are kept: a table written in a
// few sorted sections (the common case for traces) costs a few merge passes,
// not a full sort. Merge passes are split across threads too.
template <typename T, typename Less>
void ParallelSort(std::vector<T>* v, Less less, size_t threads) {
  const size_t n = v->size();
  if (n < 2) return;
  constexpr size_t kMaxRuns = 256;
  std::vector<size_t> bounds{0};
  for (size_t i = 1; i < n && bounds.size() <= kMaxRuns; ++i) {
    if (less((*v)[i], (*v)[i - 1])) bounds.push_back(i);
  }
  if (bounds.size() == 1) return;  // already sorted
  if (bounds.size() > kMaxRuns) {
    size_t chunks = std::max<size_t>(threads, 1);
    bounds.clear();
    for (size_t c = 0; c < chunks; ++c) bounds.push_back(n * c / chunks);
    bounds.push_back(n);
    ParallelFor(chunks, threads, [&](size_t c) {
      std::sort(v->begin() + static_cast<ptrdiff_t>(bounds[c]), v->begin() + static_cast<ptrdiff_t>(bounds[c + 1]), less);
    });
  } else {
    bounds.push_back(n);
  }
  std::vector<T> buffer(n);
  T* src = v->data();
  T* dst = buffer.data();
  while (bounds.size() > 2) {
    const size_t segments = bounds.size() - 1;
    std::vector<std::pair<std::pair<const T*, const T*>, std::pair<std::pair<const T*, const T*>, T*>>> jobs;
    size_t pairs = (segments + 1) / 2;
    size_t pieces = std::max<size_t>(1, (threads + pairs - 1) / pairs);
    std::vector<size_t> next{0};
    for (size_t p = 0; p < pairs; ++p) {
      size_t lo = bounds[2 * p], mid = bounds[std::min(2 * p + 1, segments)], hi = bounds[std::min(2 * p + 2, segments)];
      parallel_internal::SplitMerge<T>(src + lo, src + mid, src + mid, src + hi, dst + lo, pieces, less, &jobs);
      next.push_back(hi);
    }
    ParallelFor(jobs.size(), threads, [&](size_t j) {
      const auto& [first, rest] = jobs[j];
      std::merge(first.first, first.second, rest.first.first, rest.first.second, rest.second, less);
    });
    bounds = std::move(next);
    std::swap(src, dst);
  }
  if (src != v->data()) v->swap(buffer);
}

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_PARALLEL_H_
