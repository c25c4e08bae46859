#include "src/importers/samples/sample_file.h"

#include <gtest/gtest.h>

#include "test/util/temp_file.h"

namespace aiprof {
namespace {

SampleFile MustParseSamples(std::string_view content, SampleFileOptions o = {}) {
  StatusOr<SampleFile> f = ParseSampleFile("f.txt", content, o);
  EXPECT_TRUE(f.ok()) << f.status().message();
  return f.ok() ? *f : SampleFile{};
}

std::string ErrorOf(std::string_view content, SampleFileOptions o = {}) {
  StatusOr<SampleFile> f = ParseSampleFile("bad.txt", content, o);
  EXPECT_FALSE(f.ok());
  return f.ok() ? "" : f.status().message();
}

// hyperfine --export-json (1.x layout: times in seconds).
constexpr std::string_view kHyperfine = R"({
  "results": [
    {
      "command": "./run --fused",
      "mean": 0.1302, "stddev": 0.0004, "median": 0.1301, "user": 0.12, "system": 0.01,
      "min": 0.1299, "max": 0.1306,
      "times": [0.1299, 0.1301, 0.1306],
      "exit_codes": [0, 0, 0]
    },
    {
      "command": "./run",
      "mean": 0.159, "stddev": 0.001, "median": 0.159, "user": 0.15, "system": 0.01,
      "min": 0.158, "max": 0.160,
      "times": [0.158, 0.159, 0.160, 0.159],
      "exit_codes": [0, 0, 0, 0]
    }
  ]
})";

TEST(SampleFileTest, HyperfineTimesAreSecondsAndACommandMustBeChosen) {
  SampleFileOptions o;
  o.benchmark = "./run";
  SampleFile f = MustParseSamples(kHyperfine, o);
  EXPECT_EQ(f.format, "hyperfine");
  ASSERT_EQ(f.latency_ns.size(), 4u);
  EXPECT_DOUBLE_EQ(f.latency_ns[0], 0.158e9);
  std::string err = ErrorOf(kHyperfine);
  EXPECT_NE(err.find("2 commands"), std::string::npos) << err;
  EXPECT_NE(err.find("'./run --fused'"), std::string::npos) << err;
  o.benchmark = "./nope";
  EXPECT_NE(ErrorOf(kHyperfine, o).find("no command './nope'"), std::string::npos);
}

// Google Benchmark with --benchmark_repetitions=3: three iteration rows and aggregates.
constexpr std::string_view kGoogleBenchmark = R"({
  "context": {"date": "2025-01-01T00:00:00+00:00", "host_name": "vm", "executable": "./bench", "num_cpus": 2,
              "mhz_per_cpu": 2000, "cpu_scaling_enabled": false, "caches": [], "load_avg": [0.5],
              "library_build_type": "release"},
  "benchmarks": [
    {"name": "BM_Gemm/64", "family_index": 0, "per_family_instance_index": 0, "run_name": "BM_Gemm/64",
     "run_type": "iteration", "repetitions": 3, "repetition_index": 0, "threads": 1, "iterations": 5000,
     "real_time": 1.5e2, "cpu_time": 1.49e2, "time_unit": "us", "items_per_second": 6.6e3, "accuracy": 0.9},
    {"name": "BM_Gemm/64", "family_index": 0, "per_family_instance_index": 0, "run_name": "BM_Gemm/64",
     "run_type": "iteration", "repetitions": 3, "repetition_index": 1, "threads": 1, "iterations": 5000,
     "real_time": 1.6e2, "cpu_time": 1.59e2, "time_unit": "us", "items_per_second": 6.2e3, "accuracy": 0.9},
    {"name": "BM_Gemm/64", "family_index": 0, "per_family_instance_index": 0, "run_name": "BM_Gemm/64",
     "run_type": "iteration", "repetitions": 3, "repetition_index": 2, "threads": 1, "iterations": 5000,
     "real_time": 1.7e2, "cpu_time": 1.69e2, "time_unit": "us", "items_per_second": 5.9e3, "accuracy": 0.9},
    {"name": "BM_Gemm/64_mean", "family_index": 0, "per_family_instance_index": 0, "run_name": "BM_Gemm/64",
     "run_type": "aggregate", "repetitions": 3, "threads": 1, "aggregate_name": "mean", "aggregate_unit": "time",
     "iterations": 3, "real_time": 1.6e2, "cpu_time": 1.59e2, "time_unit": "us"}
  ]
})";

