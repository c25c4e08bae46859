#include "src/importers/common/importer_registry.h"

#include <sys/stat.h>

#include "src/importers/common/byte_source.h"
#include "src/importers/json/chrome_json_importer.h"
#include "src/model/native_file.h"
#include "src/model/trace_builder.h"

namespace aiprof {
namespace {

constexpr ImporterEntry kImporters[] = {
    {"chrome_json", &DetectChromeJson, &ImportChromeJson},
};

}  // namespace

StatusOr<std::unique_ptr<Trace>> ImportTrace(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrStatus(path + ": no such file or folder");
  if (S_ISDIR(st.st_mode)) {
    return ErrStatus(path + ": is a folder; folder inputs (torch_npu, msprof, multi-rank) are not supported yet");
  }
  ASSIGN_OR_RETURN(std::string prefix, ReadPrefix(path, 4096));
  if (prefix.empty()) return ErrStatus(path + ": the file is empty");
  if (prefix.substr(0, kNativeMagic.size()) == kNativeMagic) return ReadNativeFile(path);
  for (const ImporterEntry& importer : kImporters) {
    if (!importer.detect(prefix)) continue;
    auto trace = std::make_unique<Trace>();
    TraceBuilder builder(trace.get());
    RETURN_IF_ERROR(importer.import(path, &builder));
    RETURN_IF_ERROR(builder.Finalize());
    trace->metadata["source_path"] = path;
    return trace;
  }
  return ErrStatus(path + ": unrecognised format (expected Chrome/Kineto trace JSON, optionally gzip or zstd "
                   "compressed, or an .aiprof file)");
}

}  // namespace aiprof
