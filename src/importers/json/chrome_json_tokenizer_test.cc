#include "src/importers/json/chrome_json_tokenizer.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "src/importers/common/byte_source.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

// Records what the tokenizer cuts, as text.
class RecordingSink : public ChromeJsonSink {
 public:
  void OnEvent(const char* data, size_t len, size_t capacity, uint64_t offset) override {
    EXPECT_GE(capacity, len + ChromeJsonTokenizer::kPaddingBytes);
    seen.push_back("E@" + std::to_string(offset) + ":" + std::string(data, len));
  }
  void OnTopLevelValue(std::string_view key, const char* data, size_t len, size_t capacity,
                       uint64_t offset) override {
    seen.push_back("T:" + std::string(key) + "=" + std::string(data, len));
  }
  void OnSkippedValue(std::string_view key, uint64_t offset, uint64_t bytes) override {
    seen.push_back("S:" + std::string(key) + "@" + std::to_string(offset) + "+" + std::to_string(bytes));
  }
  std::vector<std::string> seen;
};

// A gzip copy of `path`: read through buffers, where a plain file is mapped.
std::string GzipCopy(const std::string& path, const std::string& text) {
  std::string out = path + ".gz";
  gzFile f = gzopen(out.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(f);
  return out;
}

std::vector<std::string> Cut(const std::string& path, bool threaded, size_t buffer, size_t max_value,
                             Status* status) {
  auto src = ByteSource::Open(path);
  EXPECT_TRUE(src.ok());
  RecordingSink sink;
  ChromeJsonTokenizer tokenizer(src.value().get(), &sink, threaded);
  tokenizer.SetBufferLimitsForTesting(buffer, max_value);
  *status = tokenizer.Run();
  return sink.seen;
}

TEST(ChromeJsonTokenizerTest, SameCutsWhateverTheBufferSizeOrThreading) {
  testing::TempDir dir;
  std::string json = R"({"a": {"x": "]"}, "traceEvents": [{"n": "1"}, {"n": "two \"}\""}, )";
  for (int i = 0; i < 200; ++i) json += R"({"i": )" + std::to_string(i) + R"(, "s": "}}}{{{"}, )";
  json += R"({"last": [1, [2]]}], "baseTimeNanoseconds": 1711964646000000000, "z": "end"})";
  std::string path = dir.Write("t.json", json);
  Status st;
  std::vector<std::string> reference = Cut(path, false, 1 << 20, 1 << 20, &st);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(reference.size(), 206u);
  EXPECT_EQ(reference[0], R"(T:a={"x": "]"})");
  EXPECT_EQ(reference[1], "E@34:" + std::string(R"({"n": "1"})"));
  EXPECT_EQ(reference.back(), R"(T:z="end")");
  const std::string gz = GzipCopy(path, json);
  for (const std::string& input : {path, gz}) {  // mapped, then buffered
    for (size_t buffer : {64, 100, 257, 4096}) {
      for (bool threaded : {false, true}) {
        EXPECT_EQ(Cut(input, threaded, buffer, 1 << 20, &st), reference) << input << " " << buffer << " " << threaded;
        EXPECT_TRUE(st.ok());
      }
    }
  }
}

TEST(ChromeJsonTokenizerTest, OversizedValuesAreSkippedWithTheirSize) {
  testing::TempDir dir;
  std::string big = "{\"name\": \"" + std::string(5000, 'x') + "\"}";
  std::string text = "[{\"a\": 1}, " + big + ", {\"b\": 2}]";
  std::string path = dir.Write("t.json", text);
  std::string gz = GzipCopy(path, text);
  for (int mode = 0; mode < 4; ++mode) {
    bool threaded = mode & 1;
    Status st;
    std::vector<std::string> seen = Cut(mode & 2 ? gz : path, threaded, 64, 1024, &st);
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[0], "E@1:{\"a\": 1}");
    EXPECT_EQ(seen[1], "S:traceEvents@11+" + std::to_string(big.size()));
    EXPECT_EQ(seen[2], "E@" + std::to_string(13 + big.size()) + ":{\"b\": 2}");
  }
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// Counts each batch's items and checks they arrive in order, whole.
class BatchSizes : public TokenBatchConsumer {
 public:
  void Parse(TokenBatch*, size_t) override {}
  void Merge(TokenBatch* batch) override {
    sizes.push_back(batch->items.size());
    for (const TokenItem& item : batch->items) {
      EXPECT_EQ(item.offset, next_offset) << "item " << events;
      EXPECT_EQ(std::string(batch->base + item.begin, item.len), "{}");
      next_offset += 3;
      ++events;
    }
  }
  std::vector<size_t> sizes;
  uint64_t next_offset = 1, events = 0;
};

// 200,000 empty events fit one 4 MiB buffer: its batch held them all (about
// 200 bytes each once parsed, so a gzip of "{}," ran to 1.3 GB resident on
// two threads and more with each worker). Batches now stop at
// kMaxBatchItems, mapped or read through buffers (gzip), with every event
// still cut once, in order.
TEST(ChromeJsonTokenizerTest, BatchesHoldAtMostMaxBatchItems) {
  testing::TempDir dir;
  std::string text = "[";
  const size_t n = 200000;
  for (size_t i = 0; i < n; ++i) text += i + 1 < n ? "{}," : "{}]";
  const std::string plain = dir.Write("empty_events.json", text);
  for (const std::string& path : {plain, GzipCopy(plain, text)}) {
    for (size_t workers : {size_t{0}, size_t{2}}) {
      auto src = ByteSource::Open(path, /*background_decompression=*/workers > 0);
      ASSERT_TRUE(src.ok());
      BatchSizes batches;
      ChromeJsonTokenizer tokenizer(src.value().get(), &batches, workers);
      ASSERT_TRUE(tokenizer.Run().ok()) << path;
      EXPECT_EQ(batches.events, n) << path;
      ASSERT_FALSE(batches.sizes.empty());
      EXPECT_LE(*std::max_element(batches.sizes.begin(), batches.sizes.end()), ChromeJsonTokenizer::kMaxBatchItems)
          << path << " workers " << workers;
    }
  }
}

}  // namespace
}  // namespace aiprof
