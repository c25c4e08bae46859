#include "src/session/validate_runs.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "src/importers/common/importer_registry.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

std::string Pair(const std::string& name, const std::string& side) {
  return std::string(AIPROF_SOURCE_DIR) + "/test/data/pairs/" + name + "_" + side + ".pt.trace.json.gz";
}

// No knowledge database: the default one is not read.
ValidateRunsOptions NoHistory(const testing::TempDir& dir) {
  ValidateRunsOptions o;
  o.session.db = dir.path() + "/none.db";
  return o;
}

void ExpectSame(const ValidationResult& a, const ValidationResult& b) {
  EXPECT_EQ(a.before_label, b.before_label);
  EXPECT_EQ(a.after_label, b.after_label);
  EXPECT_EQ(a.sample_notes, b.sample_notes);
  EXPECT_EQ(a.overall, b.overall);
  ASSERT_EQ(a.metrics.size(), b.metrics.size());
  for (size_t i = 0; i < a.metrics.size(); ++i) {
    EXPECT_EQ(a.metrics[i].metric, b.metrics[i].metric);
    EXPECT_EQ(a.metrics[i].before, b.metrics[i].before);
    EXPECT_EQ(a.metrics[i].after, b.metrics[i].after);
    EXPECT_EQ(a.metrics[i].p_value, b.metrics[i].p_value);
    EXPECT_EQ(a.metrics[i].verdict, b.metrics[i].verdict);
  }
  ASSERT_EQ(a.prediction.has_value(), b.prediction.has_value());
  if (a.prediction) {
    EXPECT_EQ(a.prediction->fix_id, b.prediction->fix_id);
    EXPECT_EQ(a.prediction->predicted_ns, b.prediction->predicted_ns);
    EXPECT_EQ(a.prediction->measured_ns, b.prediction->measured_ns);
  }
}

// A pair whose fix cannot be inferred (defensive_clone): the traces read
// through sessions the caller holds (the MCP tool, the package's Trace)
// give what the files loaded here give (the CLI), the note on why no fix
// was inferred included, naming the caller's argument.
TEST(ValidateRuns, LoadedSessionsGiveWhatFilesGive) {
  testing::TempDir dir;
  const std::string before = Pair("defensive_clone", "before"), after = Pair("defensive_clone", "after");
  ValidateRunsOptions o = NoHistory(dir);
  o.prediction.fix_id_argument = "'fix_id'";
  StatusOr<ValidationResult> files = ValidateRuns({ValidateRun::File(before)}, {ValidateRun::File(after)}, o);
  ASSERT_TRUE(files.ok()) << files.status().message();

  auto tb = ImportTrace(before), ta = ImportTrace(after);
  ASSERT_TRUE(tb.ok() && ta.ok());
  SessionOptions so;
  so.db = o.session.db;
  so.input = before;
  std::unique_ptr<AnalysisSession> sb = AnalysisSession::ForTrace(**tb, so);
  so.input = after;
  std::unique_ptr<AnalysisSession> sa = AnalysisSession::ForTrace(**ta, so);
  StatusOr<ValidationResult> loaded =
      ValidateRuns({ValidateRun::Loaded(before, sb.get())}, {ValidateRun::Loaded(after, sa.get())}, o);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();

  ExpectSame(*files, *loaded);
  EXPECT_FALSE(loaded->prediction);
  bool why_not = false;
  for (const std::string& n : loaded->sample_notes) {
    why_not |= n.find("could not be inferred") != std::string::npos && n.ends_with("name it with 'fix_id'");
  }
  EXPECT_TRUE(why_not) << ::testing::PrintToString(loaded->sample_notes);
}

// Samples without a trace (a stored baseline) make no prediction: a fix id
// or a scenario is an error naming the caller's argument.
TEST(ValidateRuns, AFixNeedsTracesOnBothSides) {
  testing::TempDir dir;
  ValidateRunsOptions o = NoHistory(dir);
  StatusOr<RunSamples> stored = LoadRunSamples(Pair("cast_roundtrip", "before"), RunInputs{});
  ASSERT_TRUE(stored.ok()) << stored.status().message();
  o.prediction.fix_id = "some_fix";
  o.fix_id_argument = "fix_id";
  StatusOr<ValidationResult> r = ValidateRuns({ValidateRun::Samples("baseline svc", *stored)},
                                              {ValidateRun::File(Pair("cast_roundtrip", "after"))}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "fix_id needs traces before and after (a prediction is made from the before trace)");

  o.prediction.fix_id.clear();
  r = ValidateRuns({ValidateRun::Samples("baseline svc", *stored)},
                   {ValidateRun::File(Pair("cast_roundtrip", "after"))}, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->prediction);
  EXPECT_EQ(r->before_label, stored->label);
}

// One file given twice on a side is refused, named by the caller's side,
// whether it is a path or a loaded trace of that path.
TEST(ValidateRuns, ARunGivenTwiceIsRefused) {
  testing::TempDir dir;
  ValidateRunsOptions o = NoHistory(dir);
  o.before_side = "before";
  const std::string before = Pair("cast_roundtrip", "before");
  auto t = ImportTrace(before);
  ASSERT_TRUE(t.ok());
  std::unique_ptr<AnalysisSession> s = AnalysisSession::ForTrace(**t, {});
  StatusOr<ValidationResult> r = ValidateRuns({ValidateRun::File(before), ValidateRun::Loaded(before, s.get())},
                                              {ValidateRun::File(Pair("cast_roundtrip", "after"))}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().message().starts_with("before run 2 (" + before + ") is the same file as run 1"))
      << r.status().message();
}

}  // namespace
}  // namespace aiprof
