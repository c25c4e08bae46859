#include "src/importers/json/chrome_json_tokenizer.h"

#include <algorithm>
#include <cstring>

#include "src/importers/common/byte_source.h"

namespace aiprof {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string Printable(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
  char buf[8];
  std::snprintf(buf, sizeof(buf), "0x%02x", static_cast<unsigned char>(c));
  return buf;
}

}  // namespace

ChromeJsonTokenizer::ChromeJsonTokenizer(ByteSource* source, ChromeJsonSink* sink, bool threaded)
    : source_(source),
      sink_consumer_(std::make_unique<SinkConsumer>(sink)),
      consumer_(sink_consumer_.get()),
      workers_(threaded ? 1 : 0),
      capacity_(kInitialBufferBytes) {}

ChromeJsonTokenizer::ChromeJsonTokenizer(ByteSource* source, TokenBatchConsumer* consumer, size_t workers)
    : source_(source), consumer_(consumer), workers_(workers), capacity_(kInitialBufferBytes) {}

void ChromeJsonTokenizer::SetBufferLimitsForTesting(size_t initial_bytes, size_t max_value_bytes) {
  capacity_ = initial_bytes;
  max_value_bytes_ = max_value_bytes;
}

Status ChromeJsonTokenizer::Unexpected(char c, const char* expected) const {
  return ErrStatus(source_->path() + ": invalid JSON at byte " + std::to_string(Offset(begin_)) +
                   ": expected " + expected + ", found " + Printable(c));
}

// Makes room and reads more bytes after end_. Keeps [begin_, end_): when
// cut items still point into the buffer it is handed on and the unfinished
// bytes move to a fresh one; otherwise they move to the front in place.
// Hands the current batch on; its items end at begin_.
void ChromeJsonTokenizer::SubmitCurrent() {
  if (mapped_ != nullptr) {
    cur_->base = mapped_ + buffer_file_offset_;
    cur_->capacity = mapped_size_ + ByteSource::kMapPaddingBytes - buffer_file_offset_;
  } else {
    cur_->base = cur_->buffer.data();
    cur_->capacity = cur_->buffer.size();
  }
  cur_->end_offset = buffer_file_offset_ + begin_;
  pipeline_->Submit(std::move(cur_));
}

// One value fills the window: grow it up to the limit, then skip the value
// (counted, and reported once it ends).
void ChromeJsonTokenizer::GrowOrSkip() {
  if (capacity_ * 2 <= max_value_bytes_) {
    capacity_ *= 2;
    if (mapped_ == nullptr) cur_->buffer.resize(capacity_ + kPaddingBytes);
    return;
  }
  if (!skipping_) {
    skipping_ = true;
    skip_start_offset_ = buffer_file_offset_;
    skipped_bytes_ = 0;
  }
  skipped_bytes_ += end_;
  buffer_file_offset_ += end_;
  end_ = 0;
  scanned_ = 0;
}

// The window over the mapped input moves instead of bytes being copied.
Status ChromeJsonTokenizer::FillMapped(bool* eof) {
  if (begin_ > 0) {
    if (!cur_->items.empty()) {
      std::unique_ptr<TokenBatch> next = pipeline_->Acquire();
      SubmitCurrent();
      cur_ = std::move(next);
    }
    buffer_file_offset_ += begin_;
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == capacity_) GrowOrSkip();
  size_t new_end = std::min<size_t>(capacity_, mapped_size_ - buffer_file_offset_);
  *eof = new_end == end_;
  end_ = new_end;
  return OkStatus();
}

Status ChromeJsonTokenizer::Fill(bool* eof) {
  if (mapped_ != nullptr) return FillMapped(eof);
  if (begin_ > 0) {
    size_t keep = end_ - begin_;
    if (!cur_->items.empty()) {
      std::unique_ptr<TokenBatch> next = pipeline_->Acquire();
      if (next->buffer.size() < capacity_ + kPaddingBytes) next->buffer.resize(capacity_ + kPaddingBytes);
      std::memcpy(next->buffer.data(), data() + begin_, keep);
      SubmitCurrent();
      cur_ = std::move(next);
    } else {
      std::memmove(cur_->buffer.data(), data() + begin_, keep);
    }
    buffer_file_offset_ += begin_;
    end_ = keep;
    begin_ = 0;
  }
  if (end_ == capacity_) GrowOrSkip();
  ASSIGN_OR_RETURN(size_t got, source_->Read(cur_->buffer.data() + end_, capacity_ - end_));
  end_ += got;
  // The buffer is not zeroed when it grows (ByteBuffer); simdjson reads the
  // padding after a value without using it, and zeroes keep those reads
  // defined.
  std::memset(cur_->buffer.data() + end_, 0, kPaddingBytes);
  *eof = got == 0;
  return OkStatus();
}

