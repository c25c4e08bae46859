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

}  // namespace
}  // namespace aiprof
