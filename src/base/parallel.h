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

template <typename T>
struct MergeJob {
  const T *a, *a_end, *b, *b_end;
  size_t out;  // output position of the first element
};

// Splits the merge of sorted [a, a_end) and [b, b_end) (output from `out`)
// into up to `pieces` independent merges: the larger input is split at its
// middle and the other at the matching lower bound, recursively.
template <typename T, typename Less>
void SplitMerge(const T* a, const T* a_end, const T* b, const T* b_end, size_t out, size_t pieces, Less less,
                std::vector<MergeJob<T>>* jobs) {
  size_t na = static_cast<size_t>(a_end - a), nb = static_cast<size_t>(b_end - b);
  if (pieces <= 1 || na + nb < 4096) {
    jobs->push_back({a, a_end, b, b_end, out});
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
  SplitMerge(am, a_end, bm, b_end, out + static_cast<size_t>(am - a) + static_cast<size_t>(bm - b),
             pieces - pieces / 2, less, jobs);
}

// Runs `jobs`, handing each merged element to emit(position, element).
template <typename T, typename Less, typename Emit>
void RunMerges(const std::vector<MergeJob<T>>& jobs, size_t threads, Less less, Emit& emit) {
  ParallelFor(jobs.size(), threads, [&](size_t j) {
    MergeJob<T> m = jobs[j];
    size_t out = m.out;
    while (m.a != m.a_end && m.b != m.b_end) emit(out++, less(*m.b, *m.a) ? *m.b++ : *m.a++);
    while (m.a != m.a_end) emit(out++, *m.a++);
    while (m.b != m.b_end) emit(out++, *m.b++);
  });
}

}  // namespace parallel_internal

// Sorts `v` by `less`, which must be a strict total order (no two distinct
// elements equivalent), so the order is the one std::sort gives whatever the
// thread count, and hands the result to emit(position, element) for every
// position (from several threads; positions are distinct). `v` itself is
// left in an unspecified order. Runs already in the data are kept: a table
// written in a few sorted sections costs a few merge passes, not a full
// sort; otherwise `threads` chunks are sorted side by side. Merge passes are
// split across threads too, and the last one writes straight to `emit`, so
// the caller keeps only what it needs (an index, say) of the sorted keys.
template <typename T, typename Less, typename Emit>
void ParallelSortEmit(std::vector<T>* v, Less less, size_t threads, Emit emit) {
  const size_t n = v->size();
  constexpr size_t kMaxRuns = 256;
  std::vector<size_t> bounds{0};
  for (size_t i = 1; i < n && bounds.size() <= kMaxRuns; ++i) {
    if (less((*v)[i], (*v)[i - 1])) bounds.push_back(i);
  }
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
  std::vector<T> buffer;
  T* src = v->data();
  for (;;) {
    const size_t segments = bounds.size() - 1;
    const size_t pairs = (segments + 1) / 2;
    const size_t pieces = std::max<size_t>(1, (threads + pairs - 1) / pairs);
    std::vector<parallel_internal::MergeJob<T>> jobs;
    std::vector<size_t> next{0};
    for (size_t p = 0; p < pairs; ++p) {
      size_t lo = bounds[2 * p], mid = bounds[std::min(2 * p + 1, segments)], hi = bounds[std::min(2 * p + 2, segments)];
      parallel_internal::SplitMerge<T>(src + lo, src + mid, src + mid, src + hi, lo, pieces, less, &jobs);
      next.push_back(hi);
    }
    if (segments <= 2) {  // the last pass (or none: one run) goes to emit
      parallel_internal::RunMerges(jobs, threads, less, emit);
      return;
    }
    if (buffer.empty()) buffer.resize(n);
    T* dst = src == v->data() ? buffer.data() : v->data();
    auto to_dst = [dst](size_t i, const T& x) { dst[i] = x; };
    parallel_internal::RunMerges(jobs, threads, less, to_dst);
    bounds = std::move(next);
    src = dst;
  }
}

// Sorts `v` by `less` (a strict total order; see ParallelSortEmit).
template <typename T, typename Less>
void ParallelSort(std::vector<T>* v, Less less, size_t threads) {
  std::vector<T> out(v->size());
  ParallelSortEmit(v, less, threads, [&out](size_t i, const T& x) { out[i] = x; });
  v->swap(out);
}

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_PARALLEL_H_
