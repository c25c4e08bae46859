// Maps one Chrome trace event (already cut by ChromeJsonTokenizer) onto the
// TraceBuilder. Each event is parsed with simdjson's On-Demand API straight
// from the tokenizer's buffer: no copy, no DOM, no allocation per event
// beyond the model's own columns.
#ifndef AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_PARSER_H_
#define AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_PARSER_H_

#include <memory>
#include <string>
#include <string_view>

#include "src/importers/json/chrome_json_tokenizer.h"
#include "src/model/trace_builder.h"

namespace aiprof {

class ChromeJsonParser : public ChromeJsonSink {
 public:
  ChromeJsonParser(std::string path, TraceBuilder* builder);
  ~ChromeJsonParser() override;

  void OnEvent(const char* data, size_t len, size_t capacity, uint64_t offset) override;
  void OnTopLevelValue(std::string_view key, const char* data, size_t len, size_t capacity,
                       uint64_t offset) override;
  void OnSkippedValue(std::string_view key, uint64_t offset, uint64_t bytes) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_PARSER_H_
