// Unit formatting shared by the report writers.
#ifndef AIPROF_SRC_RENDER_UNITS_H_
#define AIPROF_SRC_RENDER_UNITS_H_

#include <cstdint>
#include <string>

namespace aiprof {

// Integer nanoseconds as exact decimal microseconds: 1234567 → "1234.567",
// 5000 → "5". No rounding, no double.
std::string NsToUsText(int64_t ns);

}  // namespace aiprof

#endif  // AIPROF_SRC_RENDER_UNITS_H_
