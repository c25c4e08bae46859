// The tracing SDK's event file (src/sdk/event_stream.h): the events each
// thread recorded, turned into the model through TraceBuilder like every
// other format.
//
// What the model gets:
//   - one thread track per recording thread (kind thread, layer
//     application; a thread of its own even when the OS reused a tid), then
//     one track per request lane (kind spans, "requests", "requests 2", ...),
//     then one counter track per counter name (layer application); every
//     track carries the process's pid, name and rank;
//   - spans, nodes ("node:<name>", src/analysis/pipeline's stage spans) and
//     iterations ("ProfilerStep#N": Finalize makes them steps) as slices of
//     category "user_annotation"; an end closes the innermost open entry of
//     its kind, and entries opened above it close with it;
//   - a request is one slice named as given on the first lane free at its
//     start (arg "id"), with a flow (category "request") from the innermost
//     span open where it began to the innermost span open where it ended
//     (the request slice itself stands in for a side with no open span);
//   - marks are instants (category "mark"); counters are counter samples,
//     in time order per track;
//   - metadata: source_format "aiprof_sdk", pid, rank, process_name and the
//     recorder's figures (sdk.*); diagnostics for misuse the SDK's calls
//     allowed (sdk_unmatched_end, sdk_unclosed_span, sdk_request_*).
// Spans still open when the file was written are left out (metadata
// "sdk.open_spans"); ends without a begin that a ring's overwritten part
// explains are counted in "sdk.ring_partial", not as diagnostics.
#ifndef AIPROF_SRC_IMPORTERS_SDK_SDK_EVENT_IMPORTER_H_
#define AIPROF_SRC_IMPORTERS_SDK_SDK_EVENT_IMPORTER_H_

#include <string>
#include <string_view>

#include "src/base/status.h"

namespace aiprof {

class TraceBuilder;

bool DetectSdkEventFile(std::string_view prefix);
Status ImportSdkEventFile(const std::string& path, TraceBuilder* builder);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_SDK_SDK_EVENT_IMPORTER_H_