Status ChromeJsonTokenizer::Run() {
  // One buffer being filled, one per worker being parsed, two spare so a
  // worker never waits for the merge turn with nothing to parse.
  TokenBatchPipeline pipeline(consumer_, workers_, workers_ + 3);
  pipeline_ = &pipeline;
  std::string_view mapped = source_->Map();
  if (!mapped.empty()) {
    mapped_ = mapped.data();
    mapped_size_ = mapped.size();
    // Parsed pages leave memory as batches are merged, so a mapped input
    // costs no more resident memory than the buffers it replaces.
    pipeline.SetReleaseHook([this](const TokenBatch& b) { source_->ReleaseMappedBefore(b.end_offset); });
  }
  cur_ = pipeline.Acquire();
  if (mapped_ == nullptr) cur_->buffer.resize(capacity_ + kPaddingBytes);
  Status status = RunStateMachine();
  SubmitCurrent();
  pipeline.Finish();
  pipeline_ = nullptr;
  return status;
}

Status ChromeJsonTokenizer::RunStateMachine() {
  bool eof = false;
  for (;;) {
    bool need_more = false;
    while (!need_more && mode_ != Mode::kDone && cur_->items.size() < kMaxBatchItems) {
      RETURN_IF_ERROR(Step(eof, &need_more));
    }
    if (!need_more && mode_ != Mode::kDone) {
      // The batch holds kMaxBatchItems: handed on before its buffer is
      // full, so tiny events ("{}," a million times) cannot make a batch's
      // items and parsed columns hundreds of MB (input trial, 'in').
      RETURN_IF_ERROR(Fill(&eof));
      continue;
    }
    if (mode_ == Mode::kDone) {
      // Only whitespace may follow the root value.
      for (;;) {
        for (; begin_ < end_; ++begin_) {
          if (!IsSpace(data()[begin_])) {
            return ErrStatus(source_->path() + ": unexpected data after the end of the JSON at byte " +
                             std::to_string(Offset(begin_)));
          }
        }
        if (eof) break;
        RETURN_IF_ERROR(Fill(&eof));
      }
      break;
    }
    if (eof) {
      std::string where = mode_ == Mode::kExpectRoot ? "the file is empty"
                          : (mode_ == Mode::kEventOrEnd || mode_ == Mode::kEventCommaOrEnd)
                              ? "inside traceEvents after " + std::to_string(events_seen_) + " events"
                              : "inside the top-level object";
      return ErrStatus(source_->path() + ": truncated JSON: input ends at byte " +
                       std::to_string(Offset(end_)) + " (" + where + ")");
    }
    RETURN_IF_ERROR(Fill(&eof));
  }
  if (!bare_array_ && !saw_trace_events_) {
    return ErrStatus(source_->path() + ": not a Chrome trace: the top-level object has no traceEvents array");
  }
  return OkStatus();
}

