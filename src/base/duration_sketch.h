// A mergeable quantile sketch of durations: DDSketch (Masson, Rim, Lee,
// "DDSketch: a fast and fully-mergeable quantile sketch with relative-error
// guarantees", VLDB 2019) with logarithmic buckets of relative accuracy
// alpha = kSketchRelativeAccuracy (1%): gamma = (1 + alpha) / (1 - alpha),
// a value x >= 1 ns falls in bucket i = ceil(log_gamma(x)), and bucket i
// stands for 2 gamma^i / (gamma + 1). Every quantile estimate is within a
// relative error alpha of the true value at that rank (the rank computed as
// floor(q (n - 1)), as DDSketch's paper does); values below 1 ns (0-length
// events) are kept in a separate zero bucket and reported as 0. Merging two
// sketches adds their bucket counts: the merge of the ranks' sketches is
// the sketch of all their values, with the same guarantee.
//
// Buckets are dense between the lowest and highest index used (about 116
// buckets per decade of range; one op's durations span one to three
// decades), serialized as LEB128 varints.
#ifndef AIPROF_SRC_BASE_DURATION_SKETCH_H_
#define AIPROF_SRC_BASE_DURATION_SKETCH_H_

#include <cstdint>
#include <vector>

namespace aiprof {

inline constexpr double kSketchRelativeAccuracy = 0.01;

class DurationSketch {
 public:
  void Add(int64_t value_ns, uint64_t count = 1);
  void Merge(const DurationSketch& other);
  // The q-quantile (q in [0, 1]), within kSketchRelativeAccuracy; 0 when empty.
  double Quantile(double q) const;
  uint64_t count() const { return count_; }

  // Raw state, for serialization: zero bucket, lowest index, bucket counts.
  uint64_t zero_count() const { return zero_; }
  int32_t min_index() const { return min_index_; }
  const std::vector<uint64_t>& buckets() const { return buckets_; }
  // Rebuilds from raw state; false when it is inconsistent.
  bool Assign(uint64_t zero, int32_t min_index, std::vector<uint64_t> buckets);

  static int32_t IndexOf(double value);
  static double ValueOf(int32_t index);

 private:
  void AddToIndex(int32_t index, uint64_t count);
  uint64_t zero_ = 0, count_ = 0;
  int32_t min_index_ = 0;
  std::vector<uint64_t> buckets_;  // buckets_[k] counts index min_index_ + k
};

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_DURATION_SKETCH_H_
