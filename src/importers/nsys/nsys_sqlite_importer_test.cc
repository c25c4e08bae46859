// Nsight Systems SQLite import. The databases are synthetic: built here with
// SQLite's C API from the table layout `nsys export --type sqlite` documents
// (only the columns the importer reads, plus a few it must ignore).
#include "src/importers/nsys/nsys_sqlite_importer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "src/base/import_budget.h"
#include "src/importers/common/importer_registry.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

using testing::TempDir;

constexpr int64_t kPid = 4242, kTid = 4243;
constexpr int64_t kGlobalTid = (kPid << 24) | kTid;

void Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "") << "\n" << sql;
}

std::string MakeDb(const TempDir& dir, const std::string& name, const std::string& sql) {
  std::string path = dir.Path(name);
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  Exec(db, sql);
  sqlite3_close(db);
  return path;
}

const std::string kSchema = R"(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, busLocation TEXT, totalMemory INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER,
  gridX INTEGER, blockX INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, value INTEGER, bytes INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, syncType INTEGER, eventId INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, rangeId INTEGER, category INTEGER,
  color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
)";

std::string Rows() {
  std::string g = std::to_string(kGlobalTid);
  return "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'void gemm<float>(float*)'), (3, 'gemm'),"
         " (4, 'cudaMemcpyAsync'), (5, 'ProfilerStep#3');"
         "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', '0000:18:00.0', 85899345920);"
         "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1000, 1500, 0, " + g + ", 11, 1, 0, 0),"
         " (1600, 1700, 0, " + g + ", 12, 4, 0, 0);"
         "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (2000, 5000, 0, 1, 7, 11, 0, 2, 3, 1, 128);"
         "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (5100, 5400, 0, 1, 7, 12, 0, 4096, 1);"
         "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (5500, 5600, 0, 1, 7, 13, 0, 0, 64);"
         "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (5600, 5700, 0, 1, 7, 14, 0, 3, 0);"
         "INSERT INTO NVTX_EVENTS VALUES (900, 6000, 59, 0, 0, 0, NULL, " + g + ", NULL, 5, 0),"
         " (950, 1900, 59, 0, 0, 0, 'forward', " + g + ", NULL, NULL, 0),"
         " (1200, NULL, 34, 0, 0, 0, 'mark', " + g + ", NULL, NULL, 0);";
}

uint32_t FindNamedSlice(const Trace& t, std::string_view name) {
  for (uint32_t i = 0; i < t.slices.size(); ++i) {
    if (t.Str(t.slices.name[i]) == name) return i;
  }
  return kNoSlice;
}

TEST(NsysSqliteImporterTest, AllTablesBecomeTheModel) {
  TempDir dir;
  auto r = ImportTrace(MakeDb(dir, "report.sqlite", kSchema + Rows()));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  EXPECT_EQ(t.metadata.at("source_format"), "nsys_sqlite");
  EXPECT_EQ(t.metadata.at("gpu.0.name"), "NVIDIA H100 80GB HBM3");
  uint32_t kernel = FindNamedSlice(t, "void gemm<float>(float*)");
  ASSERT_NE(kernel, kNoSlice);
  EXPECT_EQ(t.slices.ts_ns[kernel], 2000);
  EXPECT_EQ(t.slices.dur_ns[kernel], 3000);
  EXPECT_EQ(t.slices.kind[kernel], EventKind::kKernel);
  uint32_t track = t.slices.track[kernel];
  EXPECT_EQ(t.tracks.kind[track], TrackKind::kDeviceStream);
  EXPECT_EQ(t.tracks.device[track], 0);
  EXPECT_EQ(t.tracks.tid[track], 7);
  uint32_t launch = FindNamedSlice(t, "cudaLaunchKernel");
  ASSERT_NE(launch, kNoSlice);
  EXPECT_EQ(t.tracks.pid[t.slices.track[launch]], kPid);
  EXPECT_EQ(t.tracks.tid[t.slices.track[launch]], kTid);
  EXPECT_EQ(t.slices.kind[FindNamedSlice(t, "Memcpy HtoD")], EventKind::kMemcpy);
  EXPECT_EQ(t.slices.kind[FindNamedSlice(t, "Memset")], EventKind::kMemset);
  EXPECT_EQ(t.slices.kind[FindNamedSlice(t, "Stream synchronize")], EventKind::kSync);
  // Correlation ids 11 and 12 link launch → kernel and memcpy call → copy.
  ASSERT_EQ(t.flows.size(), 2u);
  EXPECT_EQ(t.flows.from_slice[0], launch);
  EXPECT_EQ(t.flows.to_slice[0], kernel);
  // NVTX: textId and text both give names; the step range becomes a step.
  EXPECT_NE(FindNamedSlice(t, "forward"), kNoSlice);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps.dur_ns[0], 5100);
  ASSERT_EQ(t.instants.size(), 1u);
  EXPECT_EQ(t.Str(t.instants.name[0]), "mark");
}

