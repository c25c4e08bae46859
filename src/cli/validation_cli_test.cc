// The validation commands end to end, in process: exit statuses, the alert
// line, reports, the baseline database with several concurrent processes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/analysis/validation/baseline_store.h"
#include "src/analysis/validation/validation_test_util.h"
#include "src/cli/command.h"
#include "test/util/compress.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

std::string Fixture(const std::string& name) { return (testing::TorchCpuFixtures() / name).string(); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs the CLI with standard error captured into *err.
int Cli(std::vector<std::string> args, std::string* err = nullptr) {
  args.insert(args.begin(), "aiprof");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::fflush(stderr);
  char tmpl[] = "/tmp/aiprof_stderr_XXXXXX";
  int fd = mkstemp(tmpl);
  int saved = dup(2);
  dup2(fd, 2);
  int rc = RunCli(static_cast<int>(argv.size()), argv.data());
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  if (err) *err = ReadFile(tmpl);
  unlink(tmpl);
  return rc;
}

TEST(ValidationCliTest, ElementwiseFusedImprovesAndTheReportSaysSo) {
  testing::TempDir dir;
  std::string out = dir.Path("report.json");
  ASSERT_EQ(Cli({"validate", "--before", Fixture("elementwise_bs4_unfused.kineto.json"), "--after",
                 Fixture("elementwise_bs4_fused.kineto.json"), "--metrics", "latency,p50,p99,throughput,device_util",
                 "--test", "welch", "--alert-on-regression", "-o", out}),
            kExitOk);
  std::string json = ReadFile(out);
  EXPECT_NE(json.find("\"overall\": \"improved\""), std::string::npos);
  EXPECT_NE(json.find("\"metric\": \"latency\""), std::string::npos);
  EXPECT_NE(json.find("\"test\": \"welch\""), std::string::npos);
  std::string md = dir.Path("report.md"), html = dir.Path("report.html");
  ASSERT_EQ(Cli({"validate", "--before", Fixture("elementwise_bs4_unfused.kineto.json"), "--after",
                 Fixture("elementwise_bs4_fused.kineto.json"), "-o", md}),
            kExitOk);
  EXPECT_EQ(ReadFile(md).rfind("# aiprof validate: improved", 0), 0u);
  ASSERT_EQ(Cli({"validate", "--before", Fixture("elementwise_bs4_unfused.kineto.json"), "--after",
                 Fixture("elementwise_bs4_fused.kineto.json"), "-o", html}),
            kExitOk);
  EXPECT_NE(ReadFile(html).find("<h1>aiprof validate: improved</h1>"), std::string::npos);
}

TEST(ValidationCliTest, AlertExitsThreeWithOneLineOnlyOnRegression) {
  testing::TempDir dir;
  std::string err;
  std::string before = Fixture("convnet_bs8_contiguous.kineto.json");
  std::string noisy = Fixture("convnet_bs8_contiguous_malloc_noisy.kineto.json");
  EXPECT_EQ(Cli({"validate", "--before", before, "--after", noisy, "--alert-on-regression", "-o", dir.Path("r.json")}, &err),
            kExitRegression);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_EQ(err.rfind("aiprof: REGRESSED: latency", 0), 0u) << err;
  EXPECT_NE(err.find("likely environmental"), std::string::npos) << err;
  EXPECT_NE(ReadFile(dir.Path("r.json")).find("\"kind\": \"environmental\""), std::string::npos);
  // Without the flag the same regression is reported but the exit status is 0.
  EXPECT_EQ(Cli({"validate", "--before", before, "--after", noisy, "-o", dir.Path("r2.json")}, &err), kExitOk);
  EXPECT_EQ(err, "");
  // A/A: a file against itself is no change, so no alert.
  EXPECT_EQ(Cli({"validate", "--before", before, "--after", before, "--alert-on-regression", "-o", dir.Path("aa.json")}, &err),
            kExitOk);
  EXPECT_NE(ReadFile(dir.Path("aa.json")).find("\"overall\": \"no_change\""), std::string::npos);
  // An improvement is not an alert either.
  EXPECT_EQ(Cli({"validate", "--before", before, "--after", Fixture("convnet_bs8_channels_last.kineto.json"),
                 "--alert-on-regression", "-o", dir.Path("cl.json")}),
            kExitOk);
}

TEST(ValidationCliTest, BaselineThenValidateThenHistory) {
  testing::TempDir dir;
  std::string db = dir.Path("data/baselines.db");
  ASSERT_EQ(Cli({"set-baseline", "--service", "convnet", "--trace", Fixture("convnet_bs8_contiguous.kineto.json"), "--db", db}),
            kExitOk);
  std::string err;
  EXPECT_EQ(Cli({"validate", "--baseline", "convnet", "--after", Fixture("convnet_bs8_contiguous_malloc_noisy.kineto.json"),
                 "--db", db, "--alert-on-regression", "-o", dir.Path("r.md")},
                &err),
            kExitRegression);
  EXPECT_NE(err.find("service convnet"), std::string::npos) << err;
  EXPECT_EQ(Cli({"validate", "--baseline", "convnet", "--after", Fixture("convnet_bs8_channels_last.kineto.json"), "--db", db,
                 "--alert-on-regression", "-o", dir.Path("r2.md")}),
            kExitOk);
  ASSERT_EQ(Cli({"history", "--service", "convnet", "--db", db, "--format", "json", "-o", dir.Path("h.json")}), kExitOk);
  std::string h = ReadFile(dir.Path("h.json"));
  EXPECT_EQ(h.find("\"overall\": \"improved\""), h.find("\"overall\"")) << h;  // newest first
  EXPECT_NE(h.find("\"overall\": \"regressed\", \"alert\": true"), std::string::npos) << h;
  EXPECT_NE(h.find("\"baseline_id\": 1"), std::string::npos);
  // Every validation is kept: the stored JSON report is complete.
  auto store = BaselineStore::Open(db);
  ASSERT_TRUE(store.ok());
  auto records = (*store)->History("convnet", 0);
  ASSERT_EQ(records->size(), 2u);
  EXPECT_NE((*records)[1].report_json.find("\"schema\": \"aiprof.validation/1\""), std::string::npos);
  // An unknown service is an error naming it.
  EXPECT_EQ(Cli({"validate", "--baseline", "nope", "--after", Fixture("convnet_bs8_contiguous.kineto.json"), "--db", db}, &err),
            kExitError);
  EXPECT_NE(err.find("no baseline for service 'nope'"), std::string::npos) << err;
}

// Several aiprof processes store baselines and validations into one new database at once.
TEST(ValidationCliTest, ConcurrentProcessesShareOneDatabase) {
  testing::TempDir dir;
  std::string db = dir.Path("shared.db");
  std::string samples = dir.Write("s.csv", "latency_ms\n10\n11\n10.5\n10.2\n10.8\n10.1\n");
  constexpr int kProcesses = 6;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      dup2(devnull, 2);
      int bad = 0;
      for (int i = 0; i < 5; ++i) {
        std::vector<std::string> set = {"aiprof", "set-baseline", "--service", "svc", "--trace", samples, "--db", db};
        std::vector<std::string> val = {"aiprof", "validate", "--baseline", "svc", "--after", samples, "--db", db,
                                        "--resamples", "200", "-o", dir.Path("r" + std::to_string(p) + ".json")};
        for (auto* args : {&set, &val}) {
          std::vector<char*> argv;
          for (std::string& a : *args) argv.push_back(a.data());
          bad += RunCli(static_cast<int>(argv.size()), argv.data()) != kExitOk;
        }
      }
      _exit(bad);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "failed runs: " << WEXITSTATUS(status);
  }
  auto store = BaselineStore::Open(db);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->History("svc", 0)->size(), static_cast<size_t>(kProcesses * 5));
}

