#include "src/render/renderers.h"

#include <gtest/gtest.h>

#include <cmath>

#include "src/render/escape.h"
#include "src/render/page.h"

namespace aiprof::render {
namespace {

constexpr std::string_view kHostile = "<script>alert(1)</script>|*x*\x1b[31m\n\"'&";

Document SmallDocument(std::string_view name) {
  Document doc;
  doc.key = "sample";
  doc.title = "Sample: " + std::string(name);
  doc.generator = "aiprof test";
  Section& s = doc.AddSection("summary", "Summary");
  s.Add(KeyValues{{{"wall_ns", "Wall time", Value::Int(1'500'000), Unit::kNs},
                   {"busy", "Busy", Value::Number(0.25), Unit::kFraction},
                   {"name", "Name", Value::String(std::string(name)), Unit::kNone}}});
  Table& t = s.Add(Table{"ops", "Top ops", {{"name", "Op", Unit::kNone}, {"total_ns", "Total", Unit::kNs},
                                             {"count", "Count", Unit::kCount}, {"fused", "Fused", Unit::kNone}},
                         {}, ""});
  t.rows.push_back({Value::String(std::string(name)), Value::Int(2'000'000), Value::Int(12345), Value::Bool(true)});
  t.rows.push_back({Value::String("gemm"), Value::Null(), Value::Int(1), Value::Bool(false)});
  Section& f = doc.AddSection("findings", "Findings");
  f.Add(Finding{"slow_op", "Slow op " + std::string(name), Severity::kHigh, 0.125, "step time", "",
                {{"op", "Op", Value::String(std::string(name)), Unit::kNone}}});
  f.Add(Paragraph{"Because " + std::string(name)});
  return doc;
}

TEST(RenderersTest, TextFormatsUnitsAndAligns) {
  std::string text = RenderText(SmallDocument("conv"));
  EXPECT_NE(text.find("Sample: conv\n============"), std::string::npos) << text;
  EXPECT_NE(text.find("Wall time: 1.50 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("Busy:      25.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("12,345"), std::string::npos) << text;
  EXPECT_NE(text.find("[HIGH] Slow op conv (12.5% of step time)"), std::string::npos) << text;
  EXPECT_EQ(text.find("\x1b["), std::string::npos);
  EXPECT_NE(RenderText(SmallDocument("conv"), {.color = true}).find("\x1b[1;31m[HIGH]"), std::string::npos);
}

TEST(RenderersTest, MarkdownTables) {
  std::string md = RenderMarkdown(SmallDocument("conv"));
  EXPECT_NE(md.find("# Sample: conv\n"), std::string::npos) << md;
  EXPECT_NE(md.find("## Summary\n"), std::string::npos) << md;
  EXPECT_NE(md.find("- **Wall time:** 1.50 ms\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| Op | Total | Count | Fused |\n| --- | ---: | ---: | --- |\n| conv | 2.00 ms | 12,345 | yes |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| gemm | — | 1 | no |"), std::string::npos) << md;
}

TEST(RenderersTest, HtmlPageHasShellAndTables) {
  std::string html = RenderHtmlPage(SmallDocument("conv"));
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  EXPECT_NE(html.find("<h1>Sample: conv</h1>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td class=\"n\">2.00 ms</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<div class=\"finding high\">"), std::string::npos) << html;
}

// A text cell with a token over 32 characters (a path) may break anywhere
// (td.long) instead of widening its table; prose and short names do not.
TEST(RenderersTest, HtmlLongTokensMayBreak) {
  std::string html = RenderHtmlPage(SmallDocument("test/data/pairs/jemalloc_retain_rounds/r1/x.json.gz: no device"));
  EXPECT_NE(html.find("<td class=\"long\">test/data/pairs/"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>gemm</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("td.long{overflow-wrap:anywhere"), std::string::npos);
  // Wider even so, a table scrolls in its own box (div.table), not the page.
  EXPECT_NE(html.find("<div class=\"table\"><table data-key="), std::string::npos) << html;
  EXPECT_NE(html.find("</tbody></table></div>"), std::string::npos) << html;
  EXPECT_NE(html.find("div.table{overflow-x:auto"), std::string::npos);
  html = RenderHtmlPage(SmallDocument("a sentence of many words that is long but has no long token"));
  EXPECT_EQ(html.find("<td class=\"long\">"), std::string::npos) << html;
}

TEST(RenderersTest, GenericJsonAndYamlAreTyped) {
  std::string json = RenderJson(SmallDocument("conv"));
  EXPECT_NE(json.find("\"document\": \"sample\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"total_ns\": 2000000"), std::string::npos) << json;
  EXPECT_NE(json.find("\"total_ns\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"fused\": true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"total_ns\": \"ns\""), std::string::npos) << json;
  StatusOr<std::string> yaml = RenderYaml(SmallDocument("conv"));
  ASSERT_TRUE(yaml.ok());
  EXPECT_NE(yaml->find("total_ns: 2000000"), std::string::npos) << *yaml;
}

// An epoch timestamp in ns (HTA's MTIA trace) is past 2^53: as a double it
// read back 64 ns off (…724608 for …724673). Integers are written exactly.
TEST(RenderersTest, IntegersPastTwoToTheFiftyThreeAreExact) {
  Document doc;
  doc.key = "sample";
  doc.AddSection("s", "S").Add(KeyValues{{{"ts_ns", "At", Value::Int(1767891117386724673), Unit::kNs},
                                          {"low", "Low", Value::Int(-9007199254740993), Unit::kNs}}});
  std::string json = RenderJson(doc);
  EXPECT_NE(json.find("\"value\": 1767891117386724673"), std::string::npos) << json;
  EXPECT_NE(json.find("\"value\": -9007199254740993"), std::string::npos) << json;
  StatusOr<std::string> yaml = RenderYaml(doc);
  ASSERT_TRUE(yaml.ok());
  EXPECT_NE(yaml->find("value: 1767891117386724673"), std::string::npos) << *yaml;
}

TEST(RenderersTest, MachineFormIsWrittenAsIs) {
  Document doc = SmallDocument("conv");
  doc.machine_json = "{\"schema_version\":1}";
  EXPECT_EQ(RenderJson(doc), "{\"schema_version\":1}");
  EXPECT_FALSE(RenderYaml(doc).ok());
  doc.machine = Tree::Map();
  doc.machine->Set("a", Tree::Number(1));
  EXPECT_EQ(*RenderYaml(doc), "a: 1\n");
}

// A 1 MiB name (hostile or generated) is cut to kMaxShownBytes wherever
// a person reads it (text, Markdown, HTML: a report's PDF is printed from
// the HTML, and Chromium ran past its 120 s on such a page), and kept whole
// in the machine formats.
TEST(RenderersTest, HugeNamesAreCutForPeopleKeptForMachines) {
  const std::string name = "aten::addmm" + std::string(1 << 20, 'A');
  auto longest_run = [](const std::string& out) {
    size_t best = 0, run = 0;
    for (char c : out) best = std::max(best, run = c == 'A' ? run + 1 : 0);
    return best;
  };
  const Document doc = SmallDocument(name);
  for (const char* format : {"text", "md", "html"}) {
    StatusOr<std::string> out = RenderDocument(doc, format);
    ASSERT_TRUE(out.ok()) << format;
    EXPECT_LE(longest_run(*out), kMaxShownProseBytes) << format;  // the paragraph; names in cells less
    // A cell holding the name shows its first kMaxShownBytes bytes, then the
    // cut (an uncut cell, or one cut at the prose bound, has no such run).
    EXPECT_NE(out->find(name.substr(0, kMaxShownBytes) + "…"), std::string::npos) << format;
    EXPECT_NE(out->find(std::to_string(name.size()) + " bytes in all"), std::string::npos) << format;
  }
  // The page's <title> too (the page shell holds a view of the cut title).
  const std::string page = RenderHtmlPage(doc);
  const size_t title = page.find("<title>");
  ASSERT_NE(title, std::string::npos);
  EXPECT_EQ(page.substr(title, 40), "<title>Sample: aten::addmm" + std::string(14, 'A')) << page.substr(title, 80);
  EXPECT_NE(page.find(std::string(100, 'A') + "… (1048595 bytes in all)</title>"), std::string::npos);
  for (const char* format : {"json", "yaml", "csv"}) {
    StatusOr<std::string> out = RenderDocument(doc, format);
    ASSERT_TRUE(out.ok()) << format;
    EXPECT_EQ(longest_run(*out), size_t{1} << 20) << format;
  }
}

// Width at 80 columns (audit 12: resnet50's analyze had lines of 1,681
// columns, one kernel's name, and whatif padded a table's names to 250): a
// text cell is shortened in the middle to kMaxTextCellColumns, a column is
// padded to its widest shown cell only, and with TextOptions::width the
// widest text columns give way until the line fits; figures are never cut,
// and the machine formats keep the whole name.
TEST(RenderersTest, TextTablesShortenLongNamesInTheMiddle) {
  const std::string name =
      "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(" + std::string(300, 'x') + ", int, int)";
  Document doc;
  Table& t =
      doc.AddSection("ops", "Ops")
          .Add(
              Table{"ops", "", {{"name", "Name"}, {"total_ns", "Total", Unit::kNs}, {"category", "Category"}}, {}, ""});
  t.rows.push_back({Value::String(name), Value::Int(2'000'000), Value::String("Kernel")});
  t.rows.push_back({Value::String(std::string(kHostile)), Value::Int(1'000), Value::String("Operator")});
  auto widest = [](const std::string& out) {
    size_t best = 0, start = 0;
    for (size_t end = out.find('\n'); end != std::string::npos; start = end + 1, end = out.find('\n', start)) {
      best = std::max(best, TerminalWidth(out.substr(start, end - start)));
    }
    return best;
  };
  const std::string text = RenderText(doc, {.width = 0});
  // 2 + 80 (the name's column) + 1 + 7 ("2.00 ms") + 1 + 8 ("Operator").
  EXPECT_EQ(widest(text), 99u) << text;
  EXPECT_NE(text.find("\n  void cudnn::detail::dgrad_engine<float, …" + std::string(28, 'x') +
                      ", int, int) 2.00 ms Kernel\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("\\x1b[31m"), std::string::npos) << text;  // shown as text, as before

  const std::string fitted = RenderText(doc, {.width = 40});
  EXPECT_EQ(widest(fitted), 40u) << fitted;
  EXPECT_NE(fitted.find("\n  void cudnn… int, int) 2.00 ms Kernel\n"), std::string::npos) << fitted;
  EXPECT_NE(fitted.find(" 1.0 µs Operator\n"), std::string::npos) << fitted;  // figures whole
  // Narrower than the figures and kMinFittedColumns allow: as narrow as it gets.
  const std::string narrow = RenderText(doc, {.width = 10});
  EXPECT_EQ(widest(narrow), 2u + kMinFittedColumns + 1 + 7 + 1 + 8) << narrow;
  EXPECT_NE(narrow.find("2.00 ms"), std::string::npos) << narrow;

  // The last column pads nothing: whole without a width, fitted with one.
  Document last;
  last.AddSection("ops", "Ops")
      .Add(Table{"ops", "", {{"total_ns", "Total", Unit::kNs}, {"name", "Name"}}, {}, ""})
      .rows.push_back({Value::Int(2'000'000), Value::String(name)});
  EXPECT_NE(RenderText(last, {.width = 0}).find("  2.00 ms " + name + "\n"), std::string::npos);
  EXPECT_NE(RenderText(last, {.width = 40}).find("  2.00 ms void cudnn::det…xxx, int, int)\n"), std::string::npos)
      << RenderText(last, {.width = 40});

  for (const char* format : {"json", "csv", "md", "html"}) {
    StatusOr<std::string> out = RenderDocument(doc, format, {.width = 40});
    ASSERT_TRUE(out.ok()) << format;
    EXPECT_NE(out->find(std::string(300, 'x') + ", int, int"), std::string::npos) << format;
  }
}

// A figure's label wider than its figures is broken over header lines when
// the table would not fit otherwise (the critical path's "Device time per
// step (its own work)" made its table 182 columns); without a width, or
// when it fits, the label is one line.
TEST(RenderersTest, TextFigureLabelsFoldToFit) {
  Document doc;
  Table& t = doc.AddSection("s", "S").Add(Table{"t",
                                                "",
                                                {{"work", "Work"},
                                                 {"device_ns", "Device time per step (its own work)", Unit::kNs},
                                                 {"hidden_ns", "Hidden", Unit::kNs}},
                                                {},
                                                ""});
  t.rows.push_back({Value::String("compute"), Value::Int(98'590'000), Value::Int(33'570'000)});
  EXPECT_EQ(RenderText(doc, {.width = 0}),
            "S\n-\n  Work    Device time per step (its own work)   Hidden\n"
            "  compute                            98.59 ms 33.57 ms\n");
  EXPECT_EQ(RenderText(doc, {.width = 40}),
            "S\n-\n"
            "            Device\n"
            "          time per\n"
            "              step\n"
            "          (its own\n"
            "  Work       work)   Hidden\n"
            "  compute 98.59 ms 33.57 ms\n");
  EXPECT_EQ(RenderText(doc, {.width = 60}), RenderText(doc, {.width = 0}));
}

// With a width, prose is broken at spaces into indented lines that fit
// (a word longer than a line is split); every word is still there, in
// order. Without one each is one line, as before.
TEST(RenderersTest, TextProseFitsTheWidth) {
  const std::string words = "the step waits for input data while the device idles for 48 ms in each step";
  const std::string name = std::string(70, 'k') + "_kernel";
  Document doc;
  Section& s = doc.AddSection("s", "S");
  s.Add(Paragraph{words});
  s.Add(
      Finding{"slow", "Slow " + words, Severity::kHigh, 0.5, "step time", words, {{"op", "Op", Value::String(name)}}});
  s.Add(List{"l", "", {{name + " " + words, "note", {words}}}});
  s.Add(KeyValues{{{"wall_ns", "Wall time", Value::Int(1'500'000), Unit::kNs, words}}});
  const std::string one_line = RenderText(doc, {.width = 0});
  EXPECT_NE(one_line.find("\n" + words + "\n"), std::string::npos) << one_line;
  EXPECT_NE(one_line.find("  Wall time: 1.50 ms (" + words + ")\n"), std::string::npos) << one_line;
  const std::string text = RenderText(doc, {.width = 40});
  std::string joined;
  size_t start = 0;
  for (size_t end = text.find('\n'); end != std::string::npos; start = end + 1, end = text.find('\n', start)) {
    const std::string line = text.substr(start, end - start);
    EXPECT_LE(TerminalWidth(line), 40u) << line;
    if (line.ends_with(' ')) ADD_FAILURE() << "trailing space: '" << line << "'";
    joined += line + "\n";
  }
  // The paragraph, then the finding under its [HIGH] with further lines
  // 6 columns in, the list item's name split across lines.
  EXPECT_NE(text.find("\nthe step waits for input data while the\ndevice idles"), std::string::npos) << text;
  EXPECT_NE(text.find("  [HIGH] Slow the step waits for input\n      data while"), std::string::npos) << text;
  EXPECT_NE(text.find("  - " + std::string(36, 'k') + "\n    " + std::string(34, 'k') + "_k\n    ernel the"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("      Op: " + std::string(30, 'k') + "\n        " + std::string(32, 'k') + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  Wall time: 1.50 ms (the step waits for\n"), std::string::npos) << text;
}

TEST(RenderersTest, CsvWritesOneTableRaw) {
  StatusOr<std::string> csv = RenderCsv(SmallDocument("=cmd|x"));
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(*csv, "name,total_ns (ns),count,fused\r\n\"'=cmd|x\",2000000,12345,true\r\ngemm,,1,false\r\n");
  EXPECT_FALSE(RenderCsv(SmallDocument("x"), "nope").ok());
  Document empty;
  empty.key = "empty";
  EXPECT_FALSE(RenderCsv(empty).ok());
  EXPECT_FALSE(OffersFormat(DocumentFormats(empty), "csv"));
  EXPECT_TRUE(OffersFormat(DocumentFormats(SmallDocument("x")), "csv"));
}

// A document whose tables are not one table (whatif: one per scenario) gives
// CSV its own: written instead of the first table, shown in no other format.
// D11 (trial_dx): a hostile name's terminal controls (hm/hostile_a.json's
// "\x1b[31m…\x1b[0m\x1b]0;title\x07") are neutralised in CSV as the text
// output neutralises them (EscapeControls: \xNN), so printing the CSV to a
// terminal neither recolours nor retitles it; line breaks stay, quoted.
// Expected bytes written by hand.
TEST(RenderersTest, CsvNeutralisesTerminalControls) {
  StatusOr<std::string> csv = RenderCsv(SmallDocument("\x1b[31mred\x1b[0m\x1b]0;title\x07 a\nb\u202e"));
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(csv->find('\x1b'), std::string::npos);
  EXPECT_EQ(csv->find('\x07'), std::string::npos);
  EXPECT_EQ(csv->substr(0, csv->find(",2000000")),
            "name,total_ns (ns),count,fused\r\n\"\\x1b[31mred\\x1b[0m\\x1b]0;title\\x07 a\nb\\u202e\"");
}

TEST(RenderersTest, CsvWritesTheDocumentsCsvTable) {
  Document doc = SmallDocument("conv");
  doc.csv = Table{"all", "", {{"scenario", "Scenario"}, {"total_ns", "Total", Unit::kNs}}, {}, ""};
  doc.csv->rows.push_back({Value::String("a"), Value::Int(1)});
  doc.csv->rows.push_back({Value::String("b"), Value::Int(2)});
  StatusOr<std::string> csv = RenderCsv(doc);
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(*csv, "scenario,total_ns (ns)\r\na,1\r\nb,2\r\n");
  ASSERT_TRUE(RenderCsv(doc, "ops").ok());  // a table by its key is still the document's own
  EXPECT_EQ(RenderCsv(doc, "ops")->substr(0, 5), "name,");
  EXPECT_EQ(RenderText(doc).find("Scenario"), std::string::npos);
  EXPECT_EQ(RenderJson(doc).find("scenario"), std::string::npos);
  Document only;
  only.key = "only";
  only.csv = doc.csv;
  EXPECT_TRUE(OffersFormat(DocumentFormats(only), "csv"));
}

TEST(RenderersTest, HostileStringsEscapedInEveryFormat) {
  Document doc = SmallDocument(kHostile);
  std::string html = RenderHtmlPage(doc);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  std::string md = RenderMarkdown(doc);
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_NE(md.find("\\|\\*x\\*"), std::string::npos) << md;
  // A row stays one row: the newline in a cell does not break the table.
  EXPECT_EQ(md.find("|*x*"), std::string::npos);
  std::string text = RenderText(doc);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("\\x1b[31m\\x0a"), std::string::npos) << text;
  std::string json = RenderJson(doc);
  EXPECT_EQ(json.find('\x1b'), std::string::npos);
  EXPECT_NE(json.find("\\u001b[31m\\n\\\"'\\u0026"), std::string::npos) << json;
  StatusOr<std::string> yaml = RenderYaml(doc);
  ASSERT_TRUE(yaml.ok());
  EXPECT_EQ(yaml->find('\x1b'), std::string::npos) << *yaml;
  StatusOr<std::string> csv = RenderCsv(doc);
  ASSERT_TRUE(csv.ok());
  // CSV is a machine format: quoted, line breaks kept, but terminal
  // controls shown as the text format shows them (it is printed to a
  // terminal without -o).
  EXPECT_EQ(csv->find('\x1b'), std::string::npos) << *csv;
  EXPECT_NE(csv->find("\"<script>alert(1)</script>|*x*\\x1b[31m\n\"\"'&\""), std::string::npos) << *csv;
  // Review 26's h3.json name (an OSC retitle ended by BEL, then a colour):
  // neither ESC nor BEL reaches the CSV, in a cell or in a header. The
  // summary, query and roofline CSV writers use the same CsvField
  // (test/e2e/cli_contract_test.py checks each of them).
  constexpr std::string_view kRetitle = "\x1b]0;pwned\x07\x1b[31mred";
  Document retitle = SmallDocument(kRetitle);
  retitle.sections[0].Add(Table{std::string(kRetitle), "", {{std::string(kRetitle), "Name"}}, {}, ""});
  for (std::string_view key : {std::string_view(""), kRetitle}) {
    StatusOr<std::string> out = RenderCsv(retitle, key);
    ASSERT_TRUE(out.ok()) << out.status().message();
    EXPECT_EQ(out->find('\x1b'), std::string::npos) << *out;
    EXPECT_EQ(out->find('\x07'), std::string::npos) << *out;
  }
  EXPECT_NE(RenderCsv(retitle)->find("\n\\x1b]0;pwned\\x07\\x1b[31mred,"), std::string::npos) << *RenderCsv(retitle);
  EXPECT_EQ(*RenderCsv(retitle, kRetitle), "\\x1b]0;pwned\\x07\\x1b[31mred\r\n");
  EXPECT_EQ(CsvField(kRetitle), "\\x1b]0;pwned\\x07\\x1b[31mred");
}

Document ListDocument(std::string_view name) {
  Document doc;
  doc.key = "causes";
  Section& s = doc.AddSection("causes", "Causes");
  s.Add(List{"root_causes", "Root causes", {{"Too few workers " + std::string(name), "why " + std::string(name),
                                            {"evidence " + std::string(name), "second"}},
                                           {"Plain", "", {}}}});
  return doc;
}

TEST(RenderersTest, ListInEveryFormat) {
  Document doc = ListDocument("w");
  EXPECT_NE(RenderText(doc).find("Root causes\n  - Too few workers w [why w]\n      evidence w\n      second\n  - Plain\n"),
            std::string::npos)
      << RenderText(doc);
  EXPECT_NE(RenderText(doc, {.color = true}).find("\x1b[2m[why w]\x1b[0m"), std::string::npos);
  EXPECT_NE(RenderMarkdown(doc).find("**Root causes**\n\n- Too few workers w — *why w*\n  - evidence w\n  - second\n- Plain"),
            std::string::npos)
      << RenderMarkdown(doc);
  EXPECT_NE(RenderHtmlBody(doc).find("<ul data-key=\"root_causes\"><li>Too few workers w <span class=\"note\">(why w)</span>"
                                     "<ul><li>evidence w</li><li>second</li></ul></li><li>Plain</li></ul>"),
            std::string::npos)
      << RenderHtmlBody(doc);
  std::string json = RenderJson(doc);
  EXPECT_NE(json.find("\"type\": \"list\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"details\": [\n"), std::string::npos) << json;
  EXPECT_FALSE(OffersFormat(DocumentFormats(doc), "csv"));
}

TEST(RenderersTest, ListEscapedInEveryFormat) {
  Document doc = ListDocument(kHostile);
  std::string html = RenderHtmlPage(doc);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("(why &lt;script&gt;"), std::string::npos) << html;
  std::string md = RenderMarkdown(doc);
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_NE(md.find("  - evidence &lt;script&gt;"), std::string::npos) << md;
  std::string text = RenderText(doc);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("evidence <script>alert(1)</script>|*x*\\x1b[31m\\x0a"), std::string::npos) << text;
  EXPECT_EQ(RenderJson(doc).find('\x1b'), std::string::npos);
  StatusOr<std::string> yaml = RenderYaml(doc);
  ASSERT_TRUE(yaml.ok());
  EXPECT_EQ(yaml->find('\x1b'), std::string::npos);
}

TEST(RenderersTest, RenderDocumentDispatches) {
  Document doc = SmallDocument("x");
  for (const OutputFormat& f : DocumentFormats(doc)) EXPECT_TRUE(RenderDocument(doc, f.name).ok()) << f.name;
  EXPECT_FALSE(RenderDocument(doc, "pdf").ok());
}

TEST(UnitsTest, FormatQuantity) {
  EXPECT_EQ(FormatQuantity(1500, Unit::kNs), "1.5 µs");
  EXPECT_EQ(FormatQuantity(2.5e9, Unit::kNs), "2.50 s");
  EXPECT_EQ(FormatQuantity(12, Unit::kNs), "12 ns");
  EXPECT_EQ(FormatQuantity(3.25, Unit::kMs), "3.25 ms");
  EXPECT_EQ(FormatQuantity(0.1234, Unit::kFraction), "12.3%");
  EXPECT_EQ(FormatQuantity(1234567, Unit::kCount), "1,234,567");
  EXPECT_EQ(FormatQuantity(-1234, Unit::kCount), "-1,234");
  EXPECT_EQ(FormatQuantity(512, Unit::kBytes), "512 B");
  EXPECT_EQ(FormatQuantity(3 * 1024 * 1024, Unit::kBytes), "3.0 MiB");
  EXPECT_EQ(FormatQuantity(12.5e9, Unit::kBytesPerSecond), "12.50 GB/s");
  EXPECT_EQ(FormatQuantity(std::nan(""), Unit::kNs), "n/a");
}

// The page blocks the report uses: headline cards with a remark, a sortable
// table (raw sort keys, the sort script on the page), a chart with its
// figures, and top-level sections as anchors; every string escaped.
TEST(RenderersTest, CardsSortableTablesChartsAndAnchors) {
  Document doc;
  doc.key = "page";
  doc.title = "Page";
  KeyValues cards{{{"step", "Step time", Value::Number(1.5), Unit::kMs, std::string(kHostile)}}, true};
  doc.AddSection("headline", "Headline").Add(std::move(cards));
  Table t{"ops", "", {{"op", "Op"}, {"t", "Time", Unit::kMs}}, {}, ""};
  t.sortable = true;
  t.rows.push_back({Value::String(std::string(kHostile)), Value::Number(2.25)});
  doc.AddSection("ops", "Ops").Add(std::move(t));
  Table figures{"bars", "", {{"x", "Bar"}, {"y", "Height", Unit::kMs}}, {}, ""};
  figures.rows.push_back({Value::String("b1"), Value::Number(3)});
  doc.AddSection("charts", "Charts").Add(Chart{"bars", "<svg class=\"chart\"></svg>", std::move(figures)});

  std::string html = RenderHtmlPage(doc);
  EXPECT_NE(html.find("<section id=\"headline\">"), std::string::npos);
  EXPECT_NE(html.find("<div class=\"card\" data-key=\"step\"><div class=\"k\">Step time</div><div class=\"v\">1.50 ms</div>"),
            std::string::npos);
  EXPECT_NE(html.find("<table data-key=\"ops\" class=\"sortable\">"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"n\" data-v=\"2.25\">2.25 ms</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("table.sortable"), std::string::npos);  // the sort script
  EXPECT_NE(html.find("<figure class=\"chart\" data-key=\"bars\"><svg class=\"chart\"></svg><details"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  // Without a sortable table the page carries no script.
  Document plain = SmallDocument("x");
  EXPECT_TRUE(ScriptHashesOfPage(RenderHtmlPage(plain)).empty());

  std::string md = RenderMarkdown(doc);
  EXPECT_NE(md.find("- **Step time:** 1.50 ms — "), std::string::npos) << md;
  EXPECT_NE(md.find("| b1 | 3.00 ms |"), std::string::npos) << md;  // the chart as its figures
  EXPECT_EQ(md.find("<svg"), std::string::npos);
  std::string text = RenderText(doc);
  EXPECT_NE(text.find("b1"), std::string::npos);
  EXPECT_EQ(text.find("\x1b[31m"), std::string::npos);
  std::string json = RenderJson(doc);
  EXPECT_NE(json.find("\"chart\""), std::string::npos);
  EXPECT_NE(json.find("\"detail\""), std::string::npos);
}

// A table that repeats what the page draws above it (the attribution tree's
// rows) is folded in HTML under its summary; the other formats show it as
// any table. A cell's leading spaces (a tree's depth) keep their width in
// HTML (td.indent: white-space pre-wrap), which would collapse them.
TEST(RenderersTest, FoldedTableAndIndentedCells) {
  Document doc;
  doc.key = "tree";
  doc.title = "Tree";
  Table t{"tree", "Tree, depth first", {{"node", "Node"}, {"t", "Time", Unit::kMs}}, {}, ""};
  t.html_fold = "The tree as a table";
  t.rows.push_back({Value::String("root"), Value::Number(2)});
  t.rows.push_back({Value::String("    child <b>"), Value::Number(1)});
  doc.AddSection("s", "S").Add(std::move(t));

  const std::string html = RenderHtmlPage(doc);
  EXPECT_NE(html.find("<details class=\"fold\"><summary>The tree as a table</summary><div class=\"table\">"
                      "<table data-key=\"tree\">"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("</table></div>\n</details>"), std::string::npos);
  EXPECT_NE(html.find("<td>root</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"indent\">    child &lt;b&gt;</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("td.indent{white-space:pre-wrap}"), std::string::npos);
  // Long words break inside their box in the document's text, key/values and
  // cards, not past the window (trial_views2 V1, V4).
  EXPECT_NE(html.find("overflow-wrap:break-word"), std::string::npos);
  EXPECT_NE(html.find("grid-template-columns:fit-content(45%) minmax(0,1fr)"), std::string::npos);
  EXPECT_NE(html.find(".card{flex:1 1 210px;min-width:0"), std::string::npos);

  const std::string md = RenderMarkdown(doc);
  EXPECT_EQ(md.find("The tree as a table"), std::string::npos);
  EXPECT_NE(md.find("| root | 2.00 ms |"), std::string::npos) << md;
  // GFM trims a cell's spaces: the depth is kept as no-break spaces.
  EXPECT_NE(md.find("| \u00a0\u00a0\u00a0\u00a0child &lt;b&gt; | 1.00 ms |"), std::string::npos) << md;
  EXPECT_EQ(RenderText(doc).find("The tree as a table"), std::string::npos);
  EXPECT_EQ(RenderJson(doc).find("The tree as a table"), std::string::npos);
}

TEST(RenderersTest, ProseColumnUnderItsRowInHtmlOnly) {
  Document doc;
  doc.key = "v";
  doc.title = "V";
  Table t{"metrics",
          "",
          {{"metric", "metric"}, {"change", "change", Unit::kChange}, {"reason", "why", Unit::kNone, true}},
          {},
          ""};
  t.rows.push_back({Value::String("latency"), Value::Number(-0.28), Value::String("p < alpha <b>")});
  t.rows.push_back({Value::String("p99"), Value::Number(0.1), Value::String("")});
  doc.AddSection("s", "S").Add(t);

  // validate's "why" beside a dozen figures got a few words a line: under its row, across the table.
  const std::string html = RenderHtmlPage(doc);
  EXPECT_EQ(html.find("<th>why</th>"), std::string::npos) << html;
  EXPECT_NE(html.find("<th>change</th></tr>"), std::string::npos) << html;
  EXPECT_NE(html.find("</tr>\n<tr class=\"below\"><td colspan=\"2\"><span class=\"k\">why</span> p &lt; alpha "
                      "&lt;b&gt;</td></tr>\n<tr><td>p99</td>"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("<tr class=\"below\"><td colspan=\"2\"><span class=\"k\">why</span> </td>"), std::string::npos);
  // The other formats keep it a column; a sortable table keeps it a cell (its rows move alone).
  EXPECT_NE(RenderMarkdown(doc).find("| why |"), std::string::npos) << RenderMarkdown(doc);
  t.sortable = true;
  Document sorted;
  sorted.AddSection("s", "S").Add(std::move(t));
  EXPECT_NE(RenderHtmlPage(sorted).find("<th>why</th>"), std::string::npos);
}

}  // namespace
}  // namespace aiprof::render
