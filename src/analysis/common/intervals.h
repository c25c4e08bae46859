// Sets of time intervals [start, end) in ns: unions, intersections and
// window queries, shared by the breakdown and the communication analysis.
#ifndef AIPROF_SRC_ANALYSIS_COMMON_INTERVALS_H_
#define AIPROF_SRC_ANALYSIS_COMMON_INTERVALS_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace aiprof {

using Intervals = std::vector<std::pair<int64_t, int64_t>>;

// Sorted, disjoint union of `iv` (touching intervals merge). O(n log n).
Intervals MergeIntervals(Intervals iv);

// Intersection of two sorted disjoint lists, itself sorted and disjoint.
Intervals IntersectIntervals(const Intervals& a, const Intervals& b);

// Length of the intersection of two sorted disjoint lists, without building it.
int64_t IntersectionLength(const Intervals& a, const Intervals& b);

// Total length of a sorted disjoint list.
int64_t LengthOf(const Intervals& merged);

// Whether t lies in an interval of the sorted disjoint list. O(log n).
bool IntervalsContain(const Intervals& merged, int64_t t);

// [start, end) less the sorted disjoint list `cut`: sorted and disjoint.
Intervals Complement(const Intervals& cut, int64_t start, int64_t end);

// A sorted disjoint list with prefix sums: the covered length inside any
// window in O(log n).
class CoveredTime {
 public:
  explicit CoveredTime(Intervals merged);
  // |this ∩ [start_ns, end_ns)|.
  int64_t Within(int64_t start_ns, int64_t end_ns) const;
  bool empty() const { return iv_.empty(); }

 private:
  // Covered length in (-inf, t).
  int64_t Before(int64_t t) const;
  Intervals iv_;
  std::vector<int64_t> prefix_ns_;  // prefix_ns_[i] = length of iv_[0, i)
};

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_COMMON_INTERVALS_H_
