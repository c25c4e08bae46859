#include "src/session/prediction_pool.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "src/analysis/validation/compare.h"
#include "src/importers/common/importer_registry.h"
#include "src/session/prediction_check.h"
#include "src/session/session.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

// One round's run of a pair in test/data/pairs/jemalloc_retain_rounds (each
// run a fresh process) and its session.
struct PoolRun {
  std::string path;
  std::unique_ptr<Trace> trace;
  std::unique_ptr<AnalysisSession> session;
};
void LoadPoolRun(const std::string& pair, int round, const std::string& side, const std::string& db, PoolRun* out) {
  out->path = std::string(AIPROF_SOURCE_DIR) + "/test/data/pairs/jemalloc_retain_rounds/r" + std::to_string(round) +
              "/" + pair + "_" + side + ".pt.trace.json.gz";
  auto t = ImportTrace(out->path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  out->trace = std::move(*t);
  SessionOptions o;
  o.attach_history = false;
  o.db = db;
  out->session = AnalysisSession::ForTrace(*out->trace, o);
}

// layout_roundtrip, rounds 1-3: the first pair infers the fix
// (channels_last_end_to_end, layout_conversion gone) and every run joins:
// the pooled check is PoolPredictionRuns over each run's own check.
TEST(PredictionPool, SeveralRunsASidePoolEachRunsOwnCheck) {
  testing::TempDir dir;
  const std::string db = dir.path() + "/none.db";
  PoolRun b[3], a[3];
  for (int r = 0; r < 3; ++r) {
    ASSERT_NO_FATAL_FAILURE(LoadPoolRun("layout_roundtrip", r + 1, "before", db, &b[r]));
    ASSERT_NO_FATAL_FAILURE(LoadPoolRun("layout_roundtrip", r + 1, "after", db, &a[r]));
  }
  PredictionPool pool({});
  ASSERT_TRUE(pool.AddFirst(b[0].path, b[0].session.get(), a[0].path, a[0].session.get()).ok());
  for (int r = 1; r < 3; ++r) ASSERT_TRUE(pool.AddBefore(b[r].path, b[r].session.get()).ok());
  for (int r = 1; r < 3; ++r) ASSERT_TRUE(pool.AddAfter(a[r].path, a[r].session.get()).ok());
  ValidationResult result;
  pool.Finish(&result);
  ASSERT_TRUE(result.prediction);
  EXPECT_EQ(result.prediction->fix_id, "channels_last_end_to_end");
  EXPECT_EQ(result.prediction->before_runs, 3u);
  EXPECT_EQ(result.prediction->after_runs, 3u);

  // By hand: each before run's check of that fix against the first after
  // run, each after run's steady figure on the check's base.
  auto first = CheckPrediction(*b[0].session, *a[0].session, "");
  ASSERT_TRUE(first.ok() && *first);
  std::vector<PredictionCheck> before = {**first};
  std::vector<MeanInterval> after = {SteadyStepTime(*a[0].session, **first)};
  for (int r = 1; r < 3; ++r) {
    bool suggested = false;
    auto c = PredictFixForRun(*b[r].session, *a[0].session, (*first)->fix_id, (*first)->mean, &suggested);
    ASSERT_TRUE(c.ok() && *c);
    before.push_back(**c);
    after.push_back(SteadyStepTime(*a[r].session, **first));
  }
  const PredictionCheck want = PoolPredictionRuns(before, after);
  EXPECT_DOUBLE_EQ(result.prediction->predicted_ns, want.predicted_ns);
  EXPECT_DOUBLE_EQ(result.prediction->measured_ns, want.measured_ns);
  EXPECT_DOUBLE_EQ(result.prediction->predicted_lo_ns, want.predicted_lo_ns);
  EXPECT_DOUBLE_EQ(result.prediction->measured_hi_ns, want.measured_hi_ns);
}

// A later run without a trace (a benchmark result file): the check stays
// with the first pair, and a note names that pair.
TEST(PredictionPool, ALaterRunWithoutATraceKeepsTheFirstPairsCheck) {
  testing::TempDir dir;
  const std::string db = dir.path() + "/none.db";
  PoolRun b, a;
  ASSERT_NO_FATAL_FAILURE(LoadPoolRun("layout_roundtrip", 1, "before", db, &b));
  ASSERT_NO_FATAL_FAILURE(LoadPoolRun("layout_roundtrip", 1, "after", db, &a));
  PredictionPool pool({});
  ASSERT_TRUE(pool.AddFirst(b.path, b.session.get(), a.path, a.session.get()).ok());
  ASSERT_TRUE(pool.AddAfter("bench.json", nullptr).ok());
  ValidationResult result;
  pool.Finish(&result);
  ASSERT_TRUE(result.prediction);
  EXPECT_EQ(result.prediction->before_runs, 1u);
  EXPECT_EQ(result.prediction->after_runs, 1u);
  ASSERT_EQ(result.sample_notes.size(), 1u);
  EXPECT_EQ(result.sample_notes[0], "the prediction check uses the first run of each side (" + b.path + ", " + a.path +
                                        "): some runs are result files, not traces");
}

// No fix inferred (unfused_gelu: only the spread of step times changed):
// no prediction, later runs are not checked, and the note says how the
// caller names the fix (the package's argument, not the CLI's flag).
TEST(PredictionPool, NoFixInferredSaysHowToNameIt) {
  testing::TempDir dir;
  const std::string db = dir.path() + "/none.db";
  PoolRun b, a;
  ASSERT_NO_FATAL_FAILURE(LoadPoolRun("unfused_gelu", 1, "before", db, &b));
  ASSERT_NO_FATAL_FAILURE(LoadPoolRun("unfused_gelu", 1, "after", db, &a));
  PredictionPoolOptions o;
  o.fix_id_argument = "fix_id=";
  PredictionPool pool(o);
  ASSERT_TRUE(pool.AddFirst(b.path, b.session.get(), a.path, a.session.get()).ok());
  ASSERT_TRUE(pool.AddBefore("b2", nullptr).ok());
  ValidationResult result;
  pool.Finish(&result);
  EXPECT_FALSE(result.prediction);
  ASSERT_EQ(result.sample_notes.size(), 1u);
  EXPECT_NE(result.sample_notes[0].find("could not be inferred"), std::string::npos) << result.sample_notes[0];
  EXPECT_TRUE(result.sample_notes[0].ends_with("; name it with fix_id=")) << result.sample_notes[0];
}

// A first run without a trace (a stored baseline, a result file): no check
// and no note.
TEST(PredictionPool, AFirstRunWithoutATraceMakesNoCheck) {
  PredictionPool pool({});
  ASSERT_TRUE(pool.AddFirst("baseline", nullptr, "after.json", nullptr).ok());
  ASSERT_TRUE(pool.AddAfter("after2.json", nullptr).ok());
  ValidationResult result;
  pool.Finish(&result);
  EXPECT_FALSE(result.prediction);
  EXPECT_TRUE(result.sample_notes.empty());
}

}  // namespace
}  // namespace aiprof
