#include "src/session/run_loader.h"

#include <filesystem>

#include "src/analysis/validation/trace_samples.h"
#include "src/base/phase_log.h"
#include "src/importers/common/importer_registry.h"
#include "src/importers/samples/sample_file.h"

namespace aiprof {
namespace {

StatusOr<RunSamples> FromResultFile(const std::string& path, const RunInputs& in) {
  if (in.unit != "step") return ErrStatus(path + ": --unit selects spans in traces; this is a benchmark result file");
  SampleFileOptions so;
  so.benchmark = in.bench;
  so.default_unit = in.sample_unit;
  ASSIGN_OR_RETURN(SampleFile f, ReadSampleFile(path, so));
  RunSamples r;
  r.label = f.benchmark.empty() ? path : path + " [" + f.benchmark + "]";
  r.source_kind = f.format;
  r.unit = f.format == "google-benchmark" ? "repetition" : f.format == "hyperfine" ? "run" : "sample";
  r.latency_ns = std::move(f.latency_ns);
  r.throughput = std::move(f.items_per_second);
  r.items_per_sample = in.batch_size;
  r.quality = std::move(f.quality);
  r.device_util_missing = "a benchmark result file carries no device utilization";
  return r;
}

}  // namespace

StatusOr<LoadedRun> LoadRun(const std::string& path, const RunInputs& in) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return ErrStatus(path + ": no such file or folder");
  LoadedRun run;
  if (std::filesystem::is_regular_file(path, ec) && LooksLikeSampleFile(path)) {
    ASSIGN_OR_RETURN(run.samples, FromResultFile(path, in));
    return run;
  }
  {
    ScopedPhase timed("import");
    ASSIGN_OR_RETURN(run.trace, ImportTrace(path));
  }
  TraceSampleOptions to;
  to.unit = in.unit;
  to.items_per_sample = in.batch_size;
  to.warmup_steps = in.warmup_steps;
  ASSIGN_OR_RETURN(run.samples, SamplesFromTrace(*run.trace, path, to));
  return run;
}

StatusOr<RunSamples> LoadRunSamples(const std::string& path, const RunInputs& in) {
  ASSIGN_OR_RETURN(LoadedRun run, LoadRun(path, in));
  return std::move(run.samples);
}

}  // namespace aiprof
