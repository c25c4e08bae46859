#include "src/render/escape.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/render/units.h"

namespace aiprof {
namespace {

TEST(EscapeTest, Json) {
  EXPECT_EQ(JsonString("a\"b\\c\n</script>"), "\"a\\\"b\\\\c\\n\\u003c/script\\u003e\"");
  EXPECT_EQ(JsonString(std::string("x\x01y", 3)), "\"x\\u0001y\"");
  EXPECT_EQ(JsonString("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
  EXPECT_EQ(JsonString("bad\xff"), "\"bad\\ufffd\"");
  EXPECT_EQ(JsonString("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // a UTF-16 surrogate is not UTF-8
}

TEST(EscapeTest, Csv) {
  EXPECT_EQ(CsvField("aten::conv2d"), "aten::conv2d");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("=HYPERLINK(1)"), "\"'=HYPERLINK(1)\"");
  EXPECT_EQ(CsvField("-1+2"), "\"'-1+2\"");
}

TEST(EscapeTest, HtmlAndMarkdown) {
  EXPECT_EQ(HtmlEscape("<img src=x onerror='a'>&\""), "&lt;img src=x onerror=&#39;a&#39;&gt;&amp;&quot;");
  EXPECT_EQ(HtmlEscape("bad\xff"), "bad\xEF\xBF\xBD");
  EXPECT_EQ(MarkdownEscape("[x](javascript:alert(1)) *b* <s>"),
            "\\[x\\]\\(javascript:alert\\(1\\)\\) \\*b\\* &lt;s&gt;");
  EXPECT_EQ(MarkdownEscape("a|b\nc"), "a\\|b c");
  EXPECT_EQ(MarkdownEscape("- 1. x-y 2.5"), "\\- 1. x-y 2.5");
  EXPECT_EQ(MarkdownEscape("# h"), "\\# h");
}

// A file named "rtl" U+202E "gpj.json" showed in pages as "rtlnosj.jpg"
// (D7 of the serve trial): bidi controls are shown as text, as TerminalSafe
// shows them, in HTML (and SVG) and Markdown alike.
TEST(EscapeTest, HtmlAndMarkdownShowBidiControls) {
  const std::string spoof = "rtl\xe2\x80\xaegpj.json";
  EXPECT_EQ(HtmlEscape(spoof), "rtl\\u202egpj.json");
  EXPECT_EQ(MarkdownEscape(spoof), "rtl\\\\u202egpj.json") << "\\\\u shows as \\u";
  const std::string all =
      "\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9"
      "\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c";
  const std::string shown = "\\u202a\\u202b\\u202c\\u202d\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c";
  EXPECT_EQ(HtmlEscape(all), shown);
  EXPECT_EQ(TerminalSafe(all), shown) << "one list for all escapers";
  EXPECT_EQ(HtmlEscape("caf\xc3\xa9 \xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d"), "caf\xc3\xa9 \xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d")
      << "letters, Hebrew ones too, stay";
}

// Data a page's script shows (views' names): JSON whose decoded string holds
// the visible text \u202e, not the character; letters stay; < > & as in
// JsonString; ASCII exactly as JsonString writes it.
TEST(EscapeTest, DisplayJsonShowsBidiControlsAsText) {
  EXPECT_EQ(DisplayJsonString("rtl\xe2\x80\xaegpj.json"), "\"rtl\\\\u202egpj.json\"");
  EXPECT_EQ(DisplayJsonString("caf\xc3\xa9 \xd7\xa9</script>"), "\"caf\xc3\xa9 \xd7\xa9\\u003c/script\\u003e\"");
  EXPECT_EQ(DisplayJsonString("a\"b\\c<&>\x01"), JsonString("a\"b\\c<&>\x01"));
  EXPECT_EQ(DisplayJsonString("bad \xff byte"), JsonString("bad \xff byte"));
}

TEST(EscapeTest, TerminalStripsControlSequences) {
  EXPECT_EQ(TerminalSafe("a\x1b[31mred"), "a\\x1b[31mred");
  EXPECT_EQ(TerminalSafe("ok \xe2\x9c\x93"), "ok \xe2\x9c\x93");
  // C1 CSI and OSC (U+009B, U+009D), the right-to-left override (U+202E),
  // a first-strong isolate (U+2068) and the line separator: shown, not
  // acted on (found by review: they reached summary, query and report text).
  EXPECT_EQ(TerminalSafe("a\xc2\x9b"
                         "2J\xc2\x9d"
                         "8;;x"),
            "a\\u009b2J\\u009d8;;x");
  EXPECT_EQ(TerminalSafe("\xe2\x80\xae"
                         "evil\xe2\x81\xa8"
                         "x\xe2\x80\xa8"
                         "y"),
            "\\u202eevil\\u2068x\\u2028y");
  EXPECT_EQ(TerminalSafe("caf\xc3\xa9 \xe4\xb8\xad"), "caf\xc3\xa9 \xe4\xb8\xad") << "letters stay";
  EXPECT_EQ(TerminalSafe("a\nb\tc"), "a\\x0ab\\x09c");
  EXPECT_EQ(EscapeControls("a\nb\tc\rd\x07", true), "a\nb\tc\\x0dd\\x07") << "CR rewrites the line: shown";
  EXPECT_EQ(TerminalWidth("caf\xc3\xa9"), 4u);
}

// CSV goes to a terminal when there is no -o, so every CSV writer's cells
// show terminal controls as text, as the text output does (review 26,
// finding 2: summary, query and roofline CSV wrote raw ESC and BEL). LF, CR
// and tabs stay, quoted, and read back as they were; other C0 controls, DEL
// and bytes that are not UTF-8 become \xNN, C1 and bidi controls \uXXXX.
// Exact values are JSON's job. Expected bytes written by hand.
TEST(EscapeTest, CsvFieldsShowTerminalControlsAsText) {
  EXPECT_EQ(CsvField("\x1b]0;pwned\x07\x1b[31mred"), "\\x1b]0;pwned\\x07\\x1b[31mred");
  EXPECT_EQ(CsvField("cr\r"), "\"cr\r\"");
  EXPECT_NE(CsvField("cr\r"), CsvField("cr\\x0d")) << "a CR is a CR, the text \\x0d four characters";
  EXPECT_EQ(CsvField("crlf\r\n"), "\"crlf\r\n\"");
  EXPECT_EQ(CsvField("back\\slash"), "back\\slash");
  EXPECT_EQ(CsvField("a\xe2\x80\xae"
                     "b"),
            "a\\u202eb");
  EXPECT_EQ(CsvField("c1\xc2\x9b"), "c1\\u009b");
  EXPECT_EQ(CsvField(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(CsvField("del\x7f"), "del\\x7f");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("a\tb"), "\"a\tb\"");
  EXPECT_EQ(CsvField("bad\xff"), "bad\\xff");
  EXPECT_EQ(CsvField("esc,\x1b"), "\"esc,\\x1b\"");
}

// A formula after leading blanks or line breaks is defused too.
TEST(EscapeTest, CsvFormulaGuardSkipsLeadingBlanks) {
  EXPECT_EQ(CsvField("\n=1+1"), "\"'\n=1+1\"");
  EXPECT_EQ(CsvField("  =1+1"), "\"'  =1+1\"");
  EXPECT_EQ(CsvField("\r\n@SUM(A1)"), "\"'\r\n@SUM(A1)\"");
  EXPECT_EQ(CsvField("\tx"), "\"'\tx\"");
  EXPECT_EQ(CsvField("\rx"), "\"'\rx\"");
  EXPECT_EQ(CsvField(" x=1"), " x=1");
  EXPECT_EQ(CsvField("  "), "  ");
  EXPECT_EQ(CsvField("\x1b=1"), "\\x1b=1") << "shown as text, the cell starts with a backslash";
}

TEST(EscapeTest, ShownTextCutsAtACharacterBoundary) {
  EXPECT_EQ(ShownText("short", 8), "short");
  EXPECT_EQ(ShownText("12345678", 8), "12345678");
  EXPECT_EQ(ShownText("123456789", 8), "12345678… (9 bytes in all)");
  // "é" is two bytes, 0xC3 0xA9: a cut after byte 8 would split it at
  // bytes 8-9, so the cut comes before it.
  EXPECT_EQ(ShownText("1234567\xc3\xa9xyz", 8), "1234567… (12 bytes in all)");
  EXPECT_EQ(ShownText("\xe4\xb8\xad\xe4\xb8\xad", 4), "\xe4\xb8\xad… (6 bytes in all)");
  // The same cut for drawn labels (topology, flame graph, serve's tiles).
  EXPECT_EQ(Utf8Prefix("\xe4\xb8\xad\xe4\xb8\xad", 5), "\xe4\xb8\xad");
  EXPECT_EQ(Utf8Prefix("abc", 5), "abc");
  EXPECT_EQ(FitLabel("\xe4\xb8\xad\xe4\xb8\xad", 4), "\xe4\xb8\xad…");
  EXPECT_EQ(FitLabel("abcd", 4), "abcd");
}

// A name too long for its column keeps its start and its end, cut between
// code points; one that fits stays whole.
TEST(EscapeTest, ShortenMiddleKeepsBothEnds) {
  EXPECT_EQ(ShortenMiddle("abcdefghij", 10), "abcdefghij");
  EXPECT_EQ(ShortenMiddle("abcdefghij", 5), "ab…ij");
  EXPECT_EQ(ShortenMiddle("abcdefghij", 6), "abc…ij");
  EXPECT_EQ(ShortenMiddle("abcdefghij", 2), "a…");
  EXPECT_EQ(ShortenMiddle("abcdefghij", 1), "…");
  EXPECT_EQ(ShortenMiddle("abcdefghij", 0), "");
  EXPECT_EQ(ShortenMiddle("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 3), "\xc3\xa9…\xc3\xa9");
  EXPECT_EQ(TerminalWidth(ShortenMiddle(std::string(1000, 'a'), kMaxTextCellColumns)), kMaxTextCellColumns);
}

TEST(UnitsTest, NanosecondsAsExactMicroseconds) {
  EXPECT_EQ(NsToUsText(1736408883704643212), "1736408883704643.212");
  EXPECT_EQ(NsToUsText(5000), "5");
  EXPECT_EQ(NsToUsText(1500), "1.5");
  EXPECT_EQ(NsToUsText(7), "0.007");
  EXPECT_EQ(NsToUsText(-1500), "-1.5");
  EXPECT_EQ(NsToUsText(INT64_MIN), "-9223372036854775.808");
}

// JsonEscapedSize counts what AppendJsonEscaped writes (the query engine's
// result limit relies on it), for every byte value alone, in runs, after
// multi-byte characters and cut ones; and the escapes, checked by hand.
TEST(EscapeTest, JsonEscapedSizeIsWhatIsWritten) {
  std::vector<std::string> inputs = {"",
                                     "plain",
                                     "a\"b\\c",
                                     "line\nnext\r\t",
                                     "<b>&amp;</b>",
                                     "caf\xc3\xa9 \xe4\xb8\xad",
                                     "cut \xe4\xb8",
                                     "\xff\xfe",
                                     std::string("nul\0in", 6),
                                     "\x7f\x01\x1f"};
  for (int c = 0; c < 256; ++c)
    inputs.push_back(std::string(1, static_cast<char>(c)) + "x" + std::string(3, static_cast<char>(c)));
  for (const std::string& in : inputs) {
    std::string out;
    AppendJsonEscaped(&out, in);
    EXPECT_EQ(JsonEscapedSize(in), out.size()) << testing::PrintToString(in);
  }
  std::string out;
  AppendJsonEscaped(&out, std::string("<\x01\xff\"\n\x7f", 6));
  EXPECT_EQ(out, "\\u003c\\u0001\\ufffd\\\"\\n\\u007f");
}

}  // namespace
}  // namespace aiprof
