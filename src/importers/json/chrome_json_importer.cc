#include "src/importers/json/chrome_json_importer.h"

#include "src/base/threads.h"
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

ChromeJsonOptions DefaultChromeJsonOptions() {
  // The tokenizer reads and cuts on this thread while the workers parse;
  // with one thread on one core, parsing stays on this thread too.
  size_t threads = WorkerThreads();
  ChromeJsonOptions options;
  options.workers = threads <= 1 && AvailableCores() <= 1 ? 0 : threads;
  return options;
}

Status ImportChromeJson(const std::string& path, TraceBuilder* builder) {
  return ImportChromeJson(path, builder, DefaultChromeJsonOptions());
}

Status ImportChromeJson(const std::string& path, TraceBuilder* builder, const ChromeJsonOptions& options) {
  std::string compression;
  RETURN_IF_ERROR(ParseChromeJsonEvents(path, builder, options, &compression));
  builder->trace()->metadata["source_format"] = "chrome_json";
  builder->trace()->metadata["compression"] = compression;
  return OkStatus();
}

Status ParseChromeJsonEvents(const std::string& path, TraceBuilder* builder, const ChromeJsonOptions& options,
                             std::string* compression) {
  // Decompression (gzip, zstd) gets a thread of its own when there is a
  // core for it besides the reader.
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, ByteSource::Open(path, AvailableCores() > 1));
  // A plain file that fits in one batch has nothing to share out: no threads.
  size_t batch = options.batch_bytes > 0 ? options.batch_bytes : ChromeJsonTokenizer::kInitialBufferBytes;
  std::string_view mapped = source->Map();
  size_t workers = !mapped.empty() && mapped.size() <= batch ? 0 : options.workers;
  ChromeJsonBatchParser parser(path, builder, workers);
  ChromeJsonTokenizer tokenizer(source.get(), &parser, workers);
  if (options.batch_bytes > 0) {
    tokenizer.SetBufferLimitsForTesting(options.batch_bytes, ChromeJsonTokenizer::kMaxValueBytes);
  }
  RETURN_IF_ERROR(tokenizer.Run());
  if (parser.hashed_flow_ids() > 0) {
    builder->trace()->metadata["hashed_flow_ids"] = std::to_string(parser.hashed_flow_ids());
  }
  *compression = source->compression();
  return OkStatus();
}

}  // namespace aiprof
