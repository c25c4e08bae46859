// CsvTable on hand-made inputs, each written here for one quirk of Ascend's
// CSV files or one kind of bad input.
#include "src/importers/ascend/csv_table.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "src/base/import_budget.h"
#include "test/util/temp_file.h"

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

// D14 of the input trial: the file was read whole before the 1 MiB field
// limit applied (a link to /dev/zero: 2.1 GB and 30 s; a FIFO: blocked
// forever). Files that are not regular are refused before they are opened.
TEST(CsvTableTest, FilesThatAreNotRegularAreRefusedUnread) {
  testing::TempDir dir;
  const std::string zero = dir.Path("kernel_details.csv");
  std::filesystem::create_symlink("/dev/zero", zero);
  auto r = CsvTable::Open(zero);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("kernel_details.csv: is a character device, not a regular file"),
            std::string::npos)
      << r.status().message();
  const std::string fifo = dir.Path("step_trace_time.csv");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto f = CsvTable::Open(fifo);  // no writer: opening it would block
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("step_trace_time.csv: is a named pipe (FIFO)"), std::string::npos)
      << f.status().message();
}

// Streamed in chunks: a 10 MiB field stops the read at the limit (the line is
// named), and records, quotes and doubled quotes that straddle chunk edges
// read as they do from one string.
TEST(CsvTableTest, StreamedFileReadsAsTheWholeTextDoes) {
  testing::TempDir dir;
  std::string big = "a,b\n" + std::string(10 << 20, 'x') + ",1\n";
  auto r = CsvTable::Open(dir.Write("big.csv", big));
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto next = r->Next();
  ASSERT_FALSE(next.ok());
  EXPECT_NE(next.status().message().find("big.csv:line 2: a field over 1 MiB"), std::string::npos);

  std::string text = "\xEF\xBB\xBFName,Shape,N\r\n";
  for (int i = 0; i < 20000; ++i) {
    text +=
        "op" + std::to_string(i) + ",\"\"\"" + std::to_string(i) + ",\"\"3\"\"\nx\"\"\"," + std::to_string(i) + "\r\n";
  }
  ASSERT_GT(text.size(), size_t{4} << 16);  // many 64 KiB chunks
  auto file = CsvTable::Open(dir.Write("many.csv", text));
  ASSERT_TRUE(file.ok()) << file.status().message();
  CsvTable whole = MustParseCsv(text);
  EXPECT_EQ(file->header(), whole.header());
  int rows = 0;
  while (true) {
    auto a = file->Next();
    auto b = whole.Next();
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_EQ(*a, *b);
    if (!*a) break;
    ++rows;
    ASSERT_EQ(file->line(), whole.line());
    for (int c = 0; c < 3; ++c) ASSERT_EQ(file->Field(c), whole.Field(c)) << "row " << rows;
  }
  EXPECT_EQ(rows, 20000);
}

// serve's byte limit (--max-convert-mb) holds for the CSVs (read through
// ByteSource): each chunk is counted as it is read, and the read past the
// limit stops the table, naming the file and the flag. Before, a torch_npu
// folder's CSVs were read whole under any limit.
TEST(CsvTableTest, ImportBudgetCountsEveryChunk) {
  testing::TempDir dir;
  const std::string path = dir.Path("kernel_details.csv");
  {
    std::string text = "Name,Duration(us)\n";
    while (text.size() < 3 * kCsvReadChunkBytes) text += "MatMul,12.5\n";
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  ImportBudget budget;
  budget.max_bytes = kCsvReadChunkBytes + 1;  // the second chunk passes it
  budget.bytes_flag = "--max-convert-mb";
  ScopedImportBudget scope(&budget);
  auto t = CsvTable::Open(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Status stopped;
  size_t rows = 0;
  while (true) {
    StatusOr<bool> row = t->Next();
    if (!row.ok()) {
      stopped = row.status();
      break;
    }
    if (!*row) break;
    ++rows;
  }
  ASSERT_FALSE(stopped.ok()) << "read " << rows << " rows past the limit";
  EXPECT_NE(stopped.message().find("kernel_details.csv: conversion stopped"), std::string::npos) << stopped.message();
  EXPECT_NE(stopped.message().find("--max-convert-mb"), std::string::npos) << stopped.message();
  EXPECT_LT(budget.bytes.load(), 3 * kCsvReadChunkBytes);

  ImportBudget unlimited;  // counted, not limited
  ScopedImportBudget scope2(&unlimited);
  auto all = CsvTable::Open(path);
  ASSERT_TRUE(all.ok());
  while (*all->Next()) {
  }
  EXPECT_EQ(unlimited.bytes.load(), std::filesystem::file_size(path));
}

}  // namespace
}  // namespace aiprof
