// Samples from a trace: per-step times, or the durations of spans chosen by
// name (--unit NAME), plus per-step device utilization, quality figures from
// the trace's metadata, and per-op durations.
#ifndef AIPROF_SRC_ANALYSIS_VALIDATION_TRACE_SAMPLES_H_
#define AIPROF_SRC_ANALYSIS_VALIDATION_TRACE_SAMPLES_H_

#include <string>
#include <string_view>

#include "src/analysis/validation/run_samples.h"
#include "src/base/status.h"
#include "src/model/trace.h"

namespace aiprof {

class AnalysisResults;

struct TraceSampleOptions {
  // "step": Trace::steps (ProfilerStep#N ...). Any other NAME: every slice
  // whose name is NAME, or NAME followed by one of "#", " ", "_", ":", "-",
  // "/" and anything (so "request" takes "request#3" and "request 17").
  std::string unit = "step";
  double items_per_sample = 0;  // batch size, if known
  // Steps only: leading warm-up steps to leave out; -1 detects them
  // (leading outliers, src/analysis/window/analysis_window.h LeadingWarmup).
  int warmup_steps = -1;
  // The trace's session results, when it has a session: the request tokens
  // of --unit ttft, tpot and itl are its kRequestTokenStats, computed once for
  // every reader; null computes them here.
  AnalysisResults* results = nullptr;
};

// Metadata keys read as quality figures when they hold a number: these names,
// and any key starting with "quality.".
inline constexpr std::string_view kQualityMetadataKeys[] = {"accuracy", "precision", "recall", "f1", "top1", "top5"};

// Fails (naming `label`) when the trace holds no sample of the chosen unit.
StatusOr<RunSamples> SamplesFromTrace(const Trace& trace, const std::string& label, const TraceSampleOptions& options);

// True if `name` is `unit` or `unit` followed by a separator. Visible for testing.
bool SpanNameMatchesUnit(std::string_view name, std::string_view unit);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_VALIDATION_TRACE_SAMPLES_H_
