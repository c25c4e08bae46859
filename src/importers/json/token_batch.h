// Batches of cut events handed from the tokenizer to the parsers.
//
// The tokenizer fills one buffer at a time and records where each event lies
// in it. When the buffer is full the batch (buffer + items) is queued and the
// tokenizer continues in a free buffer. Up to `workers` threads parse queued
// batches at once (TokenBatchConsumer::Parse, into per-batch columns and
// string tables); finished batches are then merged into the model strictly in
// the order they were cut (TokenBatchConsumer::Merge), by whichever worker
// holds the merge turn. So the model does not depend on the number of
// workers or on which batch finishes first. A fixed pool of batches bounds
// memory: the tokenizer waits when all are parsed-but-unmerged or in flight.
#ifndef AIPROF_SRC_IMPORTERS_JSON_TOKEN_BATCH_H_
#define AIPROF_SRC_IMPORTERS_JSON_TOKEN_BATCH_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "src/base/byte_buffer.h"

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

// What a consumer keeps per batch between Parse and Merge (its parsed
// columns); created by the consumer on first use, reused with the batch.
class BatchPayload {
 public:
  virtual ~BatchPayload() = default;
};

struct TokenBatch {
  ByteBuffer buffer;  // usable bytes + padding (unused when the input is mapped)
  // Where the items' offsets point: buffer.data(), or into the mapped input;
  // `capacity` bytes are readable from `base`.
  const char* base = nullptr;
  size_t capacity = 0;
  uint64_t end_offset = 0;  // input offset just past the last item
  std::vector<TokenItem> items;
  std::vector<std::string> keys;
  uint64_t seq = 0;  // position in cut order
  std::unique_ptr<BatchPayload> payload;
  void Reset() {
    items.clear();
    keys.clear();
  }
};

// Consumes cut batches in two phases.
class TokenBatchConsumer {
 public:
  virtual ~TokenBatchConsumer() = default;
  // Called once per batch, concurrently for different batches on up to
  // `workers` threads; `worker` is in [0, workers) and no two concurrent
  // calls share it.
  virtual void Parse(TokenBatch* batch, size_t worker) = 0;
  // Called once per batch after its Parse, in cut order, never concurrently.
  virtual void Merge(TokenBatch* batch) = 0;
};

// Hands every item of a batch to a ChromeJsonSink, in order, at merge time
// (for consumers that keep per-event state, such as the Ascend importer).
class SinkConsumer : public TokenBatchConsumer {
 public:
  explicit SinkConsumer(ChromeJsonSink* sink) : sink_(sink) {}
  void Parse(TokenBatch*, size_t) override {}
  void Merge(TokenBatch* batch) override;

 private:
  ChromeJsonSink* sink_;
};

class TokenBatchPipeline {
 public:
  // workers == 0: every batch is parsed and merged on the submitting thread.
  TokenBatchPipeline(TokenBatchConsumer* consumer, size_t workers, size_t pool_size);
  ~TokenBatchPipeline();  // finishes outstanding batches
  // A free batch (blocks while all are in use).
  std::unique_ptr<TokenBatch> Acquire();
  // Queues `batch` for the workers (or parses and merges it now without any).
  void Submit(std::unique_ptr<TokenBatch> batch);
  // Waits until every submitted batch has been merged.
  void Finish();
  // Called with each batch once merged, in cut order, before its reuse.
  void SetReleaseHook(std::function<void(const TokenBatch&)> hook) { release_hook_ = std::move(hook); }

 private:
  void WorkerLoop(size_t worker);
  void Parsed(std::unique_ptr<TokenBatch> batch);
  void Release(std::unique_ptr<TokenBatch> batch);

  TokenBatchConsumer* consumer_;
  size_t workers_;
  uint64_t next_seq_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<TokenBatch>> queue_;
  std::vector<std::unique_ptr<TokenBatch>> free_;
  size_t outstanding_ = 0;
  bool closing_ = false;
  // Parsed batches waiting for their merge turn, by seq.
  std::mutex ready_mu_;
  std::map<uint64_t, std::unique_ptr<TokenBatch>> ready_;
  uint64_t next_merge_ = 0;
  bool merging_ = false;
  std::vector<std::thread> threads_;
  std::function<void(const TokenBatch&)> release_hook_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_IMPORTERS_JSON_TOKEN_BATCH_H_
