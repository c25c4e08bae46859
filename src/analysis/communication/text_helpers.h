// Plain-text pieces of communication.cc's evidence lines. Internal to this
// directory.
#ifndef AIPROF_SRC_ANALYSIS_COMMUNICATION_TEXT_HELPERS_H_
#define AIPROF_SRC_ANALYSIS_COMMUNICATION_TEXT_HELPERS_H_

#include <cstdint>
#include <string>

#include "src/analysis/common/text_format.h"
#include "src/model/trace.h"

namespace aiprof::comm_text {

inline std::string Ns(int64_t ns) { return FormatDurationNs(static_cast<double>(ns)); }
inline std::string RankName(int32_t rank) { return rank == kNoRank ? "rank ?" : "rank " + std::to_string(rank); }
inline std::string GBps(double bytes_per_second) { return FormatFixed(bytes_per_second * 1e-9, 2) + " GB/s"; }
inline double Share(int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0; }

}  // namespace aiprof::comm_text

#endif  // AIPROF_SRC_ANALYSIS_COMMUNICATION_TEXT_HELPERS_H_
