// Chrome trace-event JSON (PyTorch profiler / Kineto, legacy autograd
// profiler, any Chrome trace): plain, .gz or .zst.
#ifndef AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_IMPORTER_H_
#define AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_IMPORTER_H_

#include <string>
#include <string_view>

#include "src/base/status.h"

namespace aiprof {

class TraceBuilder;

bool DetectChromeJson(std::string_view prefix);
Status ImportChromeJson(const std::string& path, TraceBuilder* builder);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_IMPORTER_H_