Status ChromeJsonTokenizer::Step(bool eof, bool* need_more) {
  if (in_value_) return StepValue(eof, need_more);
  while (begin_ < end_ && IsSpace(data()[begin_])) ++begin_;
  if (begin_ == end_) {
    *need_more = true;
    return OkStatus();
  }
  char c = data()[begin_];
  auto start_value = [&](bool is_key) {
    in_value_ = true;
    current_is_key_ = is_key;
    scanned_ = 0;
    scanner_.Start(c);
  };
  switch (mode_) {
    case Mode::kExpectRoot:
      if (mode_ == Mode::kExpectRoot && begin_ + 3 <= end_ &&
          std::memcmp(data() + begin_, "\xEF\xBB\xBF", 3) == 0) {
        begin_ += 3;  // UTF-8 byte order mark
        return OkStatus();
      }
      if (c == '[') {
        bare_array_ = true;
        mode_ = Mode::kEventOrEnd;
      } else if (c == '{') {
        mode_ = Mode::kRootKeyOrEnd;
      } else {
        return Unexpected(c, "'{' or '[' at the start of a Chrome trace");
      }
      ++begin_;
      return OkStatus();
    case Mode::kRootKeyOrEnd:
      if (c == '}') {
        ++begin_;
        mode_ = Mode::kDone;
        return OkStatus();
      }
      if (c != '"') return Unexpected(c, "a key string");
      start_value(true);
      return OkStatus();
    case Mode::kRootColon:
      if (c != ':') return Unexpected(c, "':'");
      ++begin_;
      mode_ = Mode::kRootValue;
      return OkStatus();
    case Mode::kRootValue:
      if (current_key_ == "traceEvents") {
        if (c != '[') return Unexpected(c, "'[' after \"traceEvents\":");
        ++begin_;
        saw_trace_events_ = true;
        mode_ = Mode::kEventOrEnd;
        return OkStatus();
      }
      start_value(false);
      return OkStatus();
    case Mode::kRootCommaOrEnd:
      if (c == ',') mode_ = Mode::kRootKeyOrEnd;
      else if (c == '}') mode_ = Mode::kDone;
      else return Unexpected(c, "',' or '}' in the top-level object");
      ++begin_;
      return OkStatus();
    case Mode::kEventOrEnd:
    case Mode::kEventCommaOrEnd:
      if (c == ']') {
        ++begin_;
        mode_ = bare_array_ ? Mode::kDone : Mode::kRootCommaOrEnd;
        return OkStatus();
      }
      if (mode_ == Mode::kEventCommaOrEnd) {
        if (c != ',') return Unexpected(c, "',' or ']' between events");
        ++begin_;
        mode_ = Mode::kEventOrEnd;  // a trailing comma before ']' is tolerated
        return OkStatus();
      }
      start_value(false);
      return OkStatus();
    case Mode::kDone:
      return OkStatus();
  }
  return OkStatus();
}

Status ChromeJsonTokenizer::StepValue(bool eof, bool* need_more) {
  size_t avail = end_ - begin_;
  size_t r = scanner_.Feed(data() + begin_ + scanned_, avail - scanned_);
  if (r == JsonValueScanner::kInvalid) {
    return ErrStatus(source_->path() + ": invalid JSON near byte " +
                     std::to_string(Offset(begin_ + scanned_)) + ": unbalanced brackets");
  }
  if (r == JsonValueScanner::kNotDone) {
    if (eof && scanner_.CanEndAtEof()) return FinishValue(avail);
    scanned_ = avail;
    *need_more = true;
    return OkStatus();
  }
  return FinishValue(scanned_ + r);
}

Status ChromeJsonTokenizer::FinishValue(size_t len) {
  uint64_t offset = Offset(begin_);
  in_value_ = false;
  auto add_key = [this]() {
    cur_->keys.push_back(current_key_);
    return static_cast<uint32_t>(cur_->keys.size() - 1);
  };
  if (current_is_key_) {
    if (skipping_ || len < 2) return ErrStatus(source_->path() + ": invalid top-level key at byte " + std::to_string(offset));
    current_key_.assign(data() + begin_ + 1, len - 2);
    mode_ = Mode::kRootColon;
  } else if (skipping_) {
    skipping_ = false;
    if (mode_ == Mode::kEventOrEnd) current_key_ = "traceEvents";
    cur_->items.push_back({TokenItem::Kind::kSkipped, add_key(), 0, skipped_bytes_ + len, skip_start_offset_});
    mode_ = mode_ == Mode::kEventOrEnd ? Mode::kEventCommaOrEnd : Mode::kRootCommaOrEnd;
  } else if (mode_ == Mode::kEventOrEnd) {
    ++events_seen_;
    cur_->items.push_back({TokenItem::Kind::kEvent, 0, begin_, len, offset});
    mode_ = Mode::kEventCommaOrEnd;
  } else {
    cur_->items.push_back({TokenItem::Kind::kTopLevel, add_key(), begin_, len, offset});
    mode_ = Mode::kRootCommaOrEnd;
  }
  begin_ += len;
  return OkStatus();
}

}  // namespace aiprof
