// Exact quantiles, interpolated linearly between closest ranks (numpy's
// default), from sorted values or by selection from unsorted ones.
#ifndef AIPROF_SRC_BASE_QUANTILE_H_
#define AIPROF_SRC_BASE_QUANTILE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace aiprof {

// Quantile q in [0, 1] of `n` sorted values.
double QuantileSorted(const int64_t* sorted, size_t n, double q);
// The same quantile of unsorted `data` (reordered in place), by selection.
double QuantileSelect(int64_t* data, size_t n, double q);
// Median of `values` (mean of the middle two for an even count); 0 when empty.
double Median(std::vector<double> values);

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_QUANTILE_H_
