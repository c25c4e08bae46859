// Maps Chrome trace events (already cut by ChromeJsonTokenizer) onto the
// TraceBuilder, in two phases:
//   parse  text → a batch's own columns: events with batch-local string ids,
//          their args, diagnostics; parsed with simdjson's On-Demand API
//          straight from the tokenizer's buffer (no DOM, no per-event
//          allocation). Runs on any number of workers at once.
//   merge  a parsed batch → the model: local string ids are mapped to the
//          trace's (each distinct string interned once per batch, on first
//          use, so ids come out in stream order), tracks are looked up and
//          the builder calls made. Runs in cut order on one thread at a time.
// Every event goes through both phases, so the model is the same whatever
// the number of workers.
#ifndef AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_PARSER_H_
#define AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_PARSER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/importers/json/chrome_json_tokenizer.h"
#include "src/importers/json/token_batch.h"
#include "src/model/trace_builder.h"

namespace aiprof {

class ChromeJsonEventParser;
class ChromeJsonMerger;
struct ParsedEvents;

// Batch consumer for the parallel import: `workers` parsers, one merger.
class ChromeJsonBatchParser : public TokenBatchConsumer {
 public:
  ChromeJsonBatchParser(std::string path, TraceBuilder* builder, size_t workers);
  ~ChromeJsonBatchParser() override;
  void Parse(TokenBatch* batch, size_t worker) override;
  void Merge(TokenBatch* batch) override;
  // Flow events whose decimal id did not fit 64 bits and was hashed.
  uint64_t hashed_flow_ids() const;

 private:
  std::vector<std::unique_ptr<ChromeJsonEventParser>> parsers_;
  std::unique_ptr<ChromeJsonMerger> merger_;
};

// The same two phases one event at a time, for importers that wrap the
// Chrome format (Ascend's trace_view.json).
class ChromeJsonParser : public ChromeJsonSink {
 public:
  ChromeJsonParser(std::string path, TraceBuilder* builder);
  ~ChromeJsonParser() override;

  void OnEvent(const char* data, size_t len, size_t capacity, uint64_t offset) override;
  void OnTopLevelValue(std::string_view key, const char* data, size_t len, size_t capacity,
                       uint64_t offset) override;
  void OnSkippedValue(std::string_view key, uint64_t offset, uint64_t bytes) override;

 private:
  std::unique_ptr<ChromeJsonEventParser> parser_;
  std::unique_ptr<ChromeJsonMerger> merger_;
  std::unique_ptr<ParsedEvents> events_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_PARSER_H_
