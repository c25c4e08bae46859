#include "src/session/run_loader.h"

#include <filesystem>

#include "src/analysis/validation/trace_identity.h"
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

Status CheckDistinctRuns(std::string_view side, const std::vector<std::string>& paths,
                         std::vector<std::string>* identities) {
  std::vector<std::string> canonical, ids;
  for (size_t i = 0; i < paths.size(); ++i) {
    std::error_code ec;
    std::filesystem::path c = std::filesystem::weakly_canonical(paths[i], ec);
    canonical.push_back(ec ? paths[i] : c.string());
    StatusOr<std::string> read = InputIdentity(paths[i]);
    const std::string id = read.ok() ? *read : "";
    for (size_t j = 0; j < i; ++j) {
      if (canonical[j] == canonical[i] || (!id.empty() && ids[j] == id)) {
        return ErrStatus(std::string(side) + " run " + std::to_string(i + 1) + " (" + paths[i] + ") is " +
                         (canonical[j] == canonical[i] ? "the same file as" : "a copy (same content) of") + " run " +
                         std::to_string(j + 1) + " (" + paths[j] +
                         "): give each run once; a repeated file is one measurement, not another run");
      }
    }
    ids.push_back(id);
  }
  if (identities) {
    for (const std::string& id : ids) {
      if (!id.empty()) identities->push_back(id);
    }
  }
  return OkStatus();
}

}  // namespace aiprof
