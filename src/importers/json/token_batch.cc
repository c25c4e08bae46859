#include "src/importers/json/token_batch.h"

#include "src/importers/json/chrome_json_tokenizer.h"

namespace aiprof {

TokenBatchPipeline::TokenBatchPipeline(ChromeJsonSink* sink, bool threaded, size_t pool_size)
    : sink_(sink), threaded_(threaded) {
  for (size_t i = 0; i < pool_size; ++i) free_.push_back(std::make_unique<TokenBatch>());
  if (threaded_) worker_ = std::thread([this] { WorkerLoop(); });
}

TokenBatchPipeline::~TokenBatchPipeline() {
  if (!threaded_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

std::unique_ptr<TokenBatch> TokenBatchPipeline::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !free_.empty(); });
  std::unique_ptr<TokenBatch> b = std::move(free_.back());
  free_.pop_back();
  b->Reset();
  return b;
}

void TokenBatchPipeline::Consume(TokenBatch* batch) {
  size_t capacity = batch->buffer.size();
  for (const TokenItem& item : batch->items) {
    const char* data = batch->buffer.data() + item.begin;
    switch (item.kind) {
      case TokenItem::Kind::kEvent:
        sink_->OnEvent(data, item.len, capacity - item.begin, item.offset);
        break;
      case TokenItem::Kind::kTopLevel:
        sink_->OnTopLevelValue(batch->keys[item.key_index], data, item.len, capacity - item.begin, item.offset);
        break;
      case TokenItem::Kind::kSkipped:
        sink_->OnSkippedValue(batch->keys[item.key_index], item.offset, item.len);
        break;
    }
  }
}

void TokenBatchPipeline::Submit(std::unique_ptr<TokenBatch> batch) {
  if (!threaded_) {
    Consume(batch.get());
    free_.push_back(std::move(batch));
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(batch));
    ++outstanding_;
  }
  cv_.notify_all();
}

void TokenBatchPipeline::Finish() {
  if (!threaded_) return;
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return outstanding_ == 0; });
}

void TokenBatchPipeline::WorkerLoop() {
  for (;;) {
    std::unique_ptr<TokenBatch> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;  // closing and drained
      batch = std::move(queue_.front());
      queue_.pop_front();
    }
    Consume(batch.get());
    {
      std::lock_guard<std::mutex> lock(mu_);
      free_.push_back(std::move(batch));
      --outstanding_;
    }
    cv_.notify_all();
  }
}

}  // namespace aiprof