TEST(ValidationCliTest, BenchmarkFilesAndCards) {
  testing::TempDir dir;
  std::string a = dir.Write("a.json", R"({"results": [{"command": "run", "times": [0.159, 0.158, 0.160, 0.159, 0.161, 0.158]}]})");
  std::string b = dir.Write("b.json", R"({"results": [{"command": "run", "times": [0.130, 0.131, 0.130, 0.129, 0.132, 0.130]}]})");
  ASSERT_EQ(Cli({"validate", "--before", a, "--after", b, "--metrics", "latency", "-o", dir.Path("r.json")}), kExitOk);
  std::string json = ReadFile(dir.Path("r.json"));
  EXPECT_NE(json.find("\"kind\": \"hyperfine\""), std::string::npos);
  EXPECT_NE(json.find("\"overall\": \"improved\""), std::string::npos);
  std::string db = dir.Path("b.db");
  ASSERT_EQ(Cli({"card", "--before", Fixture("convnet_bs8_contiguous.kineto.json"), "--after",
                 Fixture("convnet_bs8_channels_last.kineto.json"), "--scene", "convnet bs8 CPU", "--bottleneck",
                 "layout_conversion", "--fix", "channels_last", "--db", db, "-o", dir.Path("card.md")}),
            kExitOk);
  std::string card = ReadFile(dir.Path("card.md"));
  EXPECT_NE(card.find("**Core bottleneck:** layout\\_conversion"), std::string::npos) << card;
  EXPECT_NE(card.find("**Measured gain:** latency -"), std::string::npos) << card;
  auto cards = FindCards(db, "layout_conversion");
  ASSERT_TRUE(cards.ok());
  ASSERT_EQ(cards->size(), 1u);
  EXPECT_EQ((*cards)[0].verdict, "improved");
  EXPECT_LT((*cards)[0].ci_high_rel, 0);
  EXPECT_NEAR((*cards)[0].change_rel, 10.2 / 11.3 - 1, 0.01);
}