// serve's byte limit holds for SQLite, which reads pages, not a stream: the
// file's size is counted before it is opened.
TEST(NsysSqliteImporterTest, ImportBudgetCountsTheFileSize) {
  TempDir dir;
  const std::string path = MakeDb(dir, "budget.sqlite", kSchema + Rows());
  ImportBudget budget;
  budget.max_bytes = 8192;  // past the format sniff's 4 KiB read, under the file (9 pages)
  budget.bytes_flag = "--max-convert-mb";
  {
    ScopedImportBudget scope(&budget);
    auto r = ImportTrace(path);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("budget.sqlite: conversion stopped"), std::string::npos)
        << r.status().message();
  }
  EXPECT_GE(budget.bytes.load(), std::filesystem::file_size(path));  // the sniff's read and the file
}

TEST(NsysSqliteImporterTest, AbsentTablesAreFine) {
  TempDir dir;
  std::string sql = "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
                    " streamId INTEGER, correlationId INTEGER, shortName INTEGER);"
                    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 20, 1, 3, 1, 99);";
  auto r = ImportTrace(MakeDb(dir, "k.sqlite", sql));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)->slices.size(), 1u);
  EXPECT_EQ((*r)->Str((*r)->slices.name[0]), "<string 99>");  // no StringIds table
  EXPECT_EQ((*r)->tracks.device[(*r)->slices.track[0]], 1);
}

