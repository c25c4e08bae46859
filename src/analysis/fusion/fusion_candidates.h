// Fusion candidates: frequent back-to-back sequences of short ops on one
// stream (device kernels) or thread (top-level cpu_ops on CPU-only traces).
//
// Algorithm (linear in ops): per timeline, ops in time order are cut into
// runs of consecutive short ops (a long op ends a run; on CPU timelines of a
// rank with steps, so do step boundaries and ops outside every step — the
// profiler's own step() work —: a sequence never spans two steps). Every window of
// length kFusionMinLength..kFusionMaxLength inside a run is keyed by a 64-bit
// hash of its op names; occurrences of one key are counted greedily without
// overlap. A candidate needs kFusionMinOccurrences occurrences. Ranked by
// op boundaries removed, occurrences × (length − 1), then total time.
// Overlapping windows of one longer repeating pattern are reported once: a
// candidate is skipped when a better-ranked one (reported or skipped)
// overlaps it — contains it, or shares all but one op of the shorter of the
// two, shifted — and has at least 2/3 of its occurrences.
// For each candidate, what fusing would remove:
//   - launches (device) or op dispatches (CPU): occurrences × (length − 1);
//   - idle gap time between the ops of each occurrence (measured);
//   - intermediate memory traffic: for each internal boundary, the next op's
//     first input written and read once (2 × elements × dtype bytes, from
//     "Input Dims"/"Input type"; an estimate, absent without shapes).
#ifndef AIPROF_SRC_ANALYSIS_FUSION_FUSION_CANDIDATES_H_
#define AIPROF_SRC_ANALYSIS_FUSION_FUSION_CANDIDATES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

class MetricSet;

// An op is short below this duration: device kernels, host ops.
inline constexpr int64_t kFusionShortKernelNs = 20'000;
inline constexpr int64_t kFusionShortCpuOpNs = 500'000;
inline constexpr size_t kFusionMinLength = 2;
inline constexpr size_t kFusionMaxLength = 8;
inline constexpr uint64_t kFusionMinOccurrences = 3;
// Candidates reported (and counted in fusion_candidate_ratio).
inline constexpr size_t kFusionTopReported = 5;
// Ranked candidates examined for overlap before giving up on filling the top.
inline constexpr size_t kFusionMaxExamined = 2000;

struct FusionCandidate {
  std::vector<StringId> ops;  // the sequence
  uint64_t occurrences = 0;
  int64_t total_ns = 0;        // op time inside the occurrences
  int64_t gap_ns = 0;          // idle time between their ops
  uint64_t boundaries_removed = 0;  // occurrences × (length − 1)
  double intermediate_bytes = 0;    // estimate; 0 if no shapes
  bool has_shapes = false;
  // What fusing would save inside the analysis window, in wall-clock time:
  // per occurrence, the gaps between its ops plus its op time beyond the
  // longest op (a fused memory-bound sequence reads its input and writes its
  // output once, so it runs about as long as its longest op).
  int64_t window_saving_ns = 0;
  uint64_t window_occurrences = 0;
};

// A sequence a library runs as one operation (a GEMM and its own split-K
// reduction epilogue, e.g. cutlass ... -> splitKreduce_kernel): not a fusion
// candidate.
struct LibraryInternalSequence {
  StringId first, second;
  uint64_t occurrences = 0;
  int64_t total_ns = 0;
};

struct FusionResult {
  bool device = false;  // kernels (else CPU top-level ops)
  int64_t op_time_ns = 0;      // all op time on the timelines considered
  int64_t covered_ns = 0;      // op time inside occurrences of the top candidates
  int64_t short_op_ns = 0;     // op time in short ops (small_op_ratio)
  uint64_t op_count = 0;
  std::vector<FusionCandidate> top;  // best first
  std::vector<LibraryInternalSequence> library_internal;  // largest first
};

// True for GEMM / convolution library kernels (cuBLAS, cuBLASLt, CUTLASS,
// cuDNN, xmma) and their split-K reduction epilogues; device runs of fusion
// candidates break at them (they are not elementwise, reduction or
// normalisation kernels a fuser combines).
bool IsLibraryMathKernel(std::string_view name);
bool IsLibraryEpilogueKernel(std::string_view name);

struct AnalysisWindow;
// With `window`, also window_saving_ns / window_occurrences.
FusionResult ComputeFusionCandidates(const Trace& trace, const AnalysisWindow* window = nullptr);

// Publishes fusion_candidate_ratio, fusion_candidate_occurrences_per_step,
// small_op_ratio and "fusion_missing" evidence.
void PublishFusionCandidates(const Trace& trace, const FusionResult& result, MetricSet* metrics);
// Publishes fusion_saving_ns: the top candidates' window savings, per the
// window's base.
void PublishFusionImpact(const FusionResult& result, const AnalysisWindow& window, MetricSet* metrics);

// True when sequence `x` overlaps `y` as windows of one longer sequence: the
// longest aligned stretch where they agree, reaching an end of each (one
// inside the other, or a suffix of one = a prefix of the other), is at least
// min(|x|, |y|) − 1 ops long. Visible for testing.
bool SequencesOverlap(const std::vector<StringId>& x, const std::vector<StringId>& y);

// "aten::mul -> aten::add -> ..." for reports.
std::string DescribeSequence(const Trace& trace, const FusionCandidate& c);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_FUSION_FUSION_CANDIDATES_H_