// A fix stated as a scenario: card --scenario stores the replay's
// prediction and the measurement on the statistic asked for, and a later
// whatif --db (or validate --scenario --db) of the same scenario, spaced
// differently, is corrected by it, by CorrectByHistory's model worked here
// from the stored case. A real pair
// (test/data/pairs, cast_roundtrip).
TEST(ValidationCliTest, CardOfAScenarioCorrectsTheNextWhatIfAndValidate) {
  testing::TempDir dir;
  // The default knowledge database is this test's own (validate and report
  // read it when no --db is given).
  const char* old_xdg = std::getenv("XDG_DATA_HOME");
  const std::string saved_xdg = old_xdg ? old_xdg : "";
  setenv("XDG_DATA_HOME", dir.Path("xdg").c_str(), 1);
  struct Restore {
    const char* old;
    std::string saved;
    ~Restore() { old ? setenv("XDG_DATA_HOME", saved.c_str(), 1) : unsetenv("XDG_DATA_HOME"); }
  } restore{old_xdg, saved_xdg};
  const std::string pairs = std::string(AIPROF_SOURCE_DIR) + "/test/data/pairs/";
  const std::string before = pairs + "cast_roundtrip_before.pt.trace.json.gz";
  const std::string after = pairs + "cast_roundtrip_after.pt.trace.json.gz";
  const std::string db = dir.Path("k.db");
  ASSERT_EQ(Cli({"card", "--before", before, "--after", after, "--scenario", "remove aten::to", "--statistic", "mean",
                 "--db", db, "-o", dir.Path("card.md")}),
            kExitOk);
  std::string card = ReadFile(dir.Path("card.md"));
  EXPECT_NE(card.find("prediction for the scenario (simulation: 'remove aten::to')"), std::string::npos) << card;
  EXPECT_NE(card.find("the steady steps' mean"), std::string::npos) << card;
  auto cards = AllCards(db);
  ASSERT_TRUE(cards.ok());
  ASSERT_EQ(cards->size(), 1u);
  ASSERT_TRUE((*cards)[0].prediction);
  const CardPrediction p = *(*cards)[0].prediction;
  EXPECT_EQ(p.statistic, "mean");
  EXPECT_EQ(p.fix_id, "");
  EXPECT_EQ((*cards)[0].fix, "scenario 'remove aten::to'");
  ASSERT_GT(p.predicted_ns, 0);
  ASSERT_GT(p.measured_ns, 0);
  // The before figure on the same base: removing the casts predicts less.
  EXPECT_GT(p.before_ns, p.predicted_ns);
  EXPECT_NE(card.find("**Before step wall time:**"), std::string::npos) << card;

  // The case corrects a prediction for the same workload from another
  // input (the same trace in other bytes), never one for the trace it was
  // measured from: that is its own outcome.
  const std::string out = dir.Path("w.json");
  ASSERT_EQ(Cli({"whatif", before, "--scenario", "remove aten::to", "--db", db, "--format", "json", "-o", out}),
            kExitOk);
  EXPECT_EQ(ReadFile(out).find("\"history\":{\"cases\":1"), std::string::npos) << ReadFile(out);
  EXPECT_NE(ReadFile(out).find("left out: 1 measured from this very trace"), std::string::npos) << ReadFile(out);
  const std::string copy = dir.Write("cast_roundtrip_before.json", testing::GunzipFile(before));
  ASSERT_EQ(Cli({"whatif", copy, "--scenario", " remove   aten::to ", "--db", db, "--format", "json", "-o", out}),
            kExitOk);
  std::string json = ReadFile(out);
  // One case on the mean: b = ln(m/p)/σ² / (1/σ² + 1/τ²), σ = 0.15, τ = 0.25.
  const double r = std::log(p.measured_ns / p.predicted_ns);
  const double b = r / 0.0225 / (1 / 0.0225 + 1 / 0.0625);
  auto field = [&](const std::string& after_key, const std::string& key) {
    size_t at = json.find(after_key);
    at = json.find("\"" + key + "\":", at);
    return std::stod(json.substr(at + key.size() + 3));
  };
  EXPECT_NE(json.find("\"history\":{\"cases\":1,\"uncorrected_ns\":"), std::string::npos) << json;
  EXPECT_NEAR(field("\"mean\":{", "predicted_ns"), p.predicted_ns * std::exp(b), 2.0) << json;
  // The median has no case (the card measured the mean).
  EXPECT_NE(json.find("\"history\":{\"cases\":0}"), std::string::npos) << json;

  // validate --scenario shows the same check: uncorrected without --db (the
  // card's stored prediction), corrected by the one case with it.
  const std::string v1 = dir.Path("v1.json"), v2 = dir.Path("v2.json");
  ASSERT_EQ(Cli({"validate", "--before", before, "--after", after, "--scenario", "remove aten::to", "--statistic",
                 "mean", "-o", v1}),
            kExitOk);
  ASSERT_EQ(Cli({"validate", "--before", before, "--after", after, "--scenario", "remove aten::to", "--statistic",
                 "mean", "--db", db, "-o", v2}),
            kExitOk);
  const std::string j1 = ReadFile(v1), j2 = ReadFile(v2);
  EXPECT_NE(j1.find("\"prediction\": {\"fix\": null, \"matched_by\": \"--scenario\""), std::string::npos) << j1;
  auto ms = [](const std::string& j, const std::string& key) {
    size_t at = j.find("\"" + key + "\": ", j.find("\"prediction\""));
    return std::stod(j.substr(at + key.size() + 4));
  };
  EXPECT_NEAR(ms(j1, "predicted_ms") * 1e6, p.predicted_ns, 1.0);
  EXPECT_NEAR(ms(j1, "measured_ms") * 1e6, p.measured_ns, 1.0);
  EXPECT_NE(j1.find("\"history_cases\": 0"), std::string::npos) << j1;
  // The one case is this very pair: checking it against itself would be
  // circular, so it is left out, and said so.
  EXPECT_NE(j2.find("\"history_cases\": 0"), std::string::npos) << j2;
  EXPECT_NE(j2.find("left out: 1 of the very inputs being checked"), std::string::npos) << j2;
  EXPECT_NEAR(ms(j2, "predicted_ms") * 1e6, p.predicted_ns, 1.0);

  // report --before --scenario: the same check in the report, corrected by the case.
  const std::string rep = dir.Path("r.md");
  ASSERT_EQ(Cli({"report", after, "--before", before, "--scenario", "remove aten::to", "--statistic", "mean", "--db",
                 db, "-o", rep}),
            kExitOk);
  const std::string md = ReadFile(rep);
  // (Markdown escapes the parentheses.)
  EXPECT_NE(md.find("prediction for the scenario \\(simulation: 'remove aten::to'\\)"), std::string::npos) << md;
  EXPECT_NE(md.find("not corrected by history: no past case counted; left out: 1 of the very inputs being checked"),
            std::string::npos)
      << md;

  // Without --db, validate and report read the default database, as the
  // suggestions' history does: a card stored there corrects them.
  ASSERT_EQ(Cli({"validate", "--before", before, "--after", after, "--scenario", "remove aten::to", "--statistic",
                 "mean", "-o", v1}),
            kExitOk);
  EXPECT_NE(ReadFile(v1).find("\"history_cases\": 0"), std::string::npos);
  ASSERT_EQ(Cli({"card", "--before", before, "--after", after, "--scenario", "remove aten::to", "--statistic", "mean",
                 "-o", dir.Path("card2.md")}),
            kExitOk);
  ASSERT_TRUE(std::filesystem::exists(dir.Path("xdg") + "/aiprof/baselines.db"));
  ASSERT_EQ(
      Cli({"report", after, "--before", before, "--scenario", "remove aten::to", "--statistic", "mean", "-o", rep}),
      kExitOk);
  EXPECT_NE(ReadFile(rep).find("left out: 1 of the very inputs being checked"), std::string::npos);

  std::string err;
  // A bad command line (README "Exit statuses"): exit 2, as CLI11's own checks.
  EXPECT_EQ(Cli({"report", after, "--scenario", "remove aten::to", "-o", dir.Path("x.md")}, &err), kExitUsage);
  EXPECT_NE(err.find("--scenario needs --before"), std::string::npos) << err;
  EXPECT_EQ(Cli({"validate", "--before", before, "--after", after, "--statistic", "mean"}, &err), kExitUsage);
  EXPECT_NE(err.find("--statistic needs --scenario"), std::string::npos) << err;
  EXPECT_EQ(Cli({"card", "--before", before, "--after", after, "--statistic", "mean", "--db", db}, &err), kExitUsage);
  EXPECT_NE(err.find("--statistic needs --scenario"), std::string::npos) << err;
  EXPECT_EQ(Cli({"card", "--before", before, "--after", after, "--scenario", "remove x", "--fix-id", "y"}, &err),
            kExitUsage);
  EXPECT_EQ(Cli({"card", "--before", before, "--after", after, "--scenario", "shrink x", "--db", db}, &err),
            kExitUsage);
  EXPECT_NE(err.find("scenario clause 'shrink x'"), std::string::npos) << err;
}

