// Readers of benchmark result files: a plain list of latencies (text, CSV
// with a header, JSON array or object), hyperfine's --export-json, and
// Google Benchmark's JSON (--benchmark_format=json or --benchmark_out, with
// --benchmark_repetitions: each repetition is one sample).
//
// Errors name the file and the position: "FILE:LINE: ..." for text and CSV,
// "FILE:LINE:COL: ..." for JSON syntax, "FILE: results[2].times[5]: ..." for
// a JSON value of the wrong type.
#ifndef AIPROF_SRC_IMPORTERS_SAMPLES_SAMPLE_FILE_H_
#define AIPROF_SRC_IMPORTERS_SAMPLES_SAMPLE_FILE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"

namespace aiprof {

struct SampleFileOptions {
  // Which benchmark, when the file holds several: a hyperfine command, or a
  // Google Benchmark run_name. Empty: the file must hold exactly one.
  std::string benchmark;
  // Unit of numbers that do not state theirs (plain lists, a "latency"
  // column): ns, us, ms or s. A column or key suffix (_ns, _us, _ms, _s) or a
  // JSON "unit" key wins over it.
  std::string default_unit = "ms";
};

struct SampleFile {
  std::string format;  // "text", "csv", "json", "hyperfine", "google-benchmark"
  std::string benchmark;  // the benchmark chosen, when the format names them
  std::vector<double> latency_ns;
  std::vector<double> items_per_second;  // per sample, when the file has it
  std::map<std::string, std::vector<double>> quality;  // accuracy, precision, ...
};

// True if `path` looks like a benchmark result file rather than a trace
// (decided by content: the first bytes and, for JSON objects, the top-level keys).
bool LooksLikeSampleFile(const std::string& path);

StatusOr<SampleFile> ReadSampleFile(const std::string& path, const SampleFileOptions& options);
// The same, from bytes already in memory (`path` names them in errors). Visible for testing.
StatusOr<SampleFile> ParseSampleFile(const std::string& path, std::string_view content, const SampleFileOptions& options);

// Nanoseconds per unit ("ns", "us", "ms", "s"); 0 if unknown.
double NanosecondsPerUnit(std::string_view unit);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_SAMPLES_SAMPLE_FILE_H_
