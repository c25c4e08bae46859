#include "src/importers/json/json_value_scanner.h"

#include <gtest/gtest.h>

#include <string>

namespace aiprof {
namespace {

// Feeds `json` in pieces of `piece` bytes; returns the value length found.
size_t ScanInPieces(const std::string& json, size_t piece) {
  JsonValueScanner s;
  s.Start(json[0]);
  for (size_t off = 0; off < json.size(); off += piece) {
    size_t n = std::min(piece, json.size() - off);
    size_t r = s.Feed(json.data() + off, n);
    if (r == JsonValueScanner::kInvalid) return r;
    if (r != JsonValueScanner::kNotDone) return off + r;
  }
  return JsonValueScanner::kNotDone;
}

TEST(JsonValueScannerTest, FindsObjectEndWhateverTheChunking) {
  std::string event = R"({"name": "a}\"]{", "args": {"x": [1, {"y": "\\"}]}, "s": "\\\""})";
  std::string stream = event + R"(, {"next": 1})";
  for (size_t piece = 1; piece <= stream.size(); ++piece) {
    EXPECT_EQ(ScanInPieces(stream, piece), event.size()) << "piece " << piece;
  }
}

TEST(JsonValueScannerTest, IncompleteAndInvalid) {
  EXPECT_EQ(ScanInPieces(R"({"a": [1, 2)", 4), JsonValueScanner::kNotDone);
  EXPECT_EQ(ScanInPieces(R"({"a": "}")", 100), JsonValueScanner::kNotDone);
  JsonValueScanner s;
  s.Start('{');
  EXPECT_EQ(s.Feed("{}}", 3), 2u);
  s.Start('{');
  EXPECT_EQ(s.Feed("}", 1), JsonValueScanner::kInvalid);  // closes more than it opened
}

TEST(JsonValueScannerTest, ScalarsAndStrings) {
  JsonValueScanner s;
  s.Start('1');
  EXPECT_EQ(s.Feed("1711964646000000000\n}", 21), 19u);
  s.Start('"');
  EXPECT_EQ(s.Feed(R"("a\"b", 1)", 9), 6u);
  s.Start('t');
  EXPECT_EQ(s.Feed("true", 4), JsonValueScanner::kNotDone);
  EXPECT_TRUE(s.CanEndAtEof());
}

TEST(JsonValueScannerTest, SimdHelpersMatchScalarScan) {
  std::string text(100, 'a');
  for (size_t pos = 0; pos < text.size(); ++pos) {
    std::string t = text;
    t[pos] = '\\';
    EXPECT_EQ(FindQuoteOrBackslash(t.data(), t.size()), pos);
    t[pos] = ']';
    EXPECT_EQ(FindStructural(t.data(), t.size()), pos);
    t[pos] = '[';
    EXPECT_EQ(FindStructural(t.data(), t.size()), pos);
  }
  EXPECT_EQ(FindStructural(text.data(), text.size()), text.size());
  // 0x7b | 0x20 folding must not match other bytes such as ';' (0x3b) or '[' lookalikes.
  std::string others = ";=}";
  EXPECT_EQ(FindStructural(others.data(), others.size()), 2u);
}

// torch 1.13's export_chrome_trace and libkineto write names raw: a quote or
// a trailing backslash in a record_function name is not escaped. The cut
// still ends at the event's own brace, however the input is chunked; before,
// the odd quote turned the scan inside out and the rest of the file became
// one value (a legacy export of record_function('say "hi') was refused as
// truncated JSON).
TEST(JsonValueScannerTest, RawQuotesAndBackslashesInANameKeepTheCut) {
  const std::string events[] = {
      R"({"name": "say "hi", "ph": "X", "ts": 1, "dur": 2, "tid": 1, "pid": "CPU functions", "args": {}})",
      R"({"name": "dir\", "ph": "X", "ts": 1, "dur": 2, "tid": 1, "pid": "CPU functions", "args": {}})",
      R"({"name": "a " b}" ,"ph": "X"})",
      R"({"name": "ends with quote"", "ph": "X", "args": {"k": "v"}})",
      "{\n  \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"say \"hi\", \"pid\": 7,\n"
      "  \"args\": {\n    \"Trace name\": \"PyTorch Profiler\"\n  }\n}",
  };
  for (const std::string& event : events) {
    std::string stream = event + R"(, {"name": "next {", "ph": "X"}])";
    for (size_t piece = 1; piece <= stream.size(); ++piece) {
      EXPECT_EQ(ScanInPieces(stream, piece), event.size()) << event << " piece " << piece;
    }
    // The same event at every offset of a 64-byte block (the SIMD path).
    for (size_t pad = 0; pad < 64; ++pad) {
      std::string shifted = "{" + std::string(pad, ' ') + "\"p\": 0, " + event.substr(1);
      EXPECT_EQ(ScanInPieces(shifted + ", {}", shifted.size() + 4), shifted.size()) << event << " pad " << pad;
    }
  }
  // Valid JSON is cut as before: a closing quote before white space, a
  // string that holds escaped quotes and what looks like an event's end.
  std::string valid = "{\"a\": \"x\" \n , \"b\": \"q\\\", \\\"ph\\\": {\", \"c\": [\"}\" ]}";
  for (size_t piece = 1; piece <= valid.size(); ++piece) {
    EXPECT_EQ(ScanInPieces(valid + ", {}", piece), valid.size()) << "piece " << piece;
  }
}

}  // namespace
}  // namespace aiprof
