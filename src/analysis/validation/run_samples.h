// RunSamples: what one run (a trace or a benchmark result file) contributes
// to a before/after validation. Built by SamplesFromTrace (trace_samples.h)
// or, for benchmark files, by the CLI from src/importers/samples.
#ifndef AIPROF_SRC_ANALYSIS_VALIDATION_RUN_SAMPLES_H_
#define AIPROF_SRC_ANALYSIS_VALIDATION_RUN_SAMPLES_H_

#include <map>
#include <string>
#include <vector>

namespace aiprof {

struct RunSamples {
  std::string label;        // the file, as shown in reports
  std::string source_kind;  // "trace", "csv", "json", "hyperfine", "google-benchmark", "baseline"
  std::string unit;         // what one sample is: "step", "span 'request'", "repetition", "value"
  std::vector<double> latency_ns;  // one per sample, in input order
  // Items/s per sample as the file states it (Google Benchmark
  // items_per_second); empty: derived from latency and items_per_sample.
  std::vector<double> throughput;
  double items_per_sample = 0;  // batch size; 0 = unknown (throughput then counts samples/s)
  // Device busy fraction per step (traces with device activity); empty when
  // not measurable, with the reason in device_util_missing.
  std::vector<double> device_util;
  std::string device_util_missing;
  // Quality figures (accuracy, precision, ...): one or more values per run.
  std::map<std::string, std::vector<double>> quality;
  // Durations of each host op, by name (traces only), for the per-op
  // before/after comparison that tells a broad (environmental) slowdown from
  // a localized one.
  std::map<std::string, std::vector<double>> op_dur_ns;
  // What was done to the samples (e.g. "left out 1 warm-up step: ProfilerStep#0 181.6 ms").
  std::vector<std::string> notes;
  // Samples left out as warm-up (ns), in input order.
  std::vector<double> warmup_left_out_ns;
  // Several runs of one side (validate --before A --before B ...): each run
  // as loaded; the vectors above hold their samples concatenated
  // (MergeRuns, compare.h). Empty for one run.
  std::vector<RunSamples> runs;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_VALIDATION_RUN_SAMPLES_H_
