// ImportTrace on files of which nothing can be read, and what is read from
// kImporters: the formats named in errors, the trace endings, which files are
// not sample files (hand-made, labelled).
#include "src/importers/common/importer_registry.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "src/importers/samples/sample_file.h"
#include "src/model/native_file.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

using testing::TempDir;

// TraceLens's capture list (capture_traces/execution_details.json) is JSON
// the Chrome importer reads, but none of its records is an event: it was an
// empty trace with one missing_ph diagnostic, and aiprof serve listed it as
// a ready run.
TEST(ImporterRegistryTest, FileOfWhichNoRecordIsAnEventIsAnError) {
  TempDir dir;
  dir.Write("execution_details.json", R"([{"file": "graph_capture_rank_0.pt.trace.json.gz", "batch_size": 32},
                                          {"file": "graph_capture_rank_1.pt.trace.json.gz", "batch_size": 64}])");
  auto r = ImportTrace(dir.Path("execution_details.json"));
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_NE(m.find(dir.Path("execution_details.json") + ": no event could be read (2 records skipped; missing_ph: 2, "
                                                        "first at "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("byte 1"), std::string::npos) << m;
}

// Files of a known format with no records, or metadata only, are empty
// traces, not errors; one readable event among skipped ones is a trace.
TEST(ImporterRegistryTest, EmptyTracesAndPartlyReadableOnesStillImport) {
  TempDir dir;
  dir.Write("empty.json", "[]");
  dir.Write("meta.json", R"([{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}}])");
  dir.Write("one.json", R"([{"name": "no ph"}, {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 5}])");
  for (const char* name : {"empty.json", "meta.json"}) {
    auto r = ImportTrace(dir.Path(name));
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().message();
    EXPECT_EQ((*r)->slices.size(), 0u) << name;
  }
  auto one = ImportTrace(dir.Path("one.json"));
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ((*one)->slices.size(), 1u);
  EXPECT_EQ((*one)->diagnostics.Count("missing_ph"), 1u);
}

// The "unrecognised format" error names every format an importer reads: it
// was a hand-kept list that left out the SDK event file.
TEST(ImporterRegistryTest, UnrecognisedFormatNamesEveryImporter) {
  TempDir dir;
  auto r = ImportTrace(dir.Write("notes.txt", "hello world\n"));
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_NE(m.find(dir.Path("notes.txt") + ": unrecognised format (expected "), std::string::npos) << m;
  ASSERT_EQ(FileImporters().size(), 4u);
  for (const ImporterEntry& importer : FileImporters()) {
    EXPECT_NE(m.find(importer.label), std::string::npos) << importer.name << ": " << m;
    EXPECT_NE(KnownFileFormats().find(importer.label), std::string::npos) << importer.name;
  }
  EXPECT_NE(m.find("SDK event file"), std::string::npos) << m;
  EXPECT_NE(m.find(".aiprof file"), std::string::npos) << m;
}

// The names the server's scan records even when their bytes are broken
// (src/serve/indexer.cc) are every importer's endings, plain or compressed:
// its hand-kept list left out the SDK's spill file (.aiprof.part), so a dead
// worker's broken one vanished from the server instead of failing.
TEST(ImporterRegistryTest, EveryImporterEndingIsATraceFileName) {
  for (const ImporterEntry& importer : FileImporters()) {
    const std::string endings = importer.endings;
    ASSERT_FALSE(endings.empty()) << importer.name;
    for (size_t at = 0; at < endings.size();) {
      const size_t space = std::min(endings.find(' ', at), endings.size());
      const std::string name = "run" + endings.substr(at, space - at);
      EXPECT_TRUE(HasTraceFileEnding(name)) << importer.name << ": " << name;
      EXPECT_TRUE(HasTraceFileEnding(name + ".gz")) << name;
      EXPECT_TRUE(HasTraceFileEnding(name + ".zst")) << name;
      at = space + 1;
    }
  }
  for (const char* name : {"aiprof-7.aiprof.part", "x.aiprof", "r.pt.trace.json", "e.sqlite", "t.json.gz"}) {
    EXPECT_TRUE(HasTraceFileEnding(name)) << name;
  }
  for (const char* name : {"notes.txt", "kernel_details.csv", "x.sqlite-journal", "json", ""}) {
    EXPECT_FALSE(HasTraceFileEnding(name)) << name;
  }
}

// A file an importer other than the Chrome JSON one (which claims any JSON)
// recognises is a trace, never a validation sample file: an Nsight Systems
// export starts with a letter ("SQLite format 3"), as a text sample file
// does, and `validate --before x.sqlite` read it as one (":2: expected 1
// field(s), found 2").
TEST(ImporterRegistryTest, TraceFilesAreNotSampleFiles) {
  TempDir dir;
  const std::string sqlite = dir.Write("e.sqlite", std::string("SQLite format 3\0", 16) + std::string(100, 'x'));
  const std::string spill = dir.Write("w.aiprof.part", "AIPROFP\n" + std::string(100, '\0'));
  const std::string native = dir.Write("n.aiprof", std::string(kNativeMagic) + "rest");
  const std::string ascend = dir.Write("t.json", R"([{"ph": "X", "ts": "1736408883704643.212", "dur": 1}])");
  ASSERT_NE(DetectFileImporter(std::string_view("SQLite format 3\0", 16)), nullptr);
  for (const std::string& path : {sqlite, spill, native, ascend}) EXPECT_FALSE(LooksLikeSampleFile(path)) << path;
  // Sample files still are.
  EXPECT_TRUE(LooksLikeSampleFile(dir.Write("list.txt", "12.5\n13.1\n")));
  EXPECT_TRUE(LooksLikeSampleFile(dir.Write("table.csv", "iteration,latency_ms\n1,12.5\n")));
  EXPECT_TRUE(LooksLikeSampleFile(dir.Write("h.json", R"({"results":[{"times":[0.1]}]})")));
  EXPECT_TRUE(LooksLikeSampleFile(dir.Write("a.json", "[12.5, 13.1]")));
}

}  // namespace
}  // namespace aiprof