TEST(SampleFileTest, GoogleBenchmarkRepetitionsAreSamplesAndAggregatesAreSkipped) {
  SampleFile f = MustParseSamples(kGoogleBenchmark);
  EXPECT_EQ(f.format, "google-benchmark");
  EXPECT_EQ(f.benchmark, "BM_Gemm/64");
  ASSERT_EQ(f.latency_ns.size(), 3u);
  EXPECT_DOUBLE_EQ(f.latency_ns[1], 160e3);  // 1.6e2 us
  ASSERT_EQ(f.items_per_second.size(), 3u);
  EXPECT_DOUBLE_EQ(f.items_per_second[2], 5.9e3);
  EXPECT_EQ(f.quality.at("accuracy").size(), 3u);
  std::string aggregates_only = R"({"context": {}, "benchmarks": [
    {"name": "BM_X_mean", "run_name": "BM_X", "run_type": "aggregate", "aggregate_name": "mean", "real_time": 1, "time_unit": "ns"}]})";
  EXPECT_NE(ErrorOf(aggregates_only).find("only aggregates"), std::string::npos);
  std::string bad_unit = R"({"context": {}, "benchmarks": [{"name": "BM_X", "real_time": 1, "time_unit": "fortnights"}]})";
  EXPECT_NE(ErrorOf(bad_unit).find("benchmarks[0].time_unit"), std::string::npos);
}

TEST(SampleFileTest, PlainListsAndCsv) {
  SampleFile text = MustParseSamples("# step times\n11.3\n10.9\n\n44.8\n");
  EXPECT_EQ(text.format, "text");
  ASSERT_EQ(text.latency_ns.size(), 3u);
  EXPECT_DOUBLE_EQ(text.latency_ns[2], 44.8e6);  // default unit ms
  SampleFileOptions us;
  us.default_unit = "us";
  EXPECT_DOUBLE_EQ(MustParseSamples("5\n", us).latency_ns[0], 5e3);
  SampleFile csv = MustParseSamples("run,latency_us,accuracy\n1,150,0.91\n2,\"160\",0.92\n");
  EXPECT_EQ(csv.format, "csv");
  ASSERT_EQ(csv.latency_ns.size(), 2u);
  EXPECT_DOUBLE_EQ(csv.latency_ns[1], 160e3);
  EXPECT_EQ(csv.quality.at("accuracy").size(), 2u);
  SampleFile json =
      MustParseSamples(R"({"unit": "s", "latencies": [0.5, 0.25], "accuracy": 0.8, "quality": {"f1": [0.7, 0.75]}})");
  EXPECT_DOUBLE_EQ(json.latency_ns[1], 0.25e9);
  EXPECT_EQ(json.quality.at("accuracy"), std::vector<double>{0.8});
  EXPECT_EQ(json.quality.at("f1").size(), 2u);
  EXPECT_DOUBLE_EQ(MustParseSamples("[1, 2.5]").latency_ns[1], 2.5e6);
}

