#include "src/analysis/validation/baseline_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "test/util/temp_file.h"

namespace aiprof {
namespace {

RunSamples Sample(double base) {
  RunSamples s;
  s.label = "run.json";
  s.source_kind = "trace";
  s.unit = "step";
  s.latency_ns = {base, base + 1, base + 2};
  s.device_util = {0.5, 0.6};
  s.items_per_sample = 8;
  s.quality["accuracy"] = {0.9};
  s.op_dur_ns["aten::conv2d"] = {10, 11, 12};
  return s;
}

KnowledgeCard Card(const std::string& bottleneck, double change) {
  KnowledgeCard c;
  c.scene = "convnet bs8";
  c.bottleneck = bottleneck;
  c.fix = "channels_last";
  c.metric = "latency";
  c.change_rel = change;
  c.ci_low_rel = change - 0.01;
  c.ci_high_rel = change + 0.01;
  c.verdict = "improved";
  return c;
}

TEST(BaselineStoreTest, BaselineRoundTripKeepsEverySeries) {
  testing::TempDir dir;
  auto store = BaselineStore::Open(dir.Path("sub/dir/b.db"));  // folders are created
  ASSERT_TRUE(store.ok()) << store.status().message();
  ASSERT_TRUE((*store)->SaveBaseline("svc", Sample(100), R"({"ops": []})").ok());
  StatusOr<int64_t> second = (*store)->SaveBaseline("svc", Sample(200), "");
  ASSERT_TRUE(second.ok());
  StatusOr<StoredBaseline> b = (*store)->LatestBaseline("svc");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->id, *second);  // the newest one
  EXPECT_EQ(b->samples.latency_ns, (std::vector<double>{200, 201, 202}));
  EXPECT_EQ(b->samples.device_util, (std::vector<double>{0.5, 0.6}));
  EXPECT_EQ(b->samples.quality.at("accuracy"), std::vector<double>{0.9});
  EXPECT_EQ(b->samples.op_dur_ns.at("aten::conv2d").size(), 3u);
  EXPECT_EQ(b->samples.items_per_sample, 8);
  EXPECT_EQ(b->summary_json, "{}");
  EXPECT_NE(b->samples.label.find("baseline svc #"), std::string::npos);
  StatusOr<StoredBaseline> none = (*store)->LatestBaseline("other");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no baseline for service 'other'"), std::string::npos);
}

// A database from elsewhere (--db) is checked, not trusted (found by
// review): a text sample read as 0 and an inf gave a verdict; a trigger
// ran on insert.
TEST(BaselineStoreTest, DamagedSamplesAndForeignTriggersAreRefused) {
  testing::TempDir dir;
  const std::string path = dir.Path("b.db");
  for (const char* bad : {"'abc'", "9e999", "-9e999"}) {
    {
      auto store = BaselineStore::Open(path);
      ASSERT_TRUE(store.ok());
      ASSERT_TRUE((*store)->SaveBaseline("svc", Sample(100), "").ok());
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const std::string sql =
        std::string("UPDATE baseline_samples SET value = ") + bad + " WHERE series = 'latency_ns' AND seq = 1";
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
    auto store = BaselineStore::Open(path);
    ASSERT_TRUE(store.ok());
    StatusOr<StoredBaseline> b = (*store)->LatestBaseline("svc");
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.status().message().find("not a finite number"), std::string::npos) << b.status().message();
  }
  // A trigger planted in the file does not run when aiprof writes.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE fired(x); CREATE TRIGGER t AFTER INSERT ON baselines BEGIN "
                         "INSERT INTO fired VALUES (1); END;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  {
    auto store = BaselineStore::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->SaveBaseline("svc2", Sample(100), "").ok());
  }
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM fired", -1, &q, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), 0);
  sqlite3_finalize(q);
  sqlite3_close(db);
}

TEST(BaselineStoreTest, HistoryIsNewestFirstAndPerService) {
  testing::TempDir dir;
  auto store = BaselineStore::Open(dir.Path("b.db"));
  ASSERT_TRUE(store.ok());
  for (int i = 0; i < 3; ++i) {
    ValidationRecord r;
    r.service = i == 1 ? "other" : "svc";
    r.overall = i == 2 ? "regressed" : "no_change";
    r.alert = i == 2;
    r.headline = "run " + std::to_string(i);
    r.report_json = "{}";
    ASSERT_TRUE((*store)->SaveValidation(r).ok());
  }
  auto h = (*store)->History("svc", 0);
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h->size(), 2u);
  EXPECT_EQ((*h)[0].headline, "run 2");
  EXPECT_TRUE((*h)[0].alert);
  EXPECT_EQ((*h)[1].headline, "run 0");
  EXPECT_EQ((*store)->History("svc", 1)->size(), 1u);
}

