#include "src/cli/capture_trace_flag.h"

#include <CLI/CLI.hpp>

#include "src/importers/common/importer_registry.h"
#include "src/importers/graph_capture/graph_capture_merge.h"

namespace aiprof {

void CaptureTraceFlag::Add(CLI::App* sub) {
  sub->add_option("--capture-trace", files,
                  "A CUDA/HIP graph capture trace (repeatable): the replayed kernels of the input's graph launches are "
                  "attributed to the ops that captured them");
}

StatusOr<std::unique_ptr<Trace>> CaptureTraceFlag::Import(const InputFlags& in) const {
  if (files.empty()) return in.Import();
  if (in.paths.size() > 1) return UsageStatus("--capture-trace: give one replay trace, not several inputs");
  return ImportWithGraphCaptures(in.input, files);
}

StatusOr<std::unique_ptr<AnalysisSession>> CaptureTraceFlag::Open(const InputFlags& in, SessionOptions options) const {
  if (files.empty()) return in.Open(std::move(options));
  ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, Import(in));
  options.input = in.input;
  return std::make_unique<AnalysisSession>(std::shared_ptr<const Trace>(std::move(trace)), std::move(options));
}

}  // namespace aiprof
