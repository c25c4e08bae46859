// Opens any supported input into a Trace. Formats are told apart by content
// (magic bytes, first JSON byte), never by file name. A new format adds one
// entry to kImporters in importer_registry.cc.
#ifndef AIPROF_SRC_IMPORTERS_COMMON_IMPORTER_REGISTRY_H_
#define AIPROF_SRC_IMPORTERS_COMMON_IMPORTER_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>

#include "src/base/status.h"
#include "src/model/trace.h"

namespace aiprof {

class TraceBuilder;

struct ImporterEntry {
  const char* name;
  // True if the first decompressed bytes of the file look like this format.
  bool (*detect)(std::string_view prefix);
  Status (*import)(const std::string& path, TraceBuilder* builder);
};

// Imports `path` (a trace file in any known format, or a native .aiprof).
StatusOr<std::unique_ptr<Trace>> ImportTrace(const std::string& path);

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_COMMON_IMPORTER_REGISTRY_H_