TEST(BaselineStoreTest, CardsAreFoundByBottleneckCaseInsensitively) {
  testing::TempDir dir;
  std::string path = dir.Path("b.db");
  {
    auto store = BaselineStore::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->SaveCard(Card("layout_conversion", -0.10)).ok());
    ASSERT_TRUE((*store)->SaveCard(Card("layout_conversion", -0.06)).ok());
    ASSERT_TRUE((*store)->SaveCard(Card("Layout_Conversion", -0.20)).ok());
    ASSERT_TRUE((*store)->SaveCard(Card("small_kernels", -0.30)).ok());
  }
  StatusOr<std::vector<KnowledgeCard>> cards = FindCards(path, "LAYOUT_CONVERSION");
  ASSERT_TRUE(cards.ok()) << cards.status().message();
  ASSERT_EQ(cards->size(), 3u);
  EXPECT_DOUBLE_EQ((*cards)[0].change_rel, -0.20);  // newest first
  ExpectedGain g = EstimateGain(*cards);
  EXPECT_EQ(g.cards, 3u);
  EXPECT_DOUBLE_EQ(g.median_change_rel, -0.10);
  EXPECT_DOUBLE_EQ(g.lowest_ci_rel, -0.21);
  EXPECT_DOUBLE_EQ(g.highest_ci_rel, -0.05);
  std::string text = DescribeExpectedGain(g);
  EXPECT_NE(text.find("measured history (3 knowledge cards)"), std::string::npos) << text;
  EXPECT_NE(text.find("-10.0%"), std::string::npos) << text;
  EXPECT_EQ(FindCards(path, "none")->size(), 0u);
  EXPECT_EQ(DescribeExpectedGain(EstimateGain({})), "No measured history for this bottleneck.");
  EXPECT_EQ(g.checked_cards, 0u);  // no card checked a prediction
  EXPECT_EQ(text.find("On the base of the predictions"), std::string::npos) << text;
  // Cards that checked a prediction also say the change on its base (by
  // hand: 200 -> 130 ms is -35%, 100 -> 70 ms -30%, 100 -> 60 ms -40%; the
  // median -35%), beside the metric's change on the cards' samples (-10%).
  std::vector<KnowledgeCard> checked = *cards;
  const double before_after[3][2] = {{200e6, 130e6}, {100e6, 70e6}, {100e6, 60e6}};
  for (size_t i = 0; i < checked.size(); ++i) {
    checked[i].prediction = CardPrediction{};
    checked[i].prediction->before_ns = before_after[i][0];
    checked[i].prediction->measured_ns = before_after[i][1];
  }
  ExpectedGain gc = EstimateGain(checked);
  EXPECT_EQ(gc.checked_cards, 3u);
  EXPECT_NEAR(gc.median_checked_change_rel, -0.35, 1e-12);
  text = DescribeExpectedGain(gc);
  EXPECT_NE(text.find("-10.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("compared them): -35.0% (median of 3 cards)"), std::string::npos) << text;
}

TEST(BaselineStoreTest, PredictionsKeepTheirStatisticAndAScenarioFix) {
  testing::TempDir dir;
  std::string path = dir.Path("b.db");
  KnowledgeCard c = Card("logging", -0.4);
  c.prediction = CardPrediction{"", "simulation", "scale log 0.1", 10, 9, 11, 12, 11, 13, "mean", "", "", "", 14};
  {
    auto store = BaselineStore::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->SaveCard(c).ok());
  }
  StatusOr<std::vector<KnowledgeCard>> cards = AllCards(path);
  ASSERT_TRUE(cards.ok()) << cards.status().message();
  ASSERT_EQ(cards->size(), 1u);
  // A fix stated as a scenario has no suggestion id and is still read back.
  ASSERT_TRUE((*cards)[0].prediction);
  EXPECT_EQ((*cards)[0].prediction->fix_id, "");
  EXPECT_EQ((*cards)[0].prediction->scenario, "scale log 0.1");
  EXPECT_EQ((*cards)[0].prediction->statistic, "mean");
  EXPECT_DOUBLE_EQ((*cards)[0].prediction->measured_ns, 12);
  EXPECT_DOUBLE_EQ((*cards)[0].prediction->before_ns, 14);
  EXPECT_EQ(AllCards(dir.Path("missing.db"))->size(), 0u);
  EXPECT_FALSE(std::filesystem::exists(dir.Path("missing.db")));
}

