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

StatusOr<std::unique_ptr<Trace>> CaptureTraceFlag::Import(const std::string& input) const {
  if (files.empty()) return ImportTrace(input);
  return ImportWithGraphCaptures(input, files);
}

StatusOr<std::unique_ptr<AnalysisSession>> CaptureTraceFlag::Open(SessionOptions options) const {
  if (files.empty()) return AnalysisSession::Open(std::move(options));
  ASSIGN_OR_RETURN(std::unique_ptr<Trace> trace, Import(options.input));
  return std::make_unique<AnalysisSession>(std::shared_ptr<const Trace>(std::move(trace)), std::move(options));
}

}  // namespace aiprof
