#include "src/analysis/common/intervals.h"

#include <algorithm>

namespace aiprof {

Intervals MergeIntervals(Intervals iv) {
  // Merged in place, over the sorted input: a second, growing vector held
  // up to three times the input at once (the breakdown of a 13.5 M-slice
  // trace: 670 MB of its transient peak).
  std::sort(iv.begin(), iv.end());
  size_t k = 0;
  for (size_t i = 0; i < iv.size(); ++i) {
    if (k > 0 && iv[i].first <= iv[k - 1].second) {
      iv[k - 1].second = std::max(iv[k - 1].second, iv[i].second);
    } else {
      iv[k++] = iv[i];
    }
  }
  iv.resize(k);
  // Keep no more than twice the room it needs (a vector grown to k holds up
  // to 2k): a copy of the merged union, at most half the input.
  if (iv.capacity() > 2 * k + 16) iv.shrink_to_fit();
  return iv;
}

Intervals IntersectIntervals(const Intervals& a, const Intervals& b) {
  Intervals out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) out.emplace_back(lo, hi);
    if (a[i].second < b[j].second) ++i; else ++j;
  }
  return out;
}

int64_t IntersectionLength(const Intervals& a, const Intervals& b) {
  int64_t n = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) n += hi - lo;
    if (a[i].second < b[j].second) ++i; else ++j;
  }
  return n;
}

int64_t LengthOf(const Intervals& merged) {
  int64_t n = 0;
  for (const auto& [a, b] : merged) n += b - a;
  return n;
}

CoveredTime::CoveredTime(Intervals merged) : iv_(std::move(merged)) {
  prefix_ns_.reserve(iv_.size() + 1);
  prefix_ns_.push_back(0);
  for (const auto& [a, b] : iv_) prefix_ns_.push_back(prefix_ns_.back() + (b - a));
}

int64_t CoveredTime::Before(int64_t t) const {
  // First interval starting at or after t; the one before may straddle t.
  auto it = std::lower_bound(iv_.begin(), iv_.end(), t, [](const auto& iv, int64_t x) { return iv.first < x; });
  size_t k = static_cast<size_t>(it - iv_.begin());
  if (k == 0) return 0;
  const auto& prev = iv_[k - 1];
  return prefix_ns_[k - 1] + (std::min(prev.second, t) - prev.first);
}

int64_t CoveredTime::Within(int64_t start_ns, int64_t end_ns) const {
  if (end_ns <= start_ns) return 0;
  return Before(end_ns) - Before(start_ns);
}

bool IntervalsContain(const Intervals& merged, int64_t t) {
  auto it = std::upper_bound(merged.begin(), merged.end(), std::make_pair(t, INT64_MAX));
  return it != merged.begin() && t < std::prev(it)->second;
}

Intervals Complement(const Intervals& cut, int64_t start, int64_t end) {
  Intervals out;
  int64_t at = start;
  for (const auto& [a, b] : cut) {
    if (b <= at) continue;
    if (a >= end) break;
    if (a > at) out.emplace_back(at, a);
    at = std::max(at, b);
  }
  if (at < end) out.emplace_back(at, end);
  return out;
}

}  // namespace aiprof
