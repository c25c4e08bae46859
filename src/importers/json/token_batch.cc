#include "src/importers/json/token_batch.h"

#include "src/importers/json/chrome_json_tokenizer.h"

namespace aiprof {

void SinkConsumer::Merge(TokenBatch* batch) {
  size_t capacity = batch->capacity;
  for (const TokenItem& item : batch->items) {
    const char* data = batch->base + item.begin;
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

TokenBatchPipeline::TokenBatchPipeline(TokenBatchConsumer* consumer, size_t workers, size_t pool_size)
    : consumer_(consumer), workers_(workers) {
  for (size_t i = 0; i < pool_size; ++i) free_.push_back(std::make_unique<TokenBatch>());
  for (size_t w = 0; w < workers_; ++w) threads_.emplace_back([this, w] { WorkerLoop(w); });
}

TokenBatchPipeline::~TokenBatchPipeline() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

std::unique_ptr<TokenBatch> TokenBatchPipeline::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !free_.empty(); });
  std::unique_ptr<TokenBatch> b = std::move(free_.back());
  free_.pop_back();
  b->Reset();
  return b;
}

void TokenBatchPipeline::Submit(std::unique_ptr<TokenBatch> batch) {
  batch->seq = next_seq_++;
  if (workers_ == 0) {
    consumer_->Parse(batch.get(), 0);
    consumer_->Merge(batch.get());
    next_merge_ = batch->seq + 1;
    if (release_hook_) release_hook_(*batch);
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
  if (workers_ == 0) return;
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return outstanding_ == 0; });
}

void TokenBatchPipeline::Release(std::unique_ptr<TokenBatch> batch) {
  if (release_hook_) release_hook_(*batch);
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(batch));
    --outstanding_;
  }
  cv_.notify_all();
}

// Files a parsed batch; the thread that finds the merge turn free merges
// every batch that is next in order, then gives the turn up. Finding the
// next batch missing and giving up the turn happen under one lock, so a
// batch filed meanwhile is never stranded.
void TokenBatchPipeline::Parsed(std::unique_ptr<TokenBatch> batch) {
  {
    std::lock_guard<std::mutex> lock(ready_mu_);
    uint64_t seq = batch->seq;
    ready_.emplace(seq, std::move(batch));
    if (merging_) return;
    merging_ = true;
  }
  for (;;) {
    std::unique_ptr<TokenBatch> next;
    {
      std::lock_guard<std::mutex> lock(ready_mu_);
      auto it = ready_.find(next_merge_);
      if (it == ready_.end()) {
        merging_ = false;
        return;
      }
      next = std::move(it->second);
      ready_.erase(it);
      ++next_merge_;
    }
    consumer_->Merge(next.get());
    Release(std::move(next));
  }
}

void TokenBatchPipeline::WorkerLoop(size_t worker) {
  for (;;) {
    std::unique_ptr<TokenBatch> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;  // closing and drained
      batch = std::move(queue_.front());
      queue_.pop_front();
    }
    consumer_->Parse(batch.get(), worker);
    Parsed(std::move(batch));
  }
}

}  // namespace aiprof
