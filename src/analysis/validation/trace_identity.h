// What a stored prediction case (a knowledge card's prediction) is tied to,
// so that the history that corrects later predictions counts each measured
// pair once, only on the same workload, and never the inputs being checked
// (docs/whatif.md "Predictions corrected by history").
//
//   InputIdentity("run/before.json.gz")  -> "5f0c...-1a2b3c": the file's bytes
//     (a folder: its files' relative paths and bytes), so a copy or another
//     path to the same trace is the same input, and a re-run is not.
//   WorkloadSignature(trace)             -> a MinHash of the trace's distinct
//     slice names (ProfilerStep#12 read as ProfilerStep): two traces of one
//     program share nearly all names, two programs few.
#ifndef AIPROF_SRC_ANALYSIS_VALIDATION_TRACE_IDENTITY_H_
#define AIPROF_SRC_ANALYSIS_VALIDATION_TRACE_IDENTITY_H_

#include <string>

#include "src/base/status.h"

namespace aiprof {

struct Trace;

// A 64-bit hash of the content and its size in bytes, as "HASH-SIZE" (hex).
// Not cryptographic: it tells inputs apart, it does not guard against forgery.
StatusOr<std::string> InputIdentity(const std::string& path);

// kWorkloadHashes MinHash values of the distinct slice names (a trailing
// "#N" dropped), hex; "" for a trace without slices.
inline constexpr int kWorkloadHashes = 64;
std::string WorkloadSignature(const Trace& trace);

// The estimated Jaccard similarity of the two name sets (the share of equal
// MinHash values), or -1 when either signature is missing or malformed.
double WorkloadSimilarity(const std::string& a, const std::string& b);
// Cases whose workload is at least this similar count as the same workload.
inline constexpr double kSameWorkloadSimilarity = 0.5;

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_VALIDATION_TRACE_IDENTITY_H_
