#include "src/importers/json/chrome_json_importer.h"

#include <thread>

#include "src/importers/common/byte_source.h"
#include "src/importers/json/chrome_json_parser.h"
#include "src/importers/json/chrome_json_tokenizer.h"
#include "src/model/trace_builder.h"

namespace aiprof {

bool DetectChromeJson(std::string_view prefix) {
  if (prefix.substr(0, 3) == "\xEF\xBB\xBF") prefix.remove_prefix(3);
  for (char c : prefix) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    return c == '{' || c == '[';
  }
  return false;
}

Status ImportChromeJson(const std::string& path, TraceBuilder* builder) {
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, ByteSource::Open(path));
  ChromeJsonParser parser(path, builder);
  // Reading and cutting run beside parsing when a second core is there.
  bool threaded = std::thread::hardware_concurrency() > 1;
  ChromeJsonTokenizer tokenizer(source.get(), &parser, threaded);
  RETURN_IF_ERROR(tokenizer.Run());
  builder->trace()->metadata["source_format"] = "chrome_json";
  builder->trace()->metadata["compression"] = source->compression();
  return OkStatus();
}

}  // namespace aiprof