// A database made before predictions kept their statistic (they were
// medians) and the before figure gains the columns when opened, stays
// version 1, and still takes the rows an older aiprof writes (without them).
TEST(BaselineStoreTest, DatabaseWithoutTheStatisticColumnGainsIt) {
  testing::TempDir dir;
  std::string path = dir.Path("b.db");
  KnowledgeCard c = Card("data_loading", -0.3);
  c.prediction = CardPrediction{"dataloader_workers", "simulation", "remove-idle data_loading", 10, 9, 11, 12, 11, 13};
  {
    auto store = BaselineStore::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->SaveCard(c).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "ALTER TABLE card_predictions DROP COLUMN statistic; "
                         "ALTER TABLE card_predictions DROP COLUMN before_ns",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  StatusOr<std::vector<KnowledgeCard>> cards = AllCards(path);
  ASSERT_TRUE(cards.ok()) << cards.status().message();
  ASSERT_EQ(cards->size(), 1u);
  ASSERT_TRUE((*cards)[0].prediction);
  EXPECT_EQ((*cards)[0].prediction->statistic, "median");
  EXPECT_DOUBLE_EQ((*cards)[0].prediction->before_ns, 0);  // stored without it
  EXPECT_EQ((*cards)[0].prediction->fix_id, "dataloader_workers");
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &q, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)), "1");
  sqlite3_finalize(q);
  // What an older aiprof writes: a card and its prediction without the column.
  ASSERT_EQ(
      sqlite3_exec(db,
                   "INSERT INTO cards(created_unix_ms, scene, bottleneck, fix, metric, statistic, unit, "
                   "higher_is_better, before_label, after_label, n_before, n_after, before_value, after_value, "
                   "change_rel, ci_low_rel, ci_high_rel, confidence, p_value, test, verdict) VALUES (1, 's', 'b', "
                   "'f', 'latency', 'median', 'ns', 0, 'a', 'b', 1, 1, 1, 1, 0, 0, 0, 0.95, 1, 't', 'v');"
                   "INSERT INTO card_predictions(card_id, fix_id, source, scenario, predicted_ns, "
                   "predicted_lo_ns, predicted_hi_ns, measured_ns, measured_lo_ns, measured_hi_ns) VALUES "
                   "(last_insert_rowid(), 'x', 'simulation', 's', 1, 1, 1, 1, 1, 1)",
                   nullptr, nullptr, nullptr),
      SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  cards = AllCards(path);
  ASSERT_TRUE(cards.ok()) << cards.status().message();
  ASSERT_EQ(cards->size(), 2u);
  ASSERT_TRUE((*cards)[0].prediction);
  EXPECT_EQ((*cards)[0].prediction->statistic, "median");
}

TEST(BaselineStoreTest, DefaultPathFollowsXdgThenHome) {
  const char* old_xdg = std::getenv("XDG_DATA_HOME");
  const char* old_home = std::getenv("HOME");
  std::string saved_xdg = old_xdg ? old_xdg : "", saved_home = old_home ? old_home : "";
  setenv("XDG_DATA_HOME", "/data/x", 1);
  EXPECT_EQ(DefaultBaselineDbPath().value(), "/data/x/aiprof/baselines.db");
  setenv("XDG_DATA_HOME", "relative", 1);  // the spec ignores relative values
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(DefaultBaselineDbPath().value(), "/home/u/.local/share/aiprof/baselines.db");
  unsetenv("XDG_DATA_HOME");
  unsetenv("HOME");
  EXPECT_FALSE(DefaultBaselineDbPath().ok());
  if (old_xdg) setenv("XDG_DATA_HOME", saved_xdg.c_str(), 1);
  if (old_home) setenv("HOME", saved_home.c_str(), 1);
}

TEST(BaselineStoreTest, RejectsAnotherSchemaVersionAndNonDatabases) {
  testing::TempDir dir;
  std::string path = dir.Path("b.db");
  ASSERT_TRUE(BaselineStore::Open(path).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = BaselineStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("schema version 99"), std::string::npos);
  std::string junk = dir.Write("junk.db", std::string(4096, 'x'));
  auto bad = BaselineStore::Open(junk);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(junk), std::string::npos);
}

// Several processes write baselines, validations and cards into one new
// database at once; every write lands and nothing fails with "locked".
TEST(BaselineStoreTest, ConcurrentWritersFromSeveralProcesses) {
  testing::TempDir dir;
  std::string path = dir.Path("shared.db");
  constexpr int kProcesses = 8, kEach = 15;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int failures = 0;
      auto store = BaselineStore::Open(path);  // all open (and create the schema) at the same moment
      if (!store.ok()) _exit(10);
      for (int i = 0; i < kEach; ++i) {
        failures += !(*store)->SaveBaseline("svc" + std::to_string(p % 2), Sample(i), "{}").ok();
        ValidationRecord r;
        r.service = "svc";
        r.overall = "no_change";
        r.headline = std::to_string(p) + ":" + std::to_string(i);
        r.report_json = "{}";
        failures += !(*store)->SaveValidation(r).ok();
        failures += !(*store)->SaveCard(Card("b", -0.1)).ok();
      }
      _exit(failures == 0 ? 0 : 11);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child exit " << WEXITSTATUS(status);
  }
  auto store = BaselineStore::Open(path);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->History("svc", 0)->size(), static_cast<size_t>(kProcesses * kEach));
  EXPECT_EQ((*store)->Cards("b")->size(), static_cast<size_t>(kProcesses * kEach));
  StatusOr<StoredBaseline> b = (*store)->LatestBaseline("svc1");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->samples.latency_ns.size(), 3u);  // a whole baseline, never half of one
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM baselines", -1, &q, nullptr);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), kProcesses * kEach);
  sqlite3_finalize(q);
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, nullptr);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)), "wal");
  sqlite3_finalize(q);
  sqlite3_close(db);
}

}  // namespace
}  // namespace aiprof
