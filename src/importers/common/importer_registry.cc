#include "src/importers/common/importer_registry.h"

#include <sys/stat.h>

#include "src/base/phase_log.h"
#include "src/importers/ascend/trace_view_importer.h"
#include "src/importers/common/accelerator.h"
#include "src/importers/common/byte_source.h"
#include "src/importers/common/folder_importer.h"
#include "src/importers/graph_capture/graph_capture_merge.h"
#include "src/importers/json/chrome_json_importer.h"
#include "src/importers/nsys/nsys_sqlite_importer.h"
#include "src/importers/sdk/sdk_event_importer.h"
#include "src/model/native_file.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

// Order matters: the first entry whose detect() accepts the prefix imports.
// ascend_timeline (bare array, ts as strings) precedes the general chrome_json.
constexpr ImporterEntry kImporters[] = {
    {"aiprof_sdk", &DetectSdkEventFile, &ImportSdkEventFile},
    {"nsys_sqlite", &DetectNsysSqlite, &ImportNsysSqlite},
    {"ascend_timeline", &DetectAscendTimeline, &ImportAscendTimelineFile},
    {"chrome_json", &DetectChromeJson, &ImportChromeJson},
};

}  // namespace

bool IsImportableFilePrefix(std::string_view prefix) {
  if (prefix.substr(0, kNativeMagic.size()) == kNativeMagic) return true;
  for (const ImporterEntry& importer : kImporters) {
    if (importer.detect(prefix)) return true;
  }
  return false;
}

StatusOr<std::unique_ptr<Trace>> ImportTraceFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string prefix, ReadPrefix(path, 4096));
  if (prefix.empty()) return ErrStatus(path + ": the file is empty");
  if (prefix.substr(0, kNativeMagic.size()) == kNativeMagic) return ReadNativeFile(path);
  for (const ImporterEntry& importer : kImporters) {
    if (!importer.detect(prefix)) continue;
    auto trace = std::make_unique<Trace>();
    TraceBuilder builder(trace.get());
    {
      ScopedPhase phase("parse");
      RETURN_IF_ERROR(importer.import(path, &builder));
    }
    {
      ScopedPhase phase("finalize");
      RETURN_IF_ERROR(builder.Finalize());
    }
    RecognizeAccelerator(trace.get());
    trace->metadata["source_path"] = path;
    return trace;
  }
  return ErrStatus(path + ": unrecognised format (expected Chrome/Kineto or Ascend trace JSON, optionally gzip "
                   "or zstd compressed, an Nsight Systems SQLite export, an .aiprof file, or a profiler folder)");
}

StatusOr<std::unique_ptr<Trace>> ImportTrace(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrStatus(path + ": no such file or folder");
  if (!S_ISDIR(st.st_mode)) return ImportTraceFile(path);
  ASSIGN_OR_RETURN(std::optional<GraphCaptureLayout> graphs, FindGraphCaptureLayout(path));
  std::unique_ptr<Trace> trace;
  if (graphs) {
    ASSIGN_OR_RETURN(trace, ImportWithGraphCaptures(graphs->replay, graphs->captures));
  } else {
    ASSIGN_OR_RETURN(trace, ImportFolder(path));
  }
  trace->metadata["source_path"] = path;
  return trace;
}

}  // namespace aiprof