TEST(NsysSqliteImporterTest, OtherDatabasesAndBadRowsAreReported) {
  TempDir dir;
  auto r = ImportTrace(MakeDb(dir, "other.db", "CREATE TABLE t (x INTEGER);"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("other.db: an SQLite database without Nsight Systems tables"),
            std::string::npos) << r.status().message();
  std::string sql = "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
                    " streamId INTEGER, correlationId INTEGER, shortName INTEGER);"
                    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (30, 20, 0, 1, 1, 1);";
  // Nothing but the bad row: no event could be read, which is an error
  // naming the kind and the row, not an empty trace.
  auto only_bad = ImportTrace(MakeDb(dir, "only_neg.sqlite", sql));
  ASSERT_FALSE(only_bad.ok());
  EXPECT_NE(only_bad.status().message().find("no event could be read (1 record skipped; negative_duration: 1"),
            std::string::npos)
      << only_bad.status().message();
  auto bad = ImportTrace(
      MakeDb(dir, "neg.sqlite", sql + "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (40, 50, 0, 1, 2, 1);"));
  ASSERT_TRUE(bad.ok()) << bad.status().message();
  EXPECT_EQ((*bad)->slices.size(), 1u);
  EXPECT_EQ((*bad)->diagnostics.entries().at("negative_duration").count, 1u);
  // NULL, text or blob times were read as 0 (a kernel at ts 0, found by
  // review): each such row is skipped and counted, naming table and row.
  std::string nulls =
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
      " streamId INTEGER, correlationId INTEGER, shortName INTEGER);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (NULL, 20, 0, 1, 1, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 'soon', 0, 1, 1, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 20, 0, 1, 1, 1);";
  auto holes = ImportTrace(MakeDb(dir, "null.sqlite", nulls));
  ASSERT_TRUE(holes.ok()) << holes.status().message();
  ASSERT_EQ((*holes)->slices.size(), 1u);
  EXPECT_EQ((*holes)->slices.ts_ns[0], 10);
  const auto& d = (*holes)->diagnostics.entries();
  ASSERT_TRUE(d.count("nsys_bad_value"));
  EXPECT_EQ(d.at("nsys_bad_value").count, 2u);
  EXPECT_NE(d.at("nsys_bad_value").first_where.find("CUPTI_ACTIVITY_KIND_KERNEL row 1"), std::string::npos);
  // A kernel table without its required columns: an SQLite error naming the file.
  auto missing = ImportTrace(MakeDb(dir, "cols.sqlite", "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER);"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cols.sqlite: SQLite error"), std::string::npos);
}

// Hand-made hostile databases (docs/importers.md, "Limits"): a kernel table
// that is a recursive view ran without limit; extreme times gave a negative
// device busy time with no diagnostic.
TEST(NsysSqliteImporterTest, ViewsAreNotFollowed) {
  TempDir dir;
  std::string path = MakeDb(dir, "view.sqlite", kSchema + Rows() +
      "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;"
      "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(start, end, deviceId, streamId, correlationId, "
      "demangledName) AS (SELECT 0, 1, 0, 7, 1, 2 UNION ALL SELECT start + 1, end + 1, 0, 7, 1, 2 FROM r) "
      "SELECT * FROM r;");
  auto r = ImportTrace(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& d = (*r)->diagnostics.entries();
  ASSERT_TRUE(d.count("nsys_not_a_table"));
  EXPECT_NE(d.at("nsys_not_a_table").first_where.find("CUPTI_ACTIVITY_KIND_KERNEL"), std::string::npos);
  EXPECT_EQ(FindNamedSlice(**r, "void gemm<float>(float*)"), kNoSlice);
  EXPECT_NE(FindNamedSlice(**r, "cudaLaunchKernel"), kNoSlice);  // the real tables are still read
}

TEST(NsysSqliteImporterTest, ExtremeTimesAreCountedNotSummed) {
  TempDir dir;
  std::string sql = kSchema + Rows() +
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (-9223372036854775808, 9223372036854775807, 0, 1, 7, 21, 0, 2, 3, 1, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (0, 4611686018427387904, 0, 1, 7, 22, 0, 2, 3, 1, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (6000, 7000, 0, 1, 7, 23, 0, 2, 3, 1, 1);";
  auto r = ImportTrace(MakeDb(dir, "extreme.sqlite", sql));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& d = (*r)->diagnostics.entries();
  ASSERT_TRUE(d.count("time_out_of_range"));
  EXPECT_EQ(d.at("time_out_of_range").count, 2u);  // INT64_MIN..INT64_MAX and a 2^62 ns kernel
  EXPECT_NE(d.at("time_out_of_range").first_where.find("CUPTI_ACTIVITY_KIND_KERNEL row 2"), std::string::npos)
      << d.at("time_out_of_range").first_where;
  int64_t kernels = 0, busy = 0;
  for (uint32_t i = 0; i < (*r)->slices.size(); ++i) {
    if ((*r)->Str((*r)->slices.category[i]) == "kernel") ++kernels, busy += (*r)->slices.dur_ns[i];
  }
  EXPECT_EQ(kernels, 2);
  EXPECT_EQ(busy, 3000 + 1000);
}

TEST(NsysSqliteImporterTest, GlobalTidBits) {
  EXPECT_EQ(NsysPid(kGlobalTid), kPid);
  EXPECT_EQ(NsysTid(kGlobalTid), kTid);
}

// The real CloverLeaf export (../shared/fixtures/nsys): its CPU samples
// become the samples/callsites tables; every figure is checked against an
// independent SQL query over the same database.
TEST(NsysSqliteImporterTest, CpuSamplesOfTheRealExportMatchSql) {
  const std::string path = std::string(AIPROF_FIXTURES_DIR) + "/nsys/perlmutter-cloverleaf-cuda.sqlite";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << path;
  auto query = [&](const std::string& sql) {
    std::vector<std::pair<std::string, int64_t>> rows;
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    while (sqlite3_step(st) == SQLITE_ROW) {
      const unsigned char* t = sqlite3_column_text(st, 0);
      rows.emplace_back(t ? reinterpret_cast<const char*>(t) : "", sqlite3_column_int64(st, 1));
    }
    sqlite3_finalize(st);
    return rows;
  };
  const int64_t events = query("SELECT '', count(*) FROM COMPOSITE_EVENTS")[0].second;
  const int64_t entries = query("SELECT '', count(*) FROM SAMPLING_CALLCHAINS")[0].second;
  const int64_t kernel = query("SELECT '', count(*) FROM SAMPLING_CALLCHAINS WHERE kernelMode = 1")[0].second;
  std::map<std::string, int64_t> leaves;
  for (auto& [name, n] : query("SELECT s.value, count(*) FROM SAMPLING_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol "
                               "WHERE c.stackDepth = 0 GROUP BY s.value")) {
    leaves[name] = n;
  }
  std::map<std::string, int64_t> roots;
  for (auto& [name, n] : query("SELECT s.value, count(*) FROM SAMPLING_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol "
                               "WHERE c.stackDepth = (SELECT max(stackDepth) FROM SAMPLING_CALLCHAINS d WHERE d.id = c.id) "
                               "GROUP BY s.value")) {
    roots[name] = n;
  }
  const int64_t threads = query("SELECT '', count(DISTINCT globalTid) FROM COMPOSITE_EVENTS")[0].second;
  sqlite3_close(db);
  EXPECT_EQ(events, 1531);
  EXPECT_EQ(entries, 7527);

  auto trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const Trace& t = *trace.value();
  ASSERT_EQ(static_cast<int64_t>(t.samples.size()), events);
  int64_t frames = 0, kernel_frames = 0;
  std::map<std::string, int64_t> got_leaves, got_roots;
  std::set<uint32_t> tracks;
  for (size_t i = 0; i < t.samples.size(); ++i) {
    tracks.insert(t.samples.track[i]);
    uint32_t c = t.samples.callsite[i];
    ASSERT_NE(c, kNoCallsite);
    ++got_leaves[std::string(t.Str(t.callsites.frame[c]))];
    uint32_t root = c;
    for (; c != kNoCallsite; c = t.callsites.parent[c]) {
      ++frames;
      kernel_frames += t.callsites.kind[c] == FrameKind::kKernel;
      root = c;
    }
    ++got_roots[std::string(t.Str(t.callsites.frame[root]))];
    EXPECT_GT(t.samples.weight_ns[i], 0);
  }
  EXPECT_EQ(frames, entries);
  EXPECT_EQ(kernel_frames, kernel);
  EXPECT_EQ(got_leaves, leaves);
  EXPECT_EQ(got_roots, roots);
  EXPECT_EQ(static_cast<int64_t>(tracks.size()), threads);
  // Finalize orders samples by (track, ts).
  for (size_t i = 1; i < t.samples.size(); ++i) {
    if (t.samples.track[i] == t.samples.track[i - 1]) {
      EXPECT_LE(t.samples.ts_ns[i - 1], t.samples.ts_ns[i]);
    }
  }
}

// Host CPU samples, hand-made (D2 of the Nsight trial): the weight was each
// thread's own median interval, so a sleeping thread's samples, far apart
// because it sleeps, each stood for 40 ms of CPU and the thread got more CPU
// than its lifetime. One weight per capture now, the same on every thread.
const std::string kSampleSchema =
    "CREATE TABLE COMPOSITE_EVENTS (id INTEGER PRIMARY KEY, start INTEGER NOT NULL, cpu INTEGER,"
    " threadState INTEGER, globalTid INTEGER, cpuCycles INTEGER NOT NULL);";

// One COMPOSITE_EVENTS row per time, on thread `tid` of kPid, ids from `id`.
std::string SampleRows(int64_t tid, const std::vector<int64_t>& starts, int64_t id) {
  std::string sql;
  for (int64_t ts : starts) {
    sql += "INSERT INTO COMPOSITE_EVENTS VALUES (" + std::to_string(id++) + ", " + std::to_string(ts) + ", 0, 1, " +
           std::to_string((kPid << 24) | tid) + ", 1);";
  }
  return sql;
}

// The (count, sum of weights, first, last, weights seen) of each tid's samples.
struct ThreadSamples {
  int64_t n = 0, weight_sum = 0, first = INT64_MAX, last = INT64_MIN;
  std::set<int64_t> weights;
};
std::string Meta(const Trace& t, const std::string& key) {
  auto it = t.metadata.find(key);
  return it == t.metadata.end() ? "(absent)" : it->second;
}

std::map<int64_t, ThreadSamples> SamplesByTid(const Trace& t) {
  std::map<int64_t, ThreadSamples> out;
  for (size_t i = 0; i < t.samples.size(); ++i) {
    ThreadSamples& th = out[t.tracks.tid[t.samples.track[i]]];
    ++th.n;
    th.weight_sum += t.samples.weight_ns[i];
    th.first = std::min(th.first, t.samples.ts_ns[i]);
    th.last = std::max(th.last, t.samples.ts_ns[i]);
    th.weights.insert(t.samples.weight_ns[i]);
  }
  return out;
}

// A busy thread sampled every 1 ms (11 samples) and a sleeping one sampled
// 3 times 40 ms apart. On the old code the sleeper's samples weighed 40 ms
// each (120 ms of CPU in an 80 ms life); now both weigh the busy thread's
// 1 ms, or the stated period where the file states one that the samples
// allow.
TEST(NsysSqliteImporterTest, HostSamplesWeighTheSameOnEveryThread) {
  constexpr int64_t kBusy = 100, kSleeper = 200, kMs = 1'000'000;
  std::vector<int64_t> busy, sleeper = {10 * kMs, 50 * kMs, 90 * kMs};
  for (int64_t i = 0; i <= 10; ++i) busy.push_back(5 * kMs + i * kMs);
  const std::string rows = kSampleSchema + SampleRows(kBusy, busy, 1) + SampleRows(kSleeper, sleeper, 100);
  auto stated = [](int64_t cycles, int64_t mhz) -> std::string {
    return "CREATE TABLE META_DATA_CAPTURE (name TEXT NOT NULL, value TEXT);"
           "INSERT INTO META_DATA_CAPTURE VALUES ('RATE_HZ', '0'), ('LINUX_PERF_OPTIONS:SAMPLING_PERIOD', '" +
           std::to_string(cycles) +
           "');"
           "CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL, name TEXT NOT NULL,"
           " nameEnum INTEGER NOT NULL, value TEXT NOT NULL);"
           "INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Local', 'CpuCores', 1, '8'), (1, 'Local', 'CpuSpeedMhz', 2, "
           "'" +
           std::to_string(mhz) + "');";
  };
  struct Case {
    const char* name;
    std::string extra;
    int64_t weight;
    const char* basis;
  } cases[] = {
      {"no stated period: the busy thread's median interval", "", kMs, "median interval between samples"},
      {"stated 2,000,000 cycles at 4000 MHz = 0.5 ms", stated(2'000'000, 4000), kMs / 2, "stated sampling period"},
      // 2 ms a sample would give the busy thread 22 ms of CPU in 11 ms.
      {"stated 8,000,000 cycles at 4000 MHz = 2 ms, denser samples", stated(8'000'000, 4000), kMs, "did not hold"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    auto r = ImportTrace(MakeDb(dir, "samples.sqlite", rows + c.extra));
    ASSERT_TRUE(r.ok()) << r.status().message();
    const Trace& t = **r;
    auto th = SamplesByTid(t);
    ASSERT_EQ(th.size(), 2u);
    EXPECT_EQ(th[kBusy].weights, std::set<int64_t>{c.weight});
    EXPECT_EQ(th[kSleeper].weights, std::set<int64_t>{c.weight});
    EXPECT_EQ(th[kSleeper].weight_sum, 3 * c.weight);
    for (auto& [tid, s] : th) EXPECT_LE(s.weight_sum, s.last - s.first + c.weight) << "tid " << tid;
    EXPECT_EQ(Meta(t, "host_sample_weight_ns"), std::to_string(c.weight));
    EXPECT_NE(Meta(t, "host_sample_weight_basis").find(c.basis), std::string::npos)
        << Meta(t, "host_sample_weight_basis");
    EXPECT_FALSE(t.diagnostics.entries().count("nsys_sample_weight_capped"));
  }
}

// No thread is credited more CPU than its window: a thread whose 4 samples
// lie 10 us apart cannot have run 4 ms; its samples share its window (30 us
// plus one interval) and the cap is said. A lone sample with no stated
// period weighs 0, and that is said too.
TEST(NsysSqliteImporterTest, HostSampleTimeIsCappedAtTheThreadsWindow) {
  constexpr int64_t kMs = 1'000'000, kUs = 1000;
  TempDir dir;
  auto r = ImportTrace(MakeDb(dir, "capped.sqlite",
                              kSampleSchema + SampleRows(1, {0, kMs, 2 * kMs, 3 * kMs, 4 * kMs}, 1) +
                                  SampleRows(2, {0, 10 * kUs, 20 * kUs, 30 * kUs}, 10)));
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto th = SamplesByTid(**r);
  EXPECT_EQ(th[1].weights, std::set<int64_t>{kMs});
  EXPECT_EQ(th[2].weights, std::set<int64_t>{(30 * kUs + kMs) / 4});
  EXPECT_LE(th[2].weight_sum, 30 * kUs + kMs);
  const auto& d = (*r)->diagnostics.entries();
  ASSERT_TRUE(d.count("nsys_sample_weight_capped"));
  EXPECT_NE(d.at("nsys_sample_weight_capped").first_where.find("tid 2"), std::string::npos);

  auto lone = ImportTrace(MakeDb(dir, "lone.sqlite", kSampleSchema + SampleRows(1, {5 * kMs}, 1)));
  ASSERT_TRUE(lone.ok()) << lone.status().message();
  ASSERT_EQ((*lone)->samples.size(), 1u);
  EXPECT_EQ((*lone)->samples.weight_ns[0], 0);
  EXPECT_TRUE((*lone)->diagnostics.entries().count("nsys_sample_weight_unknown"));
  EXPECT_EQ(Meta(**lone, "host_sample_weight_ns"), "0");
}

// The real CloverLeaf export: the main thread (tid 1701896, 1512 samples)
// runs, 1701902 (16 samples over 685 ms) mostly sleeps. The file states
// 2,450,000 cycles at 2450 MHz (1 ms a sample), but the main thread was
// sampled every 258 us (median), which 1 ms a sample cannot be: 1512 ms of
// CPU in 865 ms. So every sample weighs that median interval. The expected
// figures come from the raw database by SQL, not through the importer: the
// stated period is SAMPLING_PERIOD * 1000 / CpuSpeedMhz ns; the busiest
// thread is the globalTid with most COMPOSITE_EVENTS rows; its intervals are
// start - lag(start) over that thread ordered by start, and their median the
// middle one (1511 intervals, an odd count). Before: 1701902 had 637,908 us,
// the three threads 1,030,017 us in all, more than the 870 ms from the
// first sample to the last.
TEST(NsysSqliteImporterTest, CpuSampleWeightsOfTheRealExportAreOnePerCapture) {
  const std::string path = std::string(AIPROF_FIXTURES_DIR) + "/nsys/perlmutter-cloverleaf-cuda.sqlite";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << path;
  auto rows = [&](const std::string& sql) {
    std::vector<std::vector<int64_t>> out;
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql << ": " << sqlite3_errmsg(db);
    while (sqlite3_step(st) == SQLITE_ROW) {
      out.emplace_back();
      for (int c = 0; c < sqlite3_column_count(st); ++c) out.back().push_back(sqlite3_column_int64(st, c));
    }
    sqlite3_finalize(st);
    return out;
  };
  const int64_t stated =
      rows(
          "SELECT CAST(m.value AS INTEGER) * 1000 / CAST(e.value AS INTEGER) FROM META_DATA_CAPTURE m,"
          " TARGET_INFO_SYSTEM_ENV e WHERE m.name = 'LINUX_PERF_OPTIONS:SAMPLING_PERIOD' AND e.name = 'CpuSpeedMhz'")
          .at(0)
          .at(0);
  const std::string busiest =
      "(SELECT globalTid FROM COMPOSITE_EVENTS GROUP BY globalTid ORDER BY count(*) DESC LIMIT 1)";
  const std::string gaps =
      "SELECT start - lag(start) OVER (ORDER BY start) AS gap FROM COMPOSITE_EVENTS WHERE globalTid = " + busiest;
  const int64_t median = rows("SELECT gap FROM (" + gaps + ") WHERE gap IS NOT NULL ORDER BY gap LIMIT 1 OFFSET " +
                              "(SELECT (count(gap) - 1) / 2 FROM (" + gaps + "))")
                             .at(0)
                             .at(0);
  // (tid, samples, first, last) per thread.
  const auto threads = rows(
      "SELECT globalTid & 16777215, count(*), min(start), max(start) FROM COMPOSITE_EVENTS"
      " GROUP BY globalTid");
  sqlite3_close(db);
  EXPECT_EQ(stated, 1'000'000);
  EXPECT_EQ(median, 258'088);
  ASSERT_LT(median, stated);  // so the stated period did not hold
  ASSERT_EQ(threads.size(), 3u);

  auto trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const Trace& t = **trace;
  auto got = SamplesByTid(t);
  ASSERT_EQ(got.size(), threads.size());
  int64_t total = 0, windows = 0;
  for (const auto& row : threads) {
    const int64_t tid = row[0], n = row[1], window = row[3] - row[2] + median;
    SCOPED_TRACE("tid " + std::to_string(tid));
    EXPECT_EQ(got[tid].n, n);
    EXPECT_EQ(got[tid].weights, std::set<int64_t>{median});
    EXPECT_EQ(got[tid].weight_sum, n * median);
    EXPECT_LE(got[tid].weight_sum, window);  // no thread runs longer than it lives
    total += got[tid].weight_sum;
    windows += window;
  }
  // The sleeper: 16 samples, 4.1 ms of CPU (637.9 ms before).
  EXPECT_EQ(got[1701902].weight_sum, 16 * median);
  EXPECT_LT(got[1701902].weight_sum, 5'000'000);
  EXPECT_EQ(total, 1531 * median);  // 395.1 ms (1,030.0 ms before)
  EXPECT_LE(total, windows);
  EXPECT_EQ(Meta(t, "host_sample_weight_ns"), std::to_string(median));
  EXPECT_NE(Meta(t, "host_sample_weight_basis").find("tid 1701896, 1512 samples"), std::string::npos)
      << Meta(t, "host_sample_weight_basis");
  EXPECT_NE(Meta(t, "host_sample_weight_basis").find("2450000 cycles at 2450 MHz = 1000000 ns"), std::string::npos);
  EXPECT_FALSE(t.diagnostics.entries().count("nsys_sample_weight_capped"));
  EXPECT_FALSE(t.diagnostics.entries().count("nsys_sample_weight_unknown"));
}

// D6 of the input trial: deviceId 2^40 was cut to 32 bits and its kernel
// merged into device 0 with no diagnostic; -1 became the host's device id;
// stream -5 and 2^32 + 7 were cut too. A device id outside 0..2^31-1 (or
// NULL, or text: read as 0) skips and counts the row; streams stay apart.
TEST(NsysSqliteImporterTest, DeviceIdsBeyond32BitsAreCountedNotMerged) {
  TempDir dir;
  std::string sql = kSchema + Rows() +
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (6000, 7000, 1099511627776, 1, 8, 21, 0, 2, 3, 1, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (6000, 7000, -1, 1, 8, 22, 0, 2, 3, 1, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (6000, 7000, NULL, 1, 8, 23, 0, 2, 3, 1, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (6000, 7000, 'gpu0', 1, 7, 24, 0, 0, 64);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (6000, 7000, 0, 1, -5, 25, 0, 2, 3, 1, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (6000, 7000, 0, 1, 4294967303, 26, 0, 2, 3, 1, 1);";
  auto r = ImportTrace(MakeDb(dir, "devices.sqlite", sql));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  const auto& d = t.diagnostics.entries();
  ASSERT_TRUE(d.count("nsys_bad_value"));
  EXPECT_EQ(d.at("nsys_bad_value").count, 4u);
  EXPECT_NE(d.at("nsys_bad_value").first_where.find("devices.sqlite: CUPTI_ACTIVITY_KIND_KERNEL row 2"),
            std::string::npos) << d.at("nsys_bad_value").first_where;
  EXPECT_NE(d.at("nsys_bad_value").description.find("deviceId 1099511627776"), std::string::npos);
  // Device 0 holds its good kernel on stream 7, memcpy/memset/sync, and the
  // two kernels on streams -5 and 2^32 + 7, each on its own track.
  std::map<int64_t, int64_t> kernels_by_stream;
  for (uint32_t i = 0; i < t.slices.size(); ++i) {
    const uint32_t track = t.slices.track[i];
    if (t.tracks.kind[track] != TrackKind::kDeviceStream) continue;
    EXPECT_EQ(t.tracks.device[track], 0);
    if (t.Str(t.slices.category[i]) == "kernel") ++kernels_by_stream[t.tracks.tid[track]];
  }
  EXPECT_EQ(kernels_by_stream, (std::map<int64_t, int64_t>{{-5, 1}, {7, 1}, {4294967303, 1}}));
}

// D7 of the input trial: a NULL or text name id read as id 0, named
// "<string 0>" with no diagnostic. The row is kept (its times are good) and
// counted.
TEST(NsysSqliteImporterTest, NameIdsThatAreNotIntegersAreCounted) {
  TempDir dir;
  std::string sql = kSchema + Rows() +
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (6000, 7000, 0, 1, 7, 21, 0, NULL, 3, 1, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (7000, 8000, 0, 1, 7, 22, 0, 'text', 3, 1, 1);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (8000, 9000, 0, 1, 7, 23, 0, 999999, 3, 1, 1);";
  auto r = ImportTrace(MakeDb(dir, "names.sqlite", sql));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto& d = (*r)->diagnostics.entries();
  ASSERT_TRUE(d.count("nsys_bad_value"));
  EXPECT_EQ(d.at("nsys_bad_value").count, 2u);
  EXPECT_NE(d.at("nsys_bad_value").first_where.find("CUPTI_ACTIVITY_KIND_KERNEL row 2"), std::string::npos);
  EXPECT_EQ(FindNamedSlice(**r, "<string 0>"), kNoSlice);
  EXPECT_NE(FindNamedSlice(**r, "<string ?>"), kNoSlice);
  EXPECT_NE(FindNamedSlice(**r, "<string 999999>"), kNoSlice);  // an id with no string: as documented
}

// A correlationId that is NULL is no correlation: read as 0, a cudaMalloc
// and a kernel both without one were linked by a flow (the kernel shown as
// launched by the cudaMalloc). A globalTid that is NULL or text put the
// row on a thread 0 of a process 0 unsaid; it is skipped and counted.
TEST(NsysSqliteImporterTest, NullCorrelationIdsLinkNothingAndBadGlobalTidsAreCounted) {
  TempDir dir;
  const std::string g = std::to_string(kGlobalTid);
  std::string sql = kSchema + Rows() +
                    "INSERT INTO StringIds VALUES (6, 'cudaMalloc');"
                    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 200, 0, " +
                    g +
                    ", NULL, 6, 0, 0);"
                    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (6000, 7000, 0, 1, 7, NULL, 0, 2, 3, 1, 1);"
                    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (300, 400, 0, NULL, 31, 6, 0, 0);"
                    "INSERT INTO NVTX_EVENTS VALUES (500, 600, 59, 0, 0, 0, 'lost', 'text', NULL, NULL, 0);";
  auto r = ImportTrace(MakeDb(dir, "nullcorr.sqlite", sql));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Trace& t = **r;
  const uint32_t malloc_slice = FindNamedSlice(t, "cudaMalloc");
  ASSERT_NE(malloc_slice, kNoSlice);
  for (size_t i = 0; i < t.flows.size(); ++i) {
    EXPECT_NE(t.flows.from_slice[i], malloc_slice) << "a call without a correlation id launches nothing";
  }
  EXPECT_EQ(t.flows.size(), 2u);  // Rows()' kernel and copy, by their ids 11 and 12
  const auto& d = t.diagnostics.entries();
  ASSERT_TRUE(d.count("nsys_bad_value"));
  EXPECT_EQ(d.at("nsys_bad_value").count, 2u);
  EXPECT_NE(d.at("nsys_bad_value").first_where.find("CUPTI_ACTIVITY_KIND_RUNTIME row 4"), std::string::npos)
      << d.at("nsys_bad_value").first_where;
  EXPECT_EQ(FindNamedSlice(t, "lost"), kNoSlice);
  for (size_t i = 0; i < t.tracks.size(); ++i) EXPECT_NE(t.tracks.tid[i], 0) << "no row on a thread 0";
}

// A TARGET_INFO_GPU row whose id is NULL read as GPU 0 and replaced its name
// (the roofline takes GPU 0's peaks by that name): skipped and counted.
TEST(NsysSqliteImporterTest, GpuRowWithoutAnIntegerIdDoesNotRenameGpu0) {
  TempDir dir;
  std::string sql = kSchema + Rows() + "INSERT INTO TARGET_INFO_GPU VALUES (NULL, 'Tesla K80', '', 0);";
  auto r = ImportTrace(MakeDb(dir, "gpus.sqlite", sql));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->metadata.at("gpu.0.name"), "NVIDIA H100 80GB HBM3");
  const auto& d = (*r)->diagnostics.entries();
  ASSERT_TRUE(d.count("nsys_bad_value"));
  EXPECT_EQ(d.at("nsys_bad_value").first_where, dir.Path("gpus.sqlite") + ": TARGET_INFO_GPU row 2");
}

// D5 of the input trial: the real export cut short (its last 4 KiB page, or
// half) was reported as "an SQLite database without Nsight Systems tables":
// the error reading the schema was swallowed. A damaged file is said to be
// one, naming the file.
TEST(NsysSqliteImporterTest, TruncatedOrCorruptDatabasesAreSaidToBeDamaged) {
  const std::string fixture = std::string(AIPROF_FIXTURES_DIR) + "/nsys/perlmutter-cloverleaf-cuda.sqlite";
  std::ifstream in(fixture, std::ios::binary);
  ASSERT_TRUE(in) << fixture;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 8192u);
  TempDir dir;
  for (size_t size : {bytes.size() - 4096, bytes.size() / 2, size_t{4096} + 100}) {
    const std::string name = "cut_" + std::to_string(size) + ".sqlite";
    auto r = ImportTrace(dir.Write(name, std::string_view(bytes).substr(0, size)));
    ASSERT_FALSE(r.ok()) << name;
    const std::string m = r.status().message();  // status() is a copy
    EXPECT_NE(m.find(name + ": truncated or corrupt SQLite database"), std::string::npos) << m;
    EXPECT_EQ(m.find("without Nsight Systems tables"), std::string::npos) << m;
  }
  // Not a database past its magic bytes.
  std::string junk = bytes.substr(0, 16) + std::string(8192, '\x5a');
  auto r = ImportTrace(dir.Write("junk.sqlite", junk));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("junk.sqlite: truncated or corrupt SQLite database"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// CloverLeaf's copies (the real export): 254 HtoD copies from pageable host
// memory (srcKind 0 = Pageable in its ENUM_CUDA_MEM_KIND), 225,065,752 bytes,
// and 25 DtoH copies into pageable memory, 51,200 bytes (SQL on the file,
// below). They were all named "Memcpy HtoD"/"Memcpy DtoH" without a size, so
// `analyze` said "Pageable: 0" and "Bytes —" for 225 MB of pageable copies.
TEST(NsysSqliteImporterTest, CopiesOfTheRealExportSayTheirMemoryKindsAndSize) {
  const std::string path = std::string(AIPROF_FIXTURES_DIR) + "/nsys/perlmutter-cloverleaf-cuda.sqlite";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK) << path;
  std::map<std::string, std::pair<int64_t, int64_t>> sql;  // name -> (copies, bytes)
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT 'Memcpy ' || CASE m.copyKind WHEN 1 THEN 'HtoD' WHEN 2 THEN 'DtoH' ELSE '?' END"
                               " || ' (' || s.label || ' -> ' || d.label || ')', count(*), sum(m.bytes)"
                               " FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN ENUM_CUDA_MEM_KIND s ON s.id = m.srcKind"
                               " JOIN ENUM_CUDA_MEM_KIND d ON d.id = m.dstKind GROUP BY 1",
                               -1, &st, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  while (sqlite3_step(st) == SQLITE_ROW) {
    sql[reinterpret_cast<const char*>(sqlite3_column_text(st, 0))] = {sqlite3_column_int64(st, 1),
                                                                      sqlite3_column_int64(st, 2)};
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  ASSERT_EQ(sql.size(), 2u);
  EXPECT_EQ(sql["Memcpy HtoD (Pageable -> Device)"], std::make_pair(int64_t{254}, int64_t{225065752}));
  EXPECT_EQ(sql["Memcpy DtoH (Device -> Pageable)"], std::make_pair(int64_t{25}, int64_t{51200}));

  auto trace = ImportTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  const Trace& t = **trace;
  const std::optional<StringId> bytes_key = t.strings.Find("bytes");
  ASSERT_TRUE(bytes_key.has_value());
  std::map<std::string, std::pair<int64_t, int64_t>> model;
  for (uint32_t i = 0; i < t.slices.size(); ++i) {
    if (t.slices.kind[i] != EventKind::kMemcpy) continue;
    auto& [copies, bytes] = model[std::string(t.Str(t.slices.name[i]))];
    ++copies;
    const Arg* a = t.FindSliceArg(i, *bytes_key);
    ASSERT_NE(a, nullptr);
    bytes += a->i;
  }
  EXPECT_EQ(model, sql);
}

}  // namespace
}  // namespace aiprof