// A card for a fix whose prediction history corrected keeps the
// simulation's own prediction and interval (the second card of the same
// before run stores what the first did; it stored the widened interval).
TEST(ValidationCliTest, CardKeepsTheUncorrectedIntervalOfACorrectedFix) {
  testing::TempDir dir;
  const std::string data = std::string(AIPROF_SOURCE_DIR) + "/test/data/";
  const std::string before = data + "resnet50_num_workers_0.pt.trace.json.gz";
  const std::string after = data + "resnet50_num_workers_4.pt.trace.json.gz";
  const std::string db = dir.Path("k.db");
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(Cli({"card", "--before", before, "--after", after, "--fix-id", "dataloader_workers", "--db", db, "-o",
                   dir.Path("c" + std::to_string(i) + ".md")}),
              kExitOk);
  }
  // The first card is of this very pair: it does not correct the check the
  // second card shows.
  EXPECT_NE(ReadFile(dir.Path("c1.md")).find("left out: 1 of the very inputs being checked"), std::string::npos);
  auto cards = AllCards(db);
  ASSERT_TRUE(cards.ok());
  ASSERT_EQ(cards->size(), 2u);
  ASSERT_TRUE((*cards)[0].prediction && (*cards)[1].prediction);
  const CardPrediction &second = *(*cards)[0].prediction, &first = *(*cards)[1].prediction;
  EXPECT_DOUBLE_EQ(second.predicted_ns, first.predicted_ns);
  EXPECT_DOUBLE_EQ(second.predicted_lo_ns, first.predicted_lo_ns);
  EXPECT_DOUBLE_EQ(second.predicted_hi_ns, first.predicted_hi_ns);
  EXPECT_LT(first.predicted_lo_ns, first.predicted_ns);
}

