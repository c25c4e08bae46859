// Chrome trace-event JSON (PyTorch profiler / Kineto, legacy autograd
// profiler, any Chrome trace): plain, .gz or .zst.
#ifndef AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_IMPORTER_H_
#define AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_IMPORTER_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "src/base/status.h"

namespace aiprof {

class TraceBuilder;

bool DetectChromeJson(std::string_view prefix);
// Parses on WorkerThreads() threads.
Status ImportChromeJson(const std::string& path, TraceBuilder* builder);
struct ChromeJsonOptions {
  // Parser threads beside the reading thread (0: everything on this one);
  // the model is the same for any count.
  size_t workers = 1;
  // Bytes per batch handed to a worker (0: the tokenizer's default). Tests
  // make it small so that small files still span many batches.
  size_t batch_bytes = 0;
};
Status ImportChromeJson(const std::string& path, TraceBuilder* builder, const ChromeJsonOptions& options);
// The events of a Chrome trace (or a format written like one, Ascend's
// trace_view.json) into `builder`, without the trace-level metadata
// ImportChromeJson adds. Flow ids beyond 64 bits are hashed and counted in
// metadata "hashed_flow_ids".
Status ParseChromeJsonEvents(const std::string& path, TraceBuilder* builder, const ChromeJsonOptions& options,
                             std::string* compression);
// The default options on this machine: WorkerThreads() workers.
ChromeJsonOptions DefaultChromeJsonOptions();

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_IMPORTER_H_
