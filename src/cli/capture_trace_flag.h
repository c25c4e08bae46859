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
#include "src/cli/flags.h"
#include "src/model/trace.h"
#include "src/session/session.h"

namespace CLI {
class App;
}

namespace aiprof {

struct CaptureTraceFlag {
  std::vector<std::string> files;
  void Add(CLI::App* sub);
  // The input imported (InputFlags::Import), with the capture traces merged
  // when given (into one replay trace: one path).
  StatusOr<std::unique_ptr<Trace>> Import(const InputFlags& in) const;
  // A session over that trace (InputFlags::Open when no capture is given).
  StatusOr<std::unique_ptr<AnalysisSession>> Open(const InputFlags& in, SessionOptions options) const;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_CLI_CAPTURE_TRACE_FLAG_H_
