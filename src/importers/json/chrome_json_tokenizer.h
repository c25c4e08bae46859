// Cuts a Chrome trace-event JSON stream into single events.
//
// Accepts {"traceEvents": [...], other keys...} with keys in any order, and a
// bare [...] array. Bytes arrive through a ByteSource into one reused buffer;
// each complete event is handed on as a padded view into that buffer (ready
// for simdjson), other top-level values likewise. Memory stays at the buffer
// size however large the file is; a single value larger than
// kMaxValueBytes is skipped and counted instead of buffered.
#ifndef AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_TOKENIZER_H_
#define AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/status.h"
#include "src/importers/json/json_value_scanner.h"
#include "src/importers/json/token_batch.h"

namespace aiprof {

class ByteSource;

// Receives what the tokenizer cuts. `capacity` >= len + 64 bytes readable.
class ChromeJsonSink {
 public:
  virtual ~ChromeJsonSink() = default;
  virtual void OnEvent(const char* data, size_t len, size_t capacity, uint64_t offset) = 0;
  virtual void OnTopLevelValue(std::string_view key, const char* data, size_t len, size_t capacity,
                               uint64_t offset) = 0;
  // A value too large to buffer was skipped.
  virtual void OnSkippedValue(std::string_view key, uint64_t offset, uint64_t bytes) = 0;
};

class ChromeJsonTokenizer {
 public:
  static constexpr size_t kPaddingBytes = 64;
  static constexpr size_t kInitialBufferBytes = 4 << 20;
  static constexpr size_t kMaxValueBytes = 64 << 20;
  // Items per batch: a batch is handed on when its buffer is full or it
  // holds this many events, so a batch's items and parsed columns stay a
  // few MB whatever the events' size (about 200 bytes per item in all).
  static constexpr size_t kMaxBatchItems = 1 << 16;

  // Hands each cut item to `sink`, in order; with `threaded` on a second
  // thread while this one reads and cuts.
  ChromeJsonTokenizer(ByteSource* source, ChromeJsonSink* sink, bool threaded = false);
  // Hands whole batches to `consumer`, parsed on `workers` threads (0: on
  // this one) and merged in cut order.
  ChromeJsonTokenizer(ByteSource* source, TokenBatchConsumer* consumer, size_t workers);
  // Reads the whole stream; a malformed structure or truncation is an error
  // naming the file and byte offset.
  Status Run();
  // Visible for testing: shrinks the buffer and value limit.
  void SetBufferLimitsForTesting(size_t initial_bytes, size_t max_value_bytes);

 private:
  enum class Mode {
    kExpectRoot,
    kRootKeyOrEnd,
    kRootColon,
    kRootValue,
    kRootCommaOrEnd,
    kEventOrEnd,
    kEventCommaOrEnd,
    kDone,
  };

  Status RunStateMachine();
  Status Fill(bool* eof);
  Status FillMapped(bool* eof);
  void GrowOrSkip();
  void SubmitCurrent();
  // The bytes of the current window: the batch's buffer, or the mapped input.
  const char* data() const { return mapped_ != nullptr ? mapped_ + buffer_file_offset_ : cur_->buffer.data(); }
  Status Step(bool eof, bool* need_more);
  Status StepValue(bool eof, bool* need_more);
  Status FinishValue(size_t len);
  Status Unexpected(char c, const char* expected) const;
  uint64_t Offset(size_t index) const { return buffer_file_offset_ + index; }

  ByteSource* source_;
  std::unique_ptr<SinkConsumer> sink_consumer_;  // when constructed with a sink
  TokenBatchConsumer* consumer_;
  size_t workers_;
  const char* mapped_ = nullptr;  // the whole input when it is read in place
  size_t mapped_size_ = 0;
  TokenBatchPipeline* pipeline_ = nullptr;
  std::unique_ptr<TokenBatch> cur_;  // the buffer being filled and its cut items
  size_t capacity_;  // usable bytes of buffers; cur_->buffer.size() == capacity_ + kPaddingBytes
  size_t max_value_bytes_ = kMaxValueBytes;
  size_t begin_ = 0, end_ = 0;
  uint64_t buffer_file_offset_ = 0;
  Mode mode_ = Mode::kExpectRoot;
  bool bare_array_ = false;
  bool saw_trace_events_ = false;
  std::string current_key_;
  bool current_is_key_ = false;
  // Value being scanned: starts at begin_, scanned_ bytes done so far.
  bool in_value_ = false;
  bool skipping_ = false;
  uint64_t skip_start_offset_ = 0;
  size_t scanned_ = 0;
  uint64_t skipped_bytes_ = 0;
  JsonValueScanner scanner_;
  uint64_t events_seen_ = 0;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_JSON_CHROME_JSON_TOKENIZER_H_
