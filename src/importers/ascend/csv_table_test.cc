// CsvTable on hand-made inputs, each written here for one quirk of Ascend's
// CSV files or one kind of bad input.
#include "src/importers/ascend/csv_table.h"

#include <gtest/gtest.h>

namespace aiprof {
namespace {

CsvTable MustParseCsv(std::string text) {
  auto r = CsvTable::FromText("t.csv", std::move(text));
  EXPECT_TRUE(r.ok()) << r.status().message();
  return std::move(r).value();
}

TEST(CsvTableTest, TabSuffixTripleQuotesAndNa) {
  CsvTable t = MustParseCsv(
      "Name,Start Time(us),Input Shapes,Wait Time(us)\r\n"
      "trans_TransData_0,1736408883704643.212\t,\"\"\"32,3,224,224;1,2\"\"\",N/A\r\n");
  ASSERT_TRUE(t.Next().value());
  EXPECT_TRUE(t.row_ok());
  EXPECT_EQ(t.Field(t.Column("Name")), "trans_TransData_0");
  EXPECT_EQ(t.MicrosToNanos(t.Column("Start Time(us)")), 1736408883704643212);
  EXPECT_EQ(StripQuotes(t.Field(t.Column("Input Shapes"))), "32,3,224,224;1,2");
  EXPECT_FALSE(t.Number(t.Column("Wait Time(us)")).has_value());
  EXPECT_EQ(t.line(), 2u);
  EXPECT_FALSE(t.Next().value());
}

TEST(CsvTableTest, QuotedNewlinesKeepLineNumbers) {
  CsvTable t = MustParseCsv("a,b\n1,\"x\ny\"\n\n2,3\n");
  ASSERT_TRUE(t.Next().value());
  EXPECT_EQ(t.Field(1), "x\ny");
  ASSERT_TRUE(t.Next().value());  // blank line 4 skipped
  EXPECT_EQ(t.Field(0), "2");
  EXPECT_EQ(t.Where(), "t.csv:line 5");
}

TEST(CsvTableTest, MissingColumnNamesFileLineAndHeader) {
  CsvTable t = MustParseCsv("Name,Start(us)\nx,1\n");
  Status s = t.Require({"Name", "Start Time(us)"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("t.csv:line 1: missing column \"Start Time(us)\""), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("Start(us)"), std::string::npos);
}

TEST(CsvTableTest, TruncatedLastRowIsAnError) {
  CsvTable t = MustParseCsv("a,b,c\n1,2,3\n4,5");
  ASSERT_TRUE(t.Next().value());
  auto r = t.Next();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("t.csv:line 3"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("truncated"), std::string::npos);
}

TEST(CsvTableTest, FieldPastTheLimitIsAnErrorNamingTheLine) {
  for (const std::string& big :
       {std::string(kMaxCsvFieldBytes + 1, 'x'), "\"" + std::string(kMaxCsvFieldBytes + 1, 'y') + "\""}) {
    CsvTable t = MustParseCsv("a,b\n1,2\n3," + big + "\n");
    ASSERT_TRUE(t.Next().value());
    auto r = t.Next();
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("t.csv:line 3: a field over 1 MiB"), std::string::npos) << r.status().message();
  }
  CsvTable ok = MustParseCsv("a\n" + std::string(kMaxCsvFieldBytes, 'z') + "\n");
  ASSERT_TRUE(ok.Next().value());
  EXPECT_EQ(ok.Field(0).size(), kMaxCsvFieldBytes);
}

TEST(CsvTableTest, UnterminatedQuoteIsAnError) {
  CsvTable t = MustParseCsv("a,b\n1,\"never closed\n");
  auto r = t.Next();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("t.csv:line 2"), std::string::npos) << r.status().message();
}

TEST(CsvTableTest, ShortRowInsideTheFileIsFlaggedNotFatal) {
  CsvTable t = MustParseCsv("a,b,c\n1,2\n4,5,6\n");
  ASSERT_TRUE(t.Next().value());
  EXPECT_FALSE(t.row_ok());
  ASSERT_TRUE(t.Next().value());
  EXPECT_TRUE(t.row_ok());
}

TEST(CsvTableTest, EmptyFileIsAnError) {
  EXPECT_FALSE(CsvTable::FromText("e.csv", "").ok());
  EXPECT_FALSE(CsvTable::Open("/nonexistent/x.csv").ok());
}

}  // namespace
}  // namespace aiprof