TEST(SampleFileTest, ErrorsNameFileAndPosition) {
  EXPECT_EQ(ErrorOf("1.0\n2.0\nfast\n"), "bad.txt:3: field 1 'fast' is not a number");
  EXPECT_NE(ErrorOf("run,speed\n1,2\n").find("bad.txt:1: no latency column"), std::string::npos);
  EXPECT_NE(ErrorOf("latency_ms\n1.0\n2.0x\n").find("bad.txt:3: field 1 '2.0x' is not a number"), std::string::npos);
  EXPECT_NE(ErrorOf("latency,accuracy\n1.0,0.9\n2.0\n").find("bad.txt:3: expected 2 field(s), found 1"), std::string::npos);
  EXPECT_NE(ErrorOf("1.0\n-2.0\n").find("bad.txt:2: negative latency"), std::string::npos);
  std::string syntax = ErrorOf("{\"latencies\": [1, 2,\n  3,, 4]}");
  EXPECT_NE(syntax.find("bad.txt:2:"), std::string::npos) << syntax;
  EXPECT_NE(syntax.find("invalid JSON"), std::string::npos) << syntax;
  EXPECT_NE(ErrorOf(R"({"results": [{"command": "a", "times": [0.1, "x"]}]})").find("bad.txt: results[0].times[1]: expected a number"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"results": [{"command": "a"}]})").find("no per-run \"times\""), std::string::npos);
  EXPECT_NE(ErrorOf("").find("empty file"), std::string::npos);
  EXPECT_NE(ErrorOf("[]").find("no samples"), std::string::npos);
  SampleFileOptions bad;
  bad.default_unit = "min";
  EXPECT_NE(ErrorOf("1\n", bad).find("unknown sample unit 'min'"), std::string::npos);
}

// Hand-made (input trial, 'in'): a latency finite in its unit but past a
// double in ns became inf, and Google Benchmark's real_time could be
// negative; both are errors naming file and place now.
TEST(SampleFileTest, LatenciesPastADoubleInNsAndNegativeRealTimeAreErrors) {
  SampleFileOptions seconds;
  seconds.default_unit = "s";
  EXPECT_EQ(ErrorOf("1.0\n1e300\n", seconds), "bad.txt:2: latency too large to hold in ns");
  EXPECT_EQ(ErrorOf("latency_s\n1\n1e300\n"), "bad.txt:3: latency too large to hold in ns");
  EXPECT_EQ(ErrorOf(R"({"results": [{"command": "a", "times": [0.1, 1e305]}]})"),
            "bad.txt: results[0].times[1]: latency too large to hold in ns");
  EXPECT_EQ(ErrorOf(R"({"latencies_s": [1e300]})"), "bad.txt: latencies_s[0]: latency too large to hold in ns");
  EXPECT_EQ(ErrorOf(R"({"benchmarks": [{"name": "BM_x", "real_time": 1e305, "time_unit": "s"}]})"),
            "bad.txt: benchmarks[0].real_time: latency too large to hold in ns");
  EXPECT_EQ(ErrorOf(R"({"benchmarks": [{"name": "BM_x", "real_time": 5, "time_unit": "ms"},
                                        {"name": "BM_x", "real_time": -3, "time_unit": "ms"}]})"),
            "bad.txt: benchmarks[1].real_time: negative latency");
}

TEST(SampleFileTest, DetectsSampleFilesByContent) {
  testing::TempDir dir;
  EXPECT_TRUE(LooksLikeSampleFile(dir.Write("h.json", kHyperfine)));
  EXPECT_TRUE(LooksLikeSampleFile(dir.Write("g.json", kGoogleBenchmark)));
  EXPECT_TRUE(LooksLikeSampleFile(dir.Write("l.json", "[1, 2]")));
  EXPECT_TRUE(LooksLikeSampleFile(dir.Write("c.csv", "latency_ms\n1\n")));
  EXPECT_FALSE(LooksLikeSampleFile(dir.Write("t.json", R"({"traceEvents": [{"ph": "X"}]})")));
  EXPECT_FALSE(LooksLikeSampleFile(dir.Write("a.json", R"([{"ph": "X", "name": "a"}])")));
  EXPECT_FALSE(LooksLikeSampleFile(dir.Path("missing")));
  EXPECT_FALSE(LooksLikeSampleFile(dir.Write("n.aiprof", std::string("AIPROF\0\n\4\0\0\0", 12))));  // hand-made native header
  StatusOr<SampleFile> f = ReadSampleFile(dir.Write("x.csv", "latency_ns\n5\n"), {});
  ASSERT_TRUE(f.ok());
  EXPECT_DOUBLE_EQ(f->latency_ns[0], 5);
  EXPECT_FALSE(ReadSampleFile(dir.Path("missing"), {}).ok());
}

}  // namespace
}  // namespace aiprof