// One measured pair is one case however often `card` stores it, a case
// corrects its own workload only, and a card names the suggestion it applied.
TEST(ValidationCliTest, RepeatedCardsAreOneCaseOfTheirOwnWorkload) {
  testing::TempDir dir;
  const std::string data = std::string(AIPROF_SOURCE_DIR) + "/test/data/";
  const std::string before = data + "resnet50_num_workers_0.pt.trace.json.gz";
  const std::string after = data + "resnet50_num_workers_4.pt.trace.json.gz";
  const std::string db = dir.Path("k.db");
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(Cli({"card", "--before", before, "--after", after, "--fix-id", "dataloader_workers", "--db", db, "-o",
                   dir.Path("c" + std::to_string(i) + ".md")}),
              kExitOk);
  }
  const std::string card = ReadFile(dir.Path("c3.md"));
  EXPECT_NE(card.find("Effective fix:** Load data in parallel"), std::string::npos) << card;
  EXPECT_NE(card.find("suggestion dataloader\\_workers"), std::string::npos) << card;
  EXPECT_NE(card.find("(uncorrected\\)"), std::string::npos) << card;
  auto cards = AllCards(db);
  ASSERT_TRUE(cards.ok());
  ASSERT_EQ(cards->size(), 4u);
  ASSERT_TRUE((*cards)[0].prediction);
  EXPECT_FALSE((*cards)[0].prediction->before_input.empty());
  EXPECT_FALSE((*cards)[0].prediction->workload.empty());
  // whatif on the before trace in other bytes (a plain JSON copy): the four
  // cards are one case (the figures of one case: 130.66 ms corrected to
  // 127.85 ms, interval 79.22 .. 193.20 ms). On the very file they were
  // measured from, none counts.
  const std::string w = dir.Path("w.txt");
  ASSERT_EQ(Cli({"whatif", before, "--scenario", "overlap-data-loading 4", "--db", db, "-o", w}), kExitOk);
  EXPECT_NE(ReadFile(w).find("left out: 4 measured from this very trace"), std::string::npos) << ReadFile(w);
  const std::string copy = dir.Write("resnet50_num_workers_0.json", testing::GunzipFile(before));
  ASSERT_EQ(Cli({"whatif", copy, "--scenario", "overlap-data-loading 4", "--db", db, "-o", w}), kExitOk);
  const std::string text = ReadFile(w);
  EXPECT_NE(text.find("corrected by 1 past case(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("127.85 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("left out: 3 repeated card(s) of a pair already counted"), std::string::npos) << text;
  EXPECT_NE(text.find("resnet50_num_workers_4.pt.trace.json.gz (one sample = one step)"), std::string::npos) << text;
  // Another workload (a hand-made trace) is not corrected by the ResNet50 case.
  const std::string other = std::string(AIPROF_SOURCE_DIR) + "/test/data/pairs/cast_roundtrip_before.pt.trace.json.gz";
  ASSERT_EQ(Cli({"whatif", other, "--scenario", "overlap-data-loading 4", "--db", db, "-o", w}), kExitOk);
  const std::string other_text = ReadFile(w);
  EXPECT_NE(other_text.find("the median is not corrected"), std::string::npos) << other_text;
  EXPECT_NE(other_text.find("left out: 4 of another workload"), std::string::npos) << other_text;
}

