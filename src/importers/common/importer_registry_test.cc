// ImportTrace on files of which nothing can be read (hand-made, labelled).
#include "src/importers/common/importer_registry.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace aiprof
