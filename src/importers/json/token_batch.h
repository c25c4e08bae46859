// Batches of cut events handed from the tokenizer to the parser, possibly on
// another thread.
//
// The tokenizer fills one buffer at a time and records where each event lies
// in it. When the buffer is full the batch (buffer + items) goes to the
// consumer and the tokenizer continues in a free buffer; the consumer gives
// buffers back when it has parsed them. With a fixed pool of buffers memory
// stays bounded, and reading + cutting overlaps with parsing on two cores.
#ifndef AIPROF_SRC_IMPORTERS_JSON_TOKEN_BATCH_H_
#define AIPROF_SRC_IMPORTERS_JSON_TOKEN_BATCH_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace aiprof {

class ChromeJsonSink;

struct TokenItem {
  enum class Kind : uint8_t { kEvent, kTopLevel, kSkipped };
  Kind kind;
  uint32_t key_index;  // into TokenBatch::keys for kTopLevel / kSkipped
  size_t begin;        // offset in TokenBatch::buffer
  size_t len;          // bytes (for kSkipped: bytes skipped)
  uint64_t offset;     // byte offset in the decompressed input
};

struct TokenBatch {
  std::vector<char> buffer;  // usable bytes + padding
  std::vector<TokenItem> items;
  std::vector<std::string> keys;
  void Reset() {
    items.clear();
    keys.clear();
  }
};

// Hands each batch to `sink` in order, on a worker thread when `threaded`.
class TokenBatchPipeline {
 public:
  TokenBatchPipeline(ChromeJsonSink* sink, bool threaded, size_t pool_size);
  ~TokenBatchPipeline();  // finishes outstanding batches
  // A free batch (blocks while all are in use by the consumer).
  std::unique_ptr<TokenBatch> Acquire();
  // Queues `batch` for the consumer (or runs it now when not threaded).
  void Submit(std::unique_ptr<TokenBatch> batch);
  // Waits until every submitted batch has been consumed.
  void Finish();

 private:
  void Consume(TokenBatch* batch);
  void WorkerLoop();

  ChromeJsonSink* sink_;
  bool threaded_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<TokenBatch>> queue_;
  std::vector<std::unique_ptr<TokenBatch>> free_;
  size_t outstanding_ = 0;
  bool closing_ = false;
  std::thread worker_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_JSON_TOKEN_BATCH_H_