// The same file (or a copy) given as several runs of one side is refused:
// it would count one measurement as independent runs (p = 0, a point CI).
TEST(ValidationCliTest, OneFileIsNotSeveralRuns) {
  testing::TempDir dir;
  const std::string data = std::string(AIPROF_SOURCE_DIR) + "/test/data/";
  const std::string before = data + "resnet50_num_workers_0.pt.trace.json.gz";
  const std::string after = data + "resnet50_num_workers_4.pt.trace.json.gz";
  std::string err;
  EXPECT_EQ(Cli({"validate", "--before", before, "--before", before, "--before", before, "--after", after, "--after",
                 after, "--after", after, "--db", dir.Path("k.db")},
                &err),
            kExitError);
  EXPECT_NE(err.find("--before run 2 (" + before + ") is the same file as run 1"), std::string::npos) << err;
  const std::string copy = dir.Path("copy.json.gz");
  std::filesystem::copy_file(after, copy);
  EXPECT_EQ(Cli({"validate", "--before", before, "--after", after, "--after", copy, "--db", dir.Path("k.db")}, &err),
            kExitError);
  EXPECT_NE(err.find("--after run 2 (" + copy + ") is a copy (same content) of run 1"), std::string::npos) << err;
  // Before and after may be one file (a self-check).
  EXPECT_EQ(Cli({"validate", "--before", before, "--after", before, "--db", dir.Path("k.db"), "-o", dir.Path("v.md")}),
            kExitOk);
}

