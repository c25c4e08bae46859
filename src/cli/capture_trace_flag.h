// --capture-trace FILE (repeatable): graph capture traces to merge into the
// replay trace given as the input (src/importers/graph_capture/), for the
// commands that read one trace. A folder laid out as TraceLens's
// (capture_traces/execution_details.json) needs no flag.
#ifndef AIPROF_SRC_CLI_CAPTURE_TRACE_FLAG_H_
#define AIPROF_SRC_CLI_CAPTURE_TRACE_FLAG_H_

#include <memory>
#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/model/trace.h"
#include "src/session/session.h"

namespace CLI {
class App;
}

namespace aiprof {

struct CaptureTraceFlag {
  std::vector<std::string> files;
  void Add(CLI::App* sub);
  // The input imported, with the capture traces merged when given.
  StatusOr<std::unique_ptr<Trace>> Import(const std::string& input) const;
  // A session over that trace (AnalysisSession::Open when no capture is given).
  StatusOr<std::unique_ptr<AnalysisSession>> Open(SessionOptions options) const;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_CLI_CAPTURE_TRACE_FLAG_H_
