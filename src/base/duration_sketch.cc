#include "src/base/duration_sketch.h"

#include <cmath>
#include <limits>

namespace aiprof {
namespace {

const double kGamma = (1 + kSketchRelativeAccuracy) / (1 - kSketchRelativeAccuracy);
const double kLogGamma = std::log(kGamma);
// Durations up to 2^62 ns fit in a few thousand buckets; a sketch never
// spans more than this many (guards against corrupt input).
constexpr int32_t kMaxSpan = 1 << 16;

}  // namespace

int32_t DurationSketch::IndexOf(double value) { return static_cast<int32_t>(std::ceil(std::log(value) / kLogGamma)); }

double DurationSketch::ValueOf(int32_t index) { return 2 * std::pow(kGamma, index) / (kGamma + 1); }

void DurationSketch::AddToIndex(int32_t index, uint64_t count) {
  if (buckets_.empty()) {
    min_index_ = index;
    buckets_.assign(1, 0);
  } else if (index < min_index_) {
    buckets_.insert(buckets_.begin(), static_cast<size_t>(min_index_ - index), 0);
    min_index_ = index;
  } else if (index - min_index_ >= static_cast<int32_t>(buckets_.size())) {
    buckets_.resize(static_cast<size_t>(index - min_index_) + 1, 0);
  }
  buckets_[static_cast<size_t>(index - min_index_)] += count;
}

void DurationSketch::Add(int64_t value_ns, uint64_t count) {
  if (count == 0) return;
  count_ += count;
  if (value_ns < 1) {
    zero_ += count;
    return;
  }
  AddToIndex(IndexOf(static_cast<double>(value_ns)), count);
}

void DurationSketch::Merge(const DurationSketch& other) {
  zero_ += other.zero_;
  count_ += other.count_;
  for (size_t k = 0; k < other.buckets_.size(); ++k) {
    if (other.buckets_[k] != 0) AddToIndex(other.min_index_ + static_cast<int32_t>(k), other.buckets_[k]);
  }
}

double DurationSketch::Quantile(double q) const {
  if (count_ == 0) return 0;
  q = std::min(1.0, std::max(0.0, q));
  const uint64_t rank = static_cast<uint64_t>(std::floor(q * static_cast<double>(count_ - 1)));
  if (rank < zero_) return 0;
  uint64_t seen = zero_;
  for (size_t k = 0; k < buckets_.size(); ++k) {
    seen += buckets_[k];
    if (seen > rank) return ValueOf(min_index_ + static_cast<int32_t>(k));
  }
  return buckets_.empty() ? 0 : ValueOf(min_index_ + static_cast<int32_t>(buckets_.size()) - 1);
}

bool DurationSketch::Assign(uint64_t zero, int32_t min_index, std::vector<uint64_t> buckets) {
  if (buckets.size() > static_cast<size_t>(kMaxSpan)) return false;
  if (min_index < -kMaxSpan || min_index > kMaxSpan) return false;
  uint64_t total = zero;
  for (uint64_t c : buckets) {
    if (c > std::numeric_limits<uint64_t>::max() - total) return false;
    total += c;
  }
  zero_ = zero;
  count_ = total;
  min_index_ = min_index;
  buckets_ = std::move(buckets);
  return true;
}

}  // namespace aiprof