TEST(ValidationCliTest, BadInputAndUsage) {
  testing::TempDir dir;
  std::string err;
  std::string ok = Fixture("convnet_bs8_contiguous.kineto.json");
  EXPECT_EQ(Cli({"validate", "--before", ok, "--after", dir.Path("missing.json")}, &err), kExitError);
  EXPECT_NE(err.find("missing.json: no such file"), std::string::npos) << err;
  std::string broken = dir.Write("broken.json", "{\"latencies\": [1, 2,\n 3,, 4]}");
  EXPECT_EQ(Cli({"validate", "--before", broken, "--after", ok}, &err), kExitError);
  EXPECT_NE(err.find("broken.json:2:"), std::string::npos) << err;
  EXPECT_EQ(Cli({"validate", "--before", ok, "--after", ok, "--metrics", "latncy"}, &err), kExitUsage);
  EXPECT_NE(err.find("unknown metric 'latncy'"), std::string::npos) << err;
  EXPECT_EQ(Cli({"validate", "--before", ok, "--after", ok, "--min-effect", "lots"}, &err), kExitUsage);
  EXPECT_EQ(Cli({"validate", "--before", ok, "--baseline", "x", "--after", ok}, &err), kExitUsage);
  EXPECT_EQ(Cli({"validate", "--after", ok}, &err), kExitUsage);
  EXPECT_EQ(Cli({"validate", "--before", ok, "--after", ok, "--alpha", "2"}, &err), kExitUsage);
  EXPECT_EQ(Cli({"validate", "--before", ok, "--after", ok, "-o", dir.Path("r.xyz")}, &err), kExitError);
  EXPECT_NE(err.find("r.xyz: cannot tell the output format"), std::string::npos) << err;
  EXPECT_EQ(Cli({"validate", "--before", ok, "--after", ok, "--unit", "request"}, &err), kExitError);
  EXPECT_NE(err.find("no span named 'request'"), std::string::npos) << err;
  std::string junk = dir.Write("junk.db", std::string(5000, 'j'));
  EXPECT_EQ(Cli({"set-baseline", "--service", "s", "--trace", ok, "--db", junk}, &err), kExitError);
  EXPECT_NE(err.find("junk.db"), std::string::npos) << err;
}

}  // namespace
}  // namespace aiprof
